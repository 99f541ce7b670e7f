"""The console's packed scrollback behaves as a list of the lines kept, in bounded memory."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from bootlab.core.capture.lines import Line
from bootlab.ui.widgets.line_store import BLOCK_BYTES, BLOCK_LINES, LineStore

RAWS = st.binary(max_size=40)
TIMES = st.one_of(st.none(), st.integers(min_value=0, max_value=10**15))
STEPS = st.lists(st.tuples(st.lists(st.tuples(RAWS, TIMES, st.booleans()), max_size=300),
                           st.integers(min_value=-5, max_value=400)), max_size=12)


@settings(max_examples=60, deadline=None)
@given(steps=STEPS, gap=st.integers(min_value=1, max_value=3))
def test_store_equals_a_list_of_lines(steps: list[tuple[list[tuple[bytes, int | None, bool]],
                                                        int]], gap: int) -> None:
    """Appends, drops, indexing, slicing, times, raws and number lookups agree with a list."""
    store, model, number, offset = LineStore(), list[Line](), 1, 0
    for batch, drop in steps:
        new = []
        for raw, t_ns, terminated in batch:
            new.append(Line(number, raw, t_ns, offset, terminated))
            number += gap
            offset += len(raw) + 1
        store.extend(new)
        model += new
        store.drop(drop)
        del model[:max(0, drop)]
        assert len(store) == len(model)
        assert list(store) == model
        assert store[-1:] == model[-1:] and store[1::3] == model[1::3]
        for i in {0, len(model) // 2, len(model) - 1} if model else ():
            assert store[i] == model[i] and store[i - len(model)] == model[i]
            assert store.raw(i) == model[i].raw and store.t_ns(i) == model[i].t_ns
        for probe in (1, number - gap, *(line.number + d for line in model[:3] for d in (0, 1))):
            expected = next((i for i, line in enumerate(model) if line.number >= probe),
                            len(model))
            assert store.index_of(probe) == expected
            assert store.since(probe) == model[expected:]


def test_index_out_of_range() -> None:
    store = LineStore()
    store.extend([Line(1, b"a", 0)])
    for index in (1, -2):
        try:
            store[index]
        except IndexError:
            continue
        raise AssertionError(f"index {index} did not fail")


def test_memory_is_blocks_not_objects() -> None:
    """Lines held are not objects the collector walks, and pruning frees whole blocks: the
    blocks alive stay at the cap's worth plus one however many lines passed through."""
    cap = 10 * BLOCK_LINES
    store = LineStore()
    tracked = len(gc.get_objects())
    for first in range(1, 40 * BLOCK_LINES, 700):
        store.extend([Line(n, b"kernel: message %d" % n, n) for n in range(first, first + 700)])
        store.drop(len(store) - cap)
        assert len(store._blocks) <= cap // BLOCK_LINES + 1
    assert len(store) == cap
    assert len(gc.get_objects()) - tracked < 100
    total = len(range(1, 40 * BLOCK_LINES, 700)) * 700
    assert store[0].number == total - cap + 1 and store[-1].number == total


def test_a_cut_line_and_no_time_survive() -> None:
    store = LineStore()
    store.extend([Line(7, b"x" * 10, None, 3, terminated=False)])
    assert store[0] == Line(7, b"x" * 10, None, 3, terminated=False)
    assert store.t_ns(0) is None


def test_lines_past_a_blocks_mapping_move_it_to_a_larger_one() -> None:
    """Long lines outgrow a block's first mapping: its bytes move, none are lost."""
    store = LineStore()
    lines = [Line(n, bytes([65 + n % 26]) * (n * 37_000 % (BLOCK_BYTES + 5)), n, n)
             for n in range(1, 40)]
    store.extend(lines[:3])
    store.extend(lines[3:])
    assert len(store._blocks) == 1 and len(store._blocks[0].data) > BLOCK_BYTES
    assert list(store) == lines
    assert [store.raw(i) for i in range(len(lines))] == [line.raw for line in lines]
