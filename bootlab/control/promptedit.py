"""The prompt file route: edit the file a board takes its kernel arguments from at the U-Boot
prompt (`ext4write`, `fatwrite`), before each measured boot, and put it back the same way.

No Linux login is needed: `PromptRoute.apply` makes the file's device readable as distro boot
does (`uboot.start_device`: `pci enum`, `virtio scan` ... where the board needs them), reads
the file (`load`, `md.b`), keeps the original in the local state file (`fileedit.EditState`,
route "prompt") before the first write, says the diff, builds the new bytes next to the loaded
ones (`promptwrite.build_commands`), writes them and checks them by loading them again and
comparing their `crc32`. Every boot of a run gets the same dialogue (the base variant's checks
that the file is the original), so the variants start their boots from the same U-Boot state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from bootlab.control.engine import Bench
from bootlab.control.linuxedit import FileEditError, wanted_bytes
from bootlab.control.uboot import start_device
from bootlab.core.board import fileedit, promptwrite
from bootlab.core.board.argsource import ArgSource
from bootlab.core.board.cmdline import Edit
from bootlab.core.board.fileedit import EditState

LOAD_VARS = ("loadaddr", "scriptaddr", "kernel_addr_r")
"""Environment addresses a boot file may be loaded to, in order of preference."""


def load_address(env: Mapping[str, str]) -> int | None:
    """Where boot files are loaded: the board's own load address (None: it names none)."""
    for name in LOAD_VARS:
        address = promptwrite.parse_address(env.get(name, ""))
        if address is not None:
            return address
    return None


def writer_of(bench: Bench, device: str) -> tuple[str | None, str]:
    """U-Boot's command that can write `device`'s file system (`ext4write`, `fatwrite`) when
    this U-Boot has it (else None), and why not in words."""
    fstype = bench.uboot.run(f"fstype {device}").split()
    name = fstype[-1] if fstype else "unknown"
    write = promptwrite.writer(name)
    if write is None:
        return None, f"U-Boot cannot write a {name} file system"
    if "Unknown command" in bench.uboot.run(f"help {write}"):
        return None, f"its file system is {name} and this U-Boot has no {write}"
    return write, ""


class PromptRoute:
    """Edits one boot file at the U-Boot prompt for each boot's variant, and restores it."""

    kind = "prompt"

    def __init__(self, bench: Bench, source: ArgSource, env: Mapping[str, str],
                 state_file: Path, port: str, say: Callable[[str], object], write: str) -> None:
        if source.file is None or source.file.device is None:
            raise FileEditError("the file the kernel arguments come from is not known")
        self.bench = bench
        self.source = source
        self.env = dict(env)
        self.device = source.file.device
        self.path = source.file.path
        self.state_file = state_file
        self.port = port
        self.say = say
        self.write = write
        self.shown: set[tuple[str, str]] = set()
        """The changes whose diff was said (each is said once)."""

    def apply(self, edits: Sequence[Edit]) -> None:
        """At the prompt: make the file what `edits` need (the original for none)."""
        state = EditState.load(self.state_file)
        env = self.env
        self.bench.to_bootloader()
        current = self._read(env)
        original = state.original if state is not None else current
        wanted = wanted_bytes(self.source, original, edits)
        if current != wanted:
            if state is None:
                EditState.of(self.port, self.device, self.device, self.path, original,
                             "prompt").save(self.state_file)
            self.say(fileedit.edit_note(f"editing {self.path} on {self.device} at the "
                                        f"U-Boot prompt ({self.write})", current, wanted,
                                        self.path, self.shown))
            put(self.bench, env, self.device, self.path, self.write, current, wanted)
        if wanted == original and self.state_file.exists():
            self.state_file.unlink()

    def _read(self, env: Mapping[str, str]) -> bytes:
        start_device(self.bench.uboot, self.device, env)
        data = self.bench.uboot.read_file(self.device, self.path, env)
        if data is None:
            raise FileEditError(f"U-Boot cannot load {self.path} from {self.device}")
        return data


def put(bench: Bench, env: Mapping[str, str], device: str, path: str, write: str,
        loaded: bytes, wanted: bytes) -> None:
    """Write `wanted` over the file, which holds `loaded` and was just loaded to the load
    address (`UBoot.read_file`), and check it by loading it again.

    Raises:
        FileEditError: U-Boot did not write it, or it does not read back as `wanted`.
    """
    address = load_address(env)
    if address is None:
        raise FileEditError("the board's environment names no load address (loadaddr)")
    built = address + promptwrite.SCRATCH
    run = bench.uboot.run
    for command in promptwrite.build_commands(address, built, loaded, wanted):
        run(command)
    output = run(promptwrite.write_command(write, device, built, path, len(wanted)), timeout=60)
    if "bytes written" not in output:
        raise FileEditError(f"{write} did not write {path} on {device}: "
                            f"{output.strip()[-200:] or 'no answer'}")
    back = run(f"load {device} {address:x} {path}")
    crc = promptwrite.parse_crc32(run(promptwrite.crc32_command(address, len(wanted))))
    for name in ("filesize", "fileaddr"):  # what `load` sets: as unset as before
        if name not in env:
            run(f"setenv {name}")
    if f"{len(wanted)} bytes read" not in back or crc != promptwrite.crc32(wanted):
        raise FileEditError(f"{path} on {device} does not read back as written")


def restore(bench: Bench, state: EditState, state_file: Path,
            say: Callable[[str], object]) -> None:
    """At the prompt: put the original back (if it is not already), check it, and remove the
    state file."""
    env = bench.printenv()
    start_device(bench.uboot, state.uboot_device, env)
    write, _ = writer_of(bench, state.uboot_device)
    current = bench.uboot.read_file(state.uboot_device, state.path, env)
    if current is None or write is None:
        raise FileEditError(f"U-Boot cannot {'write' if current is not None else 'load'} "
                            f"{state.path} on {state.uboot_device} to restore it")
    if fileedit.sha256(current) != state.sha256:
        say(f"restoring {state.path} on {state.uboot_device} at the U-Boot prompt ({write}):\n"
            + fileedit.unified_diff(current, state.original, state.path).rstrip("\n"))
        put(bench, env, state.uboot_device, state.path, write, current, state.original)
    state_file.unlink(missing_ok=True)
