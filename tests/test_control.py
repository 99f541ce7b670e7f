"""Board-control protocol corner cases against a scripted fake peer (the real board is in
test_board_control.py): odd prompts, a board that never stops, password redaction, probes."""

from __future__ import annotations

import base64
import gzip
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bootlab.control.board_console import Console
from bootlab.control.collect import DMESG, SYNC_SPAN_S, CollectError, collect_dmesg
from bootlab.control.engine import Probe
from bootlab.control.linux import Credentials, LinuxShell
from bootlab.control.uboot import UBoot, UBootError
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.recording.recorder import Recorder, StopRule
from bootlab.session.portloop import recorded
from bootlab.transports.reader import Chunk, Event, Idle

Reply = Callable[[bytes], bytes]


class FakeBoard:
    """A Link whose peer is a script: initial output, then replies to what is typed."""

    def __init__(self, output: bytes, reply: Reply, drop_every: int = 0) -> None:
        self.pending = [output]
        self.reply = reply
        self.typed = b""
        self.drop_every = drop_every
        self.count = 0

    def chunks(self, recorder: Recorder, poll_s: float) -> Iterator[tuple[bytes, int]]:
        """Recorded through the session's port loop, as a real port's reads are."""
        return recorded(self.events(poll_s), recorder)

    def events(self, poll_s: float) -> Iterator[Event]:
        while True:
            if self.pending:
                yield Chunk(self.pending.pop(0), time.monotonic_ns())
            else:
                time.sleep(poll_s / 10)
                yield Idle(time.monotonic_ns())

    def write(self, data: bytes) -> None:
        self.count += 1
        if self.drop_every and self.count % self.drop_every == 0:
            return  # a busy UART drops a character
        self.typed += data
        answer = self.reply(data)
        if answer:
            self.pending.append(answer)


def console(board: FakeBoard, tmp_path: Path, pace_s: float = 0.0) -> Console:
    recorder = Recorder(load_profile("linux"), tmp_path, {"label": "fake"}, StopRule(),
                        auto_split=False)
    return Console(board, recorder, pace_s=pace_s, poll_s=0.01)


def uboot_shell(prompt: bytes) -> Reply:
    line = bytearray()

    def reply(data: bytes) -> bytes:
        out = b""
        for byte in data:
            if byte == 0x0D:
                command = line.decode()
                line.clear()
                out += b"\r\n"
                if command.strip() == "printenv":
                    out += b"bootargs=console=ttyS0,115200 quiet\r\nbootdelay=2\r\n" \
                           b"\r\nEnvironment size: 60/8188 bytes\r\n"
                out += prompt
            else:
                line.append(byte)
                out += bytes([byte])
        return out

    return reply


@pytest.mark.parametrize(("banner", "prompt"), [
    (b"U-Boot 2023.01\r\nHit any key to stop autoboot:  3 ", b"=> "),
    (b"U-Boot 2016.05\r\nPress SPACE to abort autoboot in 2 seconds\r\n", b"U-Boot> "),
    (b"U-Boot 2020.04-stm32\r\nHit any key to stop autoboot:  1 ", b"STM32MP> "),
])
def test_interrupt_and_printenv_with_odd_prompts(tmp_path: Path, banner: bytes,
                                                 prompt: bytes) -> None:
    stopped = []

    def reply(data: bytes) -> bytes:
        if not stopped:
            stopped.append(True)
            return b"\r\n" + prompt
        return shell(data)

    shell = uboot_shell(prompt)
    uboot = UBoot(console(FakeBoard(banner, reply), tmp_path))
    uboot.interrupt(timeout=5)
    env = uboot.printenv()
    assert env == {"bootargs": "console=ttyS0,115200 quiet", "bootdelay": "2"}


def test_board_that_never_stops_autoboot_is_reported(tmp_path: Path) -> None:
    board = FakeBoard(b"U-Boot 2023.01\r\nHit any key to stop autoboot:  2 ", lambda d: b"")
    uboot = UBoot(console(board, tmp_path))
    start = time.monotonic()
    with pytest.raises(UBootError, match="no bootloader prompt"):
        uboot.interrupt(timeout=1.5)
    assert time.monotonic() - start < 5


def test_no_bootloader_at_all_is_reported(tmp_path: Path) -> None:
    board = FakeBoard(b"garbage \xff\xfe from the wrong baud rate\r\n", lambda d: b"")
    with pytest.raises(UBootError, match="could not stop autoboot"):
        UBoot(console(board, tmp_path)).interrupt(timeout=0.5)


def test_commands_are_typed_paced_and_dropped_characters_show(tmp_path: Path) -> None:
    board = FakeBoard(b"=> ", uboot_shell(b"=> "))
    uboot = UBoot(console(board, tmp_path, pace_s=0.002))
    uboot.run("setenv bootdelay 0")
    assert board.typed == b"setenv bootdelay 0\r" and board.count == len("setenv bootdelay 0\r")
    lossy = FakeBoard(b"=> ", uboot_shell(b"=> "), drop_every=5)
    output = UBoot(console(lossy, tmp_path / "b", pace_s=0.001)).run("setenv bootdelay 0")
    assert lossy.typed != b"setenv bootdelay 0\r"   # the peer saw a mangled command ...
    assert "setenv bootdelay 0" not in output       # ... and the echo shows it


def test_password_is_recorded_redacted(tmp_path: Path) -> None:
    state = {"step": 0}

    def reply(data: bytes) -> bytes:
        if data.endswith(b"\n"):
            state["step"] += 1
            return b"Password: " if state["step"] == 1 else b"\r\nroot@board:~# "
        return data

    board = FakeBoard(b"board login: ", reply)
    con = console(board, tmp_path)
    LinuxShell(con).login(Credentials("root", "s3cret-pw"))
    con.recorder.finish()
    (path,) = tmp_path.glob("*.jsonl")
    assert b"s3cret" not in path.read_bytes()
    sent = load_session(path).sent
    assert any(isinstance(s, int) for _, s in sent)       # the password, as a length
    assert b"".join(s for _, s in sent if isinstance(s, bytes)).startswith(b"root")


def test_shell_command_output_and_status(tmp_path: Path) -> None:
    def reply(data: bytes) -> bytes:
        command = data.decode().rstrip("\n")
        tag = re.search(r"echo (__bootlab_\w+)\"_\$\?__\"", command)
        assert tag is not None
        return (f"{command}\r\nMem: 1001976 25340 965736\r\n{tag.group(1)}_0__\r\n# ").encode()

    shell = LinuxShell(console(FakeBoard(b"# ", reply), tmp_path))
    status, output = shell.run("free | grep Mem")
    assert status == 0 and output == "Mem: 1001976 25340 965736"


def test_probe_syntax_and_figures() -> None:
    probe = Probe.parse(r"mem: free | grep Mem ~ Mem:\s+\d+\s+(?P<used_kb>\d+)")
    assert probe.command == "free | grep Mem"
    assert probe.figures("Mem:   1001976   25340  965736") == {"used_kb": 25340.0}
    assert probe.figures("nothing") == {}
    for bad in ("mem", "mem: free", r"mem: free ~ \d+", "mem: free ~ (?P<x"):
        with pytest.raises(ValueError):
            Probe.parse(bad)


class LinedBoard(FakeBoard):
    """A fake board whose link can set the baud rate and modem lines."""

    def __init__(self, output: bytes, reply: Reply) -> None:
        super().__init__(output, reply)
        self.lines: list[tuple[str, bool | int]] = []

    def set_line(self, name: str, value: bool | int) -> None:
        self.lines.append((name, value))


def test_baud_rate_switch_follows_uboot(tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    def reply(data: bytes) -> bytes:
        if data.endswith(b"57600\r"):
            return b"\r\n## Switch baudrate to 57600 bps and press ENTER ...\r\n"
        if data == b"\r":
            return b"\r\n=> "
        return data

    board = LinedBoard(b"", reply)
    bench = Bench(console(board, tmp_path))
    bench.state = "bootloader"
    bench.apply(["setenv baudrate 57600"], persist=False, baud=57600)
    assert board.lines == [("baudrate", 57600)]
    assert board.typed.endswith(b"setenv baudrate 57600\r\r")


@pytest.mark.parametrize("kind", ["dtr", "rts"])
def test_modem_line_pulse_resets_the_board(tmp_path: Path, kind: str) -> None:
    from bootlab.control.engine import Bench, RebootStrategy

    board = LinedBoard(b"", lambda d: b"")
    bench = Bench(console(board, tmp_path), RebootStrategy(kind, pulse_s=0.01))
    bench.reboot.external(bench.console, lambda text: None)
    assert board.lines == [(kind, True), (kind, False)]


def test_a_restart_by_a_modem_line_starts_its_table_at_the_release(tmp_path: Path) -> None:
    """`--reboot dtr`: the line's release is stamped in the new boot's session, and that
    session's table starts there, with the time before the banner measured."""
    from bootlab.control.engine import Bench, RebootStrategy
    from bootlab.core.analysis.loading import load

    class ResetBoard(LinedBoard):
        def set_line(self, name: str, value: bool | int) -> None:
            super().set_line(name, value)
            if name == "dtr" and not value:
                self.pending.append(b"U-Boot 2023.01\r\nHit any key to stop autoboot:  0\r\n")

    board = ResetBoard(b"", lambda d: b"")
    bench = Bench(console(board, tmp_path), RebootStrategy("dtr", pulse_s=0.01))
    assert bench.restart({"label": "dtr"}) == "dtr reboot"
    bench.console.drain(0.2)
    bench.console.recorder.finish()
    path = bench.console.recorder.records[-1].path
    session = load_session(path)
    assert session.meta["restarted_by"] == "dtr"
    assert [e["event"] for e in session.events if e["event"] == "reset"] == ["reset"]
    boot = load(path).analysis.boots[0]
    assert boot.zero is not None and boot.zero.what == "reset via a DTR pulse"
    assert boot.milestones[0].host_s is not None and boot.milestones[0].host_s > boot.zero.at_s


def test_power_command_runs_without_a_shell_and_is_shown_once(tmp_path: Path) -> None:
    from bootlab.control.engine import RebootStrategy

    marker = tmp_path / "power cycled"
    strategy = RebootStrategy("power", f"touch '{marker}'")
    said: list[str] = []
    board = FakeBoard(b"", lambda d: b"")
    strategy.external(console(board, tmp_path / "s"), said.append)
    strategy.external(console(board, tmp_path / "t"), said.append)
    assert marker.exists()
    assert len(said) == 1 and "touch" in said[0]
    with pytest.raises(ValueError, match="needs a command"):
        RebootStrategy("power").external(console(board, tmp_path / "u"), said.append)


@pytest.mark.parametrize(("options", "wanted"), [
    ({"kind": None}, "auto"),
    ({"kind": None, "cycle": "x"}, "power"),
    ({"kind": None, "on": "x", "off": "y"}, "power"),
    ({"kind": None, "cycle": "x", "on": "y"}, "not both"),
    ({"kind": None, "off": "y"}, "needs --power-on-cmd"),
    ({"kind": "dtr", "on": "x"}, "for --reboot power, not dtr"),
])
def test_the_power_options_give_one_strategy_or_say_what_contradicts(
        options: dict[str, str | None], wanted: str) -> None:
    from bootlab.control.engine import RebootStrategy

    kind = options.pop("kind")
    if wanted in ("auto", "power"):
        assert RebootStrategy.of(kind, **options).kind == wanted
    else:
        with pytest.raises(ValueError, match=re.escape(wanted)):
            RebootStrategy.of(kind, **options)


def at_prompt_reply(prompt: bytes, reset: bytes) -> Reply:
    """A board at `prompt` that answers Enter with the prompt again and `reset` to reset."""

    def reply(data: bytes) -> bytes:
        if data == b"\r" or data == b"\n":
            return b"\r\n" + prompt
        if data.endswith(b"\n") or data.endswith(b"\r"):
            return data + reset
        return data

    return reply


def test_restart_resets_at_the_uboot_prompt_and_starts_the_boot_session(
        tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    board = FakeBoard(b"", at_prompt_reply(b"=> ", b"resetting ...\r\nU-Boot 2023.01\r\n"))
    bench = Bench(console(board, tmp_path))
    assert bench.restart({"label": "again"}) == "reset at the U-Boot prompt"
    bench.console.drain(0.1)
    bench.console.recorder.finish()
    assert board.typed == b"\rreset\r"
    second = load_session(bench.console.recorder.records[-1].path)
    assert second.meta["role"] == "boot" and second.meta["label"] == "again"
    assert second.data.startswith(b"reset\r") and b"U-Boot" in second.data


def test_restart_logs_in_at_the_login_prompt_it_found_then_reboots(tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    def reply(data: bytes) -> bytes:
        if data == b"\r":
            return b"\r\nboard login: "
        if data == b"root\n":
            return b"root\r\n# "
        return data

    board = FakeBoard(b"", reply)
    bench = Bench(console(board, tmp_path))
    assert bench.restart({}) == "reboot -f at the shell"
    assert board.typed == b"\rroot\nreboot -f\n"


def test_a_password_prompt_left_waiting_is_answered_empty_to_reach_the_login(
        tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    # An earlier login left half-done: the board waits at `Password:`. Enter there is an empty
    # password, refused after the login program's delay; then the login prompt comes back.
    def reply(data: bytes) -> bytes:
        if data == b"\r" and board.typed == b"\r":
            return b"\r\nPassword: "
        if data == b"\r":
            time.sleep(0.3)
            return b"\r\n\r\nLogin incorrect\r\nlab3 login: "
        return b"root\r\n# " if data == b"root\n" else b""

    board = FakeBoard(b"", reply)
    bench = Bench(console(board, tmp_path))
    assert bench.restart({}) == "reboot -f at the shell"
    assert board.typed == b"\r\rroot\nreboot -f\n"


@pytest.mark.parametrize("password", [None, "wrong"])
def test_a_refused_login_says_which_option_to_check(tmp_path: Path,
                                                     password: str | None) -> None:
    from bootlab.control.linux import Credentials, LinuxShell, ShellError

    def reply(data: bytes) -> bytes:
        if data == b"root\n":
            return b"root\r\nPassword: "
        return b"\r\n\r\nLogin incorrect\r\nlab3 login: " if data.endswith(b"\n") else b""

    shell = LinuxShell(console(FakeBoard(b"lab3 login: ", reply), tmp_path))
    with pytest.raises(ShellError, match=r"refused the login of 'root'.*"
                       + ("no password was given" if password is None else "not accepted")
                       + r".*--password"):
        shell.login(Credentials("root", password), 5)


def test_restart_needs_a_prompt_to_type_at(tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    bench = Bench(console(FakeBoard(b"", lambda d: b""), tmp_path))
    with pytest.raises(UBootError, match="no prompt answered Enter"):
        bench.restart({})


def test_a_session_started_by_bootlab_still_splits_at_the_next_boot(tmp_path: Path) -> None:
    recorder = Recorder(load_profile("linux"), tmp_path, {"label": "live"}, StopRule(boots=9))
    recorder.feed(b"U-Boot 2023.01\r\n=> ", time.monotonic_ns())
    recorder.start_session(time.monotonic_ns(), role="boot")
    recorder.feed(b"boot\r\nStarting kernel ...\r\nboard login: root\r\n",
                  time.monotonic_ns())
    recorder.feed(b"# reboot -f\r\nU-Boot 2023.01\r\nHit any key to stop autoboot:  2 \r\n",
                  time.monotonic_ns())
    recorder.finish()
    assert [r.index for r in recorder.records] == [1, 2, 3]
    last = load_session(recorder.records[-1].path)
    assert last.data.startswith(b"U-Boot 2023.01")
    assert [m.id for m in recorder.milestones(recorder.records[-1])] == ["bootloader",
                                                                         "autoboot"]
    assert [m.id for m in recorder.milestones(recorder.records[1])][:1] == ["starting_kernel"]


class BootingBoard(FakeBoard):
    """A board still booting: its output comes in pieces, `gap_s` apart."""

    def __init__(self, pieces: list[bytes], gap_s: float, reply: Reply) -> None:
        super().__init__(b"", reply)
        self.pieces = pieces
        self.gap_s = gap_s
        self.typed_while_booting = b""

    def events(self, poll_s: float) -> Iterator[Event]:
        source = super().events(poll_s)
        next_at = time.monotonic()
        while True:
            if self.pieces and time.monotonic() >= next_at:
                next_at = time.monotonic() + self.gap_s
                yield Chunk(self.pieces.pop(0), time.monotonic_ns())
            else:
                yield next(source)

    def write(self, data: bytes) -> None:
        if self.pieces:
            self.typed_while_booting += data
        super().write(data)


def test_a_boot_measured_to_an_early_goal_is_let_finish_before_anything_is_typed(
        tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    def reply(data: bytes) -> bytes:
        return b"root\r\n# " if data == b"root\n" else b""

    lines = [b"[    1.%06d] still booting\r\n" % n for n in range(6)]
    board = BootingBoard([*lines, b"board login: "], 0.3, reply)
    bench = Bench(console(board, tmp_path))
    bench.state = "running"  # the goal (say, starting_kernel) was reached; Linux boots on
    assert bench.restart({}) == "reboot -f at the shell"
    assert board.typed_while_booting == b""
    assert board.typed == b"root\nreboot -f\n"


def test_a_boot_that_goes_quiet_without_a_login_prompt_is_asked_with_enter(
        tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    def reply(data: bytes) -> bytes:
        return b"\r\n# " if data == b"\r" else b""

    board = BootingBoard([b"[    1.000000] still booting\r\n"] * 3, 0.3, reply)
    bench = Bench(console(board, tmp_path))
    bench.state = "running"
    started = time.monotonic()
    assert bench.restart({}) == "reboot -f at the shell"
    assert board.typed_while_booting == b""
    assert board.typed == b"\rreboot -f\n"
    assert time.monotonic() - started >= 3.0  # QUIET_S without output first


def test_a_slow_boot_quiet_longer_than_an_answer_is_waited_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bootlab.control import engine

    # A loaded host: the kernel goes quiet, Enter is not answered in time, and the login
    # prompt comes later still. Nothing is typed at a board that has not answered yet.
    monkeypatch.setattr(engine, "QUIET_S", 0.3)
    monkeypatch.setattr(engine, "ANSWER_S", 0.5)

    def reply(data: bytes) -> bytes:
        return b"root\r\n# " if data == b"root\n" else b""

    board = BootingBoard([b"[    1.000000] still booting\r\n", b"[    9.000000] init\r\n",
                          b"board login: "], 2.0, reply)
    bench = engine.Bench(console(board, tmp_path))
    bench.state = "running"
    assert bench.restart({}) == "reboot -f at the shell"
    assert board.typed.endswith(b"root\nreboot -f\n")


def test_a_hash_at_the_end_of_a_line_still_arriving_is_no_shell_prompt(tmp_path: Path) -> None:
    from bootlab.control.engine import Bench

    # The kernel's version line read up to its `#` looks like a shell prompt for a moment.
    board = BootingBoard([b"\r\n[    0.000000] Linux version 6.1.0 (gcc 12.2.0) #",
                          b"1 SMP Debian\r\n", b"[    1.000000] Run /init\r\n",
                          b"board login: "], 0.05, lambda data: b"")
    bench = Bench(console(board, tmp_path))
    bench.find_state()
    assert bench.state == "login"


@pytest.mark.parametrize("tail", [b" ", b" \r\n"])
def test_a_prompt_whose_last_space_comes_in_a_later_read_is_still_the_prompt(
        tmp_path: Path, tail: bytes) -> None:
    from bootlab.control.linux import LOGIN

    # A real getty sent `lab3 login:` and its space 37 ms apart: nothing printed followed it.
    board = BootingBoard([b"\r\nlab3 login:", tail], 0.05, lambda data: b"")
    found = console(board, tmp_path).expect_prompt([LOGIN], 3, "login prompt")
    assert found.match.group(0).startswith("lab3 login:")


def test_output_after_a_prompt_like_text_is_still_waited_past(tmp_path: Path) -> None:
    from bootlab.control.linux import LOGIN, SHELL

    board = BootingBoard([b"\r\n[    1.0] version #", b"1 SMP\r\n", b"board login: "], 0.05,
                         lambda data: b"")
    found = console(board, tmp_path).expect_prompt([SHELL, LOGIN], 3, "any prompt")
    assert found.pattern is LOGIN


def kernel_shell(dmesg: str, damage: str = "", kmsg_status: int = 0) -> Reply:
    """A shell whose kernel prints what is written to /dev/kmsg, and whose dmesg is `dmesg`
    (its base64 with one character "dropped" or "changed": `damage`)."""
    def reply(data: bytes) -> bytes:
        command = data.decode().rstrip("\n")
        tag = re.search(r"echo (__bootlab_\w+)\"_\$\?__\"", command)
        assert tag is not None
        out, status = "", 0
        if "/dev/kmsg" in command:
            nonce = re.search(r"%s\\n' (\w+) >", command)
            assert nonce is not None
            out, status = f"[   12.345678] bootlab sync {nonce.group(1)}\r\n", kmsg_status
        elif command.startswith("dmesg | grep -F 'bootlab sync "):
            out = f"[   14.345678] {command.split(chr(39))[1]}\r\n"
        elif command.startswith(DMESG):
            encoded = base64.encodebytes(gzip.compress(dmesg.encode())).decode()
            if damage:  # a character dropped, and one changed: neither passes
                encoded = encoded[:40] + encoded[41:] if damage == "dropped" else \
                    encoded[:200] + ("A" if encoded[200] != "A" else "B") + encoded[201:]
            out = encoded.replace("\n", "\r\n")
        return f"{command}\r\n{out}{tag.group(1)}_{status}__\r\n# ".encode()
    return reply


def test_collect_reads_dmesg_with_its_sync_line(tmp_path: Path) -> None:
    dmesg = "[    0.000000] Booting Linux\n" * 300 + "[   12.345678] bootlab sync x\n"
    shell = LinuxShell(console(FakeBoard(b"# ", kernel_shell(dmesg)), tmp_path))
    began = time.monotonic()
    fields = collect_dmesg(shell)
    assert fields["source"] == "dmesg" and fields["text"] == dmesg
    assert re.fullmatch(r"[0-9a-f]{8}", fields["sync"])
    # a second sync line, the span apart: two moments both clocks saw give the clock's pace
    assert re.fullmatch(r"[0-9a-f]{8}", fields["sync_end"]) and fields["sync_end"] != fields["sync"]
    assert time.monotonic() - began >= SYNC_SPAN_S
    # dmesg was read before the second: its printk time is read from the kernel's log after
    assert fields["sync_end_line"] == f"[   14.345678] bootlab sync {fields['sync_end']}"


@pytest.mark.parametrize(("damage", "status", "why"), [
    ("dropped", 0, "dmesg arrived damaged"), ("changed", 0, "dmesg arrived damaged"),
    ("", 1, "cannot write the sync line to /dev/kmsg (exit 1)")])
def test_collect_refuses_what_did_not_arrive_whole(tmp_path: Path, damage: str, status: int,
                                                   why: str) -> None:
    dmesg = "".join(f"[{i / 1000:12.6f}] probe {i:05d}: {i * 7919 % 10007}\n"
                    for i in range(300))                 # compresses to well over 200 chars
    board = FakeBoard(b"# ", kernel_shell(dmesg, damage, status))
    with pytest.raises(CollectError, match=re.escape(why)):
        collect_dmesg(LinuxShell(console(board, tmp_path)))


def bootstage_shell(has_bootstage: bool = True, has_gettime: bool = True) -> Reply:
    """A U-Boot prompt answering `bootstage report` and `gettime` (its timer, in ms since its
    reset a second before the prompt, as the host counts)."""
    began = time.monotonic() - 1.0
    line = bytearray()

    def reply(data: bytes) -> bytes:
        out = b""
        for byte in data:
            if byte != 0x0D:
                line.append(byte)
                out += bytes([byte])
                continue
            command = line.decode().strip()
            line.clear()
            out += b"\r\n"
            if command == "bootstage report" and has_bootstage:
                out += (b"Timer summary in microseconds (3 records):\r\n       Mark    Elapsed"
                        b"  Stage\r\n          0          0  reset\r\n     29,559     29,559  "
                        b"board_init_f\r\n     98,865     69,306  cli_loop\r\n\r\n")
            elif command == "gettime" and has_gettime:
                ms = int((time.monotonic() - began) * 1000)
                out += f"Timer val: {ms}\r\nSeconds : {ms // 1000}\r\n".encode()
            elif command:
                out += f"Unknown command '{command.split()[0]}' - try 'help'\r\n".encode()
            out += b"=> "
        return out

    return reply


def test_bootstage_is_read_at_the_prompt_with_two_timer_reads_seconds_apart(
        tmp_path: Path) -> None:
    from bootlab.control.bootstage import SPAN_S, in_session, read_bootstage
    from bootlab.core.analysis.bootstage import read_bootstage as judged

    uboot = UBoot(console(FakeBoard(b"", bootstage_shell()), tmp_path))
    fields = read_bootstage(uboot)
    assert not isinstance(fields, str)
    assert fields["source"] == "bootstage" and "cli_loop" in fields["text"]
    first, last = fields["timer"]
    assert first["sent"] <= first["back"] < last["sent"] <= last["back"]
    assert (last["sent"] - first["back"]) / 1e9 >= SPAN_S - 0.01
    assert last["ms"] - first["ms"] >= SPAN_S * 1000 - 20
    # a timer that counts as the host's does is placed, on the session's clock
    stages = judged({**fields, "timer": in_session(fields["timer"], last["back"]),
                     "event": "collected"})
    assert stages is not None and stages.placed, stages


@pytest.mark.parametrize(("bootstage", "gettime", "said"), [
    (False, True, "this U-Boot has no bootstage report"),
    (True, False, None),
])
def test_a_uboot_without_bootstage_or_gettime(tmp_path: Path, bootstage: bool, gettime: bool,
                                              said: str | None) -> None:
    from bootlab.control.bootstage import read_bootstage

    uboot = UBoot(console(FakeBoard(b"", bootstage_shell(bootstage, gettime)), tmp_path))
    fields = read_bootstage(uboot)
    if said is not None:
        assert isinstance(fields, str) and said in fields
    else:
        assert not isinstance(fields, str) and fields["timer"] == []


def systemd_shell(show: str | None) -> Reply:
    """A shell whose board runs systemd (`show`: what `systemctl show` prints; None: no
    systemctl) and whose monotonic clock counts as the host's from a boot 20 s ago."""
    from bootlab.control.collect import SYSTEMD, UPTIME

    booted = time.monotonic() - 20.0

    def reply(data: bytes) -> bytes:
        command = data.decode().rstrip("\n")
        tag = re.search(r"echo (__bootlab_\w+)\"_\$\?__\"", command)
        assert tag is not None
        out, status = "", 0
        if command.startswith("command -v systemctl"):
            status = 0 if show is not None else 1
        elif command.startswith(SYSTEMD) and show is not None:
            out = base64.encodebytes(gzip.compress(show.encode())).decode()
        elif command.startswith(UPTIME):
            out = f"uptime {time.monotonic() - booted:.2f}\n"
        return f"{command}\r\n{out.replace(chr(10), chr(13) + chr(10))}" \
               f"{tag.group(1)}_{status}__\r\n# ".encode()
    return reply


def test_systemds_record_is_read_between_two_reads_of_the_boards_clock(tmp_path: Path) -> None:
    from bootlab.control.collect import collect_systemd, read_uptime
    from bootlab.core.analysis.systemd_units import read_record

    show = "Id=multi-user.target\nActiveEnterTimestampMonotonic=15000000\n"
    shell = LinuxShell(console(FakeBoard(b"# ", systemd_shell(show)), tmp_path))
    first = read_uptime(shell)
    assert first is not None and 19.9 < first["s"] < 21.0 and first["sent"] <= first["back"]
    time.sleep(1.1)
    fields = collect_systemd(shell, first)
    assert fields is not None and fields["text"] == show and fields["source"] == "systemd"
    assert fields["uptime"][0] == first and fields["uptime"][1]["s"] >= first["s"] + 1.0
    # a clock that counts as the host's does is placed, on the session's clock
    record = read_record(fields, "")
    assert record is not None and record.placed, record
    (target,) = record.units
    assert target.ready_host_s is not None
    assert abs(target.ready_host_s - (first["back"] / 1e9 - first["s"] + 15.0)) < 0.05


def test_a_board_without_systemd_gives_no_record(tmp_path: Path) -> None:
    from bootlab.control.collect import collect_systemd

    shell = LinuxShell(console(FakeBoard(b"# ", systemd_shell(None)), tmp_path))
    assert collect_systemd(shell, None) is None


def test_u_boots_records_in_the_device_tree_are_read_when_there(tmp_path: Path) -> None:
    from bootlab.control.collect import TREE, TREE_DIR, collect_tree_bootstage

    printed = "reset|00000000|\nboard_init_f|00007377|\ndm_f||00000b80\nodd|zz|\n"

    def reply(data: bytes) -> bytes:
        command = data.decode().rstrip("\n")
        tag = re.search(r"echo (__bootlab_\w+)\"_\$\?__\"", command)
        assert tag is not None
        out = base64.encodebytes(gzip.compress(printed.encode())).decode() \
            if command.startswith(TREE) else ""
        status = 0 if command.startswith(TREE) or (printed and command.startswith(
            f"[ -d {TREE_DIR} ]")) else 1
        return f"{command}\r\n{out.replace(chr(10), chr(13) + chr(10))}" \
               f"{tag.group(1)}_{status}__\r\n# ".encode()

    shell = LinuxShell(console(FakeBoard(b"# ", reply), tmp_path))
    fields = collect_tree_bootstage(shell)
    assert fields == {"source": "fdt", "command": TREE_DIR, "records": [
        {"name": "reset", "mark": 0}, {"name": "board_init_f", "mark": 0x7377},
        {"name": "dm_f", "accum": 0xb80}]}
    printed = ""                                   # a U-Boot that left none there
    assert collect_tree_bootstage(shell) is None
