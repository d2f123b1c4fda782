"""Day 87's build per size: the narrow tile while the wide one would fill at most half the SMs."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.lessons.day87 import bench, chooser

H200_SMS = 132


@pytest.mark.parametrize(
    ("n", "narrow"),
    [(512, True), (1024, True), (2048, False), (4096, False), (8192, False)],
)
def test_the_measured_squares_get_the_build_that_ran_faster(n, narrow):
    # evidence/logs/2026-12-03-h200-s9-day87-small-tiles.json: 128x128 without a cluster was faster
    # at 512 and 1024; at 2048 the default was (128 wide tiles nearly fill 132 SMs)
    assert chooser.choose(n, n, H200_SMS) == (chooser.NARROW if narrow else {})


def test_the_rule_is_half_the_sms():
    assert chooser.wide_tiles(1000, 1032) == 8 * 5
    assert chooser.choose(128 * 33, 256 * 2, H200_SMS) == chooser.NARROW  # 66 tiles: half of 132
    assert chooser.choose(128 * 67, 256, H200_SMS) == {}  # 67 tiles: more than half


def test_the_bench_times_every_size_with_the_chosen_build():
    assert bench.SPEC.build is not None
    assert {n: bench.SPEC.build(n, H200_SMS) for n in bench.SIZES} == {
        n: chooser.choose(n, n, H200_SMS) for n in bench.SIZES
    }
    assert chooser.NARROW != bench.WIDE_BUILD and bench.SPEC.build(8192, H200_SMS) == {}


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_a_bad_size_is_refused(bad):
    with pytest.raises(CourseError, match="positive integer"):
        chooser.choose(bad, 8, H200_SMS)
