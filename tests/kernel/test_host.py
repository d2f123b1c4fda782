"""The one check of every lesson: bit-exact or relative with a floor; the run contract."""

import numpy as np
import pytest

from course.errors import CourseError
from course.kernel.host import check_bits, check_relative, run_lesson
from course.lessons import LESSONS


def test_check_bits_names_the_first_wrong_element():
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = want.copy()
    assert check_bits(got, want).passed
    got[1, 2] = np.nan
    got[2, 3] = -got[2, 3]
    c = check_bits(got, want)
    assert (c.failures, c.mismatch.row, c.mismatch.col, c.mismatch.want) == (2, 1, 2, 6.0)
    assert c.describe() == "2 of 12 elements wrong"
    with pytest.raises(CourseError, match="shapes must match"):
        check_bits(got[:2], want)


def test_relative_floor_fits_the_size_of_the_dot_products():
    k = 8192
    ref = np.array([[0.76347, 300.0, -2.0]])
    near_zero = ref.copy()
    near_zero[0, 0] += 1.26e-3  # FP32 accumulation error of K terms, on a result near zero
    assert not check_relative(near_zero, ref, 1e-3).passed  # floor 1: held to its own tiny size
    assert check_relative(
        near_zero, ref, 1e-3, floor=k**0.5
    ).passed  # floor sqrt(K): held to the scale of K terms
    wrong = ref.copy()
    wrong[0, 2] = 2.0  # a wrong element (sign, index): off by the scale of the result itself
    c = check_relative(wrong, ref, 1e-3, floor=k**0.5)
    assert not c.passed and (c.mismatch.row, c.mismatch.col) == (0, 2)
    assert "max(|ref|, 90.5097) floor" in check_relative(ref, ref, 1e-3, floor=k**0.5).describe()
    poisoned = ref.copy()
    poisoned[0, 1] = np.nan
    assert check_relative(poisoned, ref, 1e-3, floor=k**0.5).failures == 1  # NaN always fails


def test_run_refuses_options_the_lesson_does_not_have():
    lesson = next(iter(LESSONS.values()))
    with pytest.raises(CourseError, match=r"has no run option\(s\) \['nope'\]"):
        run_lesson(lesson, nope=1)
