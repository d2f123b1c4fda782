"""CPU model of the Day 76 kernel's write-back: where each thread's element of the tile lands.

The kernel's plain-store loop walks its tile row by row (``r = k / kTileWidth``,
``c = k % kTileWidth``) and writes element (r, c) to the global array. The
model here starts from the course's model of the TMA coordinates
(``figures.tma_tile_plan``: the column and row the block's copy asked the
engine for), so "the store writes back exactly the box the TMA loaded" is
what the coding exercise checks a learner's store line against.
"""

from __future__ import annotations

from functools import cache

from . import LESSON
from .figures import TmaTile, tma_tile_plan

__all__ = ["store_index"]


@cache
def _plan() -> dict[tuple[int, int], TmaTile]:
    return {(t.block_x, t.block_y): t for t in tma_tile_plan()}


@cache
def _width() -> int:
    return int(LESSON.constants(LESSON.run_defines)["kGmemWidth"])


def store_index(bx: int, by: int, k: int) -> int:
    """The element index of ``out`` that element ``k`` of block (bx, by)'s tile belongs at.

    Mirrors ``out[(rowBase + r) * kGmemWidth + colBase + c] = tile[r][c] + 1.0f;``
    from the TMA box instead: element (r, c) of the box at (x, y) is global
    row y + r, column x + c, in a row-major array ``kGmemWidth`` floats wide.
    """
    tile = _plan()[(bx, by)]
    r, c = divmod(k, tile.width)
    return (tile.y + r) * _width() + tile.x + c
