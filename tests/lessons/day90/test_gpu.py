"""Day 90 on a Hopper GPU: every head dimension, ragged and whole S, causal or not, O and LSE
against float64; random normal inputs at the benchmark's shape; launches repeat bit for bit; and
Day 89's kernel (the benchmark's step-before peer) on the same buffers passes the same check.

Not run on a GPU yet: written and compile-checked without one on 2026-12-06; its first run is
evidence/gemm_dev/day90_gpu.sh, part 2."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from tests.lessons.attention_gpu import AttentionGpuChecks

LESSON = get_lesson("day90")


class TestDay90(AttentionGpuChecks):
    lesson_id = "day90"


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_day_89s_kernel_on_the_same_buffers_is_right_too(gpu_for, causal):
    # The benchmark's Day 89 peer: Day 89's build launched through this workload (same contract).
    gpu_for("day90")
    import cupy as cp

    work = host_of(LESSON).workload(
        compile_lesson(LESSON), 1000, 1, "bench", shape=(1, 16, 2048, 128), causal=causal
    )
    for compiled in (None, compile_lesson(get_lesson("day89"))):
        work.poison(0)
        work.launch(0, compiled)
        cp.cuda.get_current_stream().synchronize()
        assert work.check(work.out(0)).passed, compiled
