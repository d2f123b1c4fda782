"""Day 89 on a Hopper GPU: every head dimension, ragged and whole S, causal or not, O and LSE
against float64; random normal inputs at the benchmark's shape; launches repeat bit for bit; and
the ping-pong kernel's O against Day 88's on the same buffers.

First passed on an H100 80GB HBM3 on 2026-12-06
(evidence/logs/2026-12-06-h100-s12/call3-day89_gpu_part2.log: 11 passed)."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from tests.lessons.attention_gpu import AttentionGpuChecks

LESSON = get_lesson("day89")


class TestDay89(AttentionGpuChecks):
    lesson_id = "day89"


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_day_88s_kernel_on_the_same_buffers_is_right_too(gpu_for, causal):
    # The benchmark's Day 88 peer: Day 88's build launched through this workload (same contract).
    # Each consumer's arithmetic is Day 88's, in the same order; both must pass the same check.
    gpu_for("day89")
    import cupy as cp

    work = host_of(LESSON).workload(
        compile_lesson(LESSON), 1000, 1, "bench", shape=(1, 16, 2048, 128), causal=causal
    )
    for compiled in (None, compile_lesson(get_lesson("day88"))):
        work.poison(0)
        work.launch(0, compiled)
        cp.cuda.get_current_stream().synchronize()
        assert work.check(work.out(0)).passed, compiled
