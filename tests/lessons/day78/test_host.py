"""Day 78's host side (course/lessons/day78/host.py): the C++ program's LCG inputs, its
relative-error check and its PASS and failure lines; and, on a Hopper GPU, the GEMM."""

from __future__ import annotations

import numpy as np
import pytest

from course.errors import CourseError
from course.kernel.host import check_relative, run_lesson
from course.lessons import get_lesson
from course.lessons.day78.host import HOST, LCG_SEED, lcg_inputs, lcg_states, pass_line

LESSON = get_lesson("day78")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")
TOLERANCE = float(LESSON.constants()["kRelTolerance"])


def _lcg_loop(count, state=20260901):
    # The C++ loop, one step at a time, in plain Python integers.
    out = []
    for _ in range(count):
        state = (state * 1664525 + 1013904223) % 2**32
        out.append(state)
    return out


def test_the_seed_and_the_step_are_the_cpp_programs():
    assert LCG_SEED == 20260901
    assert "20260901" in SOURCE and "1664525" in SOURCE and "1013904223" in SOURCE


def test_vectorised_lcg_matches_the_cpp_loop():
    assert lcg_states(5000, LCG_SEED).tolist() == _lcg_loop(5000)
    assert lcg_states(3, 1).tolist() == _lcg_loop(3, state=1)
    assert lcg_states(0, LCG_SEED).size == 0


def test_a_negative_count_is_refused():
    with pytest.raises(CourseError, match=r"count must be >= 0 \(got -1\)"):
        lcg_states(-1, LCG_SEED)


def test_inputs_are_the_cpp_programs():
    a, b = lcg_inputs(8)
    raw = _lcg_loop(128)
    values = [((s >> 24) % 17 - 8) / 8 for s in raw]
    assert a.dtype == np.float16 and a.shape == (8, 8)
    assert a.ravel().tolist() == values[:64]  # A drawn first, then B
    assert b.ravel().tolist() == values[64:]
    assert set(np.unique(lcg_inputs(256)[0] * 8).tolist()) <= set(range(-8, 9))


def test_check_uses_the_floor_and_counts_nan_as_failure():
    ref = np.array([[0.0, 100.0], [0.5, -3.0]])
    got = ref.astype(np.float32).copy()
    got[0, 0] = 0.0009  # |err| / max(0, 1) below 1e-3
    assert check_relative(got, ref, 1e-3).passed
    got[1, 0] = np.nan
    c = check_relative(got, ref, 1e-3)
    assert not c.passed and c.failures == 1 and c.mismatch.row == 1 and c.mismatch.col == 0
    assert HOST.fail_line(c).startswith("FAIL at [2] (row 1, col 0): gpu nan, ref 0.500000")
    got[1, 0] = 0.5
    got[0, 1] = 100.25  # 0.25 / 100 = 2.5e-3 > 1e-3
    c = check_relative(got, ref, 1e-3)
    assert c.mismatch.col == 1 and c.mismatch.error == 2.5e-3
    assert (
        HOST.fail_line(c) == "FAIL at [1] (row 0, col 1): gpu 100.250000, ref 100.000000, rel 0.0025 > 0.001"
    )


def test_the_hosts_failure_line_is_the_cpp_programs_with_row_and_column():
    assert '"FAIL at [%zu]: gpu %f, ref %f, rel %g > %g\\n"' in SOURCE
    ref = np.zeros((64, 64))
    got = ref.astype(np.float32)
    got[3, 5] = 2.0
    c = check_relative(got, ref, TOLERANCE)
    assert HOST.fail_line(c) == "FAIL at [197] (row 3, col 5): gpu 2.000000, ref 0.000000, rel 2 > 0.001"
    assert HOST.fail_line(check_relative(ref.astype(np.float32), ref, TOLERANCE)) == "no mismatch"


def test_pass_line_is_the_cpp_programs():
    assert pass_line(256, 0.0, 1e-3) == "wgmma GEMM 256x256x256: PASS, max rel error 0 (tolerance 0.001)"
    assert '"wgmma GEMM %dx%dx%d: PASS, max rel error %g "' in SOURCE
    ref = np.full((4, 4), 2.0)
    c = check_relative(ref.astype(np.float32) * np.float32(1.0005), ref, TOLERANCE)
    assert HOST.pass_line(4096, c) == (
        f"wgmma GEMM 4096x4096x4096: PASS, max rel error {c.max_error:g} (tolerance 0.001)"
    )
    assert c.max_error == pytest.approx(5e-4, rel=1e-3)


def test_day78_has_no_run_options():
    assert HOST.run_options == () and HOST.cases == ()
    with pytest.raises(CourseError, match=r"day78 has no run option\(s\) \['grid'\] \(its options: none\)"):
        run_lesson(LESSON, progress=lambda line: None, grid=(1, 1))


# --- on a Hopper GPU -------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.hopper
def test_gemm_on_the_gpu(day78_gpu):
    result = run_lesson(LESSON, progress=lambda line: None)
    assert result.passed, result.lines
    assert result.check.kind == "relative" and result.check.total == 256 * 256
    assert result.check.max_error <= TOLERANCE
    assert result.lines[-1] == pass_line(256, result.check.max_error, TOLERANCE)
