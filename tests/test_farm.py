"""bootlab on a labgrid board farm: real labgrid-coordinator, labgrid-exporter and ser2net on
127.0.0.1 (tests/support/farm.py), a place acquired, its console read through ser2net, its
board powered through the simplerest power switch, the place released after.

The fake board (a boot to login in about a second) shows the place's life: released at the
end, after Ctrl-C and SIGTERM, kept across a coordinator restart, refused when someone else
holds it, offered (never taken) when a crashed run of ours holds it, on the command line and
in the app (which asks). The QEMU board tests
(`board` mark) record and measure real boots through the same farm.
"""

from __future__ import annotations

import importlib.metadata
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import serial
from support.farm import Farm, need_farm_tools
from support.paths import BOOTLAB, ROOT
from support.pilot import main_screen, wait_until
from support.pty_pair import Pty
from support.ser2net import Ser2net

from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.transports.place import PlaceSpec, identity
from bootlab.ui.launch import live_app
from bootlab.ui.screens.dialogs import ConfirmDialog

FAST = ["--power-off", "0.2"]


def bootlab(farm: Farm, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *args], env=farm.env(), capture_output=True, text=True,
                          timeout=timeout)


def started(farm: Farm, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*BOOTLAB, *args], env=farm.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def events(path: Path) -> list[dict[str, Any]]:
    return load_session(path).events


def boot_sessions(folder: Path) -> list[Path]:
    """The measured boots (not the setup dialogues, nor the setup boot of a first run)."""
    return [p for p in sorted(folder.glob("*.jsonl"))
            if load_session(p).meta.get("role") != "setup"
            and load_session(p).meta.get("label") != "setup-boot"]


def test_record_acquires_powers_records_and_releases(fake_farm: Farm, tmp_path: Path) -> None:
    switches = len(fake_farm.power.switches)
    t0 = time.monotonic()
    result = bootlab(fake_farm, "record", "--place", "bench-1", *FAST, "--until", "login",
                     "--timeout", "30", "--board", "fake", "--sessions", str(tmp_path))
    took = time.monotonic() - t0
    print(f"record --place to login: {took:.2f} s")
    assert result.returncode == 0, result.stderr
    assert "place bench-1: acquired as" in result.stderr
    assert "place bench-1: released" in result.stderr
    assert fake_farm.holder("bench-1") is None
    assert fake_farm.power.switches[switches:] == [(0, False), (0, True)]
    (path,) = tmp_path.glob("*.jsonl")
    session = load_session(path)
    assert session.meta["port"] == "place:bench-1" and session.meta["place"] == "bench-1"
    assert session.meta["source"] == {
        "place": "bench-1", "coordinator": fake_farm.address, "exporter": "farm-exporter",
        "group": "bench", "host": "127.0.0.1", "protocol": "rfc2217", "ser2net": True,
        "device": fake_farm.adapters["bench"].name}
    power = [e for e in events(path) if e["event"] == "power"]
    assert [e["state"] for e in power] == ["off", "on"]
    assert power[1]["t"] - power[0]["t"] >= 0.2e9
    first_rx = session.chunks[0][0]
    assert first_rx > power[1]["t"]                # the boot's bytes came after the `on`
    # recorded up to the goal: the prompt, its ": " too unless the goal was met on
    # "board login" (a cut prompt is a prompt) before the rest of it came
    assert b"U-Boot 2023.01" in session.data and b"board login" in session.data
    listed = bootlab(fake_farm, "sessions", "--sessions", str(tmp_path))
    assert "bench-1" in listed.stdout and "fake" in listed.stdout, listed.stdout


def test_boot_measures_a_place_through_its_power(fake_farm: Farm, tmp_path: Path) -> None:
    result = bootlab(fake_farm, "boot", "--place", "bench-1", *FAST, "--set", "quiet",
                     "--sessions", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "power cycle through place bench-1 (simplerest" in result.stderr
    assert "login" in result.stdout                  # the phase table, to the goal
    assert fake_farm.holder("bench-1") is None
    (boot,) = boot_sessions(tmp_path)
    meta = load_session(boot).meta
    assert meta["place"] == "bench-1" and meta["settings"]["cmdline"].endswith("quiet")


def test_ab_runs_on_a_place(fake_farm: Farm, tmp_path: Path) -> None:
    result = bootlab(fake_farm, "ab", "--place", "bench-1", *FAST, "--variant", "base:",
                     "--variant", "quiet", "--boots", "1", "--seed", "1", "--sessions",
                     str(tmp_path), timeout=180)
    assert result.returncode == 0, result.stderr
    assert fake_farm.holder("bench-1") is None
    boots = [load_session(p).meta for p in boot_sessions(tmp_path)]
    assert sorted(meta["label"] for meta in boots) == ["base", "quiet"]
    assert all(meta["port"] == "place:bench-1" and meta["place"] == "bench-1"
               for meta in boots)


def test_a_place_held_by_someone_else_is_refused_naming_them(fake_farm: Farm,
                                                             tmp_path: Path) -> None:
    fake_farm.client("-p", "bench-1", "acquire", user="alice")
    try:
        result = bootlab(fake_farm, "record", "--place", "bench-1", "--until", "login",
                         "--sessions", str(tmp_path))
    finally:
        fake_farm.client("-p", "bench-1", "release", user="alice")
    assert result.returncode == 3
    host = identity().split("/")[0]
    assert f"place bench-1 is held by alice on {host}" in result.stderr
    assert not list(tmp_path.glob("*.jsonl"))


def test_a_stale_hold_of_ours_is_offered_never_taken(fake_farm: Farm, tmp_path: Path) -> None:
    fake_farm.client("-p", "bench-1", "acquire")       # a run of ours that crashed
    refused = bootlab(fake_farm, "record", "--place", "bench-1", "--no-power", "--until",
                      "login", "--sessions", str(tmp_path))
    assert refused.returncode == 3
    assert "already acquired by you" in refused.stderr and "--release-stale" in refused.stderr
    assert fake_farm.holder("bench-1") == identity()   # still held: never silently taken
    taken = bootlab(fake_farm, "record", "--place", "bench-1", "--release-stale", *FAST,
                    "--until", "login", "--timeout", "30", "--sessions", str(tmp_path))
    assert taken.returncode == 0, taken.stderr
    assert "released your stale hold" in taken.stderr
    assert fake_farm.holder("bench-1") is None


@pytest.mark.parametrize(("command", "sig"), [
    (["record", "--no-power", "--until", "login"], signal.SIGINT),
    (["record", "--no-power", "--until", "login"], signal.SIGTERM),
    (["boot", "--reboot", "manual"], signal.SIGTERM),
], ids=["record-ctrl-c", "record-sigterm", "boot-sigterm"])
def test_the_place_is_released_when_bootlab_is_stopped(fake_farm: Farm, tmp_path: Path,
                                                       command: list[str],
                                                       sig: signal.Signals) -> None:
    process = started(fake_farm, *command, "--place", "bench-1", "--timeout", "60",
                      "--sessions", str(tmp_path))
    try:
        assert fake_farm.wait_holder("bench-1", identity()) == identity(), process.stderr
        time.sleep(0.5)                                 # idle, holding it
        process.send_signal(sig)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, err
    assert "place bench-1: released" in err
    assert fake_farm.holder("bench-1") is None


def test_a_coordinator_restart_mid_idle_is_ridden_out(fake_farm: Farm, tmp_path: Path) -> None:
    fake_farm.power.request("/relay/0/0")              # earlier runs left the board on
    log = tmp_path / "stderr.txt"
    with log.open("w") as err_file:
        process = subprocess.Popen(
            [*BOOTLAB, "record", "--place", "bench-1", "--no-power", "--until", "login",
             "--timeout", "90", "--sessions", str(tmp_path / "sessions")], env=fake_farm.env(),
            stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    try:
        assert fake_farm.wait_holder("bench-1", identity()) == identity()
        t0 = time.monotonic()
        fake_farm.restart_coordinator()                 # forgets every acquisition
        assert fake_farm.wait_holder("bench-1", identity(), 30) == identity()
        deadline = time.monotonic() + 20                # the console follows ser2net's port
        while "port reconnected" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        print(f"console back {time.monotonic() - t0:.2f} s after the restart began")
        with urllib.request.urlopen(fake_farm.power.template.format(index=0, value=1)) as on:
            assert on.read() == b"1"
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        fake_farm.power.request("/relay/0/0")
        if fake_farm.holder("bench-1") is not None:    # killed: it could not release
            fake_farm.client("-p", "bench-1", "release")
    err = log.read_text()
    assert process.returncode == 0, err
    assert "lost the coordinator" in err and "acquired again" in err
    assert fake_farm.holder("bench-1") is None
    (path,) = (tmp_path / "sessions").glob("*.jsonl")
    kinds = [e["event"] for e in events(path)]
    assert "gap" in kinds and "reconnect" in kinds
    assert b"board login" in load_session(path).data  # to the goal (maybe a cut prompt)


def test_without_labgrid_a_place_says_how_to_install_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['labgrid'] = None; from bootlab.cli import main; "
            f"sys.exit(main(['record', '--place', 'x', '--sessions', {str(tmp_path)!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "pip install bootlab[labgrid]" in result.stderr


@pytest.mark.parametrize("protocol", ["raw", "rfc2217"])
def test_pyserial_urls_work_beside_pyserial_labgrid(protocol: str, pty_pair: Pty,
                                                    tmp_path: Path) -> None:
    """labgrid's pyserial fork installs the same `serial` package over pyserial's: socket://
    and rfc2217:// must still open, read and write (here through Debian's ser2net)."""
    need_farm_tools()
    assert importlib.metadata.version("pyserial-labgrid") == serial.__version__ == "3.5.0.2"
    with Ser2net(pty_pair.name, tmp_path, protocol) as server:
        client = serial.serial_for_url(server.url, timeout=2)
        try:
            pty_pair.write(b"U-Boot\r\n")
            assert client.read(8) == b"U-Boot\r\n"
            client.write(b" ")
            assert pty_pair.read(1) == b" "
        finally:
            client.close()


def test_a_place_and_a_port_together_are_refused(tmp_path: Path) -> None:
    result = subprocess.run([*BOOTLAB, "record", "socket://127.0.0.1:1", "--place", "x"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "not both" in result.stderr


@pytest.mark.board
def test_boot_and_record_a_qemu_place(qemu_farm: Farm, tmp_path: Path) -> None:
    t0 = time.monotonic()
    boot = bootlab(qemu_farm, "boot", "--place", "qemu-1", "--power-off", "0.5", "--until",
                   "login", "--label", "farm", "--sessions", str(tmp_path / "boot"),
                   timeout=240)
    booted = time.monotonic() - t0
    assert boot.returncode == 0, boot.stderr
    assert qemu_farm.holder("qemu-1") is None
    rows = dict(line.split(None, 1) for line in boot.stdout.splitlines() if line.strip())
    assert "login" in rows and "starting_kernel" in rows
    (measured,) = boot_sessions(tmp_path / "boot")
    assert load_session(measured).meta["source"]["ser2net"] is True
    t0 = time.monotonic()
    record = bootlab(qemu_farm, "record", "--place", "qemu-1", "--power-off", "0.5", "--until",
                     "login", "--timeout", "120", "--sessions", str(tmp_path / "record"),
                     timeout=240)
    recorded = time.monotonic() - t0
    assert record.returncode == 0, record.stderr
    assert qemu_farm.holder("qemu-1") is None
    (path,) = (tmp_path / "record").glob("*.jsonl")
    session = load_session(path)
    power_on = next(e["t"] for e in events(path) if e.get("state") == "on")
    # recorded up to the goal: the prompt, its ": " too unless the goal was met on
    # "board login" (a cut prompt is a prompt) before the rest of it came
    assert b"U-Boot 2023.01" in session.data and b"board login" in session.data
    first_rx = session.chunks[0][0]
    print(f"boot --place: {booted:.1f} s; record --place: {recorded:.1f} s; first byte "
          f"{(first_rx - power_on) / 1e6:.0f} ms after the power-on request")
    assert 0 < first_rx - power_on < 5e9


async def test_the_app_asks_before_releasing_a_stale_hold_then_powers_the_place(
        fake_farm: Farm, tmp_path: Path) -> None:
    fake_farm.client("-p", "bench-1", "acquire")        # a crashed run of ours holds it
    switches = len(fake_farm.power.switches)
    app, link = live_app("place:bench-1", None, load_profile("linux"), tmp_path,
                         place=PlaceSpec("bench-1", fake_farm.address), power_off_s=0.2)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = main_screen(app)
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog),
                             "the question about the stale hold")
            assert "already acquired by you" in app.screen.question
            await pilot.press("y")
            await wait_until(pilot, lambda: screen.status.state == "connected",
                             "the place's console")
            await pilot.press("ctrl+t", "R")                # reboot: the place's power
            await wait_until(pilot, lambda: any(row.milestone.id == "login"
                                                for row in screen.boot_state.rows),
                             "the boot to login")
            await pilot.press("ctrl+t", "q")
        assert link.wait_closed()
    finally:
        if fake_farm.holder("bench-1") is not None:
            fake_farm.client("-p", "bench-1", "release")
    assert link.failure is None
    assert fake_farm.power.switches[switches:] == [(0, False), (0, True)]
    sessions = [load_session(p) for p in sorted(tmp_path.glob("*.jsonl"))]
    assert all(s.meta["place"] == "bench-1" and s.meta["source"]["ser2net"] for s in sessions)
    booted = [s for s in sessions if any(e.get("state") == "on" for e in s.events)]
    assert len(booted) == 1 and b"board login" in booted[0].data
    assert fake_farm.holder("bench-1") is None         # released when the app closed


@pytest.mark.timeout(900)
def test_the_manuals_install_gives_labgrids_serial(tmp_path: Path) -> None:
    """The farm page's install commands, run as written (bootlab from this checkout) in a
    new virtual environment, leave labgrid's pyserial fork as `serial`, as the project's own
    environment has it."""
    need_farm_tools()
    section = (ROOT / "docs" / "farm.md").read_text()
    start = section.index("```sh\n") + 6
    block = section[start:section.index("```", start)]
    commands = [line.split("#")[0].strip() for line in block.splitlines()
                if line.startswith("pip install")]
    assert len(commands) == 2, block
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    for command in commands:
        argv = shlex.split(command.replace("'bootlab[labgrid]'", f"'{ROOT}[labgrid]'"))
        done = subprocess.run([str(venv / "bin" / "python"), "-m", *argv, "-q",
                               "--disable-pip-version-check"], capture_output=True, text=True,
                              timeout=800)
        assert done.returncode == 0, done.stderr[-2000:]
    version = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import serial; print(serial.__version__)"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    assert version == "3.5.0.2"
