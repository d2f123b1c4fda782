"""Day 87's build per size: the narrow tile while the wide one would fill at most half the SMs; and the
promoting build's tile, 128 x 128 or 128 x 192, by the rounds model with its fitted speed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from course.errors import CourseError
from course.lessons.day87 import bench, chooser

H200_SMS = 132


@pytest.mark.parametrize(
    ("n", "build"),
    [(512, "narrower"), (1024, "narrower"), (2048, "default"), (4096, "default"), (8192, "default")],
)
def test_the_measured_squares_get_the_build_that_ran_faster(n, build):
    # evidence/logs/2026-12-03-h200-s9-day87-small-tiles.json: 128x128 without a cluster was faster than
    # the default at 512 and 1024; at 2048 the default was (128 wide tiles nearly fill 132 SMs). And
    # evidence/logs/2026-12-06-h100-s16/call9-n64-measure.json: 128x64 without a cluster was faster than
    # 128x128 at 512 and 1024 (test_the_narrower_tile_is_picked_where_the_h100_measured_it_faster)
    want = {"narrower": chooser.NARROWER, "default": {}}[build]
    assert chooser.choose(n, n, H200_SMS) == want


def test_the_rule_is_half_the_sms():
    assert chooser.wide_tiles(1000, 1032) == 8 * 5
    assert chooser.choose(128 * 33, 256 * 2, H200_SMS) == chooser.NARROW  # 66 tiles: half of 132
    assert chooser.choose(128 * 67, 256, H200_SMS) == {}  # 67 tiles: more than half
    # and once more: 33 wide tiles are 66 of 128 x 128, half of 132; 34 are 68
    assert chooser.choose(128 * 33, 256, H200_SMS) == chooser.NARROWER
    assert chooser.choose(128 * 34, 256, H200_SMS) == chooser.NARROW


def test_the_narrower_tile_is_picked_where_the_h100_measured_it_faster():
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "evidence/logs/2026-12-06-h100-s16/call9-n64-measure.json"
    for row in json.loads(path.read_text())["rows"]:
        n = row["n"]
        # 128x64 c1 over 128x128 c1, CUDA graphs, paired repeats: (median, low, high)
        ratio = row["graphs"]["rate_over (x faster than base above 1)"]["128x64c1 rate over 128x128c1"][0]
        if chooser.choose(n, n, 132) == chooser.NARROWER:
            assert ratio > 1.05, (n, ratio)  # 512: 1.18, 1024: 1.11
        else:
            assert ratio < 1.0, (n, ratio)  # 1536: 0.98, 2048: 0.82
    assert {r["n"] for r in json.loads(path.read_text())["rows"]} == {512, 1024, 1536, 2048}


def test_the_bench_times_every_size_with_the_chosen_build():
    assert bench.SPEC.build is not None
    assert {n: bench.SPEC.build(n, H200_SMS) for n in bench.SIZES} == {
        n: chooser.choose(n, n, H200_SMS) for n in bench.SIZES
    }
    assert chooser.NARROW != bench.WIDE_BUILD and bench.SPEC.build(8192, H200_SMS) == {}
    assert bench.SPEC.build(1024, H200_SMS) == chooser.NARROWER


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_a_bad_size_is_refused(bad):
    with pytest.raises(CourseError, match="positive integer"):
        chooser.choose(bad, 8, H200_SMS)


# The H100's first run of the 128x192 promoting build beside the 128x128 one, P = 1, one interleaved
# batch a size (notes_fp8wide.md, last section): the fit's and the picks' evidence.
WIDE_RUN = (
    Path(__file__).resolve().parents[3] / "evidence/logs/2026-12-06-h100-s14/call3-fp8wide-bench-day87.json"
)


def _measured() -> dict[int, float]:
    """N -> the 128x192 build's speed over the 128x128 build at P = 1, as that run recorded it."""
    reasons = {r["title"]: r for r in json.loads(WIDE_RUN.read_text("utf-8"))["reasons"]}
    assert json.loads(WIDE_RUN.read_text("utf-8"))["sm_count"] == H200_SMS  # 132 on the H100 SXM too
    return {n: reasons[bench.dev_title("128x192", 1, n)]["value"] for n in bench.DEV_SIZES}


def test_the_wide_tiles_speed_is_fitted_to_the_h100s_run():
    measured = _measured()
    assert set(measured) == {2048, 4096, 8192}
    # the model at speed 1: the busiest CTA's work, 128x128 units vs 1.5-unit tiles, by hand from
    # test_wide.py's rounds: 2 vs 2 x 1.5 at 2048, 8 vs 6 x 1.5 at 4096, 32 vs 21 x 1.5 at 8192
    at_one = {2048: 2 / 3, 4096: 8 / 9, 8192: 32 / 31.5}
    for n, want in at_one.items():
        assert chooser.predicted_ratio(n, H200_SMS, "128x192", speed=1.0) == pytest.approx(want)
    fit = chooser.fitted_speed({n: measured[n] for n in chooser.FIT_SIZES}, H200_SMS)
    by_hand = math.sqrt(measured[4096] / at_one[4096] * measured[8192] / at_one[8192])
    assert fit == pytest.approx(by_hand)
    assert round(fit, 2) == chooser.TILE_SPEED["128x192"]  # the constant is this fit, rounded


@pytest.mark.parametrize("n", [2048, 4096, 8192])
def test_the_model_picks_the_tile_that_measured_faster(n):
    measured = _measured()[n]
    pick = chooser.choose_promoting(n, n, H200_SMS)
    assert pick == ("128x192" if measured > 1 else "128x128")
    assert (chooser.predicted_ratio(n, H200_SMS, "128x192") > 1) == (measured > 1)


def test_the_picks_at_the_measured_sizes_and_the_rule():
    assert {n: chooser.choose_promoting(n, n, H200_SMS) for n in (512, 1024, 2048, 4096, 8192, 16384)} == {
        512: "128x128",
        1024: "128x128",
        2048: "128x128",
        4096: "128x128",  # the model: 0.996x, a near tie; measured 0.99x
        8192: "128x192",
        16384: "128x192",
    }
    assert chooser.promoting(8192, 8192, H200_SMS) == chooser.BN192_BUILD
    assert chooser.promoting(4096, 4096, H200_SMS) == chooser.PROMOTE_BUILD
    # 114 SMs (57 cluster slots): at 2048 the 128x128 build needs 3 rounds (128 / 57), 128x192 2 of 1.5
    assert chooser.busiest_work(2048, 2048, 114, "128x128") == 3
    assert chooser.busiest_work(2048, 2048, 114, "128x192") == pytest.approx(
        3 / chooser.TILE_SPEED["128x192"]
    )
    assert chooser.choose_promoting(2048, 2048, 114) == "128x192"


def test_a_tie_goes_to_the_128_tile(monkeypatch):
    # at speed 1.5 the wide tile's rounds of 1.5 units take what 128x128's take at 2048 on 132 SMs
    monkeypatch.setitem(chooser.TILE_SPEED, "128x192", 1.5)
    assert (
        chooser.busiest_work(2048, 2048, H200_SMS, "128x192")
        == chooser.busiest_work(2048, 2048, H200_SMS, "128x128")
        == 2
    )
    assert chooser.choose_promoting(2048, 2048, H200_SMS) == "128x128"
    monkeypatch.setitem(chooser.TILE_SPEED, "128x192", 1.51)
    assert chooser.choose_promoting(2048, 2048, H200_SMS) == "128x192"


def test_the_taught_tile_comes_first():
    # the block-scaled build and the taught one are the 128x128 tile, the first of the choice
    assert next(iter(chooser.PROMOTE_TILES)) == chooser.SQUARE == "128x128"
    assert chooser.tile_build("128x192").bn == 192 and chooser.tile_build("128x128").bn == 128


def test_the_promoting_choice_refuses_bad_input():
    with pytest.raises(CourseError, match="positive integer"):
        chooser.choose_promoting(0, 8, H200_SMS)
    with pytest.raises(CourseError, match=r"no promoting build '192x128'.*128x128, 128x192"):
        chooser.tile_build("192x128")
    with pytest.raises(CourseError, match="no measurement"):
        chooser.fitted_speed({}, H200_SMS)
