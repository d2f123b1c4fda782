"""The CPU models behind the Day 79-84 coding exercises, held to independent statements."""

from __future__ import annotations

import importlib

import pytest

from course.lessons import get_lesson


def models(day: int):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"course.lessons.day{day}.models")


def test_day79_boxes_cover_d_once_per_k_tile() -> None:
    m = models(79)
    c = get_lesson("day79").constants()
    n, bm, bn, bk = int(c["kDim"]), int(c["kBM"]), int(c["kBN"]), int(c["kBK"])
    # Over the grid, the A boxes of one K-tile tile A's rows exactly once, and the K-tiles tile K.
    rows_a = sorted(m.producer_copies(0, mb, 0)[4] for mb in range(n // bm))
    assert rows_a == list(range(0, n, bm))
    ks = sorted(m.producer_copies(kt, 0, 0)[3] for kt in range(n // bk))
    assert ks == list(range(0, n, bk))
    assert m.producer_copies(0, 0, 0)[0] == (bm + bn) * bk * 2  # kStageBytes


def test_day80_ring_follows_the_mbarrier_phase_rule() -> None:
    m = models(80)
    stages = int(get_lesson("day80").constants()["kStages"])
    # Simulate the empty barriers as counters of completed phases; a wait on parity p
    # passes once the phase with parity p is complete, the phase "before" phase 0
    # counting as complete (PTX ISA, mbarrier.try_wait.parity).
    completed = [0] * stages
    for i in range(m.STEPS):
        stage, parity = m.producer_step(i)[:2]
        assert stage == i % stages
        rnd = i // stages
        # Round r may proceed exactly when the consumer's r releases of this stage are done:
        # with r completed phases the current phase is r, and the wait is on parity (r - 1) & 1.
        assert (completed[stage] - 1) & 1 == parity
        completed[stage] += 1  # the consumer releases round rnd
        assert rnd + 1 == completed[stage]
    # The state after step i is the state before step i + 1.
    for i in range(m.STEPS - 1):
        after = m.producer_step(i)[8:]
        before = (m.producer_step(i + 1)[0], (((i + 1) // stages) & 1))
        assert after == before


def test_day81_consumers_cover_the_tile_once() -> None:
    m = models(81)
    rows = [
        m.epilogue_row0(0, cons, 0, warp, lane) + 8 * h
        for cons in range(2)
        for warp in range(4)
        for lane in range(0, 32, 4)
        for h in range(2)
    ]
    assert sorted(rows) == list(range(128))


@pytest.mark.parametrize(("tiles_m", "tiles_n"), [(32, 16), (17, 3), (40, 12), (1, 1), (15, 7)])
def test_day82_grouped_order_visits_every_tile_once(tiles_m: int, tiles_n: int) -> None:
    m = models(82)
    seen = [m.grouped_tile_coords(t, tiles_m, tiles_n) for t in range(tiles_m * tiles_n)]
    assert sorted(seen) == [(r, c) for r in range(tiles_m) for c in range(tiles_n)]
    assert m.grouped_tile_coords(tiles_m * tiles_n, tiles_m, tiles_n) == (-1, -1)
    # Consecutive tiles inside a full group walk down one column.
    g = min(m.GROUP_M, tiles_m)
    assert [seen[t][1] for t in range(g)] == [0] * g
    assert [seen[t][0] for t in range(g)] == list(range(g))


def test_day82_model_agrees_with_the_figures_model() -> None:
    from course.lessons.day82.figures import tile_coords, tile_grid

    g = tile_grid(4096, 1)
    m = models(82)
    for t in range(g.num_tiles):
        assert m.grouped_tile_coords(t, g.tiles_m, g.tiles_n) == tuple(tile_coords(t, g))


def test_day83_halves_cover_the_b_tile_once_for_every_cta() -> None:
    m = models(83)
    c = get_lesson("day83").constants()
    bn, cluster = int(c["kBN"]), int(c["kClusterM"]) * int(c["kClusterN"])
    copies = [m.multicast_copy(r, 0, 0, 1) for r in range(cluster)]
    rows = sorted(row for cp in copies for row in range(cp[4], cp[4] + bn // cluster))
    assert rows == list(range(bn, 2 * bn))
    assert all(cp[5] == (1 << cluster) - 1 for cp in copies)  # every CTA receives every half
    assert all(cp[4] - bn == cp[1] for cp in copies)  # the half lands on its own rows of s.b


def test_day84_row_addresses_are_distinct_16_byte_chunk_slots() -> None:
    m = models(84)
    slots = {m.staging_row_addr(cons, w, ln) for cons in range(2) for w in range(4) for ln in range(32)}
    assert len(slots) == 2 * 128  # no two threads share a (row, byte) slot
    assert all(b % 4 == 0 and b < 16 for _, _, b in slots)  # one __half2 inside the first chunk
