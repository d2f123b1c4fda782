"""Day 86 on a Hopper GPU: every build, ragged shapes and splits, every element against float64."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernel.compile import compile_lesson
from course.kernel.host import run_lesson
from course.lessons import get_lesson
from course.lessons.day86 import chooser

LESSON = get_lesson("day86")
# The C++ program's shapes: not tile multiples in M, N or K (the last one ragged in N only).
SHAPES = [(200, 136, 72), (1000, 1032, 520), (130, 392, 1096), (2056, 264, 200), (72, 8, 8), (1, 8, 1000)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    ("bn", "cluster"), chooser.CONFIGS, ids=[f"128x{b}-c{c}" for b, c in chooser.CONFIGS]
)
def test_every_build_is_exact_on_ragged_shapes_split_or_not(gpu_for, bn, cluster):
    gpu_for("day86")
    compiled = compile_lesson(LESSON, defines={"GEMM_BN": bn, "GEMM_CLUSTER": cluster})
    for shape in SHAPES:
        # Split 3 where K has three K-tiles of 64 (the host refuses more splits than K-tiles,
        # as the C++ program's main() never asks for them: split 2 at K = 72, 1 at K = 8).
        for split in sorted({1, min(3, -(-shape[2] // 64))}):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=split
            )
            assert result.passed, (bn, cluster, shape, split, result.lines)
            assert result.check.total == shape[0] * shape[1]  # every element
            assert f"{'x'.join(map(str, shape))} split {split}: PASS" in result.lines[-1]


@pytest.mark.gpu
@pytest.mark.hopper
def test_a_refused_shape_is_refused_before_launch(gpu_for):
    gpu_for("day86")
    with pytest.raises(CourseError, match="stride-16B"):
        run_lesson(LESSON, progress=lambda line: None, shape=(1000, 1030, 520), split=1)
