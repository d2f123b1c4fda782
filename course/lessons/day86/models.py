"""CPU models for Day 86: the split-K workspace and the work schedule of ``gemm7_shapes.cu``.

With a split of K, each consumer warpgroup of every unit writes its FP32 partial (64 x BN
floats) to the workspace: one slot per (CTA tile, warpgroup), each slot ``splitK`` partials
long, the partial of split ``s`` at ``s`` partials into it. :func:`partial_offsets` states that
layout from the definition (the coding exercise's model); :func:`unit_coords` transcribes the
kernel's ``unitCoords`` (tests hold it to the statement that the units cover every tile once per
split and partition its K-tiles). :func:`counter_index` states where a tile's contributions meet
for the fixup, split-K's splits and Stream-K's units alike: one counter per (CTA tile, consumer
warpgroup), CTA tiles numbered row by row (the second coding exercise's model).
"""

from __future__ import annotations

from ...errors import CourseError
from . import LESSON

__all__ = ["CONSUMERS", "PARTIAL", "counter_index", "partial_offsets", "unit_coords", "workspace_bytes"]

_K = LESSON.constants()
PARTIAL = int(_K["kWgmmaM"]) * int(_K["kBN"])  # floats per (tile, warpgroup, split) in the default build
GROUP_M = int(_K["kGroupM"])
CONSUMERS = int(_K["kConsumers"])  # consumer warpgroups of a 128-row CTA tile: one counter each


def partial_offsets(slot: int, split: int, split_k: int, partial: int = PARTIAL) -> tuple[int, int]:
    """(floats from the workspace's start to the slot's first partial, to split ``split``'s partial).

    The slot holds ``split_k`` partials of ``partial`` floats, one per split, in split order;
    slots follow each other."""
    for name, value in (("slot", slot), ("split", split), ("split_k", split_k)):
        if value < 0:
            raise CourseError(f"{name} must be >= 0 (got {value})")
    base = slot * split_k * partial
    return base, base + split * partial


def counter_index(
    m_block: int, n_block: int, cons: int, tiles_n: int, consumers: int = CONSUMERS
) -> tuple[int, int]:
    """(the CTA tile's index, its counter) for CTA tile row ``m_block``, column ``n_block`` and
    consumer warpgroup ``cons``: CTA tiles numbered row by row over ``tiles_n`` tile columns, each
    with ``consumers`` counters in a row. Every contribution of one tile and warpgroup, whichever
    split, unit or cluster computed it, counts in on the same counter; no two (tile, warpgroup)
    pairs share one."""
    for name, value in (("m_block", m_block), ("n_block", n_block), ("cons", cons)):
        if value < 0:
            raise CourseError(f"{name} must be >= 0 (got {value})")
    if tiles_n < 1 or consumers < 1:
        raise CourseError(f"tiles_n and consumers must be >= 1 (got {tiles_n}, {consumers})")
    cta_tile = m_block * tiles_n + n_block
    return cta_tile, cta_tile * consumers + cons


def workspace_bytes(cta_tiles: int, split_k: int, tile_m: int, tile_n: int) -> int:
    """FP32 bytes of the workspace: a partial of the whole tile per (CTA tile, split)."""
    return cta_tiles * split_k * tile_m * tile_n * 4 if split_k > 1 else 0


def unit_coords(
    unit: int, cluster_tiles_m: int, tiles_n: int, k_tiles: int, split_k: int, group_m: int = GROUP_M
) -> tuple[int, int, int, int, int]:
    """(mBlock in cluster-tile rows, nBlock, split, kBegin, kEnd) of a unit, as ``unitCoords``."""
    tile = unit // split_k
    split = unit - tile * split_k
    group = tile // (group_m * tiles_n)
    first_m = group * group_m
    rows = min(cluster_tiles_m - first_m, group_m)
    in_group = tile - group * (group_m * tiles_n)
    return (
        first_m + in_group % rows,
        in_group // rows,
        split,
        split * k_tiles // split_k,
        (split + 1) * k_tiles // split_k,
    )
