"""Day 87's host side on the CPU: shapes and intervals refused before launch, the launch arithmetic."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons._fp8 import RUN_SHAPE, Build, check_every, check_fp8_shape, grid_for
from course.quiz.loader import load_quiz

LESSON = get_lesson("day87")
C = LESSON.constants()


@pytest.mark.parametrize(
    ("shape", "named"),
    [
        ((1000, 1032, 520), "K = 520"),
        ((1000, 1030, 528), "N = 1030"),
        ((8, 12, 24), "N = 12 is not a multiple of 8 and K = 24"),
    ],
)
def test_a_stride_that_breaks_the_16_byte_rule_is_refused_naming_it(shape, named):
    with pytest.raises(CourseError) as e:
        check_fp8_shape(*shape, C)
    text = str(e.value)
    assert named in text and "16 bytes" in text and "stride-16B" in text and "refused before launch" in text


@pytest.mark.parametrize("shape", [(0, 8, 16), (8, -8, 16), (8, 8, 0)])
def test_an_empty_or_negative_side_is_refused(shape):
    with pytest.raises(CourseError, match="positive integer"):
        check_fp8_shape(*shape, C)


def test_the_quiz_refusal_question_matches_the_host():
    q = load_quiz(LESSON.quiz_path).question("k-rule")
    shapes = {"k520": (1000, 1032, 520), "m1": (1, 8, 1008), "n8": (4096, 8, 4096), "k16": (4096, 4096, 16)}
    refused = set()
    for option, shape in shapes.items():
        try:
            check_fp8_shape(*shape, C)
        except CourseError:
            refused.add(option)
    assert refused == {q.answer}
    check_fp8_shape(*RUN_SHAPE, C)  # the lesson run's shape is allowed


def test_promotion_needs_the_promoting_build():
    plain, promoting = Build(256, 2, 0), Build(128, 2, 1)
    assert check_every(0, plain) == 0 and check_every(3, promoting) == 3
    with pytest.raises(CourseError, match="needs the promoting build"):
        check_every(1, plain)
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(CourseError, match="integer >= 0"):
            check_every(bad, promoting)


def test_the_grid_of_the_run_shape():
    # header: units = ceil(ceil(M/kBM)/kClusterM) * ceil(N/kBN); at most one CTA per SM, whole clusters
    assert grid_for(*RUN_SHAPE[:2], Build(256, 2, 0), 132) == 4 * 5 * 2
    assert grid_for(8192, 8192, Build(256, 2, 0), 132) == 132
    assert grid_for(8192, 8192, Build(128, 1, 1), 131) == 131
    assert grid_for(1, 8, Build(128, 2, 1), 132) == 2  # one cluster tile: both CTAs of its cluster


def test_the_block_scaled_build_promotes_every_k_tile_and_nothing_else():
    block = Build(128, 2, 1, 1)
    assert "block scales" in block.name
    assert check_every(None, block) == 1 and check_every(1, block) == 1
    assert check_every(None, Build(128, 2, 1)) == 0
    for bad in (0, 2):
        with pytest.raises(CourseError, match="promotes after every K-tile"):
            check_every(bad, block)
    flags = {"GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_BLOCK_SCALES": 1}
    c = LESSON.constants(flags)
    assert (c["kBlockScales"], c["kScaleBlock"], c["kBK"]) == (1, 128, 128)
    assert C["kBlockScales"] == 0  # the default build has none
