"""Day 86's chooser held to the H100 sweeps of every build it can pick (issue 39).

The plain-grid kernel (since session 18: every cluster-1 build launches as a plain grid) was swept twice:
evidence/logs/2026-12-06-h100-s18/call5-sweep39-measure.json (the small and middle squares and the
middle shapes) and evidence/logs/2026-12-06-h100-s19/call1-sweep39-measure.json (the decode rows, the
middle and large shapes); each run's log is beside it and the format is
evidence/gemm_dev/streamk_measure.py's. Per shape, every configuration at splits 1, 2 and 4 (the small
builds too), the pick of the chooser it ran ("pick", the model before session 19's refit) and cuBLAS,
each checked against float64 first, timed in CUDA graphs interleaved. The default pick must be one of
the timed builds, and within a stated margin of the fastest timed build: the margins below are what the
sweeps measured for session 19's refit (evidence/gemm_dev/notes_refit86.md).

Session 14's sweep (evidence/logs/2026-12-06-h100-s14/call5-sweep39-measure.json) timed the kernel
before the plain grid, with a cluster launch for every build: the last tests read it for the per-SM
streaming rate, modelling that kernel (the ``cluster_launch_kernel`` fixture).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from course.lessons.day86 import chooser
from tests.lessons.day86.test_chooser_measured import _key

LOGS = Path(__file__).resolve().parents[3] / "evidence/logs"
SWEEPS = (
    LOGS / "2026-12-06-h100-s18/call5-sweep39-measure.json",
    LOGS / "2026-12-06-h100-s19/call1-sweep39-measure.json",
)
SWEEP14 = LOGS / "2026-12-06-h100-s14/call5-sweep39-measure.json"
SMS = 132  # the H100 SXM it was measured on

# The pick's time over the fastest timed build's (CUDA graphs), at most: what the sweeps measured.
MARGIN = {
    (256, 256, 256): 1.0,  # 64x64 small
    (512, 512, 512): 1.0,  # 64x64 c1
    (768, 768, 768): 1.0,  # 64x128 c1
    (1024, 1024, 1024): 1.0,  # 64x128 c1
    (1200, 1200, 1200): 1.0,  # 128x128 c1
    (1536, 1536, 1536): 1.0,  # 128x144 c2
    (2048, 2048, 2048): 1.0,  # 128x256 c1
    (2560, 2560, 2560): 1.02,  # 128x256 c2 58.43 us, c1 57.32
    (1000, 3000, 704): 1.0,  # 128x192 c2
    (4104, 776, 1240): 1.0,  # 128x200 c1
    (640, 6144, 2048): 1.0,  # 128x256 c1
    (2504, 2504, 2504): 1.0,  # 128x256 c2
    (4096, 4096, 4096): 1.0,
    (8192, 8192, 1024): 1.01,  # 128x256 c2 201.4 us, c1 199.9
    (4096, 4096, 11008): 1.01,  # 128x256 c2 491.1 us, c1 489.8
    (1024, 1024, 16384): 1.08,  # 128x256 c2 split 4 60.0 us (the pick before too), 128x128 c1 split 2 55.6
    **{(m, 8192, 8192): 1.01 for m in (1, 2, 4, 32, 64, 128)},  # 64-row c1, unsplit or split 2
    **{(m, 4096, 14336): 1.01 for m in (1, 2, 4, 32, 64, 128)},
}


def _rows() -> list[dict]:
    return [r for path in SWEEPS for r in json.loads(path.read_text())["rows"] if "shape" in r]


def _row(shape: tuple[int, int, int], rows: list[dict] | None = None) -> dict:
    (row,) = [r for r in (rows if rows is not None else _rows()) if tuple(r["shape"]) == shape]
    return row


def _timed(row: dict) -> dict[tuple, float]:
    """Every timed build's key (BM, BN, cluster, small, split) and its time in CUDA graphs, us."""
    us = row["graphs"]["us"]
    out: dict[tuple, float] = {}
    for name, build in row["builds"].items():
        out[_key(build)] = min(out.get(_key(build), math.inf), us[name])
    return out


def _key_of(c: chooser.Choice) -> tuple[int, int, int, bool, int]:
    return (c.bm, c.bn, c.cluster, c.small, c.split)


def test_the_sweeps_cover_every_shape_and_build_they_are_read_for():
    rows = _rows()
    assert sorted(tuple(r["shape"]) for r in rows) == sorted(MARGIN)  # each shape once
    for r in rows:
        assert r["sms"] == SMS and "cuBLAS" in r["graphs"]["us"]
        # every configuration at splits 1, 2 and 4 (where K has that many K-tiles), 64-row included,
        # and the small builds
        keys = set(_timed(r))
        for bn, cluster in chooser.CONFIGS:
            for bm in (128, 64):
                assert {(bm, bn, cluster, False, s) for s in (1, 2, 4)} <= keys, (r["shape"], bm, bn, cluster)
        assert {(64, bn, 1, True, s) for bn in chooser.SMALL_BNS for s in (2, 4)} <= keys


# Session 21 moved three picks to builds these sweeps did not time (a cluster along N at 4104 x 776 x 1240;
# 128 x 200 at cluster 1, refit, at 1000 x 3000 x 704 and 2560^3): test_clustern39.py holds them to that
# session's runs, against the pick before them in the same run.
RESWEPT = {(1000, 3000, 704), (4104, 776, 1240), (2560, 2560, 2560)}


def test_the_picks_these_sweeps_did_not_time_are_the_ones_session_21_timed():
    for shape in MARGIN:
        timed = _key_of(chooser.choose(*shape, SMS)) in _timed(_row(shape))
        assert timed == (shape not in RESWEPT), shape


@pytest.mark.parametrize(
    "shape", [s for s in MARGIN if s not in RESWEPT], ids=lambda s: "x".join(map(str, s))
)
def test_the_pick_is_timed_and_within_its_margin_of_the_fastest_build(shape):
    row = _row(shape)
    timed = _timed(row)
    pick = chooser.choose(*shape, SMS)
    assert _key_of(pick) in timed, f"{shape}: the pick {pick.describe()} was not timed"
    assert MARGIN[shape] <= 1.08
    assert timed[_key_of(pick)] <= MARGIN[shape] * min(timed.values()), (shape, timed[_key_of(pick)])


def test_the_refit_gains_what_the_sweeps_measured_over_the_picks_they_ran():
    # "pick" in each row is the chooser before session 19's refit; the refit's pick measured faster on the
    # small squares (1.13x at 512^3 and 768^3, 1.24x at 1024^3) and no more than 0.4% slower anywhere
    # (128 x 8192 x 8192: 64 x 128 at cluster 1, 51.8 us, where the pick before ran it at cluster 2, 51.7).
    gains = {}
    for row in _rows():
        shape = tuple(row["shape"])
        if shape in RESWEPT:  # session 21's picks: test_clustern39
            continue
        us = row["graphs"]["us"]
        gains[shape] = us["pick"] / _timed(row)[_key_of(chooser.choose(*shape, SMS))]
    assert min(gains.values()) >= 0.995, gains
    assert all(gains[(s, s, s)] >= 1.10 for s in (512, 768, 1024)), gains
    assert math.exp(sum(map(math.log, gains.values())) / len(gains)) > 1.01


@pytest.mark.usefixtures("cluster_launch_kernel")
def test_the_n4096_k14336_rows_moved_off_the_pick_the_sweep_measured_slow():
    # Session 14's sweep's "pick" (the chooser before the per-SM rate: 64x64 c1 unsplit, 64 units on 132
    # SMs) ran 66.8 and 57.8 us; the per-SM rate moves the pick to split 2 (128 units), 1.10-1.27x as fast.
    rows14 = [r for r in json.loads(SWEEP14.read_text())["rows"] if "shape" in r]
    for m in (1, 32):
        row = _row((m, 4096, 14336), rows14)
        old, new = row["builds"]["pick"], chooser.choose(m, 4096, 14336, SMS)
        assert _key(old) == (64, 64, 1, False, 1) and _key_of(new) == (64, 64, 1, False, 2)
        us = row["graphs"]["us"]
        assert _timed(row)[_key_of(new)] * 1.10 < us["pick"]
        # without the per-SM rate the model picks the slow build again
        saved = chooser.SM_STREAM_GBPS
        try:
            chooser.SM_STREAM_GBPS = 1e12
            assert _key_of(chooser.choose(m, 4096, 14336, SMS)) == (64, 64, 1, False, 1)
        finally:
            chooser.SM_STREAM_GBPS = saved


def _per_sm_rates() -> list[float]:
    """GB/s an SM streamed in the sweeps' 64x64 c1 unsplit builds with half as many units as SMs or fewer
    (at N = 4096, K = 14336: 64 units, half the SMs idle): the problem's bytes over the units, over
    the time past the launch (CUDA graphs). Session 14's sweep (a cluster launch) gave 28.5 and 33.5 GB/s
    at M = 1 and 32, the constant's first fit; the plain grid's 30.0-35.6 at M = 1, 2, 4 and 32. At N = 8192 its 128 units stream at the device's rate, about
    20 GB/s each (2.6 TB/s over 128), so they say nothing about one SM's."""
    out = []
    for r in _rows():
        m, n, k = r["shape"]
        units = math.ceil(m / 64) * math.ceil(n / 64)
        if m < 64 and units <= SMS // 2:
            t = _timed(r)[(64, 64, 1, False, 1)] - chooser.launch_us(1)
            out.append((m * k + n * k + m * n) * 2 / units / (t * 1e-6) / 1e9)
    return out


def test_the_per_sm_streaming_rate_is_the_sweeps():
    rates = _per_sm_rates()
    assert len(rates) == 4
    assert min(rates) <= chooser.SM_STREAM_GBPS <= max(rates), rates
    assert chooser.SM_STREAM_GBPS == pytest.approx(sum(rates) / len(rates), abs=1.0)
    # a full GPU's SMs at that rate outrun the device: the per-SM rate binds only with SMs idle
    assert SMS * chooser.SM_STREAM_GBPS * 1e9 >= chooser.STREAM_TBPS * 1e12


def test_the_middle_squares_pick_the_fastest_of_the_courses_builds_and_trail_cubLAS():
    # 512^3 to 1536^3: the pick is the fastest timed build, and cuBLAS is ahead of every build (its kernel
    # shapes: evidence/gemm_dev/notes_cublas_kernels.md).
    for s in (512, 768, 1024, 1200, 1536):
        row = _row((s, s, s))
        timed = _timed(row)
        pick = timed[_key_of(chooser.choose(s, s, s, SMS))]
        assert pick == min(timed.values())
        assert row["graphs"]["us"]["cuBLAS"] < min(timed.values())
