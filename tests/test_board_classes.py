"""A variant is measured only with its setting in force, on the board classes real boards come
in, each from its factory environment and as the first bootlab run on its port: copies of the
QEMU board changed the way real boards differ in where their kernel arguments come from
(tests/support/board_variants.py), and board #3 (`../shared/lab3`). `bootlab ab --variant base:
--variant quiet:quiet` either shows quiet in force in every quiet boot, or refuses before the
first measured boot with exit 2 and says why; never exit 0 with a quiet boot that printed the
kernel's info lines."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.board_variants import BoardCopy
from support.paths import BOOTLAB, LAB3_OUT
from support.qemu_env import QEMU_ARGS

from bootlab.core.analysis.boardclock import judge
from bootlab.core.analysis.collected import anchors
from bootlab.core.analysis.loading import load
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.exitcodes import BAD_INPUT

pytestmark = [pytest.mark.board, pytest.mark.timeout(1200)]  # a setup boot and A/B boots
AB = ("ab", "--variant", "base:", "--variant", "quiet:quiet")


def bootlab(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=timeout)


def ab_boots(folder: Path) -> dict[str, list[set[str]]]:
    """The milestones of each measured A/B boot, by variant (the setup boot is none)."""
    found: dict[str, list[set[str]]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        session = load_session(path)
        if session.meta.get("ab"):
            ids = {m.id for m in analyze(session.data, load_profile("linux")).milestones}
            found.setdefault(session.meta["ab"]["variant"], []).append(ids)
    return found


def assert_quiet_in_force(result: subprocess.CompletedProcess[str], folder: Path,
                          boots: int) -> None:
    """Exit 0, every boot reached login, the kernel's info lines only in the base boots, and
    the verdict and the evidence under quiet's name."""
    assert result.returncode == 0, result.stderr
    shown = ab_boots(folder)
    assert len(shown["base"]) == len(shown["quiet"]) == boots, shown
    assert all("login" in ids for ids in shown["base"] + shown["quiet"])
    assert all("linux" in ids for ids in shown["base"])
    assert not any("linux" in ids for ids in shown["quiet"])     # the kernel was quiet
    assert "quiet: quiet in force" in result.stdout and f"{boots} of {boots} boots" in \
        result.stdout
    assert "verdict, at the goal login" in result.stdout
    assert list(folder.glob("edit-*.json")) == []                  # nothing left edited


def test_extlinux_on_fat_with_bootargs_unset_is_edited_at_the_prompt(
        board_copy: BoardCopy, tmp_path: Path) -> None:
    board_copy.use_extlinux(QEMU_ARGS)
    board_copy.set_env({"bootargs": None})
    original = board_copy.get("extlinux/extlinux.conf")
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        result = bootlab(*AB, url, "--boots", "2", "--sessions", str(sessions))
    assert "no earlier boot on this port: booting the board as it is once" in result.stderr
    assert f"the kernel's command line (from its log): {QEMU_ARGS}" in result.stderr
    assert "at the U-Boot prompt (fatwrite):" in result.stderr
    assert f"+    append {QEMU_ARGS} quiet" in result.stderr       # the diff, said once
    assert result.stderr.count(f"+    append {QEMU_ARGS} quiet") == 1
    assert_quiet_in_force(result, sessions, 2)
    assert board_copy.get("extlinux/extlinux.conf") == original


def test_extlinux_on_ext4_is_refused_as_typed_and_edited_from_linux(
        board_copy: BoardCopy, tmp_path: Path) -> None:
    board_copy.use_extlinux_ext4(QEMU_ARGS, tmp_path / "work")
    board_copy.set_env({"bootargs": None})
    original = board_copy.boot_file("/extlinux/extlinux.conf")
    typed = tmp_path / "typed"
    with board_copy.start() as url:
        result = bootlab(*AB, url, "--boots", "2", "--sessions", str(typed))
    assert result.returncode == BAD_INPUT, result.stderr
    assert ("variant quiet: Quiet kernel (quiet) cannot be applied: this board's kernel "
            "arguments come from the `append` line of /extlinux/extlinux.conf on virtio 0:1, "
            "which the U-Boot environment cannot change; it cannot be edited at the U-Boot "
            "prompt (its file system is ext4 and this U-Boot has no ext4write): use "
            "--from-linux --persist to edit it from Linux (no boot was measured)") \
        in result.stderr
    assert ab_boots(typed) == {}
    # What was found is kept with the port's sessions: advise suggests what will work here.
    (learned,) = typed.glob("*-setup-boot-*.jsonl")
    advice = bootlab("advise", str(learned))
    assert re.search(r"check: bootlab ab \S+ --variant base: --variant quiet --boots 5 "
                     r"--from-linux --persist", advice.stdout), advice.stdout
    linux = tmp_path / "linux"
    with board_copy.start() as url:                           # a new port: a first run again
        result = bootlab(*AB, url, "--boots", "1", "--from-linux", "--persist",
                         "--sessions", str(linux))
    assert "edited for each boot from Linux" in result.stderr
    assert_quiet_in_force(result, linux, 1)
    assert board_copy.boot_file("/extlinux/extlinux.conf") == original


def test_a_script_that_always_sets_bootargs_is_rebuilt_at_the_prompt(
        board_copy: BoardCopy, tmp_path: Path) -> None:
    factory = (board_copy.folder / "boot.cmd").read_text()
    script, count = re.subn(r'if test -z "\$\{bootargs\}"; then (setenv bootargs "[^"]*"); fi',
                            r"\1", factory)
    assert count == 1
    board_copy.put_script(script)
    original = board_copy.get("boot.scr")
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        result = bootlab(*AB, url, "--boots", "1", "--sessions", str(sessions))
    assert "the `setenv bootargs` in /boot.scr on virtio 0:1, which overwrites the " \
        "environment's" in result.stderr
    assert "editing /boot.scr on virtio 0:1 at the U-Boot prompt (fatwrite)" in result.stderr
    assert_quiet_in_force(result, sessions, 1)
    assert board_copy.get("boot.scr") == original       # the image, byte for byte


def test_a_bootcmd_that_rebuilds_bootargs_takes_quiet_through_its_variable(
        board_copy: BoardCopy, tmp_path: Path) -> None:
    board_copy.set_env({
        "bootcmd": "run mkargs; run distro_bootcmd",
        "mkargs": "setenv bootargs console=${console} root=/dev/vda2 rootfstype=ext4 ro "
                  "rootwait ${optargs}",
        "console": "ttyAMA0,115200", "bootargs": None})
    sessions = tmp_path / "sessions"
    with board_copy.start() as url:
        result = bootlab(*AB, url, "--boots", "1", "--sessions", str(sessions))
    assert "variant quiet: setenv optargs quiet" in result.stderr
    assert_quiet_in_force(result, sessions, 1)


@pytest.mark.timeout(2400)  # a systemd board: ~30 s a boot under TCG, more on a loaded host
def test_lab3_extlinux_read_by_grub_is_found_by_its_contents(lab3_url: str,
                                                              tmp_path: Path) -> None:
    result = bootlab(*AB, lab3_url, "--boots", "2", "--user", "root", "--password", "root",
                     "--timeout", "300", "--sessions", str(tmp_path), timeout=2300)
    # bootargs is set in this U-Boot's environment, but GRUB never passes it: the kernel's
    # line is the append line of extlinux.conf on /boot, found by its contents.
    assert "the kernel's command line (from its log): BOOT_IMAGE=" in result.stderr
    assert "the `append` line of /extlinux/extlinux.conf on virtio 0:1" in result.stderr
    assert "found by its contents" in result.stderr
    assert "at the U-Boot prompt (ext4write):" in result.stderr
    assert_quiet_in_force(result, tmp_path, 2)
    # the file's restore after the last boot is a session of its own, not that boot's tail
    for path in tmp_path.glob("*.jsonl"):
        session = load_session(path)
        if session.meta.get("ab"):
            assert len(analyze(session.data, load_profile("linux")).boots) == 1, path


def test_lab3_refuses_persist_for_bootdelay_its_environment_cannot_keep(
        lab3_url: str, tmp_path: Path) -> None:
    result = bootlab("ab", lab3_url, "--variant", "base:", "--variant", "bd0:bootdelay=0",
                     "--persist", "--boots", "2", "--sessions", str(tmp_path))
    assert result.returncode == BAD_INPUT, result.stderr
    assert ("variant bd0: No autoboot delay cannot be measured with --persist: this U-Boot "
            "has no saveenv command") in result.stderr
    assert ab_boots(tmp_path) == {}


def test_lab3_recorded_from_its_reset_button_starts_its_table_there(lab3_url: str,
                                                                    tmp_path: Path) -> None:
    """`record --power-on-cmd` pressing board 3's reset button (QEMU's `system_reset` on its
    monitor): the press is time zero, so the silence before U-Boot SPL's first byte is a
    measured row, and the boot runs from there to login; what the board printed before the
    press (it powers on at connect) is not part of it."""
    press = (f"python3 -c \"import socket, sys; s = socket.socket(socket.AF_UNIX); "
             f"s.connect(sys.argv[1]); s.sendall(b'system_reset\\n'); s.recv(64)\" "
             f"{LAB3_OUT / 'run' / 'monitor.sock'}")
    result = bootlab("record", lab3_url, "--power-on-cmd", press, "--until", "login",
                     "--timeout", "240", "--sessions", str(tmp_path), "-q")
    assert result.returncode == 0, result.stderr
    # the boot the press started: in the last session, which starts at the press (output
    # before it, the board's boot from connect, is in an earlier one when it printed any)
    path = sorted(tmp_path.glob("*.jsonl"))[-1]
    analysis = load(path).analysis
    [boot] = [b for b in analysis.boots if not b.partial]
    assert boot.zero is not None and boot.zero.what.startswith("power-on via `python3 -c")
    first = next(m for m in boot.milestones if m.source == "console")
    assert first.id in ("spl", "bootloader") and first.host_s is not None
    assert 0 < first.host_s - boot.zero.at_s < 2.0, first
    assert boot.reached("login") is not None
    shown = bootlab("analyze", str(path)).stdout
    assert re.search(r"^1 +zero \(bootlab\) +- +0\.000 .*\n1 +(spl|bootloader) +\d+ +"
                     r"0\.\d{3} ", shown, re.M), shown


def test_lab3_to_a_journal_message_placed_where_the_console_saw_it(lab3_url: str,
                                                                 tmp_path: Path) -> None:
    """`--until journal:REGEX`: after login the journal is asked for the message, and its
    journal time placed by two reads of the board's clock. Where the clock kept time, the
    placed time agrees with the console's status line of the same event; where the kernel
    counts ticks, the goal has no time and says why (exit 1), never a guess."""
    result = bootlab("boot", lab3_url, "--until", "journal:Reached target.*Multi-User",
                     "--user", "root", "--password", "root", "--sessions", str(tmp_path))
    path = next(p for p in sorted(tmp_path.glob("*.jsonl"))
                if load_session(p).meta.get("role") == "boot")
    boot = load(path).analysis.boots[-1]
    assert boot.ready is not None and "the journal logged `lab3 systemd[1]: Reached target " \
        "multi-user.target" in boot.ready, (boot.ready, result.stderr)
    goal = boot.reached("journal:Reached target.*Multi-User")
    if goal is None:
        print(boot.ready)
        assert result.returncode == 1 and "not placed: " in boot.ready, result.stderr
        # said as what it is: reached, but without a time; not "not reached within"
        assert "journal:Reached target.*Multi-User: the journal logged " in result.stderr
        return
    assert result.returncode == 0, result.stderr
    console = next(u for u in boot.units if u.name == "multi-user.target")
    assert goal.host_s is not None and goal.uncertainty_ms is not None \
        and console.ready_s is not None
    print(f"journal {goal.host_s:.3f} s ±{goal.uncertainty_ms:.1f} ms, console's status line "
          f"{console.ready_s:.3f} s")
    # the status line leaves the board after systemd logged it: a few ms of console path
    assert -goal.uncertainty_ms / 1000 - 0.005 <= console.ready_s - goal.host_s \
        <= goal.uncertainty_ms / 1000 + 0.1


def test_lab3_to_a_unit_with_its_dmesg_placed_only_within_what_the_console_proves(
        lab3_url: str, tmp_path: Path) -> None:
    """The systemd board, measured to two units (`--until unit:... --all`), each with its
    budget, user space listed unit by unit. Its emulated printk clock usually falls back to
    timer ticks, which nothing bounds: dmesg read after login is then placed nowhere. Where
    its clock is judged to keep time, each moment the console and dmesg both saw, left out, is
    placed by the others within the bounds they give, or not at all."""
    budget = tmp_path / "budgets.toml"
    budget.write_text('[budgets]\n"unit:systemd-journald.service" = 300\n'
                      '"unit:multi-user.target" = 300\n')
    result = bootlab("boot", lab3_url, "--collect", "--user", "root", "--password", "root",
                     "--until", "unit:systemd-journald.service", "--until",
                     "unit:multi-user.target", "--all", "--budget", str(budget), "--timeout",
                     "300", "--label", "collect", "--sessions", str(tmp_path), timeout=900)
    assert result.returncode == 0, result.stderr
    # the goals, two systemd units: each reached on its status line, before the login prompt,
    # and each within its budget
    first = re.search(r"^unit:systemd-journald\.service +(\d+\.\d+)", result.stdout, re.M)
    goal = re.search(r"^unit:multi-user\.target +(\d+\.\d+)", result.stdout, re.M)
    assert goal is not None and first is not None, result.stdout
    assert float(first.group(1)) < float(goal.group(1))
    for unit, found in (("systemd-journald.service", first), ("multi-user.target", goal)):
        assert f"PASS  unit:{unit} at {found.group(1)} s, within its 300.000 s budget" \
            in result.stdout, result.stdout
    assert "2 of 2 budgets met" in result.stderr
    # nothing was changed: U-Boot's bootargs, which this board never passes on, is not
    # called the kernel's command line
    assert "kernel command line" not in result.stdout + result.stderr
    (path,) = [p for p in sorted(tmp_path.glob("*-collect-*.jsonl"))
               if load_session(p).meta.get("role") == "boot"]
    collected = [e for e in load_session(path).events if e.get("event") == "collected"]
    events = [e for e in collected if e.get("source") == "dmesg"]
    assert len(events) == 1 and "Linux version" in events[0]["text"]
    # U-Boot's stages, read at the prompt before `boot`, with two reads of its timer: placed
    # when the timer kept time, refused with its pace when its calibration failed (both
    # happen on this board)
    (stages,) = [e for e in collected if e.get("source") == "bootstage"]
    assert "cli_loop" in stages["text"] and len(stages["timer"]) == 2
    # systemd's own record, between two reads of the board's monotonic clock
    (record,) = [e for e in collected if e.get("source") == "systemd"]
    assert "Id=multi-user.target" in record["text"] and len(record["uptime"]) == 2
    assert events[0]["sync_end"] != events[0]["sync"]
    shown = bootlab("analyze", str(path))
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"dmesg collected after the goal: .*\((it kept the host's time|the "
                     r"kernel's clock is counted in timer ticks|the board's clock ran at)|"
                     r"dmesg was collected but not joined: \d+ kernel lines reached the "
                     r"console up to", shown.stdout), shown.stdout
    assert re.search(r"U-Boot's stages \(bootstage, read at its prompt before `boot`; "
                     r"(U-Boot's timer, read by `gettime`: it kept the host's time .* placed "
                     r"within ±|on U-Boot's own timer, not placed: the board's clock ran at "
                     r"2\.\d+x)", shown.stdout), \
        shown.stdout
    # its critical chain, from the last target back; on the board's clock when the kernel
    # counts jiffies (this board's usual case), placed when the clock kept time
    assert re.search(r"systemd's record, read after login: \d+ units \((on the board's own "
                     r"clock: the kernel's clock is counted in timer ticks|its monotonic "
                     r"clock, read twice: it kept the host's time)", shown.stdout), shown.stdout
    # (from the goal, the unit the boot was measured to: the last of its two goals)
    assert re.search(r"critical chain to multi-user\.target .*\n.*\n +multi-user\.target +"
                     r"[\d.]+ +0\.000\n +\S+\.(service|target)", shown.stdout), shown.stdout
    # user space under the table, unit by unit, from systemd's status lines
    assert re.search(r"user space, \d+ systemd units on the console's status lines", shown.stdout)
    loaded = load(path)
    boot = loaded.analysis.boots[-1]
    units = {s.name: s for s in boot.units}
    target, login = boot.reached("unit:multi-user.target"), boot.reached("login")
    assert target is not None and login is not None and target.host_s is not None
    assert target.host_s == units["multi-user.target"].ready_s
    assert login.host_s is not None and target.host_s < login.host_s
    assert len(units) > 50 and any(s.took_s for s in units.values())
    found = anchors(loaded.source, loaded.analysis, boot, events[0])
    assert not isinstance(found, str), found
    clock = judge(found[0], events[0]["text"])
    if not clock.bounded or (boot.collected is not None and "not joined" in boot.collected):
        # This board's usual case: its kernel counts jiffies, which QEMU may deliver late and
        # then in a burst, so nothing bounds its clock; or, its TSC kept, a printk clock that
        # stalled early contradicts the console. Either way nothing of dmesg is placed.
        assert not any(m.source == "dmesg" for m in boot.milestones)
        return
    # the moments the model keeps (lines shown late by a later one are set aside: on a boot
    # whose console lines mostly came late, few are left, and there is little to leave out)
    moments = clock.anchors
    assert len(moments) >= 2
    checked = 0
    for held in moments[1:-1]:
        # every moment within 0.2 board seconds of it left out: the bounds the rest give
        # must still hold it, on a clock that loses time unevenly
        rest = [a for a in moments if abs(a.board_s - held.board_s) > 0.2]
        placed = judge(rest, events[0]["text"]).bounds(held.board_s)
        if placed is None:
            continue
        low, high = placed
        # the moment happened between its arrival less what may precede it, and its arrival
        assert low <= held.host_s + 1e-6 and high >= held.host_s - held.early_s - 1e-6, \
            (held, placed)
        checked += 1
    assert checked >= 10 or len(moments) < 20, (checked, len(moments))
