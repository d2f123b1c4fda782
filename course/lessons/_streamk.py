"""The Stream-K schedule of ``gemm7_shapes.cu`` (``-DGEMM_STREAMK=1``), transcribed for the CPU.

The kernel's ``makeProblem``, ``skBegin``, ``skOwner`` and ``nextWork``, line for line, so that the
host can size the workspace and the grid, the chooser can price the schedule, and the tests can hold
it to its promises (every K-iteration of every tile computed once; no cluster waits for another)
without a GPU. The rule is CUTLASS's data-parallel + Stream-K hybrid
(``PersistentTileSchedulerSm90StreamKParams`` in include/cutlass/gemm/kernel/
tile_scheduler_params.h: ``get_num_sk_tiles``, ``get_num_sk_units``; the unit numbering of
``assign_work`` in sm90_tile_scheduler_stream_k.hpp), after Osama et al., "Stream-K: Work-centric
Parallel Decomposition for Dense Matrix-Matrix Multiplication on the GPU", PPoPP 2023:

- with whole waves of tiles (``tiles % slots == 0``) every tile is data-parallel;
- otherwise the last two waves' worth of tiles (the partial wave and one full wave, if there is
  one) are Stream-K tiles, numbered first; their ``sk_tiles * k_tiles`` K-iterations are cut into
  ``sk_units`` contiguous ranges, one per cluster, as many as get at least ``min_iters`` (CUTLASS's
  ``min_iters_per_sk_unit_`` = 8) and at most one per slot; the first ``sk_big`` ranges are one
  iteration longer;
- (this is CUTLASS's ``DecompositionMode::StreamK``; its default ``Heuristic`` mode also goes
  data-parallel when ``k_tiles <= 8`` or the tail wave is at least half full: here the chooser
  decides whether the Stream-K build runs at all);
- the other tiles are data-parallel, unit ``u >= sk_units`` computing tile ``u - sk_units +
  sk_tiles`` whole; cluster ``c`` walks units ``c, c + slots, ...``.

Tiles and slots are counted in clusters (a cluster's CTAs walk the same units, each its own rows).
A tile that several units share is fixed up by ``reduceSplits``, split-K's last-arriver reduction:
each unit's contribution ``seg`` (its place among the tile's units, in K order) goes to the
workspace, and whichever arrives last sums them; nobody waits for anybody.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..errors import CourseError

MIN_ITERS = 8  # the kernel's kSkMinIters (CUTLASS's min_iters_per_sk_unit_); tests compare the two


class Piece(NamedTuple):
    """One piece of work, as ``nextWork`` returns it: a tile, its K-tiles [k_begin, k_end), and
    which of the tile's ``segs`` contributions it is (``segs == 1``: the whole tile, no fixup)."""

    unit: int
    tile: int
    k_begin: int
    k_end: int
    seg: int
    segs: int


@dataclass(frozen=True)
class StreamK:
    """``makeProblem``'s Stream-K fields for ``tiles`` cluster tiles of ``k_tiles`` K-tiles each on
    ``slots`` clusters."""

    tiles: int
    k_tiles: int
    slots: int
    sk_tiles: int
    sk_units: int
    sk_per: int
    sk_big: int
    sk_peers: int

    @property
    def dp_tiles(self) -> int:
        return self.tiles - self.sk_tiles

    @property
    def units(self) -> int:
        return self.sk_units + self.dp_tiles

    def begin(self, unit: int) -> int:
        """``skBegin``: the first K-iteration of Stream-K unit ``unit`` (``sk_units`` gives the end)."""
        return unit * self.sk_per + min(unit, self.sk_big)

    def owner(self, it: int) -> int:
        """``skOwner``: the Stream-K unit that computes K-iteration ``it``."""
        big_iters = self.sk_big * (self.sk_per + 1)
        if it < big_iters:
            return it // (self.sk_per + 1)
        return self.sk_big + (it - big_iters) // self.sk_per

    def pieces(self, unit: int) -> list[Piece]:
        """``nextWork``'s pieces of one unit, in the order the cluster computes them."""
        if unit < self.sk_units:
            it, end = self.begin(unit), self.begin(unit + 1)
        else:
            it = (unit - self.sk_units + self.sk_tiles) * self.k_tiles
            end = it + self.k_tiles
        out = []
        while it < end:
            tile = it // self.k_tiles
            tile_begin = tile * self.k_tiles
            tile_end = tile_begin + self.k_tiles
            k_begin, k_end = it - tile_begin, min(end, tile_end) - tile_begin
            seg, segs = 0, 1
            if tile < self.sk_tiles:
                first = self.owner(tile_begin)
                seg, segs = unit - first, self.owner(tile_end - 1) - first + 1
            out.append(Piece(unit, tile, k_begin, k_end, seg, segs))
            it = tile_begin + k_end
        return out

    def walk(self, cluster: int) -> list[Piece]:
        """Every piece cluster ``cluster`` computes: units ``cluster, cluster + slots, ...``."""
        return [pc for u in range(cluster, self.units, self.slots) for pc in self.pieces(u)]

    def shared_tiles(self) -> int:
        """Tiles that more than one unit computes (each one fixup)."""
        k = self.k_tiles
        return sum(1 for t in range(self.sk_tiles) if self.owner(t * k) != self.owner((t + 1) * k - 1))

    def slot_floats(self, tile: int, rank: int, cons: int, cluster: int, consumers: int, tile_n: int) -> int:
        """``skSlotFloats``: floats from the workspace's start to the slot of (Stream-K CTA tile
        ``rank`` of cluster tile ``tile``, warpgroup ``cons``): ``sk_peers`` partials of 64 x BN."""
        return ((tile * cluster + rank) * consumers + cons) * self.sk_peers * 64 * tile_n

    def workspace_floats(self, tile_m: int, tile_n: int, cluster: int) -> int:
        """FP32 floats of the workspace: ``sk_peers`` partials of a whole CTA tile per Stream-K CTA tile."""
        return self.sk_tiles * cluster * self.sk_peers * tile_m * tile_n


def schedule(tiles: int, k_tiles: int, slots: int, min_iters: int = MIN_ITERS) -> StreamK:
    """``makeProblem`` with ``GEMM_STREAMK=1``: the hybrid's numbers for one problem and grid."""
    for name, value in (("tiles", tiles), ("k_tiles", k_tiles), ("slots", slots), ("min_iters", min_iters)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CourseError(f"Stream-K schedule: {name} must be a positive integer (got {value!r})")
    sk_tiles = sk_units = sk_per = sk_big = sk_peers = 0
    full_waves = tiles // slots
    if tiles % slots:
        dp_tiles = (full_waves - 1 if full_waves > 0 else 0) * slots
        sk_iters = (tiles - dp_tiles) * k_tiles
        units = min(sk_iters // min_iters, slots)
        if units > 0:
            sk_tiles, sk_units = tiles - dp_tiles, units
            sk_per, sk_big = divmod(sk_iters, units)
            sk_peers = -(-k_tiles // sk_per) + 1
    return StreamK(tiles, k_tiles, slots, sk_tiles, sk_units, sk_per, sk_big, sk_peers)
