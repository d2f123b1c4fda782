"""The GPU check Day 87's development builds share when they only move the moment work is issued or loaded
(the turns, the late block scales): every element of D against float64 on ragged shapes, then D bit for
bit the base build's on the same inputs. A test file calls it under its own ``gpu`` and ``hopper`` marks,
after ``gpu_for("day87")``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from course.kernel.compile import compile_lesson
from course.kernel.host import run_lesson
from course.lessons import get_lesson

LESSON = get_lesson("day87")
SHAPES = [
    (200, 136, 128),
    (1000, 1032, 528),
    (130, 392, 1104),
    (2304, 2504, 768),
    (1400, 2504, 400),
    (1, 8, 1008),
]


def assert_exact_and_bit_for_bit(
    mine: Mapping[str, int],
    base: Mapping[str, int],
    cluster: int,
    shapes: Sequence[tuple[int, int, int]] = SHAPES,
    intervals: Sequence[int] = (1,),
) -> None:
    """Build ``mine`` and ``base`` at ``cluster``; at each shape and promotion interval P (``intervals``, 1
    unless given): ``mine`` passes the lesson's own check on every element, and one launch of each on the
    same inputs gives the same FP16 bits."""
    import cupy as cp

    from course.lessons.day87.host import HOST

    mine_c = compile_lesson(LESSON, defines={**mine, "GEMM_CLUSTER": cluster})
    base_c = compile_lesson(LESSON, defines={**base, "GEMM_CLUSTER": cluster})
    for shape in shapes:
        for every in intervals:
            result = run_lesson(
                LESSON, compiled=mine_c, progress=lambda line: None, shape=shape, promote_every=every
            )
            assert result.passed, (cluster, shape, every, result.lines)
            assert result.check.total == shape[0] * shape[1]
            ours = HOST.workload(mine_c, 1024, 1, "bench", shape=shape, promote_every=every)
            other = HOST.workload(base_c, 1024, 1, "bench", shape=shape, promote_every=every)
            for work in (ours, other):
                work.poison(0)
                work.launch(0)
            cp.cuda.runtime.deviceSynchronize()
            same = cp.asarray(ours.out(0)).view(cp.uint16) == cp.asarray(other.out(0)).view(cp.uint16)
            assert bool(same.all()), (cluster, shape, every, int((~same).sum()))
