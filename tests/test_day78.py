import numpy as np
import pytest

from course import day78
from course.day78 import check, lcg_inputs, lcg_states, pass_line


def _lcg_loop(count, state=20260901):
    # The C++ loop, one step at a time, in plain Python integers.
    out = []
    for _ in range(count):
        state = (state * 1664525 + 1013904223) % 2**32
        out.append(state)
    return out


def test_vectorised_lcg_matches_the_cpp_loop():
    assert lcg_states(5000).tolist() == _lcg_loop(5000)
    assert lcg_states(0).size == 0


def test_inputs_are_the_cpp_programs():
    a, b = lcg_inputs(8)
    raw = _lcg_loop(128)
    values = [((s >> 24) % 17 - 8) / 8 for s in raw]
    assert a.dtype == np.float16 and a.shape == (8, 8)
    assert a.ravel().tolist() == values[:64]
    assert b.ravel().tolist() == values[64:]
    assert set(np.unique(lcg_inputs(256)[0] * 8).tolist()) <= set(range(-8, 9))


def test_check_uses_the_floor_and_counts_nan_as_failure():
    ref = np.array([[0.0, 100.0], [0.5, -3.0]])
    got = ref.astype(np.float32).copy()
    got[0, 0] = 0.0009  # |err| / max(0, 1) below 1e-3
    assert check(got, ref, 1e-3).passed
    got[1, 0] = np.nan
    c = check(got, ref, 1e-3)
    assert not c.passed and c.mismatch.row == 1 and c.mismatch.col == 0
    assert c.mismatch.line().startswith("FAIL at [2] (row 1, col 0): gpu nan, ref 0.500000")
    got[1, 0] = 0.5
    got[0, 1] = 100.2  # 0.2 / 100 = 2e-3 > 1e-3
    assert check(got, ref, 1e-3).mismatch.col == 1


def test_pass_line_is_the_cpp_programs():
    assert pass_line(256, 0.0, 1e-3) == "wgmma GEMM 256x256x256: PASS, max rel error 0 (tolerance 0.001)"


@pytest.mark.gpu
@pytest.mark.hopper
def test_gemm_on_the_gpu(day78_gpu):
    result = day78.run(progress=lambda s: None)
    assert result.passed, result.lines
    assert result.max_rel <= 1e-3
