"""CPU models for Day 86: the split-K workspace and the work schedule of ``gemm7_shapes.cu``.

With a split of K, each consumer warpgroup of every unit writes its FP32 partial (64 x BN
floats) to the workspace: one slot per (CTA tile, warpgroup), each slot ``splitK`` partials
long, the partial of split ``s`` at ``s`` partials into it. :func:`partial_offsets` states that
layout from the definition (the coding exercise's model); :func:`unit_coords` transcribes the
kernel's ``unitCoords`` (tests hold it to the statement that the units cover every tile once per
split and partition its K-tiles).
"""

from __future__ import annotations

from ...errors import CourseError
from . import LESSON

__all__ = ["PARTIAL", "partial_offsets", "unit_coords", "workspace_bytes"]

_K = LESSON.constants()
PARTIAL = int(_K["kWgmmaM"]) * int(_K["kBN"])  # floats per (tile, warpgroup, split) in the default build
GROUP_M = int(_K["kGroupM"])


def partial_offsets(slot: int, split: int, split_k: int, partial: int = PARTIAL) -> tuple[int, int]:
    """(floats from the workspace's start to the slot's first partial, to split ``split``'s partial).

    The slot holds ``split_k`` partials of ``partial`` floats, one per split, in split order;
    slots follow each other."""
    for name, value in (("slot", slot), ("split", split), ("split_k", split_k)):
        if value < 0:
            raise CourseError(f"{name} must be >= 0 (got {value})")
    base = slot * split_k * partial
    return base, base + split * partial


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
