"""course/bench/arith.py: work per call, rates, ratios, rotation counts, repeats (pure, no GPU)."""

from __future__ import annotations

import pytest

from course.bench import arith
from course.errors import CourseError


def test_bytes_and_flops_are_counted_from_the_shapes():
    assert arith.copy_bytes(256) == 256 * 256 * 4 * 2  # read once + written once
    assert arith.copy_bytes(16384) == 2 * 2**30
    assert arith.copy_bytes(256, elem_bytes=2) == 256 * 256 * 2 * 2
    assert arith.gemm_flops(256) == 2 * 256**3
    assert arith.gemm_flops(4096) == 137_438_953_472
    assert arith.gemm_bytes(1024) == 1024 * 1024 * (2 + 2 + 4)  # A, B fp16 read; D fp32 written
    assert arith.gemm_bytes(1024, in_bytes=2, out_bytes=2) == 1024 * 1024 * 6


@pytest.mark.parametrize("count", [arith.copy_bytes, arith.gemm_flops, arith.gemm_bytes])
@pytest.mark.parametrize("bad", [0, -64, 64.0, True, "256"])
def test_sizes_must_be_positive_integers(count, bad):
    with pytest.raises(CourseError, match="size must be a positive integer"):
        count(bad)


def test_tiles_and_waves():
    assert arith.waves(4096, 132, 2) == pytest.approx(4096 / 264)
    assert arith.tile_intensity(64, 64) == 32
    assert arith.tile_intensity(128, 256) == pytest.approx(85.33, abs=0.01)
    with pytest.raises(CourseError, match="tile rows must be a positive integer"):
        arith.tile_intensity(0, 64)
    with pytest.raises(CourseError, match="SMs and CTAs per SM must be positive"):
        arith.waves(16, 0, 2)


def test_rates_use_decimal_units():
    assert arith.gb_per_s(1e9, 1.0) == pytest.approx(1000.0)  # 1 GB in 1 ms is 1 TB/s
    assert arith.gb_per_s(arith.copy_bytes(8192), 0.125) == pytest.approx(4294.967296)
    assert arith.tflop_per_s(1e12, 1000.0) == pytest.approx(1.0)
    assert arith.tflop_per_s(arith.gemm_flops(8192), 1.4) == pytest.approx(785.36, abs=0.01)
    assert arith.floor_ms(4.3e9, 4.3e12) == pytest.approx(1.0)
    with pytest.raises(CourseError, match="time must be positive"):
        arith.gb_per_s(1.0, 0.0)
    with pytest.raises(CourseError, match="time must be positive"):
        arith.tflop_per_s(1.0, -1.0)
    with pytest.raises(CourseError, match="ceiling rate must be positive"):
        arith.floor_ms(1.0, 0.0)


def test_rate_picks_the_unit():
    assert arith.rate("GB/s", 2e9, 1.0) == pytest.approx(2000.0)
    assert arith.rate("TFLOP/s", 2e12, 1.0) == pytest.approx(2000.0)
    with pytest.raises(CourseError, match=r"unit must be one of GB/s, TFLOP/s \(got 'GFLOP/s'\)"):
        arith.rate("GFLOP/s", 1.0, 1.0)


def test_ratio_and_median():
    assert arith.ratio(1.0, 4.0) == 0.25
    with pytest.raises(CourseError, match="must be positive"):
        arith.ratio(1.0, 0.0)
    assert arith.median([3.0, 1.0, 2.0]) == 2.0
    assert arith.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(CourseError, match="at least one value"):
        arith.median([])


@pytest.mark.parametrize("n", [64, 256, 1024, 4096, 16384])
@pytest.mark.parametrize("l2", [40 * 2**20, 50 * 2**20, 60 * 2**20])
def test_rotation_covers_four_times_the_l2(n, l2):
    for set_bytes in (arith.copy_bytes(n), arith.gemm_bytes(n)):
        sets = arith.rotation_buffers(set_bytes, l2)
        assert sets >= 2
        assert sets * set_bytes >= arith.ROTATION_FACTOR * l2
        if sets > 2:  # and no more sets than that takes
            assert (sets - 1) * set_bytes < arith.ROTATION_FACTOR * l2


def test_rotation_count_for_the_h200():
    l2 = 60 * 2**20  # what the H200 reports (the recorded runs read it off the device)
    assert arith.rotation_buffers(arith.copy_bytes(256), l2) == 480
    assert arith.rotation_buffers(arith.copy_bytes(16384), l2) == 2
    assert arith.rotation_buffers(arith.copy_bytes(16384), l2, minimum=3) == 3
    with pytest.raises(CourseError, match="L2 size must be a positive integer"):
        arith.rotation_buffers(1024, 0)


def test_repeats_are_validated():
    assert arith.validate_repeats(arith.MIN_REPEATS) == arith.MIN_REPEATS
    assert arith.DEFAULT_REPEATS >= arith.MIN_REPEATS
    for bad in (arith.MIN_REPEATS - 1, 5, 0, 20.0, True, "20"):
        with pytest.raises(CourseError, match=f"at least {arith.MIN_REPEATS}"):
            arith.validate_repeats(bad)
