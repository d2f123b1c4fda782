"""The ping-pong build's turn order, modelled on the CPU (course.lessons.day87.pingpong): every chain
issued in turn order, no deadlock with the ring, every named barrier balanced at exit; and the model
catches broken turn rules, so its passes mean something."""

from __future__ import annotations

import itertools

import pytest

from course.lessons import get_lesson
from course.lessons.day87 import pingpong as pp

LESSON = get_lesson("day87")
# units per CTA (odd: a last unit alone), K-tiles (1, fewer and more than the ring), promote every
CASES = list(itertools.product((1, 2, 3, 4, 5), (1, 3, 9, 17), (0, 1, 2, 3, 12)))


@pytest.mark.parametrize(("units", "k_tiles", "every"), CASES)
def test_every_chain_in_turn_order_no_deadlock_barriers_balanced(units, k_tiles, every):
    want = pp.expected_issues(units, k_tiles, every)
    assert len(want) == units * k_tiles  # every K-tile of every unit, once
    for cluster, seed in ((1, 0), (1, 1), (2, 2), (2, 3)):
        out = pp.simulate(units, k_tiles, every, cluster=cluster, seed=seed)
        for cta in range(cluster):
            assert out.issued[cta] == want
            for bar in out.barriers[cta].values():
                assert bar.arrived == 0 and bar.by == []  # nothing left half-arrived
                assert bar.arrives == bar.waits == bar.generation


def test_the_turns_alternate_chain_by_chain_and_hand_over_where_the_other_goes_next():
    order = pp.turn_order(3, 5, 2)  # a pair, then a unit alone; chains of 2, 2 and 1 K-tiles
    assert [(c.cons, c.unit, c.k0, c.length) for c in order] == [
        (0, 0, 0, 2), (1, 1, 0, 2), (0, 0, 2, 2), (1, 1, 2, 2), (0, 0, 4, 1), (1, 1, 4, 1),
        (0, 2, 0, 2), (0, 2, 2, 2), (0, 2, 4, 1),
    ]  # fmt: skip
    out = pp.simulate(3, 5, 2, seed=7)
    # Switches between consumers: 5 in the pair plus 1 into the lone unit, each one arrive and one wait.
    assert sum(b.generation for b in out.barriers[0].values()) == 6
    assert pp.chain_lengths(5, 0) == [5] and pp.chain_lengths(5, 2) == [2, 2, 1]


def test_the_kernel_source_states_the_models_turn_rules():
    text = LESSON.kernel_path.read_text()
    assert f"const bool waitTurn = {pp.WAIT_TURN_SOURCE};" in text
    assert f"const bool handOver = {pp.HAND_OVER_SOURCE};" in text
    c = LESSON.constants({"GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_PINGPONG": 1})
    assert (c["kStages"], c["kTurnThreads"], c["kBM"], c["kStageReaders"]) == (
        pp.STAGES,
        pp.TURN_THREADS,
        64,
        1,
    )


def test_a_first_turn_that_waits_deadlocks():
    with pytest.raises(pp.OrderError, match="deadlock"):
        pp.simulate(2, 3, 1, waits=lambda cons, k0, partner, first_pair: True)


def test_a_hand_over_after_the_last_turn_is_left_half_arrived():
    out = pp.simulate(
        2, 3, 1, hands=lambda cons, partner, last_chain, next_pair: partner if cons == 0 else True
    )
    assert out.barriers[0][0].arrived == pp.WARPGROUP  # consumer 1's last bar.arrive, never matched
    assert out.barriers[0][0].arrives == out.barriers[0][0].waits + 1


def test_a_consumer_that_never_hands_over_deadlocks_its_partner():
    with pytest.raises(pp.OrderError, match="deadlock"):
        pp.simulate(2, 4, 2, hands=lambda cons, partner, last_chain, next_pair: False)


def test_a_ring_slot_read_as_the_wrong_tile_is_caught():
    # Consumer 1 not skipping consumer 0's K-tiles would read consumer 0's data: the model compares
    # each consumer's idea of a ring slot with what the producer loaded there.
    ops, reads = pp.consumer_program(1, 2, 2, 1)
    assert [op for op in ops if op[0] == "issue"] == [("issue", 1), ("issue", 3)]
    assert reads == [(1, 0), (1, 1)]
    _, holds = pp.producer_program(2, 2, 1)
    assert holds == [(0, 0), (1, 0), (0, 1), (1, 1)]


def test_the_pingpong_build_is_off_the_bench_unless_asked_and_its_grid_counts_64_row_tiles(monkeypatch):
    from course.lessons._fp8 import Build, grid_for
    from course.lessons.day87 import bench, chooser

    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert not bench.pingpong_on()
    monkeypatch.setenv(bench.PINGPONG_ENV, "1")
    assert bench.pingpong_on()
    assert bench.pingpong_title(1, 4096) == "ping-pong promoting build, every 128 (P=1) at N=4096"
    assert chooser.choose(8192, 8192, 132) == {}  # never chosen
    pingpong = Build(128, 2, 1, 0, 64)
    assert pingpong.name == "64x128 cluster 2, ping-pong promoting build"
    # 1000 rows are 16 tiles of 64 (8 clusters of two), 1032 columns 9 tiles of 128: 72 units.
    assert grid_for(1000, 1032, pingpong, 132) == 132 // 2 * 2
    assert grid_for(200, 136, pingpong, 132) == 2 * 2 * 2  # 4 tiles of 64 rows in 2 clusters, 2 columns
    assert grid_for(200, 136, Build(128, 2, 1), 132) == 1 * 2 * 2
