"""CPU model for Day 82's coding exercise: the grouped order of tiles.

``kernels/gemm4_persistent.cu`` hands its persistent CTAs the tiles of D in
a grouped order (``GEMM_TILE_ORDER=1``): ``kGroupM`` tile rows form a group;
inside a group the order walks down one tile column, then the next column
to the right; the groups follow each other top to bottom, and the last one
may have fewer than ``kGroupM`` rows. :func:`grouped_order` writes that
description out as a list, visiting the tiles one by one, and
:func:`grouped_tile_coords` reads the ``tile``-th entry: it never divides or
takes a remainder, so it shares no arithmetic with ``tileCoords``.
"""

from __future__ import annotations

from functools import lru_cache

from ...hopper.wgmma import ModelError
from . import LESSON

__all__ = ["GROUP_M", "grouped_order", "grouped_tile_coords"]

GROUP_M = int(LESSON.constants(LESSON.run_defines)["kGroupM"])


@lru_cache(maxsize=1024)
def grouped_order(tiles_m: int, tiles_n: int, group_m: int = GROUP_M) -> tuple[tuple[int, int], ...]:
    """Every (tile row, tile column) of a tiles_m x tiles_n grid, in the grouped order."""
    if min(tiles_m, tiles_n, group_m) < 1:
        raise ModelError(
            f"the grid and the group need at least one tile (got {tiles_m}, {tiles_n}, {group_m})"
        )
    order: list[tuple[int, int]] = []
    first = 0
    while first < tiles_m:  # groups, top to bottom
        rows = range(first, min(first + group_m, tiles_m))  # the last group may be shorter
        for n in range(tiles_n):  # columns, left to right
            for m in rows:  # down the column inside the group
                order.append((m, n))
        first += group_m
    return tuple(order)


def grouped_tile_coords(tile: int, tiles_m: int, tiles_n: int) -> tuple[int, int]:
    """(mBlock, nBlock) of the ``tile``-th tile in the grouped order; (-1, -1) past the last tile.

    Mirrors the kernel's grouped branch of ``tileCoords``::

        const int group = tile / (kGroupM * kTilesN);
        const int firstM = group * kGroupM;
        const int rows = kTilesM - firstM < kGroupM ? kTilesM - firstM : kGroupM;
        const int inGroup = tile % (kGroupM * kTilesN);
        mBlock = firstM + inGroup % rows;
        nBlock = inGroup / rows;
    """
    order = grouped_order(tiles_m, tiles_n)
    return order[tile] if 0 <= tile < len(order) else (-1, -1)
