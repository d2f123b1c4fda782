"""Day 87's CPU models: the promotion schedule (held to the kernel's source) and the model accumulator."""

from __future__ import annotations

import re

import numpy as np
import pytest

from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons.day87 import models

LESSON = get_lesson("day87")


@pytest.mark.parametrize(
    ("k_tiles", "every", "chains"),
    [(10, 4, [4, 4, 2]), (8, 4, [4, 4]), (10, 0, [10]), (1, 1, [1]), (3, 1, [1, 1, 1]), (5, 9, [5])],
)
def test_the_chains_partition_the_k_tiles(k_tiles, every, chains):
    assert models.promotions(k_tiles, every) == chains


def test_the_schedule_is_the_kernels_rule():
    source = LESSON.kernel_path.read_text(encoding="utf-8")
    assert "if (chain == promoteEvery && kt + 1 < p.kTiles) {" in source
    assert re.search(r"\+\+chain;", source) and "chain = 0;" in source
    assert "promote(total, acc);  // the last chain" in source


def test_bad_arguments_are_refused():
    with pytest.raises(CourseError, match="k_tiles must be >= 1"):
        models.promotions(0, 1)


def test_the_scale_of_d_is_a_float32_product():
    assert models.scale_of_d(0.5, 0.25) == 0.125
    assert models.scale_of_d(1 / 3, 3.0) == float(np.float32(np.float32(1 / 3) * np.float32(3.0)))


def test_the_block_scaled_model_is_the_dequantised_product_on_ragged_shapes():
    from course.hopper import fp8
    from course.lessons._fp8 import skew

    rng = np.random.default_rng(27)
    m, n, k = 130, 200, 300  # none a multiple of 128
    a = skew(rng.standard_normal((m, k)).astype(np.float32), 1)
    b = skew(rng.standard_normal((n, k)).astype(np.float32), 128, 8)
    a[:, 128:256] = 0  # a K-block of zeros: scale 1, no NaN
    qa, qb = fp8.quantize_blocks(a, (1, 128)), fp8.quantize_blocks(b, (128, 128))
    got = models.block_scaled_product(fp8.decode(qa.bits), fp8.decode(qb.bits), qa.scales, qb.scales)
    want = qa.dequantized() @ qb.dequantized().T
    assert np.isfinite(got).all()
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))
    # a wrong scale (B's block scales transposed in their roles) is caught
    wrong = models.block_scaled_product(fp8.decode(qa.bits), fp8.decode(qb.bits), qa.scales, qb.scales[::-1])
    assert np.max(np.abs(wrong - want)) > 1e-3 * np.max(np.abs(want))
    with pytest.raises(CourseError, match="scales of A"):
        models.block_scaled_product(fp8.decode(qa.bits), fp8.decode(qb.bits), qa.scales.T, qb.scales)


def test_the_block_scaled_promotion_is_the_kernels():
    source = LESSON.kernel_path.read_text(encoding="utf-8")
    # every K-tile: the parameter forced to 1 in this build, its scales loaded, promoted with them
    assert "promoteEvery = 1;" in source and "promoteScaled(total, acc, scales);  // this K-tile's" in source
    assert "promoteScaled(total, acc, scales);  // the last K-tile, with its scales" in source
    # total += partial * sA[row] * sB: rows row (r % 4 < 2) and row + 8, one B scale for the CTA
    assert "total[r] = fmaf(acc[r], (r % 4) < 2 ? s0 : s8, total[r]);" in source
    assert "const float s0 = s.a0 * s.b, s8 = s.a8 * s.b;" in source
    # sA is K-block-major [ceil(K/128)][M]; sB is [ceil(N/128)][ceil(K/128)]
    assert "scalesA + static_cast<size_t>(kt) * M;" in source
    assert "scalesB + static_cast<size_t>(nBlock) * kTiles + kt" in source


def test_the_hosts_self_check_scales_are_the_c_programs():
    from course.lessons._fp8 import self_check_block_scales

    source = LESSON.kernel_path.read_text(encoding="utf-8")
    assert (
        "std::ldexp(1.0f, (m + 3 * kb) % 5 - 2)" in source and "std::ldexp(1.0f, (nb + kb) % 3 - 1)" in source
    )
    a, b = self_check_block_scales(5, 300, 400)
    assert a.shape == (5, 4) and b.shape == (3, 4)
    assert a[4, 2] == 2.0 ** ((4 + 6) % 5 - 2) and b[2, 3] == 2.0 ** ((2 + 3) % 3 - 1)
