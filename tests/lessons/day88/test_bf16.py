"""Day 88's BF16 build (-DATTN_BF16=1) on the CPU: the shared checks (tests/lessons/attention_bf16.py)."""

from __future__ import annotations

from tests.lessons.attention_bf16 import AttentionBf16Checks


class TestDay88Bf16(AttentionBf16Checks):
    lesson_id = "day88"


# The host side of the BF16 build, on the CPU (the same module serves Days 88, 89 and 90).

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course.errors import CourseError, TensorMapRuleError  # noqa: E402
from course.hopper.tensormap import TileMap, encode  # noqa: E402
from course.kernel.host import host_of  # noqa: E402
from course.lessons import get_lesson  # noqa: E402
from course.lessons._attention import (  # noqa: E402
    AttentionWorkload,
    bf16_values,
    check_rows,
    dtype_defines,
    dtype_of,
    lcg_qkv,
    reference,
    to_bf16_bits,
)

LESSON = get_lesson("day88")


@pytest.mark.parametrize("bad", ["bf16", "float32", "", None, np.float16])
def test_a_dtype_the_kernel_has_no_build_for_is_refused_naming_the_choices(bad):
    with pytest.raises(CourseError) as e:
        dtype_of(bad)
    said = str(e.value)
    assert "'float16', 'bfloat16'" in said and repr(bad) in said and "-DATTN_BF16=1" in said


def test_the_host_refuses_a_wrong_dtype_before_it_compiles_or_touches_the_gpu():
    with pytest.raises(CourseError, match="dtype must be one of"):
        host_of(LESSON).workload(None, 1000, dtype="half")
    assert "dtype" in host_of(LESSON).run_options


def test_the_dtype_is_a_define_the_rest_of_the_build_keeps():
    assert dtype_defines(None, "float16") == {}
    assert dtype_defines({"ATTN_HEAD_DIM": 64}, "bfloat16") == {"ATTN_HEAD_DIM": 64, "ATTN_BF16": 1}
    assert dtype_defines({"ATTN_HEAD_DIM": 64, "ATTN_BF16": 1}, "float16") == {"ATTN_HEAD_DIM": 64}


def test_float32_rounds_to_bf16_at_nearest_with_ties_to_even():
    ulp = 2.0**-7  # BF16's spacing in [1, 2): 7 stored bits of significand
    x = np.array(
        [
            1 + ulp / 2,
            1 + 3 * ulp / 2,
            1 + ulp / 2 + 2**-20,
            -(1 + ulp / 2 + 2**-20),
            3.0e38,
            2.0**-130,
            np.nan,
        ],
        dtype=np.float32,
    )
    got = bf16_values(to_bf16_bits(x))
    want = [
        1.0,
        1 + 2 * ulp,
        1 + ulp,
        -(1 + ulp),
        226 / 128 * 2.0**127,
        2.0**-130,
    ]  # 3e38 = 225.7/128 x 2^127
    assert got[:6].tolist() == pytest.approx(want, rel=0, abs=0) and np.isnan(got[6])
    assert got.dtype == np.float32 and to_bf16_bits(x).dtype == np.uint16
    # above FP16's largest (65504) BF16 still holds the value: FP32's exponent range
    assert float(bf16_values(to_bf16_bits(np.float32(1e6)))) == pytest.approx(1e6, rel=2**-8)
    rng = np.random.default_rng(90)
    y = rng.standard_normal(10000).astype(np.float32)
    back = bf16_values(to_bf16_bits(y))
    assert (
        np.abs(back - y).max() <= np.abs(y).max() * 2.0**-8
        and (np.abs(back - y) <= np.abs(y) * 2.0**-8).all()
    )
    # the C++ program's inputs, k/8 for |k| <= 8, are exact in BF16 as in FP16
    q = lcg_qkv((1, 1, 50, 64))[0]
    assert (bf16_values(to_bf16_bits(q.astype(np.float32))) == q.astype(np.float32)).all()
    half = np.ones(3, dtype=np.float16)
    assert bf16_values(half) is half  # FP16 arrays pass through as they are


def _bf16_work(shape, causal):
    """A BF16 workload's check path on host arrays: the C++ inputs as BF16 bits, the BF16 build's tolerances."""
    c = LESSON.constants({"ATTN_BF16": 1})
    work = object.__new__(AttentionWorkload)
    q, k, v = (to_bf16_bits(x.astype(np.float32)) for x in lcg_qkv(shape))
    work.q, work.k, work.v = q[None], k[None], v[None]
    work.shape, work.causal, work.bf16 = shape, causal, True
    work.tolerance, work.lse_tolerance = float(c["kRelTolerance"]), float(c["kLseTolerance"])
    want_o, want_lse = reference(bf16_values(q), bf16_values(k), bf16_values(v), causal)
    return work, to_bf16_bits(want_o.astype(np.float32)), want_lse.astype(np.float32)


@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_the_right_answer_in_bf16_passes_and_a_wrong_or_unwritten_element_fails(causal):
    work, o, lse = _bf16_work((1, 2, 300, 128), causal)
    assert work.tolerance == 3.2e-2
    o_check, lse_check = work.checks_against(o, lse)
    assert o_check.passed and lse_check.passed and o_check.total == o.size
    assert 0 < o_check.max_error <= 2.0**-9  # O's rounding to BF16 only (|O| < 1), 4x FP16's bound
    exact = reference(*(bf16_values(x[0]) for x in (work.q, work.k, work.v)), causal)[0]
    fp16_error = np.abs(exact.astype(np.float16).astype(np.float64) - exact).max()
    assert o_check.max_error > fp16_error  # coarser than the same values rounded to FP16
    rows = check_rows(300)
    wrong = o.copy()
    wrong[0, 1, rows[3], 9] = to_bf16_bits(bf16_values(wrong[0, 1, rows[3], 9]) + np.float32(0.05))
    bad, _ = work.checks_against(wrong, lse)
    assert not bad.passed and (bad.mismatch.row, bad.mismatch.col) == (300 + rows[3], 9)
    unwritten = o.copy()
    unwritten[0, 0, 7, 100] = 0xFFFF  # the poison: a NaN in BF16
    never, _ = work.checks_against(unwritten, lse)
    assert not never.passed and never.mismatch.error is None and never.mismatch.col == 100


def test_the_bf16_pass_line_is_the_cpp_programs():
    host = host_of(LESSON)
    host.last, host.last_work = ((2, 3, 1000, 128), False, "bfloat16"), None
    assert host._label() == "attn88 B=2 H=3 S=1000 D=128 BF16 non-causal"
    host.last = ((2, 3, 1000, 128), True, "float16")
    assert host._label() == "attn88 B=2 H=3 S=1000 D=128 causal"  # the FP16 line as it was
    for day in ("day88", "day89", "day90"):
        text = get_lesson(day).kernel_path.read_text(encoding="utf-8")
        assert "D=%d%s %s: PASS" in text and 'kBf16 ? " BF16" : ""' in text


def test_a_bf16_map_has_two_byte_elements():
    tile = TileMap(128, 1000, 64, 128, elem_bytes=4, swizzle="none", bfloat16=True)
    with pytest.raises(TensorMapRuleError, match="bfloat16 map has 2-byte elements"):
        encode(tile, 0)
