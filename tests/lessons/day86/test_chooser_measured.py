"""Day 86's chooser held to the H100's first measurement of the 64-row and small builds (issue 39).

evidence/logs/2026-12-06-h100-s13/call2-small39-measure.json (the run's log beside it) times, per
shape, the chooser's pick before the 64-row builds ("pick"), the 64-row and small candidates and
cuBLAS, in CUDA graphs and one by one, every build checked against float64 first. The default pick
on every measured shape must be one of the timed candidates, and measured no slower in graphs than
the old pick: the refit's constants (chooser.SMALL_*) were fitted to this file, and the model must
not lose what it measured.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course.lessons.day86 import chooser

MEASURED = (
    Path(__file__).resolve().parents[3] / "evidence/logs/2026-12-06-h100-s13/call2-small39-measure.json"
)


def _rows() -> list[dict]:
    data = json.loads(MEASURED.read_text())
    return [r for r in data["rows"] if "shape" in r]


def _key(build: dict) -> tuple[int, int, int, bool, int]:
    """(BM, BN, cluster, small, split) of a timed candidate, from its flags and its description."""
    flags = build["flags"]
    split = re.search(r"split (\d+)", build["describe"])
    assert split is not None, build["describe"]
    return (
        flags.get("GEMM_BM", 128),
        flags["GEMM_BN"],
        flags["GEMM_CLUSTER"],
        bool(flags.get("GEMM_SMALL")),
        int(split.group(1)),
    )


def test_the_measurement_covers_the_shapes_the_refit_is_about():
    shapes = {tuple(r["shape"]) for r in _rows()}
    assert {(s, s, s) for s in (256, 512, 768, 1024)} <= shapes
    assert {(m, n, k) for m in (1, 2, 4, 32, 64, 128) for n, k in ((8192, 8192), (4096, 14336))} <= shapes
    for r in _rows():
        assert r["sms"] == 132 and "pick" in r["graphs"]["us"] and "cuBLAS" in r["graphs"]["us"]
        old = chooser.choose(*r["shape"], 132, rows64=False)
        assert _key(r["builds"]["pick"]) == (old.bm, old.bn, old.cluster, old.small, old.split)


@pytest.mark.parametrize("row", _rows(), ids=lambda r: "x".join(map(str, r["shape"])))
def test_the_default_pick_measured_no_slower_than_the_old_pick(row):
    pick = chooser.choose(*row["shape"], row["sms"])
    timed = {_key(b): name for name, b in row["builds"].items()}
    name = timed.get((pick.bm, pick.bn, pick.cluster, pick.small, pick.split))
    assert name is not None, f"{row['shape']}: the default pick {pick.describe()} was not timed"
    us = row["graphs"]["us"]
    assert us[name] <= us["pick"], (row["shape"], name, us[name], us["pick"])


def test_the_small_squares_pick_the_fastest_measured_build():
    for row in _rows():
        m, n, k = row["shape"]
        if not m == n == k:
            continue
        pick = chooser.choose(m, n, k, row["sms"])
        us = {name: t for name, t in row["graphs"]["us"].items() if name != "cuBLAS"}
        timed = {_key(b): name for name, b in row["builds"].items()}
        assert timed[(pick.bm, pick.bn, pick.cluster, pick.small, pick.split)] == min(us, key=us.__getitem__)
