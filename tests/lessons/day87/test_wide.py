"""The larger promoting tiles on the host (issue 40): 192 x 128 (GEMM_BM=192, three consumers) and
128 x 192 (GEMM_BN=192): their grid and rounds of units, their names, the bench's switch that times
them (``bench.PINGPONG_ENV``), and that the default build's chooser never picks them (the promoting
build's choice between 128 x 128 and 128 x 192 is test_chooser.py's)."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons._fp8 import Build, grid_for, units_for, waves
from course.lessons.day87 import bench, chooser

LESSON = get_lesson("day87")


def _build(defines: dict[str, int]) -> Build:
    # what _fp8.build_of reads from a compiled build, here from the file's constants for the flags
    c = LESSON.constants(defines)
    return Build(
        int(c["kBN"]), int(c["kClusterM"]), int(c["kPromote"]), int(c["kBlockScales"]), int(c["kBM"])
    )


def test_the_builds_read_their_tile_from_the_file_and_say_it():
    rows, cols, square = (
        _build(chooser.BM192_BUILD),
        _build(chooser.BN192_BUILD),
        _build(chooser.PROMOTE_BUILD),
    )
    assert (rows.bm, rows.bn, rows.cluster, rows.promote) == (192, 128, 2, 1)
    assert (cols.bm, cols.bn, cols.cluster, cols.promote) == (128, 192, 2, 1)
    assert rows.name == "192x128 cluster 2, promoting build"
    assert cols.name == "128x192 cluster 2, promoting build"
    assert square.name == "128x128 cluster 2, promoting build"
    assert _build(chooser.PINGPONG_BUILD).name == "64x128 cluster 2, ping-pong promoting build"


@pytest.mark.parametrize(
    ("n", "units", "rounds"),
    [
        # 4096: 22 tiles of 192 (the last 64 rows), 11 cluster rows x 32 columns; or 32 x 22 of 192 columns
        (4096, {"rows": 11 * 32, "cols": 16 * 22, "square": 16 * 32}, {"rows": 352 / 66, "cols": 352 / 66}),
        # 8192: 43 tiles of 192 (the last 128 rows): 22 cluster rows x 64; or 32 x 43
        (8192, {"rows": 22 * 64, "cols": 32 * 43, "square": 32 * 64}, {"rows": 1408 / 66, "cols": 1376 / 66}),
        # 2048: 11 tiles of 192, 6 cluster rows x 16; or 8 x 11
        (2048, {"rows": 6 * 16, "cols": 8 * 11, "square": 8 * 16}, {"rows": 96 / 66, "cols": 88 / 66}),
    ],
)
def test_the_persistent_grid_and_its_rounds_count_the_larger_tiles(n, units, rounds):
    builds = {
        "rows": _build(chooser.BM192_BUILD),
        "cols": _build(chooser.BN192_BUILD),
        "square": _build(chooser.PROMOTE_BUILD),
    }
    for key, build in builds.items():
        assert units_for(n, n, build) == units[key], key
        assert grid_for(n, n, build, 132) == min(66, units[key]) * 2, key
    for key, want in rounds.items():
        assert waves(n, n, builds[key], 132) == pytest.approx(want), key
    # one cluster of the 192-row build covers 384 rows: a ragged 200 x 136 is one cluster row, 2 columns
    assert grid_for(200, 136, builds["rows"], 132) == 2 * 2
    assert grid_for(200, 136, builds["cols"], 132) == 1 * 2  # 2 tiles of 128 rows, 1 of 192 columns


def test_the_bench_times_them_only_when_named(monkeypatch):
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert bench.dev_builds() == () and not bench.pingpong_on()
    monkeypatch.setenv(bench.PINGPONG_ENV, "0")
    assert bench.dev_builds() == ()
    monkeypatch.setenv(bench.PINGPONG_ENV, "1")  # as before: the ping-pong build
    assert bench.dev_builds() == ("pingpong",) and bench.pingpong_on()
    monkeypatch.setenv(bench.PINGPONG_ENV, " 192x128, 128x192 ,192x128")
    assert bench.dev_builds() == ("192x128", "128x192") and not bench.pingpong_on()
    monkeypatch.setenv(bench.PINGPONG_ENV, "1,128x192")
    assert bench.dev_builds() == ("pingpong", "128x192")
    monkeypatch.setenv(bench.PINGPONG_ENV, "192x128,256x128")
    with pytest.raises(CourseError, match=r"names no build '256x128'.*192x128, 128x192"):
        bench.dev_builds()
    assert set(bench.DEV_INTERVALS) == set(bench.DEV_LABELS) == set(bench.DEV_WHAT) == set(chooser.DEV_BUILDS)
    assert bench.DEV_INTERVALS["192x128"] == bench.DEV_INTERVALS["128x192"] == (1,)
    assert bench.DEV_SIZES == (2048, 4096, 8192)
    assert bench.dev_title("192x128", 1, 4096) == "192x128 promoting build, every 128 (P=1) at N=4096"
    assert bench.dev_title("128x192", 1, 2048) == "128x192 promoting build, every 128 (P=1) at N=2048"
    assert bench.pingpong_title(1, 4096) == "ping-pong promoting build, every 128 (P=1) at N=4096"


def test_the_chooser_never_picks_an_unmeasured_build():
    dev = [dict(b) for name, b in chooser.DEV_BUILDS.items() if name not in chooser.DEV_REFERENCES]
    # the references are builds it picks (the 128x64 one where few tiles), named only to time them
    assert chooser.choose(512, 512, 132) == chooser.DEV_BUILDS["n64"] == chooser.NARROWER
    for n in (256, 512, 1024, 2048, 4096, 8192, 16384):
        for sms in (66, 114, 132):
            assert chooser.choose(n, n, sms) not in dev
