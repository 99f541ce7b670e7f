"""`bootlab ab` over several labgrid places (`--place A --place B`, `--place-tag KEY=VALUE`):
real labgrid-coordinator, labgrid-exporter and ser2net on 127.0.0.1 (tests/support/farm.py).

Two fake boards show the places' life: every place acquired before any boot, the boots spread
over them, all released at the end and on SIGTERM; one held by someone else stops the run
before any boot naming the holder and which of the run's places it is, and a tag leaves a held
place out. Two QEMU boards (`board` mark) measure the speed-up: the same A/B run on one place,
then on both, side by side in one test.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from support.farm import Farm
from support.paths import BOOTLAB

from bootlab.core.board.abplan import ABState
from bootlab.core.capture.session import load_session
from bootlab.transports.place import identity

FAKE_AB = ("ab", "--variant", "base:", "--variant", "quiet", "--seed", "1", "--power-off", "0.2",
           "--timeout", "30")


def bootlab(farm: Farm, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOOTLAB, *args], env=farm.env(), capture_output=True, text=True,
                          timeout=timeout)


def per_board(state: ABState) -> Counter[tuple[str, str]]:
    """Boots done per (board, variant)."""
    return Counter((state.boards[step], step[0]) for step in state.done)


def test_a_tag_spreads_the_run_over_its_places(fake_pair_farm: Farm, tmp_path: Path) -> None:
    farm = fake_pair_farm
    result = bootlab(farm, *FAKE_AB, "--place-tag", "board=fake", "--boots", "2", "--sessions",
                     str(tmp_path))
    assert result.returncode == 0, result.stderr
    for place in ("bench-a", "bench-b"):
        assert f"place {place}: acquired as" in result.stderr
        assert f"place {place}: released" in result.stderr
        assert f"[place:{place}] " in result.stderr
        assert farm.holder(place) is None
    state = ABState.load(tmp_path / "ab-ab.json")
    assert state.finished and len(state.done) == 4
    counts = per_board(state)
    assert {board for board, _ in counts} == {"place:bench-a", "place:bench-b"}
    for board in ("place:bench-a", "place:bench-b"):
        assert counts[(board, "base")] == counts[(board, "quiet")] == 1
    for step, name in state.done.items():
        meta = load_session(tmp_path / name).meta
        assert meta["port"] == state.boards[step] == f"place:{meta['place']}"
    assert "on 2 boards, blocked" in result.stdout


def test_a_held_place_stops_the_run_before_any_boot(fake_pair_farm: Farm,
                                                    tmp_path: Path) -> None:
    farm = fake_pair_farm
    switches = len(farm.power.switches)
    farm.client("-p", "bench-b", "acquire", user="alice")
    try:
        named = bootlab(farm, *FAKE_AB, "--place", "bench-a", "--place", "bench-b",
                        "--sessions", str(tmp_path / "named"))
        assert farm.holder("bench-a") is None          # acquired first, released again
        assert len(farm.power.switches) == switches    # no board was powered
        tagged = bootlab(farm, *FAKE_AB, "--place-tag", "board=fake", "--boots", "1",
                         "--sessions", str(tmp_path / "tagged"))
    finally:
        farm.client("-p", "bench-b", "release", user="alice")
    host = identity().split("/")[0]
    assert named.returncode == 3, named.stderr
    assert f"place bench-b is held by alice on {host}" in named.stderr
    assert "place 2 of the run's 2, bench-a, bench-b; nothing was booted" in named.stderr
    assert "place bench-a: released" in named.stderr
    assert not list((tmp_path / "named").glob("*.jsonl"))
    assert not list((tmp_path / "named").glob("ab-*.json"))   # a refused run leaves no state
    assert {index for index, _ in farm.power.switches[switches:]} == {0}   # bench-a only
    # a tag leaves the held place out, saying so, and runs on the free one
    assert tagged.returncode == 0, tagged.stderr
    assert f"left out, being held: bench-b by alice on {host}" in tagged.stderr
    state = ABState.load(tmp_path / "tagged" / "ab-ab.json")
    assert set(state.boards.values()) == {"place:bench-a"} and len(state.done) == 2
    assert farm.holder("bench-a") is None


def test_sigterm_releases_every_place(fake_pair_farm: Farm, tmp_path: Path) -> None:
    farm = fake_pair_farm
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        process = subprocess.Popen(
            [*BOOTLAB, *FAKE_AB, "--place", "bench-a", "--place", "bench-b", "--boots", "20",
             "--sessions", str(tmp_path / "sessions")], env=farm.env(),
            stdout=subprocess.DEVNULL, stderr=err, text=True)
    try:
        deadline = time.monotonic() + 60               # both boards booting
        while log.read_text().count("] boot ") < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert farm.holder("bench-a") == farm.holder("bench-b") == identity()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    assert process.returncode == 1, text
    assert "cancelled" in text
    for place in ("bench-a", "bench-b"):
        assert f"place {place}: released" in text
        assert farm.holder(place) is None
    state = ABState.load(tmp_path / "sessions" / "ab-ab.json")
    assert not state.finished                          # stopped halfway: resumable


QEMU_AB = ("ab", "--variant", "default:", "--variant", "nodelay:bootdelay=0", "--persist",
           "--boots", "4", "--until", "kernel_loaded", "--seed", "3", "--power-off", "0.5")
"""The QEMU board's factory bootdelay is 2 s: 0 saves ~2 s up to the kernel loaded (past it
the boot's times vary by seconds on a loaded host). 4 rounds: two on each of two boards."""
VERDICT = "nodelay: faster to kernel_loaded by "


@pytest.mark.board
def test_two_qemu_places_finish_sooner_with_the_same_verdict(qemu_pair_farm: Farm,
                                                             tmp_path: Path) -> None:
    """The same run on one place and on both (`--place-tag`), measured one, two, two, one so
    that a change in the shared host's load weighs on both alike."""
    farm = qemu_pair_farm
    places = {"one": ("--place", "qemu-a"), "two": ("--place-tag", "board=qemu")}
    walls: dict[str, list[float]] = {"one": [], "two": []}
    outs: dict[str, list[str]] = {"one": [], "two": []}
    for index, kind in enumerate(("one", "two", "two", "one")):
        t0 = time.monotonic()
        result = bootlab(farm, *QEMU_AB, *places[kind], "--sessions",
                         str(tmp_path / f"{index}-{kind}"), timeout=600)
        walls[kind].append(time.monotonic() - t0)
        assert result.returncode == 0, result.stderr
        assert farm.holder("qemu-a") is None and farm.holder("qemu-b") is None
        outs[kind].append(result.stdout)
        verdict = next((line for line in result.stdout.splitlines() if VERDICT in line), None)
        print(f"{kind} place{'s' if kind == 'two' else ''}: {walls[kind][-1]:.1f} s; {verdict}")
        assert verdict is not None, result.stdout
        state = ABState.load(tmp_path / f"{index}-{kind}" / "ab-ab.json")
        counts = per_board(state)
        boards = ["place:qemu-a", "place:qemu-b"] if kind == "two" else ["place:qemu-a"]
        assert {board for board, _ in counts} == set(boards)
        for board in boards:                           # balanced per board
            assert counts[(board, "default")] == counts[(board, "nodelay")]
    one_s, two_s = sum(walls["one"]), sum(walls["two"])
    print(f"wall time, 4+4 boots to kernel_loaded: one place {one_s / 2:.1f} s, two places "
          f"{two_s / 2:.1f} s (means of 2), ratio {two_s / one_s:.2f}")
    assert all("on 2 boards, blocked" in out for out in outs["two"])
    assert not any("on 2 boards" in out for out in outs["one"])
    assert two_s < 0.85 * one_s
