"""A seek back starts from the last checkpoint before its target, not from the first byte, and
shows exactly what a capture fed from the first byte shows there."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from bootlab.core.analysis.pipeline import Capture
from bootlab.core.analysis.profiles import load_profile
from bootlab.core.capture.lines import LineBlock
from bootlab.core.capture.session import SessionWriter, load_session
from bootlab.core.capture.session_index import IndexedChunks, session_index
from bootlab.session import replay
from bootlab.session.batcher import Batcher
from bootlab.session.events import Received
from bootlab.session.replay import Player, _Playback

LINUX = load_profile("linux")
SESSION = load_session(Path(__file__).parents[1] / "data" / "qemu-115200-quiet.jsonl")
# the boot played three times back to back, as a reboot loop records it
SPAN = SESSION.chunks[-1][0] + 1
CHUNKS = [(t + n * SPAN, data) for n in range(3) for t, data in SESSION.chunks]


def state(capture: Capture) -> object:
    return ([(b.index, [(m.id, m.line, m.host_s, m.values) for m in b.milestones])
             for b in capture.boots], capture.framer.number, capture.framer.offset)


def fed_until(index: int) -> Capture:
    capture = Capture(LINUX)
    for t_ns, data in CHUNKS[:index]:
        capture.feed(data, t_ns)
    return capture


def test_restarting_from_a_checkpoint_is_playing_from_the_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "CHECKPOINT_BYTES", 256)
    monkeypatch.setattr(replay, "MAX_CHECKPOINTS", 8)
    player = Player(Path("loop.jsonl"), CHUNKS, LINUX, {})
    posted: list[object] = []
    played = _Playback(Capture(LINUX), Batcher(posted.append))
    while played.index < len(CHUNKS):
        player._feed(played)
    checkpoints = player._checkpoints
    assert 2 <= len(checkpoints) <= 8 and player._spacing > 256  # thinned out
    assert state(played.capture) == state(fed_until(len(CHUNKS)))
    for target in (0, 1, len(CHUNKS) // 3, len(CHUNKS) // 2, len(CHUNKS) - 1):
        t_s = CHUNKS[target][0] / 1e9
        restarted = player._restart(t_s, posted.append)
        assert restarted.index <= target + 1
        assert restarted.index == 0 or CHUNKS[restarted.index - 1][0] / 1e9 <= t_s
        while restarted.index < len(CHUNKS) and CHUNKS[restarted.index][0] / 1e9 <= t_s:
            player._feed(restarted)
        assert state(restarted.capture) == state(fed_until(target + 1))
    # a checkpoint is never changed by playing on from it
    assert [state(c) for _, _, c in player._checkpoints] == \
        [state(fed_until(index)) for index, _, _ in player._checkpoints]


def test_a_big_session_is_scanned_ahead_and_a_seek_forward_starts_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "SCAN_BYTES", 1)
    monkeypatch.setattr(replay, "MAX_AHEAD", 8)
    monkeypatch.setattr(replay, "CHECKPOINT_BYTES", 256)
    player = Player(Path("loop.jsonl"), CHUNKS, LINUX, {})
    player.scan_ahead(lambda: False)
    assert player.scanned.is_set()
    ahead = player._ahead
    assert 6 <= len(ahead) <= 8 and [i for i, _, _ in ahead] == sorted({i for i, _, _ in ahead})
    assert [state(c) for _, _, c in ahead] == [state(fed_until(index)) for index, _, _ in ahead]
    # From the start, a seek near the end restarts from the scan's last checkpoint before it
    # and shows what playing from the first byte shows there.
    posted: list[object] = []
    played = _Playback(Capture(LINUX), Batcher(posted.append))
    target = len(CHUNKS) - 2
    t_s = CHUNKS[target][0] / 1e9
    fed: list[int] = []
    real_feed = player._feed

    def counting(playback: _Playback, show: bool = True) -> LineBlock:
        fed.append(playback.index)
        return real_feed(playback, show)

    monkeypatch.setattr(player, "_feed", counting)
    after = player._seek_to(played, replay._Seek(to_s=t_s), posted.append)
    assert state(after.capture) == state(fed_until(target + 1))
    last = max(i for i, fed_s, _ in ahead if fed_s <= t_s)
    assert fed and fed[0] == last and len(fed) == target + 1 - last   # not from the start
    assert any(type(m).__name__ == "ReplayRewound" for m in posted)
    # a session under SCAN_BYTES is not scanned
    monkeypatch.setattr(replay, "SCAN_BYTES", 1 << 40)
    small = Player(Path("loop.jsonl"), CHUNKS, LINUX, {})
    small.scan_ahead(lambda: False)
    assert small.scanned.is_set() and small._ahead == []


def test_a_big_session_scans_with_re2_and_a_long_seek_posts_what_the_console_keeps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A big session's captures (playback, scan ahead, seeks) scan reads with RE2 and reach
    the milestones a capture with Python's scan reaches; a seek across more lines than the
    console keeps posts only the last of them, the same lines playing there would show."""
    monkeypatch.setattr(replay, "SCAN_BYTES", 1)
    monkeypatch.setattr(replay, "SCROLLBACK_LINES", 40)
    player = Player(Path("loop.jsonl"), CHUNKS, LINUX, {})
    assert player.big and not player.scanned.is_set()
    player.scanned.set()  # as if scanned, with no checkpoint: the seek feeds from the start
    posted: list[object] = []
    played = _Playback(Capture(LINUX, player.big), Batcher(posted.append))
    target = len(CHUNKS) - 3
    after = player._seek_to(played, replay._Seek(to_s=CHUNKS[target][0] / 1e9),
                            posted.append)
    assert after.capture.bulk and state(after.capture) == state(fed_until(target + 1))
    shown = [line for message in posted for line in getattr(message, "lines", [])]
    every = Capture(LINUX)
    blocks = [every.feed(data, t_ns).lines for t_ns, data in CHUNKS[:target + 1]]
    lines = [line for block in blocks for line in block]
    assert len(lines) > 200
    # whole blocks are kept: at least the 40 newest lines, never a block more than needed
    assert 40 <= len(shown) < 40 + max(map(len, blocks))
    assert shown == lines[-len(shown):]
    monkeypatch.setattr(replay, "CHECKPOINT_BYTES", 256)
    player.scan_ahead(lambda: False)
    assert player._ahead
    assert all(capture.bulk for _, _, capture in player._ahead)


def test_a_seek_past_the_running_scan_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seek beyond where the scan ahead has got waits for its checkpoint there (it gets
    there faster alone) and feeds from it; a newer seek ends the wait."""
    monkeypatch.setattr(replay, "SCAN_BYTES", 1)
    monkeypatch.setattr(replay, "CHECKPOINT_BYTES", 256)
    monkeypatch.setattr(replay, "MAX_AHEAD", 8)
    player = Player(Path("loop.jsonl"), CHUNKS, LINUX, {})
    posted: list[object] = []
    target = len(CHUNKS) - 2
    t_s = CHUNKS[target][0] / 1e9
    scan = threading.Timer(0.2, player.scan_ahead, args=(lambda: False,))
    scan.start()
    started = time.monotonic()
    played = _Playback(Capture(LINUX, True), Batcher(posted.append))
    after = player._seek_to(played, replay._Seek(to_s=t_s), posted.append)
    assert time.monotonic() - started >= 0.2 and player._ahead
    scan.join()
    last = max(i for i, fed_s, _ in player._ahead if fed_s <= t_s)
    assert after.index == target + 1 and after is not played and last > 0
    assert state(after.capture) == state(fed_until(target + 1))
    # a newer seek while waiting: the wait ends, nothing is fed
    waiting = Player(Path("loop.jsonl"), CHUNKS, LINUX, {})
    threading.Timer(0.1, waiting.seek_to, args=(1.0,)).start()
    fresh = _Playback(Capture(LINUX, True), Batcher(posted.append))
    assert waiting._seek_to(fresh, replay._Seek(to_s=t_s), posted.append) is fresh
    assert fresh.index == 0


def indexed_loop(tmp_path: Path) -> IndexedChunks:
    """CHUNKS as a session file read through its index (a big session's way)."""
    path = tmp_path / "loop.jsonl"
    writer = SessionWriter(path, {"label": "loop", "profile": "linux"}, start_ns=0)
    for t_ns, data in CHUNKS:
        writer.rx(data, t_ns)
    writer.close(CHUNKS[-1][0] + 1)
    return IndexedChunks(session_index(path, cache=True))


def test_the_preview_is_what_the_capture_shows_there(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The console read from the index at a moment: the newest lines a capture fed up to
    there has (numbers, times, offsets), and its line still arriving."""
    monkeypatch.setattr(replay, "SCROLLBACK_LINES", 40)
    chunks = indexed_loop(tmp_path)
    player = Player(tmp_path / "loop.jsonl", chunks, LINUX, {})
    for target in (0, 1, 7, len(CHUNKS) // 2, len(CHUNKS) - 1):
        capture = Capture(LINUX)
        lines = [line for t_ns, data in CHUNKS[:target + 1]
                 for line in capture.feed(data, t_ns).lines]
        preview = player._preview(CHUNKS[target][0] / 1e9)
        assert preview is not None
        shown, partial = preview
        assert shown == lines[-40:] and partial == capture.framer.partial
    assert player._preview(-1.0) == ([], None)
    assert Player(Path("loop.jsonl"), CHUNKS, LINUX, {})._preview(1.0) is None  # no index


def test_a_seek_past_the_scan_shows_the_console_at_once_and_the_phases_when_it_arrives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "SCAN_BYTES", 1)
    monkeypatch.setattr(replay, "CHECKPOINT_BYTES", 256)
    monkeypatch.setattr(replay, "MAX_AHEAD", 8)
    chunks = indexed_loop(tmp_path)
    player = Player(tmp_path / "loop.jsonl", chunks, LINUX, {})
    target = len(CHUNKS) - 2
    t_s = CHUNKS[target][0] / 1e9
    posted: list[object] = []
    seen_catching_up: list[bool] = []

    def scan() -> None:
        seen_catching_up.append(player.catching_up)
        player.scan_ahead(lambda: False)

    timer = threading.Timer(0.3, scan)
    timer.start()
    played = _Playback(Capture(LINUX, True), Batcher(posted.append))
    after = player._seek_to(played, replay._Seek(to_s=t_s), posted.append)
    timer.join()
    assert seen_catching_up == [True] and not player.catching_up
    kinds = [type(m).__name__ for m in posted]
    assert kinds[:2] == ["ReplayRewound", "Received"] and kinds.count("ReplayRewound") == 1
    preview, final = posted[1], posted[-1]
    assert isinstance(preview, Received) and isinstance(final, Received)
    assert preview.boot is None and preview.lines == player._preview(t_s)[0]  # type: ignore[index]
    assert final.lines == [] and final.boot is not None
    assert state(after.capture) == state(fed_until(target + 1)) and not after.stale
    assert final.partial == after.capture.framer.partial
    # a seek after a preview that was cut short starts the panes afresh
    stale = _Playback(Capture(LINUX, True), Batcher(posted.append), stale=True)
    posted.clear()
    player._seek_to(stale, replay._Seek(to_s=0.5), posted.append)
    assert type(posted[0]).__name__ == "ReplayRewound"
