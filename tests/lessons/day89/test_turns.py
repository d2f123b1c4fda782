"""The turn model (course/lessons/day89/turns.py) against the PTX ISA's barrier rule and the kernel.

The model plays both consumers warp by warp; these tests hold it to what the page says of each
variant for 1 to 12 key tiles and 50 orders each, and hold the kernel to the model's programs
(every turn line of the kernel appears where the model puts it, once)."""

from __future__ import annotations

import re

import pytest

from course.lessons import get_lesson
from course.lessons.day89 import turns

TILES = range(1, 13)
SEEDS = range(50)
SOURCE = get_lesson("day89").kernel_path.read_text("utf-8")


def outcomes(variant: str):
    for n in TILES:
        for seed in SEEDS:
            yield n, turns.run(n, seed, variant)


def test_the_kernels_turns_finish_balance_and_alternate_for_every_tile_count_and_order():
    for n, o in outcomes("kernel"):
        assert o.finished and o.balanced and turns.in_turn_order(o), (n, o.stuck, o.counts)
        # every warp of both consumers issued S and P V of every tile once
        assert sorted(o.issued) == sorted(
            (c, w, kind, t)
            for c in (0, 1)
            for w in range(turns.WARPS)
            for kind in ("S", "PV")
            for t in range(n)
        )


def test_the_orders_really_differ():
    # the seeds pick different interleavings: the checks above are over more than one order
    issued = {tuple(turns.run(5, seed).issued) for seed in SEEDS}
    assert len(issued) > 10


def test_without_the_last_pass_consumer_1_hangs_at_its_last_wait():
    for n, o in outcomes("no-last-pass"):
        assert not o.finished
        assert {(c, step.op, step.arg) for c, _, step in o.stuck} == {(1, "sync", 2)}
        assert len(o.stuck) == turns.WARPS
        # it waits before its last P V: every S and all but the last P V were issued
        assert sum(1 for c, w, kind, t in o.issued if c == 1 and w == 0 and kind == "PV") == n - 1


def test_without_the_first_pass_nothing_starts():
    for _, o in outcomes("no-first-pass"):
        assert not o.finished and o.issued == []
        assert {(c, step.op) for c, _, step in o.stuck} == {(0, "sync"), (1, "sync")}


def test_a_last_pass_from_consumer_1_leaves_barrier_1_half_counted():
    for _, o in outcomes("both-last-pass"):
        assert o.finished and turns.in_turn_order(o)
        assert o.counts == {1: 128, 2: 0}


def test_passing_to_oneself_hangs_on_the_ring_once_there_are_more_tiles_than_stages():
    # as on the H100 (evidence/h100-80gb-hbm3/day89.pass-to-self.json: the lesson's 8 key tiles hung)
    for n, o in outcomes("pass-to-self"):
        if n <= turns.STAGES:  # the ring never has to turn: one warpgroup after the other
            assert o.finished and o.balanced and not turns.in_turn_order(o)
        else:  # consumer 0 waits for K(STAGES), the producer for consumer 1, consumer 1 for its turn
            assert not o.finished
            assert {(c, step.op, step.arg) for c, _, step in o.stuck} == {
                (0, "S", turns.STAGES),
                (1, "sync", 2),
            }


def test_without_the_ring_passing_to_oneself_finishes_one_warpgroup_after_the_other():
    for n in TILES:
        for seed in SEEDS[:10]:
            o = turns.run(n, seed, "pass-to-self", stages=None)
            assert o.finished and o.balanced and not turns.in_turn_order(o)
            # consumer 1's first wait is met only by consumer 0's pass after its loop
            first1 = min(i for i, (c, *_) in enumerate(o.issued) if c == 1)
            assert all(c == 0 for c, *_ in o.issued[:first1]) and all(c == 1 for c, *_ in o.issued[first1:])


def test_the_ring_never_stops_the_kernel_and_each_s_waits_for_both_releases():
    for _, o in outcomes("kernel"):
        assert o.finished
        for i, (_, _, kind, tile) in enumerate(o.issued):
            if kind == "S" and tile >= turns.STAGES:
                before = o.issued[:i]
                assert all((cc, 0, "PV", tile - turns.STAGES) in before for cc in (0, 1))


def test_the_programs_count_n_plus_one_waits_and_passes_per_barrier():
    for n in TILES:
        c0, c1 = turns.program(0, n), turns.program(1, n)
        waits = [sum(s.op == "sync" and s.arg == b for s in c0 + c1) for b in (1, 2)]
        passes = [sum(s.op == "arrive" and s.arg == b for s in c0 + c1) for b in (1, 2)]
        assert waits == passes == [n + 1, n + 1]
        assert sum(s.op == "arrive" for s in c0) == n + 2 and sum(s.op == "arrive" for s in c1) == n


def test_the_schedule_is_pv_then_next_s_in_a_turn():
    assert turns.schedule_lines(2) == [
        "turn 0, consumer 0: S(0) = Q K(0)^T",
        "turn 0, consumer 1: S(0) = Q K(0)^T",
        "turn 1, consumer 0: O += P(0) V(0), then S(1) = Q K(1)^T",
        "turn 1, consumer 1: O += P(0) V(0), then S(1) = Q K(1)^T",
        "turn 2, consumer 0: O += P(1) V(1)",
        "turn 2, consumer 1: O += P(1) V(1)",
    ]


def test_an_unknown_variant_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown variant 'both'"):
        turns.program(0, 2, "both")


def _region(name: str) -> str:
    m = re.search(rf"// snippet: {name}\n(.*?)// end snippet", SOURCE, re.S)
    assert m, name
    return m.group(1)


def test_the_kernel_is_the_models_program():
    # the model's constants are the kernel's
    c = get_lesson("day89").constants()
    assert (c["kTurnBarrier"], c["kTurnThreads"]) == (turns.FIRST_BARRIER, turns.THREADS)
    consumer = _region("consumer")
    lines = [line.strip() for line in consumer.splitlines()]
    # the order the model plays: first pass, first wait, [S (in qkTile), wait, P V], last pass
    order = [
        lines.index("if (cons == 0) turnPass(0);"),
        lines.index("turnWait(cons);"),
        lines.index("for (int kt = 0; kt < kvTiles; ++kt) {"),
        lines.index("qkTile(sAcc, s, stage, cons);"),
        len(lines) - 1 - lines[::-1].index("turnWait(cons);"),
        lines.index("pvTile(oAcc, p, s, stage);"),
        lines.index("if (cons == 0) turnPass(1);"),
    ]
    assert order == sorted(order) and lines.count("turnWait(cons);") == 2
    assert sum("turnPass(" in line for line in lines) == 2
    # qkTile: commit, pass to the other consumer, then wait for S
    qk = [line.strip() for line in _region("qk-wgmma").splitlines()]
    at = qk.index("turnPass(1 - cons);")
    assert qk[at - 1] == "wgmmaCommit();" and qk[at + 1] == "wgmmaWait<0>();"
    # the two helpers: bar.sync on this consumer's barrier, bar.arrive on the one named
    pingpong = _region("pingpong")
    assert (
        'asm volatile("bar.sync %0, %1;" ::"r"(kTurnBarrier + cons), "n"(kTurnThreads) : "memory");'
        in pingpong
    )
    assert (
        'asm volatile("bar.arrive %0, %1;" ::"r"(kTurnBarrier + to), "n"(kTurnThreads) : "memory");'
        in pingpong
    )
