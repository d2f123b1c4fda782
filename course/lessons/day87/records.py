"""Day 87's recording read back: the accuracy curve, the promoting builds' table, the block-scaled
build's and the skewed inputs' errors, each from the reasons ``bench`` records under its titles
(``bench.promotion_title``, ``bench.chosen_title``, ``bench.block_title``, ``bench.skew_title``,
``bench.accuracy_title``); ``figures`` and ``accuracy`` render them. A missing point is left out, so an
older recording shows what it has.
"""

from __future__ import annotations

from typing import NamedTuple

from ...bench.result import BenchResult
from .bench import (
    ACCURACY_KS,
    BLOCK_SHAPES,
    CURVE_NAMES,
    DISTS,
    INTERVALS,
    LT,
    LT_BLOCK,
    METRICS,
    PROMOTE_SIZES,
    REFERENCES,
    SCALINGS,
    SQUARE,
    TILES,
    accuracy_title,
    block_title,
    chosen_title,
    promotion_title,
    skew_title,
    tiles_title,
)


def accuracy_curve(result: BenchResult) -> dict[str, dict[str, list[tuple[int, float]]]]:
    """dist -> contestant -> [(K, relative error)], from a recording (missing points left out)."""
    by_title = {r.title: r for r in result.reasons}
    out: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for dist in DISTS:
        for name in CURVE_NAMES:
            points = [
                (k, float(r.value))
                for k in ACCURACY_KS
                if (r := by_title.get(accuracy_title(dist, k, name))) is not None and r.value is not None
            ]
            if points:
                out.setdefault(dist, {})[name] = points
    return out


class PromotionRow(NamedTuple):
    """One promoting build at one interval and size, as recorded."""

    n: int
    p: int
    rate: float  # TFLOP/s
    ratio: float  # x the default build
    vs_lt: float  # x cuBLASLt's default
    tile: str
    chosen: bool  # the tile the host picked at this N (the other is timed at P=1 beside it)


def chosen_tile(result: BenchResult, n: int) -> str:
    """The promoting tile the recording picked at N: its ``chosen_title`` reason, or 128x128 in a
    recording made before there was a choice."""
    titles = {r.title for r in result.reasons}
    return next((t for t in TILES if chosen_title(n, t) in titles), SQUARE)


def promotion_table(result: BenchResult) -> list[PromotionRow]:
    """Each recorded promoting build, interval and size: the chosen tile's rows first, then the other's."""
    by_title = {r.title: r for r in result.reasons}
    rows = []
    for n in PROMOTE_SIZES:
        chosen = chosen_tile(result, n)
        for tile in sorted(TILES, key=lambda t: t != chosen):
            for p in INTERVALS:
                t = promotion_title(p, n, tile)
                got = [by_title.get(x) for x in (t, f"{t}: rate", f"{t} against {LT}")]
                if all(g is not None and g.value is not None for g in got):
                    ratio, rate, vs_lt = (float(g.value) for g in got)  # type: ignore[union-attr,arg-type]
                    rows.append(PromotionRow(n, p, rate, ratio, vs_lt, tile, tile == chosen))
    return rows


def block_table(result: BenchResult) -> list[tuple[int, float, float, float, float, float | None]]:
    """(N, TFLOP/s, x the default build, x the promoting build at P=1, x cuBLASLt, x cuBLASLt's own
    block-scaled matmul or None where the recording has none) of the block-scaled build."""
    by_title = {r.title: r for r in result.reasons}
    rows = []
    for n in PROMOTE_SIZES:
        t = block_title(n)
        got = [by_title.get(x) for x in (f"{t}: rate", t, f"{t} against P=1", f"{t} against {LT}")]
        if all(g is not None and g.value is not None for g in got):
            rate, ratio, vs_p1, vs_lt = (float(g.value) for g in got)  # type: ignore[union-attr,arg-type]
            like = by_title.get(f"{t} against {LT_BLOCK}")
            vs_block = float(like.value) if like is not None and like.value is not None else None
            rows.append((n, rate, ratio, vs_p1, vs_lt, vs_block))
    return rows


def block_accuracy(result: BenchResult) -> dict[tuple[int, int, int], dict[tuple[str, str, str], float]]:
    """shape -> (scaling, reference, metric) -> relative error on the skewed inputs, as recorded."""
    by_title = {r.title: r for r in result.reasons}
    out: dict[tuple[int, int, int], dict[tuple[str, str, str], float]] = {}
    for shape in BLOCK_SHAPES:
        for key in ((s, r, m) for s in SCALINGS for r in REFERENCES for m in METRICS):
            got = by_title.get(skew_title(shape, *key))
            if got is not None and got.value is not None:
                out.setdefault(shape, {})[key] = float(got.value)
    return out


class TileCheck(NamedTuple):
    """The host's pick of promoting tile at one size: the model's ratio of the wider tile over 128x128
    and, where the recording timed both at P=1 in one batch, the measured one."""

    n: int
    chosen: str
    predicted: float
    measured: float | None


def tile_checks(result: BenchResult) -> list[TileCheck]:
    """Each size whose pick the recording holds (none in one made before there was a choice)."""
    by_title = {r.title: r for r in result.reasons}
    out = []
    for n in PROMOTE_SIZES:
        pick = next((by_title[chosen_title(n, t)] for t in TILES if chosen_title(n, t) in by_title), None)
        if pick is None or pick.value is None:
            continue
        got = by_title.get(tiles_title(n))
        measured = float(got.value) if got is not None and got.value is not None else None
        out.append(TileCheck(n, chosen_tile(result, n), float(pick.value), measured))
    return out
