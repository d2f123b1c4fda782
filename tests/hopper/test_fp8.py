"""course.hopper.fp8: e4m3 as the OCP specification and cuda_fp8.h define it, and per-tensor quantisation."""

from __future__ import annotations

import numpy as np
import pytest

from course.errors import CourseError
from course.hopper import fp8


def _nearest_even(x: np.ndarray) -> np.ndarray:
    """Brute force: the nearest finite e4m3 byte of each value (ties to the even byte), saturating."""
    table = fp8.e4m3_table()
    pos = np.arange(128)[np.isfinite(table[:128])]
    values = table[pos]
    out = np.empty(x.shape, dtype=np.uint8)
    for i, v in enumerate(x.ravel()):
        a = min(abs(float(v)), fp8.E4M3_MAX)
        dist = np.abs(values - a)
        ties = pos[dist == dist.min()]
        best = ties[0] if len(ties) == 1 else next(t for t in ties if t % 2 == 0)
        out.ravel()[i] = best | (0x80 if np.signbit(v) else 0)
    return out


def test_the_table_has_the_formats_landmarks():
    t = fp8.e4m3_table()
    assert t[0x7E] == 448.0 == fp8.E4M3_MAX  # S.1111.110: 1.75 * 2^8
    assert np.isnan(t[0x7F]) and np.isnan(t[0xFF])  # S.1111.111: the only NaN, no infinity
    assert t[0x01] == 2.0**-9 == fp8.E4M3_MIN_SUBNORMAL
    assert t[0x08] == 2.0**-6 == fp8.E4M3_MIN_NORMAL
    assert t[0x38] == 1.0  # exponent field 7 = the bias
    assert t[0x80] == 0.0 and np.signbit(t[0x80])
    assert np.isfinite(t).sum() == 254


def test_rounding_is_to_the_nearest_value_ties_to_even_and_saturates():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(4000) * np.exp2(rng.integers(-12, 10, 4000))).astype(np.float32)
    table = fp8.e4m3_table()
    finite = table[np.isfinite(table)]
    midpoints = (np.sort(finite)[1:] + np.sort(finite)[:-1]) / 2  # every tie
    x = np.concatenate([x, finite, midpoints, [500.0, -1e9, 2.0**-10, 3 * 2.0**-11]]).astype(np.float32)
    assert np.array_equal(fp8.e4m3_bits(x), _nearest_even(x))


def test_values_round_trip_and_the_rounding_error_is_at_most_half_a_step():
    x = np.linspace(-448, 448, 10001, dtype=np.float32)
    q = fp8.round_to_e4m3(x)
    assert np.array_equal(fp8.decode(fp8.e4m3_bits(x)), q.astype(np.float64))
    normal = np.abs(x) >= fp8.E4M3_MIN_NORMAL
    # 3 mantissa bits: at most 2^-4 relative (half of the 2^-3 spacing) for normal values
    assert np.max(np.abs(q[normal] - x[normal]) / np.abs(x[normal])) <= 2.0**-4


def test_quantize_puts_amax_on_448_and_dequantises_within_a_sixteenth():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 96)).astype(np.float32)
    q = fp8.quantize(x)
    assert q.saturated == 0 and q.amax == pytest.approx(float(np.abs(x).max()))
    assert q.scale == float(np.float32(q.amax / 448))
    assert np.abs(fp8.decode(q.bits)).max() == 448.0
    back = fp8.decode(q.bits) * q.scale
    big = np.abs(x) >= fp8.E4M3_MIN_NORMAL * q.scale
    assert np.max(np.abs(back[big] - x[big]) / np.abs(x[big])) <= 2.0**-4 + 1e-6


def test_a_scale_that_is_too_small_saturates_and_says_how_many():
    x = np.array([[1.0, -2.0, 900.0, -1000.0]], dtype=np.float32)
    q = fp8.quantize(x, scale=1.0)
    assert q.saturated == 2
    assert fp8.decode(q.bits).tolist() == [[1.0, -2.0, 448.0, -448.0]]


def test_bad_input_is_refused_with_what_and_where():
    with pytest.raises(CourseError, match="NaN or an infinity at flat index 2"):
        fp8.quantize(np.array([1.0, 2.0, np.inf]))
    with pytest.raises(CourseError, match="empty"):
        fp8.quantize(np.zeros((0, 4)))
    with pytest.raises(CourseError, match="amax must be a finite number"):
        fp8.scale_for(float("nan"))
    assert fp8.scale_for(0.0) == 1.0  # an all-zero matrix keeps scale 1


def _block_definition(x: np.ndarray, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Block quantisation written out element by element: each block's amax / 448 as float32 (1 for an
    all-zero block), then each element rounded to e4m3 by the brute-force nearest-even search."""
    rows, cols = x.shape
    br, bc = block
    scales = np.ones((-(-rows // br), -(-cols // bc)), dtype=np.float32)
    bits = np.empty(x.shape, dtype=np.uint8)
    for i in range(scales.shape[0]):
        for j in range(scales.shape[1]):
            piece = x[i * br : (i + 1) * br, j * bc : (j + 1) * bc]
            amax = float(np.abs(piece).max())
            if amax > 0:
                scales[i, j] = np.float32(amax / 448)
            bits[i * br : (i + 1) * br, j * bc : (j + 1) * bc] = _nearest_even(piece / scales[i, j])
    return scales, bits


@pytest.mark.parametrize("block", [(1, 128), (128, 128)])
def test_block_quantisation_is_its_definition_with_ragged_edges_and_an_all_zero_block(block):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((200, 300)) * np.exp2(rng.integers(-6, 6, (200, 1)))).astype(np.float32)
    x[:, 128:256] = 0  # a whole K-block of zeros: every (1, 128) block there, and a (128, 128) one
    q = fp8.quantize_blocks(x, block)
    scales, bits = _block_definition(x, block)
    assert q.scales.shape == (-(-200 // block[0]), 3)  # 200 and 300 are not multiples of 128
    assert np.array_equal(q.scales, scales) and np.array_equal(q.bits, bits)
    assert np.all(q.scales[:, 1] == 1.0) and np.isfinite(q.dequantized()).all()
    assert np.all(q.dequantized()[:, 128:256] == 0) and q.saturated == 0
    # each block's largest element lands on 448 and dequantises within half a step
    back = q.dequantized()
    big = np.abs(x) >= fp8.E4M3_MIN_NORMAL * q.expanded_scales()
    assert np.max(np.abs(back[big] - x[big]) / np.abs(x[big])) <= 2.0**-4 + 1e-6


def test_block_scales_keep_a_small_row_that_one_scale_flushes():
    x = np.ones((2, 128), dtype=np.float32)
    x[1] *= 2.0**-20  # scaled by 448 / amax: 448 * 2^-20 < 2^-10, half e4m3's smallest subnormal
    assert np.all(fp8.decode(fp8.quantize(x).bits)[1] == 0)
    q = fp8.quantize_blocks(x, (1, 128))
    assert np.allclose(q.dequantized(), x, rtol=1e-6, atol=0)  # 448 times a float32 amax / 448


def test_block_quantisation_refuses_what_it_cannot_quantise():
    with pytest.raises(CourseError, match="NaN or an infinity at flat index 1"):
        fp8.quantize_blocks(np.array([[0.0, np.nan]]), (1, 128))
    with pytest.raises(CourseError, match="takes a matrix"):
        fp8.quantize_blocks(np.ones(8), (1, 128))
    with pytest.raises(CourseError, match="two positive integers"):
        fp8.quantize_blocks(np.ones((2, 2)), (0, 128))
    big = np.full((1, 4), 1000.0, dtype=np.float32)
    q = fp8.BlockQuantized(fp8.e4m3_bits(big), np.ones((1, 1), dtype=np.float32), (1, 128), 0)
    assert q.dequantized().tolist() == [[448.0] * 4]
