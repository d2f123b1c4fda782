"""Day 88's host side on the CPU: the shapes refused before launch, the C++ program's inputs, the
float64 reference against the softmax's definition, and the check's verdicts and wording."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course.errors import CourseError, TensorMapRuleError
from course.hopper.tensormap import TileMap
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons._attention import (
    AttentionWorkload,
    attention_shape,
    check_rows,
    lcg_qkv,
    reference,
)

LESSON = get_lesson("day88")
C = LESSON.constants()


@pytest.mark.parametrize(
    ("shape", "says"),
    [
        ((1, 2, 128, 96), "D = 96 is not supported"),
        ((1, 2, 128, 64), "-DATTN_HEAD_DIM=64; this one is built for D = 128"),
        ((0, 2, 128, 128), "B must be a positive integer"),
        ((1, 2, 0, 128), "S must be a positive integer"),
        ((1, 2, 128), "four integers"),
        ((1, 2, 128.0, 128), "four integers"),
        ((1, True, 128, 128), "four integers"),
        ("1x2x128x128", "four integers"),
        ((1, 70000, 16, 128), "H = 70000 is more than the grid allows"),
        ((64, 64, 8192, 128), "split the batch"),
    ],
)
def test_a_shape_the_kernel_cannot_run_is_refused_naming_what_is_wrong(shape, says):
    with pytest.raises(CourseError) as e:
        attention_shape(shape, 128)
    assert says in str(e.value)


def test_shapes_the_kernel_runs_are_accepted_ragged_or_not():
    for shape in [(1, 1, 1, 128), (2, 16, 4097, 128), (1, 2, 1000, 128), (2, 3, 129, 128)]:
        assert attention_shape(shape, 128) == shape
    assert attention_shape((1, 1, 7, 256), 256) == (1, 1, 7, 256)


def test_the_inputs_are_the_cpp_programs_lcg_drawn_q_then_k_then_v():
    shape = (1, 2, 3, 64)
    q, k, v = lcg_qkv(shape)
    # main()'s runShape: state = 20261205 + 7 B + 13 H + 31 S, stepped before each draw
    state = (20261205 + 7 * 1 + 13 * 2 + 31 * 3) % 2**32
    n = 2 * 3 * 64
    want = []
    for _ in range(3 * n):
        state = (state * 1664525 + 1013904223) % 2**32
        want.append(((state >> 24) % 17 - 8) / 8)
    got = np.concatenate([q.ravel(), k.ravel(), v.ravel()]).astype(np.float64)
    assert got.tolist() == want
    assert q.shape == k.shape == v.shape == shape and q.dtype == np.float16


def _naive(q, k, v, causal):
    """The softmax by its definition, exp(s) / sum exp(s), no max subtracted (fine for small scores)."""
    b, h, s, d = q.shape
    o = np.zeros((b, h, s, d))
    lse = np.zeros((b, h, s))
    for i in range(b):
        for j in range(h):
            for r in range(s):
                scores = [
                    sum(float(q[i, j, r, x]) * float(k[i, j, c, x]) for x in range(d)) / math.sqrt(d)
                    for c in range(s)
                ]
                weights = [math.exp(x) if (not causal or c <= r) else 0.0 for c, x in enumerate(scores)]
                total = sum(weights)
                for x in range(d):
                    o[i, j, r, x] = sum(w * float(v[i, j, c, x]) for c, w in enumerate(weights)) / total
                lse[i, j, r] = math.log(total)
    return o, lse


@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_the_float64_reference_is_the_softmax_by_its_definition(causal):
    rng = np.random.default_rng(88)
    q, k, v = (rng.standard_normal((2, 2, 9, 8)).astype(np.float16) for _ in range(3))
    o, lse = reference(q, k, v, causal)
    want_o, want_lse = _naive(q, k, v, causal)
    np.testing.assert_allclose(o, want_o, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-12, atol=1e-12)
    if causal:  # the first query sees only the first key: its output is that key's value
        np.testing.assert_array_equal(o[:, :, 0], v[:, :, 0].astype(np.float64))
    # a subset of rows is the same rows of the whole
    sub_o, sub_lse = reference(q, k, v, causal, rows=[8, 0, 3])
    np.testing.assert_array_equal(sub_o, o[:, :, [8, 0, 3]])
    np.testing.assert_array_equal(sub_lse, lse[:, :, [8, 0, 3]])


def test_the_reference_stays_finite_where_exp_of_the_raw_score_overflows():
    q = np.full((1, 1, 2, 64), 8.0, dtype=np.float16)  # scores 8 * 8 * 64 / 8 = 512: exp(512) is inf
    k = q.copy()
    v = np.arange(128, dtype=np.float16).reshape(1, 1, 2, 64)
    o, lse = reference(q, k, v, False)
    assert np.isfinite(o).all() and np.allclose(lse, 512 + math.log(2))
    np.testing.assert_allclose(o[0, 0, 0], (v[0, 0, 0] + v[0, 0, 1]) / 2)


def test_the_checked_rows_are_all_of_a_short_head_and_64_plus_the_last_of_a_long_one():
    assert check_rows(200) == list(range(200))
    rows = check_rows(4097)
    assert len(rows) == 65 and rows[-1] == 4096 and len(set(rows)) == 65 and max(rows[:-1]) < 4097
    # every warp position of a 128-row tile: rows mod 64 fall in each 16-row warp slice
    assert {r % 64 // 16 for r in rows} == {0, 1, 2, 3}


def _work(shape, causal):
    """A workload's check path on host arrays (no GPU): the C++ inputs, the tolerances from the kernel."""
    work = object.__new__(AttentionWorkload)
    q, k, v = lcg_qkv(shape)
    work.q, work.k, work.v = q[None], k[None], v[None]
    work.shape, work.causal = shape, causal
    work.tolerance, work.lse_tolerance = float(C["kRelTolerance"]), float(C["kLseTolerance"])
    want_o, want_lse = reference(q, k, v, causal)
    return work, want_o.astype(np.float16), want_lse.astype(np.float32)


@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_the_right_answer_in_fp16_passes_both_checks(causal):
    work, o, lse = _work((1, 2, 300, 128), causal)
    o_check, lse_check = work.checks_against(o, lse)
    assert o_check.passed and lse_check.passed
    assert o_check.total == o.size and lse_check.total == lse.size
    assert 0 < o_check.max_error <= 2.0**-11  # only O's rounding to FP16
    assert lse_check.max_error < 1e-6  # float32's rounding


def test_a_wrong_element_of_o_fails_naming_batch_head_row_and_column():
    shape = (2, 2, 300, 128)
    work, o, lse = _work(shape, False)
    rows = check_rows(300)
    o[1, 0, rows[10], 77] += np.float16(0.05)
    o_check, lse_check = work.checks_against(o, lse)
    assert not o_check.passed and lse_check.passed and o_check.failures == 1
    m = o_check.mismatch
    assert (m.row, m.col) == ((1 * 2 + 0) * 300 + rows[10], 77)
    work.failed = "O"
    host = host_of(LESSON)
    host.last_work = work
    assert host.fail_line(o_check).startswith(f"FAIL at O[1][0][{rows[10]}][77]: gpu")


def test_an_unwritten_element_fails_as_never_written_even_off_the_checked_rows():
    work, o, lse = _work((1, 2, 300, 128), True)
    unchecked = next(r for r in range(300) if r not in check_rows(300))
    o[0, 1, unchecked, 5] = np.nan
    lse[0, 0, 299] = np.nan
    o_check, lse_check = work.checks_against(o, lse)
    assert not o_check.passed and o_check.mismatch.error is None
    assert (o_check.mismatch.row, o_check.mismatch.col) == (300 + unchecked, 5)
    assert not lse_check.passed and lse_check.mismatch.row == 299
    host = host_of(LESSON)
    host.last_work = work
    work.failed = "LSE"
    assert host.fail_line(lse_check).startswith("FAIL at LSE[0][0][299]: never written")


def test_a_wrong_lse_fails_with_o_right():
    work, o, lse = _work((1, 1, 40, 128), False)
    lse[0, 0, 7] += 1e-3
    o_check, lse_check = work.checks_against(o, lse)
    assert o_check.passed and not lse_check.passed and lse_check.mismatch.row == 7


def test_the_workload_refuses_a_shape_before_touching_the_gpu():
    # attention_shape runs first in the workload: the refusal needs no CuPy
    with pytest.raises(CourseError, match="D = 64 needs the build"):
        attention_shape((1, 1, 128, 64), int(C["kHeadDim"]))


def test_a_4d_map_is_a_matrix_in_planes_and_its_planes_are_checked():
    s, d, h, b = 1000, 128, 16, 2
    TileMap(d, s, 64, 128, elem_bytes=2, swizzle="128B", planes=((h, s * d * 2), (b, h * s * d * 2))).check()
    with pytest.raises(TensorMapRuleError, match="stride"):
        TileMap(d, s, 64, 128, elem_bytes=2, swizzle="128B", planes=((h, 1000),)).check()
    with pytest.raises(TensorMapRuleError, match="plane 0"):
        TileMap(d, s, 64, 128, elem_bytes=2, swizzle="128B", planes=((0, 4096),)).check()
    with pytest.raises(TensorMapRuleError, match="at most 5"):
        TileMap(d, s, 64, 128, elem_bytes=2, planes=((1, 16),) * 4).check()


def test_every_case_names_only_run_options_and_a_shape_the_default_build_runs():
    host = host_of(LESSON)
    assert {c.name for c in host.cases} == {"causal", "one-row"}
    for case in host.cases:
        assert set(case.options) <= set(host.run_options) and case.expect_pass
        if "shape" in case.options:
            assert attention_shape(case.options["shape"], int(C["kHeadDim"])) == case.options["shape"]
