"""Debian's ser2net (version 4) exporting a pty as a TCP port, the way a labgrid exporter does.

Used by tests/test_ser2net.py and bench/bench_ser2net.py. The connection is labgrid's:
`serialdev(nouucplock=true),DEVICE,115200n81,local`, accepted as plain TCP (`raw`, read with
socket://) or as `telnet(rfc2217,mode=server)` (read with rfc2217://...?ign_set_control).
`options` become the connection's options in the YAML file (chardelay, chardelay-max, ...; see
`man ser2net.yaml`).
ser2net opens the device only when a client connects, and closes it when the client leaves.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

ACCEPTERS = {"raw": "tcp", "rfc2217": "telnet(rfc2217,mode=server),tcp"}
"""Protocol -> ser2net accepter (before the address)."""
URLS = {"raw": "socket://127.0.0.1:{port}",
        "rfc2217": "rfc2217://127.0.0.1:{port}?ign_set_control"}
"""Protocol -> the pyserial URL that reads it (labgrid's SerialDriver also ignores ser2net's
answer to SET_CONTROL, which pyserial otherwise waits for in vain)."""


def ser2net_binary() -> str | None:
    """ser2net's path (it is in /usr/sbin, which a user's PATH may lack), or None."""
    found = shutil.which("ser2net")
    if found:
        return found
    return "/usr/sbin/ser2net" if Path("/usr/sbin/ser2net").is_file() else None


def config(device: str, port: int, protocol: str, options: dict[str, str | int | bool],
           baud: int = 115200) -> str:
    """The ser2net.yaml text of one connection on 127.0.0.1:`port`."""
    lines = ["connection: &bootlab",
             f"  accepter: {ACCEPTERS[protocol]},127.0.0.1,{port}",
             f"  connector: serialdev(nouucplock=true),{device},{baud}n81,local"]
    if options:
        lines.append("  options:")
        lines += [f"    {key}: {str(value).lower() if isinstance(value, bool) else value}"
                  for key, value in options.items()]
    return "\n".join(lines) + "\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _listening(port: int) -> bool:
    """Whether something listens on the TCP port (read from /proc: connecting would count as
    a client and make ser2net open the device)."""
    wanted = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        return any(row.split()[1].endswith(wanted) and row.split()[3] == "0A"
                   for row in list(table)[1:])


class Ser2net:
    """A ser2net process serving `device` on a free port of 127.0.0.1 until `close()`."""

    def __init__(self, device: str, folder: Path, protocol: str = "raw",
                 options: dict[str, str | int | bool] | None = None, baud: int = 115200) -> None:
        """Write the YAML file into `folder`, start ser2net and wait until it listens.

        Raises:
            RuntimeError: ser2net is not installed, or exited or did not listen within 5 s.
        """
        binary = ser2net_binary()
        if binary is None:
            raise RuntimeError("ser2net is not installed (apt-get install ser2net)")
        self.port = _free_port()
        self.protocol = protocol
        self.url = URLS[protocol].format(port=self.port)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "ser2net.yaml"
        path.write_text(config(device, self.port, protocol, options or {}, baud))
        self.log = folder / "ser2net.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [binary, "-n", "-d", "-c", str(path), "-P", str(folder / "ser2net.pid")],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 5
        while not _listening(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"ser2net did not listen on {self.port}: "
                                   f"{self.log.read_text(errors='replace')[-500:]}")
            time.sleep(0.02)

    def __enter__(self) -> Ser2net:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop ser2net."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
