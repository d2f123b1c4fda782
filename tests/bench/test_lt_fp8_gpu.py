"""cuBLASLt's block-scaled FP8 matmul (1x128 / 128x128, cuBLAS 12.9+) on a Hopper GPU, as the peer of
Day 87's block-scaled build: on the lesson's own block-quantised N(0, 1) inputs, against float64 of
the block-dequantised inputs, ragged shapes included; and the same call with A's scales put in the
wrong order fails that check (so the check can see a layout mistake)."""

from __future__ import annotations

import pytest

from course.lessons import get_lesson

LESSON = get_lesson("day87")
# (M, N, K): M and N multiples of 4 (the block modes' rule), K a multiple of 16; L = ceil(K / 128)
# of 16, 5 (padded to 8 for B's K-major columns) and 9.
SHAPES = [(1024, 1024, 2048), (1000, 1032, 528), (260, 392, 1104)]


def _plan_and_work(shape):
    # heavy: nvmath and the lesson's host, on the GPU path
    pytest.importorskip("nvmath", reason="nvmath-python is not installed: no cuBLASLt FP8 peer")
    from course.bench.lt_fp8 import LtFp8
    from course.kernel.compile import compile_lesson
    from course.lessons.day87.chooser import BLOCK_BUILD
    from course.lessons.day87.host import HOST

    work = HOST.workload(compile_lesson(LESSON, defines=BLOCK_BUILD), shape[0], 1, "bench", shape=shape)
    return LtFp8(*shape, block_scales=True), work


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_the_block_scaled_peer_is_right_against_float64(gpu_for, shape):
    gpu_for("day87")
    from course.bench.lt_fp8 import lt_block_scales

    plan, work = _plan_and_work(shape)
    qa, qb = work.qa[0], work.qb[0]
    work.poison(0)
    plan(qa.bits, qb.bits, work.out(0), lt_block_scales(qa.scales, qb.scales))
    check = work.check(work.out(0))
    assert check.passed, check.describe()
    work.poison(0)
    work.launch(0)  # the lesson's block-scaled build on the same inputs passes the same check
    assert work.check(work.out(0)).passed


@pytest.mark.gpu
@pytest.mark.hopper
def test_scales_in_the_wrong_order_fail_the_check(gpu_for):
    gpu_for("day87")
    from course.bench.lt_fp8 import lt_block_scales

    plan, work = _plan_and_work(SHAPES[1])
    qa, qb = work.qa[0], work.qb[0]
    work.poison(0)
    plan(qa.bits, qb.bits, work.out(0), lt_block_scales(qa.scales[::-1], qb.scales))
    assert not work.check(work.out(0)).passed
