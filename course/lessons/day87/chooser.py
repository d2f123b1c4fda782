"""Day 87's builds, and the one per problem size: the default 128 x 256 tile with clusters of two, or, for a
problem of few tiles, the 128 x 128 tile without a cluster.

A CTA owns one 128 x 256 tile of D, so a 1024 x 1024 product is 32 CTAs on a GPU of 132 SMs: most
SMs idle, and each CTA's fixed costs (setup, the first load, the epilogue's store) dominate.
Halving the tile's width doubles the CTAs and halves each one's epilogue. Measured on the H200
beside cuBLASLt FP8, interleaved (``evidence/logs/2026-12-03-h200-s9-day87-small-tiles.json``):
128 x 128 without a cluster ran 512^3 and 1024^3 at 0.74x and 0.82x cuBLASLt where 128 x 256 with
a cluster of two ran at 0.55x and 0.60x, and 2048^3 at 0.96x against 0.99x (128 tiles of 128 x 256
nearly fill the 132 SMs). (cuBLASLt there is its default, which promotes: a common yardstick for two
builds that both never promote, not a like-with-like speed comparison; that is ``bench.LIKE``'s.)
So: the narrow tile while the wide one would fill at most half the SMs.
Day 86's split-K does not carry over (the FP8 kernel has none): that is where the rest of the
small sizes' gap to cuBLASLt is.
"""

from __future__ import annotations

from ...errors import CourseError

NARROW = {"GEMM_BN": 128, "GEMM_CLUSTER": 1}  # the few-tiles build
WIDE_BUILD = {"GEMM_BN": 256, "GEMM_CLUSTER": 2}  # the default build, named
PROMOTE_BUILD = {"GEMM_BN": 128, "GEMM_PROMOTE": 1}  # the build with a second accumulator
BLOCK_BUILD = {**PROMOTE_BUILD, "GEMM_BLOCK_SCALES": 1}  # 1x128 / 128x128 scales, promoted every K-tile
# 64 x 128 tiles, one consumer each, chains in turns (day87.pingpong models the order); never chosen
# here, and timed only behind bench.PINGPONG_ENV: no GPU has run it yet.
PINGPONG_BUILD = {**PROMOTE_BUILD, "GEMM_PROMOTE_PINGPONG": 1}
# Larger promoting tiles (issue 40), never chosen here either until a GPU has measured them: 192 x 128
# with three consumer warpgroups of 64 x 128, and 128 x 192 with two of 64 x 192 (m64n192k32).
BM192_BUILD = {**PROMOTE_BUILD, "GEMM_BM": 192}
BN192_BUILD = {"GEMM_BN": 192, "GEMM_PROMOTE": 1}
# The builds the bench times only when asked (bench.PINGPONG_ENV), by the names it is asked with.
DEV_BUILDS = {"pingpong": PINGPONG_BUILD, "192x128": BM192_BUILD, "128x192": BN192_BUILD}


def wide_tiles(m: int, n: int) -> int:
    """CTAs the default build (128 x 256 tiles) gives an M x N product."""
    return -(-m // 128) * -(-n // 256)


def choose(m: int, n: int, sms: int) -> dict[str, int]:
    """The build's defines for an M x N product on ``sms`` SMs: {} (the default, 128 x 256 with a
    cluster of two) unless its tiles would fill at most half the SMs, then ``NARROW``."""
    for name, value in (("M", m), ("N", n), ("the SM count", sms)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CourseError(f"{name} must be a positive integer (got {value!r})")
    return dict(NARROW) if 2 * wide_tiles(m, n) <= sms else {}
