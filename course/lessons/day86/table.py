"""Day 86's shape tables: the issue's targets (issue 39) and the page's picks tables."""

from __future__ import annotations

# The issue's shape table (issue 39's "Targets"): (M, N, K), in this order. ENGINE_SQUARES are the
# benchmark engine's rows (``bench.SPEC.sizes``, the first table's: the recordings are read against
# them), every other shape its ``finish``'s.
SQUARES = (256, 512, 768, 1024, 1200, 1536, 2048, 2560, 4096, 8192)
ENGINE_SQUARES = (512, 1024, 2048, 4096, 8192)
LARGE: tuple[tuple[int, int, int], ...] = (  # the large rows of the first table
    (4096, 11008, 4096),
    (4096, 4096, 11008),
    (8192, 8192, 1024),
    (16384, 4096, 4096),
    (2048, 28672, 8192),
)
DECODE: tuple[tuple[int, int, int], ...] = tuple(  # decode steps: M tokens through a weight matrix
    (m, n, k) for n, k in ((8192, 8192), (4096, 14336)) for m in (1, 2, 4, 32, 64, 128)
)
MIDDLE: tuple[tuple[int, int, int], ...] = (  # middle-sized and ragged
    # The 2500 x 2500 x 2500 breaks the stride rule (N and K multiples of 8, ``check_shape``):
    # N and K padded with zeros to 2504, as the refusal says; M stays ragged.
    (2500, 2504, 2504),
    (640, 6144, 2048),
    (1000, 3000, 704),
    (4104, 776, 1240),
    (1024, 1024, 16384),
)
SHAPES: tuple[tuple[int, int, int], ...] = (*((s, s, s) for s in SQUARES), *LARGE, *DECODE, *MIDDLE)
# The shapes the page's picks tables show (``figures.picks``): the first table's.
PAGE_SHAPES: tuple[tuple[int, int, int], ...] = (
    *((s, s, s) for s in ENGINE_SQUARES),
    *LARGE,
    (128, 8192, 8192),
    (1024, 1024, 16384),
)
