"""Board control proven on the real QEMU board (genuine U-Boot 2023.01 and Linux 6.1)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from support.paths import BOOTLAB, example_sessions

from bootlab.core.analysis.boardclock import judge
from bootlab.core.analysis.collected import anchors, collected_dmesg
from bootlab.core.analysis.loading import load
from bootlab.core.analysis.phases import phase_rows
from bootlab.core.analysis.pipeline import analyze
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source
from bootlab.exitcodes import BAD_INPUT

pytestmark = pytest.mark.board


UPTIME_12 = "test $(cut -d. -f1 /proc/uptime) -ge 12"
"""True from the moment the board's uptime reaches 12 s."""
UPTIME_11 = UPTIME_12.replace("12", "11")
"""... 11 s."""
OFFSET = "cat /proc/uptime; echo bootlab-offset > /dev/kmsg; dmesg | grep bootlab-offset"
"""The board's uptime and printk time, read together."""


def bootlab(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *argv], capture_output=True, text=True, timeout=timeout)


def boots(folder: Path, label: str) -> list[Path]:
    return [p for p in sorted(folder.glob(f"*-{label}-*.jsonl"))
            if load_session(p).meta.get("role") == "boot"]


def phase(path: Path, start: str, end: str) -> float:
    source = open_source(path)
    (boot, *_) = analyze(source.data, load_profile("linux"), source.line_time).boots
    times = {r.milestone.id: r.elapsed_s for r in phase_rows(boot)}
    first, last = times[start], times[end]
    assert first is not None and last is not None
    return last - first


def test_bootdelay_0_saved_removes_the_countdown(board_url: str, tmp_path: Path) -> None:
    result = bootlab("boot", board_url, "--set", "bootdelay=0", "--persist", "--label", "bd0",
                     "--sessions", str(tmp_path), "--login", "--run", "cat /proc/cmdline")
    assert result.returncode == 0, result.stderr
    assert "will send: setenv bootdelay 0" in result.stderr
    assert "will send: saveenv" in result.stderr
    (path,) = boots(tmp_path, "bd0")
    session = load_session(path)
    assert session.meta["settings"]["bootloader"]["bootdelay"] == "0"
    assert "root=/dev/vda2" in session.meta["outputs"]["cat /proc/cmdline"]
    # The measured boot is the autoboot after `reset`: U-Boot counted down 0 s, not 2 s.
    assert phase(path, "autoboot", "kernel_loaded") < 1.0
    default = example_sessions("default")[0]
    assert phase(default, "autoboot", "kernel_loaded") > 1.8


def test_quiet_against_default_with_a_confidence_interval(board_url: str,
                                                          tmp_path: Path) -> None:
    result = bootlab("ab", board_url, "--variant", "default:", "--variant", "quiet",
                     "--boots", "2", "--seed", "7", "--sessions", str(tmp_path), "--collect",
                     "--probe", r"mem: free ~ Mem:\s+\d+\s+(?P<used_kb>\d+)")
    assert result.returncode == 0, result.stderr
    # The quiet boots' kernel phases come from their dmesg (--collect): each kernel phase is
    # compared, with its interval, which a console-only A/B cannot do under quiet.
    row = next(line for line in result.stdout.splitlines()
               if line.startswith("phase:calibrate→kernel_done"))
    assert row.count("n=2") == 2, row
    assert re.search(r"quiet: [^\n]* the phase calibrate→kernel_done \(\d+\.?\d*% CI "
                     r"-?[\d.]+\.\.[+-]?[\d.]+ ms, 2\+2 boots", result.stdout), result.stdout
    # One verdict, at the goal: faster/slower by, no difference that matters, or undecided.
    assert re.search(r"quiet: (?:(?:faster|slower) to login by \d+ ms|no difference that "
                     r"matters to login: [+-]?\d+ ms|undecided at login: [+-]?\d+ ms) "
                     r"\(95% CI -?\d+\.\.[+-]?\d+ ms, 2\+2 boots[;)]", result.stdout), result.stdout
    assert "quiet: quiet in force" in result.stdout  # the evidence of each boot
    state = json.loads((tmp_path / "ab-ab.json").read_text())
    assert len(state["done"]) == 4
    quiet = boots(tmp_path, "quiet")
    assert len(quiet) == 2 and len(boots(tmp_path, "default")) == 2
    meta = load_session(quiet[0]).meta
    assert "quiet" in meta["settings"]["cmdline"] and meta["ab"]["variant"] == "quiet"
    assert meta["probes"]["mem"]["used_kb"] > 1000
    ids = [m.id for m in analyze(load_session(quiet[0]).data, load_profile("linux")).milestones]
    assert "linux" not in ids and "login" in ids    # the kernel was quiet


def test_lpj_is_not_applicable_on_this_cpu(board_url: str, tmp_path: Path) -> None:
    result = bootlab("boot", board_url, "--set", "lpj", "--dry-run", "--sessions",
                     str(tmp_path), "--facts-from", str(example_sessions("default")[0]))
    # Refused before anything is sent, not measured as the board as it is: the kernel skips
    # the calibration by itself (timer-based delay), so lpj= would save nothing.
    assert result.returncode == BAD_INPUT, result.stderr
    assert re.search(r"No delay calibration \(lpj\): not applicable: .*skip", result.stderr), \
        result.stderr
    assert "(--force lpj applies it anyway) (no boot was measured)" in result.stderr
    assert "will send" not in result.stderr


def test_reboot_to_userspace_is_measured_from_the_reboot(board_url: str,
                                                         tmp_path: Path) -> None:
    result = bootlab("boot", board_url, "--set", "verify=no", "--persist", "--from-linux",
                     "--label", "rb", "--sessions", str(tmp_path))
    assert result.returncode == 0, result.stderr
    (path,) = boots(tmp_path, "rb")
    data = load_session(path).data
    assert data.index(b"reboot -f") < data.index(b"Restarting system") < data.index(b"U-Boot")
    assert phase(path, "bootloader", "login") > 1.0


@pytest.mark.timeout(1200)  # up to 10 boots of ~10 s, more on a loaded host
def test_until_decided_stops_early_for_bootdelay_0(board_url: str,
                                                                tmp_path: Path) -> None:
    # Saved and reset, bootdelay=0 takes U-Boot's 2 s countdown away. Measured to the
    # kernel's load, where the setting acts, the host's load hardly spreads it (to login it
    # can spread by seconds on a busy 2-core host), so the first look (3 boots each) decides.
    result = bootlab("ab", board_url, "--variant", "base:", "--variant", "bd0:bootdelay=0",
                     "--persist", "--until-decided", "--until", "kernel_loaded",
                     "--max-boots", "5", "--seed", "5", "--sessions", str(tmp_path),
                     timeout=1100)
    assert result.returncode == 0, result.stderr
    looks = re.findall(r"bd0: look (\d) \((\d) boots each, [\d.]+% CI\): (-?\d+) ms "
                       r"\[(-?\d+), ([+-]?\d+)\], (\w+)", result.stderr)
    assert [(look[:2], look[5]) for look in looks] == [(("1", "3"), "faster")], result.stderr
    state = json.loads((tmp_path / "ab-ab.json").read_text())
    assert len(state["done"]) == 6 and len(state["until"]["looks"]) == 1
    assert "stopping after 3 boots per variant" in result.stderr
    assert re.search(r"bd0: faster to kernel_loaded by \d+ ms \([\d.]+% CI -\d+\.\.-\d+ ms, "
                     r"3\+3 boots\)", result.stdout), result.stdout
    loaded = {label: [phase(path, "bootloader", "kernel_loaded") for path in boots(tmp_path,
                                                                                   label)]
              for label in ("base", "bd0")}
    assert min(loaded["base"]) - max(loaded["bd0"]) > 1.5


def test_a_ready_goal_is_placed_where_the_boards_own_clock_says_it_turned_true(
        board_url: str, tmp_path: Path) -> None:
    """Two goals asked together (`--until ready:A --until ready:B --all`), commands that turn
    true when the board's uptime reaches 11 s and 12 s (after its login, at about 7 s):
    polled round after round after login, each goal is placed between its last failed run
    and its first success. The board's clock, placed on the session's by the dmesg
    `--collect` reads (`boardclock`), says where 11 s and 12 s fell: each goal is there."""
    result = bootlab("boot", board_url, "--until", f"ready:{UPTIME_12}", "--until",
                     f"ready:{UPTIME_11}", "--all", "--collect", "--run", OFFSET, "--label",
                     "rd", "--sessions", str(tmp_path))
    assert result.returncode == 0, result.stderr
    (path,) = boots(tmp_path, "rd")
    source = open_source(path)
    analysis = load(path).analysis
    boot = analysis.boots[-1]
    placed = {}
    for seconds, command in ((11, UPTIME_11), (12, UPTIME_12)):
        ready = boot.reached(f"ready:{command}")
        assert ready is not None and ready.source == "ready", boot.ready
        assert ready.host_s is not None and ready.uncertainty_ms is not None
        assert ready.uncertainty_ms < 250
        placed[seconds] = ready
    assert boot.ready is not None and boot.ready.count("placed within ±") == 2
    event = collected_dmesg(source.session.events if source.session else [])
    assert event is not None
    found = anchors(source, analysis, boot, event)
    assert not isinstance(found, str), found
    clock = judge(found[0], event["text"])
    assert clock.keeps_time, clock.why
    # uptime and printk time count from different moments of the kernel's start: read
    # together after login, they give the printk time of uptime 12 s
    together = re.search(r"^(\d+\.\d+) .*\n\[\s*(\d+\.\d+)\] bootlab-offset",
                         result.stdout, re.M)
    assert together is not None, result.stdout
    for seconds, ready in placed.items():
        board = clock.place(seconds + float(together.group(2)) - float(together.group(1)))
        assert board is not None and ready.host_s is not None \
            and ready.uncertainty_ms is not None
        print(f"ready {seconds} at {ready.host_s:.3f} s ±{ready.uncertainty_ms:.1f} ms; the "
              f"board's {seconds} s at {board[0]:.3f} s ±{board[1]:.1f} ms")
        assert abs(ready.host_s - board[0]) <= ready.uncertainty_ms / 1000 + 0.05, \
            (ready.host_s, board)
    shown = bootlab("analyze", str(path))
    assert len(re.findall(r"ready:test .*\(±\d+\.\d ms\) +- +1\d\.\d{3} ",
                          shown.stdout)) == 2, shown.stdout


def test_a_quiet_boot_collected_shows_its_kernel_milestones_from_dmesg(
        board_url: str, tmp_path: Path) -> None:
    result = bootlab("boot", board_url, "--set", "quiet", "--collect", "--label", "qc",
                     "--sessions", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "linux (dmesg ±" in result.stdout
    assert "moments the console and dmesg both saw" in result.stdout
    (path,) = boots(tmp_path, "qc")
    console = analyze(load_session(path).data, load_profile("linux")).milestones
    assert "linux" not in [m.id for m in console]                # quiet: not on the console
    assert all(m.fallback for m in console if m.id in ("init", "kernel_done"))
    shown = bootlab("analyze", str(path), "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    by_id = {m["id"]: m for m in data["milestones"]}
    assert by_id["linux"]["source"] == "dmesg" and by_id["init"]["source"] == "dmesg"
    assert by_id["starting_kernel"]["source"] == "console"
    # placed on the session's clock: between U-Boot's handover and the login prompt
    assert by_id["starting_kernel"]["host_s"] < by_id["linux"]["host_s"] \
        < by_id["init"]["host_s"] < by_id["login"]["host_s"]
    # the two sync lines, seconds apart, show this board's clock keeps the host's time
    assert "it kept the host's time within 200 ppm" in data["boots"][-1]["collected"]
    assert by_id["init"]["uncertainty_ms"] < 10
