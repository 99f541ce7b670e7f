"""A measured boot on a board farm is the whole boot and only that boot (real labgrid
coordinator, exporter and ser2net on 127.0.0.1: tests/support/farm.py): output that waited in
the adapter from before the power cycle is not the boot; a gap inside a boot (the coordinator
killed and back, the exporter restarted as labgrid's unit restarts it) leaves the boot
incomplete everywhere its numbers appear; a coordinator whose exporter does not come back is
said to need it; a coordinator stopped at the end does not hang bootlab's release."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.farm import FakeOutlet, Farm, farm_parts, need_farm_tools
from support.paths import BOOTLAB
from support.pty_pair import Pty

from bootlab.core.analysis.loading import analyze_source
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.board.abplan import ABState
from bootlab.core.capture.session import load_session
from bootlab.core.capture.sources import open_source
from bootlab.transports.place import identity

SLOW = 0.015
"""Seconds per kernel line of the farm's fake board: a boot of ~4 s, long enough to lose the
coordinator in the middle of it."""


@pytest.fixture(scope="module")
def farm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Farm]:
    """A farm of one slower fake board, place `slow-1`."""
    need_farm_tools()
    adapter = Pty()
    with farm_parts(tmp_path_factory.mktemp("farm"), {"slow": FakeOutlet(adapter, SLOW)},
                    {"slow": adapter}, {"slow-1": "slow"}) as made:
        # a lab's places are on disk before the coordinator crashes: it saves them on its
        # next poll (every few seconds)
        places = made.folder / "places.yaml"
        wait_for("the coordinator to save the place",
                 lambda: places.exists() and "slow-1" in places.read_text(), 60)
        yield made


def outlet(farm: Farm) -> FakeOutlet:
    found = farm.outlets["slow"]
    assert isinstance(found, FakeOutlet)
    return found


def wait_for(what: str, check: object, timeout_s: float = 30.0) -> None:
    """Poll `check()` until it is true."""
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def start(farm: Farm, log: Path, *args: str) -> subprocess.Popen[str]:
    with log.open("w") as err:
        return subprocess.Popen([*BOOTLAB, *args], env=farm.env(), stdout=subprocess.DEVNULL,
                                stderr=err, text=True)


def finish(process: subprocess.Popen[str], farm: Farm, timeout_s: float = 120) -> None:
    try:
        process.wait(timeout=timeout_s)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if farm.coordinator is not None and farm.holder("slow-1") is not None:
            farm.client("-p", "slow-1", "release")


def test_output_buffered_before_the_power_cycle_is_not_the_boot(farm: Farm,
                                                                tmp_path: Path) -> None:
    # The board was left on, booted to login while nobody read its console: that output
    # waits in the adapter and reaches bootlab first, before its own power cycle.
    farm.power.request("/relay/0/0")
    farm.power.request("/relay/0/1")
    board = outlet(farm).board
    assert board is not None
    wait_for("the unread boot to reach login", lambda: board.logins == 1)
    result = subprocess.run([*BOOTLAB, "record", "--place", "slow-1", "--power-off", "0.2",
                             "--until", "login", "--timeout", "60", "--sessions",
                             str(tmp_path)], env=farm.env(), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    (path,) = tmp_path.glob("*.jsonl")
    session = load_session(path)
    power_on = next(e["t"] for e in session.events if e.get("state") == "on")
    assert session.before and all(t < power_on for t, _ in session.before)   # kept apart
    assert b"board login" in b"".join(data for _, data in session.before)
    assert session.chunks[0][0] >= power_on           # the boot: every byte after the power-on
    analysis = analyze_source(open_source(path), load_profile("linux"))
    (boot,) = analysis.boots
    ids = [m.id for m in boot.milestones]
    assert ids[0] == "bootloader" and ids[-1] == "login" and "linux" in ids
    login = boot.reached("login")
    assert login is not None and login.host_s is not None
    assert login.host_s - power_on / 1e9 > 1.0       # the real boot's login, seconds later
    assert any("arrived before this boot's start" in n for n in analysis.notices)
    assert "bootlab: boot 1" in result.stderr and " 0.000 s  login" not in result.stderr


def test_a_coordinator_killed_mid_boot_leaves_the_boot_incomplete(farm: Farm,
                                                                  tmp_path: Path) -> None:
    farm.power.request("/relay/0/0")
    sessions = tmp_path / "sessions"
    log = tmp_path / "stderr.txt"
    with farm.exporter_restarted():
        process = start(farm, log, "record", "--place", "slow-1", "--power-off", "0.2",
                        "--until", "login", "--timeout", "90", "--sessions", str(sessions))
        try:
            wait_for("the boot to start", lambda: "kernel_loaded" in log.read_text())
            farm.kill_coordinator()                     # gone in the middle of the boot ...
            time.sleep(1.0)                             # ... for a second, as in the field
            farm.start_coordinator()
            wait_for("bootlab to acquire the place again",
                     lambda: "acquired again" in log.read_text(), 60)
        finally:
            finish(process, farm)
    err = log.read_text()
    assert process.returncode == 0, err
    assert "lost the coordinator" in err and "this boot is incomplete" in err
    (path,) = sessions.glob("*.jsonl")
    # analyze: no total, no phase across the gap, and why
    shown = subprocess.run([*BOOTLAB, "analyze", str(path)], capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "boot 1: incomplete: the port was lost at " in shown.stdout
    rows = {line.split()[1]: line.split() for line in shown.stdout.splitlines()[1:]
            if line.startswith("1 ")}
    assert rows["login"][3] == "-"                    # no total to login
    assert rows["bootloader"][3] != "-"               # before the gap: measured
    # sessions: the total is "gap"; compare: left out, and named
    listed = subprocess.run([*BOOTLAB, "sessions", "--sessions", str(sessions)],
                            capture_output=True, text=True, timeout=60)
    assert " gap " in listed.stdout and "incomplete" in listed.stderr
    compared = subprocess.run([*BOOTLAB, "compare", str(path), str(path)],
                              capture_output=True, text=True, timeout=60)
    assert "left out (--include-incomplete" in compared.stderr


def test_a_coordinator_back_without_its_exporter_says_the_exporter_must_restart(
        farm: Farm, tmp_path: Path) -> None:
    farm.power.request("/relay/0/0")
    log = tmp_path / "stderr.txt"
    process = start(farm, log, "record", "--place", "slow-1", "--no-power", "--until", "login",
                    "--timeout", "40", "--sessions", str(tmp_path / "sessions"))
    try:
        wait_for("the place", lambda: farm.holder("slow-1") == identity())
        farm.stop_coordinator()
        assert farm.exporter is not None
        farm.exporter.wait(timeout=30)                  # it exits: nothing restarts it
        farm.start_coordinator()
        wait_for("the hint", lambda: "restart the exporter" in log.read_text(), 60)
    finally:
        process.send_signal(signal.SIGTERM)
        finish(process, farm, 60)
        farm.stop_exporter()
        farm.start_exporter()
    err = log.read_text()
    assert "labgrid's exporter exits when it loses the coordinator" in err


def test_a_coordinator_stopped_at_the_end_does_not_hang_the_release(farm: Farm,
                                                                     tmp_path: Path) -> None:
    farm.power.request("/relay/0/0")
    sessions = tmp_path / "sessions"
    log = tmp_path / "stderr.txt"
    process = start(farm, log, "record", "--place", "slow-1", "--power-off", "0.2", "--until",
                    "login", "--timeout", "60", "--sessions", str(sessions))
    try:
        wait_for("the boot to near its end",
                 lambda: "root_mounted" in log.read_text(), 60)
        assert farm.coordinator is not None
        farm.coordinator.send_signal(signal.SIGTERM)    # a graceful stop takes seconds
        stopped = time.monotonic()
        process.wait(timeout=60)
        took = time.monotonic() - stopped
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if farm.coordinator is not None:
            farm.coordinator.wait(timeout=30)
        farm.coordinator = None
        farm.stop_exporter()
        farm.start_coordinator()
        farm.start_exporter()
    err = log.read_text()
    print(f"bootlab ended {took:.1f} s after the coordinator was asked to stop")
    assert took < 25, err
    assert "AioRpcError" not in err and "Traceback" not in err, err
    assert any(line.startswith("bootlab: place slow-1: ") and ("released" in line or
                                                               "not released" in line)
               for line in err.splitlines()), err


def test_an_ab_boot_with_a_gap_is_booted_again(farm: Farm, tmp_path: Path) -> None:
    farm.power.request("/relay/0/0")
    sessions = tmp_path / "sessions"
    log = tmp_path / "stderr.txt"
    with farm.exporter_restarted():
        process = start(farm, log, "ab", "--place", "slow-1", "--power-off", "0.2",
                        "--variant", "base:", "--variant", "v:uboot:bootlab_test=1",
                        "--boots", "1", "--seed", "1", "--timeout", "60",
                        "--sessions", str(sessions))
        try:
            wait_for("the first measured boot", lambda: "boot 1/2" in log.read_text())
            wait_for("its kernel", lambda: len(list(sessions.glob("*-base-*.jsonl")) +
                                                list(sessions.glob("*-v-*.jsonl"))) == 1)
            time.sleep(1.0)                             # inside the boot's kernel lines
            farm.kill_coordinator()
            time.sleep(1.0)
            farm.start_coordinator()
        finally:
            finish(process, farm, 240)
    err = log.read_text()
    assert process.returncode == 0, err
    assert "incomplete" in err and "it will be booted again" in err, err
    state = ABState.load(sessions / "ab-ab.json")
    assert state.finished and len(state.done) == 2
    for name in state.done.values():                    # the statistics: whole boots only
        meta = load_session(sessions / name).meta
        assert not meta.get("gaps"), name
