"""Day 87's builds, and the one per problem size: the default 128 x 256 tile with clusters of two, or, for a
problem of few tiles, the 128 x 128 tile without a cluster, and for fewer still the 128 x 64 tile.

A CTA owns one 128 x 256 tile of D, so a 1024 x 1024 product is 32 CTAs on a GPU of 132 SMs: most
SMs idle, and each CTA's fixed costs (setup, the first load, the epilogue's store) dominate.
Halving the tile's width doubles the CTAs and halves each one's epilogue. Measured on the H200
beside cuBLASLt FP8, interleaved (``evidence/logs/2026-12-03-h200-s9-day87-small-tiles.json``):
128 x 128 without a cluster ran 512^3 and 1024^3 at 0.74x and 0.82x cuBLASLt where 128 x 256 with
a cluster of two ran at 0.55x and 0.60x, and 2048^3 at 0.96x against 0.99x (128 tiles of 128 x 256
nearly fill the 132 SMs). (cuBLASLt there is its default, which promotes: a common yardstick for two
builds that both never promote, not a like-with-like speed comparison; that is ``bench.LIKE``'s.)
So: the narrow tile while the wide one would fill at most half the SMs. The same step once more
(issue 40): 128 x 64 without a cluster (``NARROWER``, m64n64k32) while even the 128 x 128 tiles would
fill at most half of them. Measured on an H100 80GB HBM3 in CUDA graphs, interleaved, every build
checked first (``evidence/logs/2026-12-06-h100-s16/call9-n64-measure.json``): 128 x 64 ran 1.18x and
1.11x the 128 x 128 tile at 512^3 and 1024^3 (where the rule picks it), 0.98x at 1536^3 and 0.815x at
2048^3 (where it does not: there the 128 x 128 tiles are 144 and 256 CTAs).
Day 86's split-K does not carry over (the FP8 kernel has none): that is where the rest of the
small sizes' gap to cuBLASLt is.

The promoting build (a second accumulator, so no 128 x 256 tile) comes in two tiles, 128 x 128 and
128 x 192 (two consumers of 64 x 192), and ``choose_promoting`` picks one per size with the model the
persistent grid already has (``_fp8.waves``): a CTA walks ceil(rounds) units, so the run lasts as long
as its busiest CTA's units, each the tile's share of a 128 x 128 tile's work, at the tile's speed per
unit of work (``TILE_SPEED``). The wider tile does more work per byte it loads (``notes_fp8wide.md``),
so it is faster per unit of work; but its tiles divide a square of 4096 less evenly (22 columns of
192, the last a third full) and leave a longer last round. ``TILE_SPEED``'s one fitted number says how
much faster (``fitted_speed``); with it the model picks 128 x 128 at 2048 and 4096 and 128 x 192 at
8192, as the H100 measured. The 192 x 128 build (three consumers) is not offered: it ran slower than
128 x 192 at each of those sizes.
"""

from __future__ import annotations

import math
import statistics
from functools import cache
from typing import TYPE_CHECKING

from ...errors import CourseError
from .._fp8 import build_for, waves
from . import LESSON

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._fp8 import Build

NARROW = {"GEMM_BN": 128, "GEMM_CLUSTER": 1}  # the few-tiles build
NARROWER = {"GEMM_BN": 64, "GEMM_CLUSTER": 1}  # the fewer-tiles build: 128 x 64
WIDE_BUILD = {"GEMM_BN": 256, "GEMM_CLUSTER": 2}  # the default build, named
PROMOTE_BUILD = {"GEMM_BN": 128, "GEMM_PROMOTE": 1}  # the build with a second accumulator
BLOCK_BUILD = {**PROMOTE_BUILD, "GEMM_BLOCK_SCALES": 1}  # 1x128 / 128x128 scales, promoted every K-tile
# 64 x 128 tiles, one consumer each, chains in turns (day87.pingpong models the order); never chosen
# here, and timed only behind bench.PINGPONG_ENV: no GPU has run it yet.
PINGPONG_BUILD = {**PROMOTE_BUILD, "GEMM_PROMOTE_PINGPONG": 1}
# Larger promoting tiles (issue 40): 192 x 128 with three consumer warpgroups of 64 x 128 (never
# chosen: slower than 128 x 192 at every size measured), and 128 x 192 with two of 64 x 192
# (m64n192k32), which choose_promoting picks where the model says it finishes first.
BM192_BUILD = {**PROMOTE_BUILD, "GEMM_BM": 192}
BN192_BUILD = {"GEMM_BN": 192, "GEMM_PROMOTE": 1}
# The 128 x 128 promoting build with two chain accumulators a consumer, each chain promoted beside its
# next chain's first K-tile (GEMM_PROMOTE_OVERLAP=1; evidence/gemm_dev/notes_pover40.md): exact on an
# H100 and 0.93-0.96x the 128 x 128 promoting build there, never chosen, timed only when asked ("overlap").
OVERLAP_BUILD = {**PROMOTE_BUILD, "GEMM_PROMOTE_OVERLAP": 1}
# The 128 x 128 promoting build whose second consumer promotes half a K-tile after the first
# (GEMM_PROMOTE_STAGGER=1, session 17): never chosen, timed only when asked ("stagger").
STAGGER_BUILD = {**PROMOTE_BUILD, "GEMM_PROMOTE_STAGGER": 1}
# The same two with each wgmma's descriptors advanced by adds from stage 0's (GEMM_DESC_ITER=1, session 17).
DESC_BUILD = {**PROMOTE_BUILD, "GEMM_DESC_ITER": 1}
STAGDESC_BUILD = {**STAGGER_BUILD, "GEMM_DESC_ITER": 1}
# The promoting builds that give a K-tile's stage back right after the wait before its promotion
# (GEMM_EARLY_RELEASE=1, session 18): the 128 x 128, the 128 x 192 and the block-scaled one. Never
# chosen, timed only when asked ("early", "early192", "earlyblock"; "block" times the block-scaled
# build itself in the same batch).
EARLY_BUILD = {**PROMOTE_BUILD, "GEMM_EARLY_RELEASE": 1}
EARLY192_BUILD = {**BN192_BUILD, "GEMM_EARLY_RELEASE": 1}
EARLYBLOCK_BUILD = {**BLOCK_BUILD, "GEMM_EARLY_RELEASE": 1}
# The 128 x 128 promoting build with each consumer's chain split into its left and right 64 columns, the
# left half promoted under the right half's wgmmas (GEMM_PROMOTE_SPLITN=1, session 19; the kernel's
# region splitn-constants). Never chosen, timed only when asked ("splitn", "splitn192").
SPLITN_BUILD = {**PROMOTE_BUILD, "GEMM_PROMOTE_SPLITN": 1}
SPLITN192_BUILD = {**BN192_BUILD, "GEMM_PROMOTE_SPLITN": 1}  # the 128 x 192 build's chains as two of 96
# The promoting builds whose consumers issue each K-tile's wgmmas in turns, ordered by named barriers
# (GEMM_PROMOTE_TURNS=1, session 20; the kernel's region turns-constants): 128 x 128, 128 x 192, 192 x 128
# (three consumers) and the block-scaled one. Never chosen, timed only when asked ("turns", ...).
TURNS = {"GEMM_PROMOTE_TURNS": 1}
TURNS_BUILD = {**PROMOTE_BUILD, **TURNS}
TURNS192_BUILD = {**BN192_BUILD, **TURNS}
TURNS3_BUILD = {**BM192_BUILD, **TURNS}
TURNSBLOCK_BUILD = {**BLOCK_BUILD, **TURNS}
# The block-scaled build loading each K-tile's scales after the promotion before it (GEMM_SCALES_LATE=1,
# session 20; the kernel's region scales-late), alone and in turns. Never chosen ("late", "lateturns").
LATE_BUILD = {**BLOCK_BUILD, "GEMM_SCALES_LATE": 1}
LATETURNS_BUILD = {**LATE_BUILD, **TURNS}
# late, and the scales walked by pointers ("late2"): since session 21 the snippet's own form, so the same
# cubin as BLOCK_BUILD (tests/lessons/day87/test_scales_late40.py)
LATE2_BUILD = {**BLOCK_BUILD, "GEMM_SCALES_LATE": 2}
# The 128 x 64 build (the pick where few tiles), launched as a plain grid since session 18 (the kernel's
# region launch-costs: a cluster of one has no cluster launch), and the same with the cluster launch
# kept (GEMM_NO_CLUSTER=0, "n64cl"), never promoting and promoting ("n64p", "n64pcl").
CLUSTER_LAUNCH = {"GEMM_NO_CLUSTER": 0}
# The builds the bench times only when asked (bench.PINGPONG_ENV), by the names it is asked with.
# Those in DEV_REFERENCES are builds the chooser does pick, named to time them in the same batch.
DEV_REFERENCES = ("block", "n64", "n64p")
DEV_BUILDS = {
    "pingpong": PINGPONG_BUILD,
    "192x128": BM192_BUILD,
    "128x192": BN192_BUILD,
    "overlap": OVERLAP_BUILD,
    "stagger": STAGGER_BUILD,
    "desc": DESC_BUILD,
    "stagdesc": STAGDESC_BUILD,
    "early": EARLY_BUILD,
    "early192": EARLY192_BUILD,
    "block": BLOCK_BUILD,
    "earlyblock": EARLYBLOCK_BUILD,
    "splitn": SPLITN_BUILD,
    "splitn192": SPLITN192_BUILD,
    "turns": TURNS_BUILD,
    "turns192": TURNS192_BUILD,
    "turns3": TURNS3_BUILD,
    "turnsblock": TURNSBLOCK_BUILD,
    "late": LATE_BUILD,
    "lateturns": LATETURNS_BUILD,
    "late2": LATE2_BUILD,
    "n64": NARROWER,
    "n64cl": {**NARROWER, **CLUSTER_LAUNCH},
    "n64p": {**NARROWER, "GEMM_PROMOTE": 1},
    "n64pcl": {**NARROWER, "GEMM_PROMOTE": 1, **CLUSTER_LAUNCH},
}

# The promoting builds choose_promoting picks from, by tile; the first is the one the page teaches and
# the one a tie goes to (the block-scaled build is built on it: the kernel refuses block scales at 192).
SQUARE = "128x128"
PROMOTE_TILES: dict[str, dict[str, int]] = {SQUARE: PROMOTE_BUILD, "128x192": BN192_BUILD}
# Speed per unit of work against the 128 x 128 promoting build, at the same P. 128 x 192's is fitted
# (fitted_speed) to the H100 80GB HBM3's first run of it, P = 1, 132 SMs, one interleaved batch a size
# (evidence/logs/2026-12-06-h100-s14/call3-fp8wide-bench-day87.json, "128x192 promoting build, every
# 128 (P=1) at N=4096" and "... N=8192": 0.99x and 1.15x the 128 x 128 build), rounded to 2 digits;
# tests/lessons/day87/test_chooser.py fits it again from that file.
TILE_SPEED = {SQUARE: 1.0, "128x192": 1.12}
# The sizes it is fitted at: squares of several rounds of units (6 to 32), where the time is the tiles'
# and not the fixed costs a CTA pays once (the pipeline's fill, the epilogue). At 2048 a CTA has at
# most 2 units and the model underrates the wider tile (it predicts 0.75x, the H100 measured 0.84x):
# the pick is the same, the ratio is not the model's to give.
FIT_SIZES = (4096, 8192)


def wide_tiles(m: int, n: int) -> int:
    """CTAs the default build (128 x 256 tiles) gives an M x N product."""
    return -(-m // 128) * -(-n // 256)


def choose(m: int, n: int, sms: int) -> dict[str, int]:
    """The build's defines for an M x N product on ``sms`` SMs: {} (the default, 128 x 256 with a
    cluster of two) unless its tiles would fill at most half the SMs, then ``NARROW``, or
    ``NARROWER`` where NARROW's tiles (twice as many) would too."""
    for name, value in (("M", m), ("N", n), ("the SM count", sms)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CourseError(f"{name} must be a positive integer (got {value!r})")
    tiles = wide_tiles(m, n)
    if 2 * tiles > sms:
        return {}
    return dict(NARROWER) if 4 * tiles <= sms else dict(NARROW)


@cache
def tile_build(tile: str) -> Build:
    """The promoting build ``tile`` (a key of ``PROMOTE_TILES``), as the kernel file makes it."""
    if tile not in PROMOTE_TILES:
        raise CourseError(f"no promoting build {tile!r}: the tiles are {', '.join(PROMOTE_TILES)}")
    return build_for(LESSON, PROMOTE_TILES[tile])


def busiest_work(m: int, n: int, sms: int, tile: str, speed: float | None = None) -> float:
    """The model's time of the busiest CTA of the promoting build ``tile`` on an M x N product, in
    128 x 128 tiles of the 128 x 128 build: ceil(rounds) units (``_fp8.waves``), each bm x bn / 128^2
    of that work, divided by the tile's speed per unit of work (``TILE_SPEED``, or ``speed``)."""
    build = tile_build(tile)
    share = build.bm * build.bn / (128 * 128)
    return math.ceil(waves(m, n, build, sms)) * share / (TILE_SPEED[tile] if speed is None else speed)


def choose_promoting(m: int, n: int, sms: int) -> str:
    """The promoting build's tile for an M x N product on ``sms`` SMs: the one whose busiest CTA
    finishes first by ``busiest_work``; a tie goes to 128 x 128 (the first of ``PROMOTE_TILES``)."""
    for name, value in (("M", m), ("N", n), ("the SM count", sms)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CourseError(f"{name} must be a positive integer (got {value!r})")
    times = {tile: busiest_work(m, n, sms, tile) for tile in PROMOTE_TILES}
    return min(times, key=lambda tile: times[tile])  # min keeps the first of equals: 128 x 128


def promoting(m: int, n: int, sms: int) -> dict[str, int]:
    """The chosen promoting build's defines (``PROMOTE_TILES[choose_promoting(...)]``)."""
    return dict(PROMOTE_TILES[choose_promoting(m, n, sms)])


def predicted_ratio(n: int, sms: int, tile: str, speed: float | None = None) -> float:
    """The model's speed of the promoting build ``tile`` over the 128 x 128 one on an N x N square."""
    return busiest_work(n, n, sms, SQUARE) / busiest_work(n, n, sms, tile, speed)


def fitted_speed(measured: Mapping[int, float], sms: int, tile: str = "128x192") -> float:
    """``tile``'s speed per unit of work that explains ``measured`` (N -> its speed over the 128 x 128
    build on an N x N square, as one batch timed them): the geometric mean over the sizes of
    measured / the model's ratio at speed 1."""
    if not measured:
        raise CourseError(f"no measurement to fit {tile}'s speed to")
    return statistics.geometric_mean(
        r / predicted_ratio(n, sms, tile, speed=1.0) for n, r in measured.items()
    )
