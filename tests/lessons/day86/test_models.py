"""Day 86's CPU models held to independent statements of the schedule and the workspace."""

from __future__ import annotations

import itertools

import pytest

from course.lessons import get_lesson
from course.lessons.day86 import models

C = get_lesson("day86").constants()


@pytest.mark.parametrize(
    ("cluster_tiles_m", "tiles_n", "k_tiles", "split_k"),
    [(4, 5, 9, 3), (1, 32, 128, 4), (17, 3, 10, 3), (9, 9, 1, 1), (16, 43, 64, 1), (2, 2, 7, 7)],
)
def test_units_cover_every_tile_once_per_split_and_partition_k(cluster_tiles_m, tiles_n, k_tiles, split_k):
    units = cluster_tiles_m * tiles_n * split_k
    seen: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for u in range(units):
        m, n, split, begin, end = models.unit_coords(u, cluster_tiles_m, tiles_n, k_tiles, split_k)
        seen.setdefault((m, n), []).append((split, begin, end))
    assert sorted(seen) == sorted(itertools.product(range(cluster_tiles_m), range(tiles_n)))
    for parts in seen.values():
        parts.sort()
        assert [p[0] for p in parts] == list(range(split_k))
        # contiguous, covering [0, k_tiles), lengths within one of each other
        assert parts[0][1] == 0 and parts[-1][2] == k_tiles
        assert all(a[2] == b[1] for a, b in itertools.pairwise(parts))
        lengths = [e - b for _, b, e in parts]
        assert max(lengths) - min(lengths) <= 1


def test_partials_do_not_overlap_and_fill_the_workspace():
    split_k, slots = 3, 5
    starts = sorted(
        models.partial_offsets(slot, s, split_k)[1] for slot in range(slots) for s in range(split_k)
    )
    assert starts == [i * models.PARTIAL for i in range(slots * split_k)]
    assert models.partial_offsets(2, 0, split_k)[0] == 2 * split_k * models.PARTIAL
    assert models.PARTIAL == C["kWgmmaM"] * C["kBN"] == C["kPartial"]


def test_workspace_bytes_follow_the_contract():
    assert models.workspace_bytes(40, 3, 128, 256) == 40 * 3 * 128 * 256 * 4
    assert models.workspace_bytes(40, 1, 128, 256) == 0
