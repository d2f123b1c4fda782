"""course/bench/timing.py: the one timer, on the simulated GPU of conftest.py.

The simulated stream logs, in order, every event created and recorded, every
hold kernel and every call; the simulated clock advances by what each call
costs, so the timer's arithmetic can be stated exactly.
"""

from __future__ import annotations

import time
from functools import partial

import pytest

from course.bench import MIN_REPEATS
from course.bench.timing import _HOLD_MAX_S, MAX_CALLS_PER_REPEAT, Timer, in_graphs


def _rotation(sim, name: str, sets: int, ms: float, early: bool = False, host_s: float = 0.0):
    """``sets`` calls that log themselves and cost ``ms`` on the GPU each; the first few take ``host_s``
    on the host (the warm-up, where the timer measures what a launch costs the host)."""

    def call(j: int) -> None:
        sim.log.append(("call", name, j))
        if host_s and sum(1 for e in sim.log if e[:2] == ("call", name)) <= 4:
            time.sleep(host_s)
        sim.started_early = early
        sim.spend(ms)

    return [partial(call, j) for j in range(sets)]


def _batches(log):
    """The timed batches: (hold ns, whose calls, their buffer indices, what happened in order).

    A batch's steps run from the two events made for it to its end event's record.
    """
    out = []
    for i, entry in enumerate(log):
        if entry[0] != "hold":
            continue
        end = i + 1 + [e[0] for e in log[i + 1 :]].index("record", 1)  # the second record after the hold
        steps = [e[0] for e in log[i - 2 : end + 1]]
        calls = [e[1:] for e in log[i:end] if e[0] == "call"]
        out.append((entry[1], {name for name, _ in calls}, [j for _, j in calls], steps))
    return out


def test_the_hold_kernel_is_loaded_once_before_timing(simulated_gpu):
    Timer(MIN_REPEATS)
    assert simulated_gpu.holds == [0]  # launched with a zero hold: module load and first-launch cost


def test_time_together_interleaves_the_rotations_repeat_by_repeat(simulated_gpu):
    sim = simulated_gpu
    timer = Timer(MIN_REPEATS)
    sim.log.clear()
    short = 3  # fewer sets than MAX_CALLS_PER_REPEAT: a batch is one pass over them
    long = MAX_CALLS_PER_REPEAT + 8  # more: a batch is MAX_CALLS_PER_REPEAT calls, and the next one goes on
    out = timer.time_together(
        {"kernel": _rotation(sim, "kernel", short, 1.0), "peer": _rotation(sim, "peer", long, 3.0)}
    )
    first_hold = next(i for i, e in enumerate(sim.log) if e[0] == "hold")
    warm = [e[1:] for e in sim.log[:first_hold] if e[0] == "call"]
    # Warm-up, rotation by rotation: the first call alone, then at least 3 (and a batch's worth).
    assert warm == [("kernel", 0), ("kernel", 0), ("kernel", 1), ("kernel", 2)] + [("peer", 0)] + [
        ("peer", j) for j in range(MAX_CALLS_PER_REPEAT)
    ]
    batches = _batches(sim.log)
    assert len(batches) == 2 * MIN_REPEATS
    assert [names for _, names, _, _ in batches] == [{"kernel"}, {"peer"}] * MIN_REPEATS
    for hold, names, calls, steps in batches:
        inner = short if names == {"kernel"} else MAX_CALLS_PER_REPEAT
        # Two events made, the hold, start recorded, the calls, end recorded.
        assert steps == ["event", "event", "hold", "record"] + ["call"] * inner + ["record"]
        assert len(set(calls)) == inner  # a batch never calls the same buffer set twice
        assert 50_000 <= hold <= _HOLD_MAX_S * 1e9  # at least 50 µs of hold, never more than the cap
    kernel_calls = [j for _, names, calls, _ in batches if names == {"kernel"} for j in calls]
    peer_calls = [j for _, names, calls, _ in batches if names == {"peer"} for j in calls]
    assert kernel_calls == [j % short for j in range(3, 3 + short * MIN_REPEATS)]  # on from the warm-up
    assert peer_calls == [j % long for j in range(32, 32 + MAX_CALLS_PER_REPEAT * MIN_REPEATS)]
    # Per call: each batch's elapsed time over its calls (1 ms and 3 ms a call on the simulated clock).
    kernel, peer = out["kernel"], out["peer"]
    assert (kernel.median_ms, kernel.min_ms, kernel.max_ms) == pytest.approx((1.0, 1.0, 1.0))
    assert (peer.median_ms, peer.min_ms, peer.max_ms) == pytest.approx((3.0, 3.0, 3.0))
    assert (kernel.repeats, kernel.calls_per_repeat, kernel.buffers) == (MIN_REPEATS, short, short)
    assert (peer.repeats, peer.calls_per_repeat, peer.buffers) == (MIN_REPEATS, MAX_CALLS_PER_REPEAT, long)
    assert kernel.gap_repeats == peer.gap_repeats == 0


def test_batches_the_gpu_began_early_are_counted_as_gaps(simulated_gpu):
    sim = simulated_gpu
    out = Timer(MIN_REPEATS).time_together(
        {
            "on time": _rotation(sim, "on time", 4, 1.0),
            "late host": _rotation(sim, "late host", 4, 1.0, early=True),
        }
    )
    assert out["on time"].gap_repeats == 0 and out["late host"].gap_repeats == MIN_REPEATS


def test_time_is_one_rotation(simulated_gpu):
    sim = simulated_gpu
    timer = Timer(MIN_REPEATS + 5)
    sim.log.clear()
    timing = timer.time(_rotation(sim, "only", 5, 0.25))
    assert timing.median_ms == pytest.approx(0.25)
    assert (timing.repeats, timing.calls_per_repeat, timing.buffers) == (MIN_REPEATS + 5, 5, 5)
    assert len(_batches(sim.log)) == MIN_REPEATS + 5


def test_the_hold_is_capped(simulated_gpu):
    # A host that takes 20 ms a launch would need a 120 ms hold for 3 launches: capped at _HOLD_MAX_S.
    sim = simulated_gpu
    Timer(MIN_REPEATS).time(_rotation(sim, "slow host", 3, 1.0, host_s=0.02))
    assert sim.holds[1:] == [int(_HOLD_MAX_S * 1e9)] * MIN_REPEATS


def test_graphs_time_every_rotation_a_second_way_interleaved_with_the_first(simulated_gpu):
    sim = simulated_gpu
    timer = Timer(MIN_REPEATS)
    sim.log.clear()
    long = MAX_CALLS_PER_REPEAT + 8
    out = timer.samples_together(
        {"kernel": _rotation(sim, "kernel", 3, 0.5), "peer": _rotation(sim, "peer", long, 0.25)}, graphs=True
    )
    assert list(out) == ["kernel", "peer", in_graphs("kernel"), in_graphs("peer")]
    # a replayed graph does the same GPU work: the same time per call on the simulated GPU
    for name, ms in (("kernel", 0.5), ("peer", 0.25)):
        assert out[in_graphs(name)].timing().median_ms == pytest.approx(ms)
        assert out[in_graphs(name)].calls_per_repeat == out[name].calls_per_repeat
    batches = _batches(sim.log)
    assert len(batches) == 4 * MIN_REPEATS
    for r in range(MIN_REPEATS):  # repeat by repeat: kernel, peer, then each of them in a graph
        one_by_one, graphed = batches[4 * r : 4 * r + 2], batches[4 * r + 2 : 4 * r + 4]
        assert [b[1] for b in one_by_one] == [{"kernel"}, {"peer"}]
        assert all("graph" not in b[3] for b in one_by_one)
        assert all(b[2] == [] and b[3].count("graph") == 1 for b in graphed)  # no launch: one replay
    assert timer.graph_failures == {}


def test_a_rotation_that_cannot_be_captured_is_timed_one_by_one_and_said(simulated_gpu):
    sim = simulated_gpu
    timer = Timer(MIN_REPEATS)

    def synchronising(j: int) -> None:
        if sim.captured is not None:
            raise RuntimeError("operation not permitted when stream is capturing")
        sim.spend(0.1)

    out = timer.samples_together({"lib": [partial(synchronising, j) for j in range(4)]}, graphs=True)
    assert list(out) == ["lib"] and out["lib"].timing().median_ms == pytest.approx(0.1)
    assert "not permitted when stream is capturing" in timer.graph_failures["lib"]
    assert sim.captured is None  # the capture was ended
