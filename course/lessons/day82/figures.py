"""Day 82's picture: which output tile each persistent CTA takes, and when.

gemm4_persistent.cu launches one CTA per SM and lets each walk tiles of D:
CTA ``blockIdx.x`` computes tile ``blockIdx.x``, then ``blockIdx.x +
gridDim.x``, and so on (the ``setup`` and ``producer``/``consumer``
regions). Which (tile row, tile column) the i-th tile of that sequence is
decides ``tileCoords`` (the ``schedule`` region), in one of two orders:
grouped (``GEMM_TILE_ORDER=1``, the default) or row by row (``=0``).

This module restates that index arithmetic in Python, one kernel line at a
time (each mirrored line is quoted in ``KERNEL_LINES`` and the tests
require it to occur exactly once in the kernel), reads every constant from
the kernel itself, and draws the result: the tile grid of D coloured by the
turn on which a CTA computes each tile, the first wave (turn 0, one tile
per CTA) outlined. ``footprint`` counts how many distinct rows of A and B
one wave touches per K-step, the quantity the kernel's header argues about.
It is arithmetic on the schedule, not a measurement of the L2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._kept import rendered
from ...hopper.wgmma import ModelError
from . import LESSON

if TYPE_CHECKING:  # matplotlib is imported when the figure is drawn, not when its kept rendering is shown
    from ...picture import Picture

__all__ = [
    "H200_SMS",
    "KERNEL_LINES",
    "ORDER_NAMES",
    "WALK_LINE",
    "TileGrid",
    "TileWalk",
    "WaveFootprint",
    "footprint",
    "footprint_rows",
    "tile_coords",
    "tile_grid",
    "tile_order_figure",
    "walk",
]

# The grid the host launches: `const dim3 grid(prop.multiProcessorCount);`, which the kernel's
# header gives as "132 on an H100 SXM or an H200" (both have 132). Any grid size is correct; this is
# the one the page times.
H200_SMS = 132

ORDER_NAMES = {1: "grouped", 0: "row by row"}

# The exact source text each piece of the model mirrors; the tests require every one of these
# to occur on exactly one line of kernels/gemm4_persistent.cu.
KERNEL_LINES: dict[str, str] = {
    "tiles_m": "constexpr int kTilesM = kDim / kBM;",
    "tiles_n": "constexpr int kTilesN = kDim / kBN;",
    "num_tiles": "constexpr int kNumTiles = kTilesM * kTilesN;",
    "first_tile": "const int firstTile = static_cast<int>(blockIdx.x);",
    "tile_step": "const int tileStep = static_cast<int>(gridDim.x);",
    "launch_grid": "const dim3 grid(prop.multiProcessorCount);",
    "order_switch": "if (kTileOrder == 0) {",
    "row_m": "mBlock = tile / kTilesN;",
    "row_n": "nBlock = tile % kTilesN;",
    "group": "const int group = tile / (kGroupM * kTilesN);",
    "first_m": "const int firstM = group * kGroupM;",
    "rows": "const int rows = kTilesM - firstM < kGroupM ? kTilesM - firstM : kGroupM;",
    "in_group": "const int inGroup = tile % (kGroupM * kTilesN);",
    "grouped_m": "mBlock = firstM + inGroup % rows;",
    "grouped_n": "nBlock = inGroup / rows;",
}
# The walk itself is written twice, once by the producer and once by the consumers: both roles
# must visit the same tiles in the same order, or the ring's stages would carry the wrong tile.
WALK_LINE = "for (int tile = firstTile; tile < kNumTiles; tile += tileStep) {"


# ---------------------------------------------------------------------------
# The kernel's constants at a given size and order
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TileGrid:
    """The tile grid of D for one build of the kernel (``-DGEMM_DIM``, ``-DGEMM_TILE_ORDER``)."""

    n: int  # kDim: M = N = K
    order: int  # kTileOrder: 0 row by row, 1 grouped
    tile_m: int  # kBM: rows of D one CTA owns
    tile_n: int  # kBN: columns of D one CTA owns
    tile_k: int  # kBK: K depth of one stage
    group_m: int  # kGroupM: tile rows one group walks down before moving right
    stage_bytes: int  # kStageBytes: what the TMA delivers per K-tile (A + B)

    @property
    def tiles_m(self) -> int:
        return self.n // self.tile_m  # constexpr int kTilesM = kDim / kBM;

    @property
    def tiles_n(self) -> int:
        return self.n // self.tile_n  # constexpr int kTilesN = kDim / kBN;

    @property
    def num_tiles(self) -> int:
        return self.tiles_m * self.tiles_n  # constexpr int kNumTiles = kTilesM * kTilesN;


def tile_grid(n: int = 8192, order: int = 1) -> TileGrid:
    """The kernel's constants built with ``-DGEMM_DIM=n -DGEMM_TILE_ORDER=order``, read from its source."""
    if order not in ORDER_NAMES:
        raise ModelError(f"order must be 0 (row by row) or 1 (grouped), as GEMM_TILE_ORDER (got {order!r})")
    if isinstance(n, bool) or not isinstance(n, int):
        raise ModelError(f"n must be an int, as GEMM_DIM (got {n!r})")
    c = LESSON.constants({"GEMM_DIM": n, "GEMM_TILE_ORDER": order})
    tile_m, tile_n, tile_k = int(c["kBM"]), int(c["kBN"]), int(c["kBK"])
    if n <= 0 or n % tile_m or n % tile_n or n % tile_k:
        # static_assert(kDim % kBM == 0 && kDim % kBN == 0 && kDim % kBK == 0, ...)
        raise ModelError(
            f"n must be a positive multiple of {tile_m}, {tile_n} and {tile_k}, as GEMM_DIM (got {n!r})"
        )
    half = 2  # __half
    stage = tile_m * tile_k * half + tile_n * tile_k * half  # kTileBytesA + kTileBytesB
    return TileGrid(int(c["kDim"]), int(c["kTileOrder"]), tile_m, tile_n, tile_k, int(c["kGroupM"]), stage)


# ---------------------------------------------------------------------------
# tileCoords, line by line
# ---------------------------------------------------------------------------
def tile_coords(tile: int, g: TileGrid) -> tuple[int, int]:
    """``tileCoords(tile, mBlock, nBlock)``: (tile row, tile column) of the ``tile``-th tile of the order.

    C's ``/`` and ``%`` on non-negative ints are Python's ``//`` and ``%``.
    """
    if not 0 <= tile < g.num_tiles:
        raise ModelError(f"tile must be in 0..{g.num_tiles - 1} (kNumTiles at N = {g.n}) (got {tile})")
    tiles_m, tiles_n, group_m = g.tiles_m, g.tiles_n, g.group_m
    if g.order == 0:  # if (kTileOrder == 0) {
        m_block = tile // tiles_n  # mBlock = tile / kTilesN;
        n_block = tile % tiles_n  # nBlock = tile % kTilesN;
    else:
        group = tile // (group_m * tiles_n)  # const int group = tile / (kGroupM * kTilesN);
        first_m = group * group_m  # const int firstM = group * kGroupM;
        # const int rows = kTilesM - firstM < kGroupM ? kTilesM - firstM : kGroupM;
        rows = tiles_m - first_m if tiles_m - first_m < group_m else group_m
        in_group = tile % (group_m * tiles_n)  # const int inGroup = tile % (kGroupM * kTilesN);
        m_block = first_m + in_group % rows  # mBlock = firstM + inGroup % rows;
        n_block = in_group // rows  # nBlock = inGroup / rows;
    return m_block, n_block


# ---------------------------------------------------------------------------
# Every CTA's walk
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TileWalk:
    """Where every CTA of a persistent launch goes: three (tiles_m, tiles_n) int arrays over D's tile grid.

    ``position[m, n]`` is the tile's index in the order (the kernel's ``tile``), ``cta[m, n]`` the
    ``blockIdx.x`` that computes it, ``turn[m, n]`` on which of that CTA's turns (0 = its first tile).
    ``visits[m, n]`` counts how often any CTA landed there: 1 everywhere for a correct schedule.
    """

    grid: TileGrid
    ctas: int  # gridDim.x
    position: np.ndarray
    cta: np.ndarray
    turn: np.ndarray
    visits: np.ndarray

    @property
    def turns(self) -> int:
        """How many turns the busiest CTA takes: ceil(kNumTiles / gridDim.x)."""
        return int(self.turn.max()) + 1

    def cta_path(self, block: int) -> list[tuple[int, int]]:
        """The (tile row, tile column) CTA ``block`` computes, in its order."""
        return [tile_coords(t, self.grid) for t in range(block, self.grid.num_tiles, self.ctas)]


def walk(n: int = 8192, order: int = 1, ctas: int = H200_SMS) -> TileWalk:
    """Run every CTA's tile loop: ``for (tile = firstTile; tile < kNumTiles; tile += tileStep)``."""
    if not isinstance(ctas, int) or ctas < 1:
        raise ModelError(f"ctas (gridDim.x) must be a positive int (got {ctas!r})")
    g = tile_grid(n, order)
    shape = (g.tiles_m, g.tiles_n)
    position = np.full(shape, -1, dtype=np.int64)
    cta = np.full(shape, -1, dtype=np.int64)
    turn = np.full(shape, -1, dtype=np.int64)
    visits = np.zeros(shape, dtype=np.int64)
    for block in range(ctas):
        first_tile = block  # const int firstTile = static_cast<int>(blockIdx.x);
        tile_step = ctas  # const int tileStep = static_cast<int>(gridDim.x);
        for i, tile in enumerate(range(first_tile, g.num_tiles, tile_step)):  # the walk
            m_block, n_block = tile_coords(tile, g)  # tileCoords(tile, mBlock, nBlock);
            position[m_block, n_block] = tile
            cta[m_block, n_block] = block
            turn[m_block, n_block] = i
            visits[m_block, n_block] += 1
    return TileWalk(g, ctas, position, cta, turn, visits)


# ---------------------------------------------------------------------------
# What one wave touches
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class WaveFootprint:
    """The tiles computed on one turn and the distinct operand rows they read per K-step."""

    n: int
    order: int
    ctas: int
    turn: int
    tiles: int  # tiles computed on this turn (at most gridDim.x)
    tile_rows: int  # distinct tile rows among them
    tile_cols: int  # distinct tile columns among them
    a_rows: int  # distinct rows of A they read: tile_rows * kBM
    b_rows: int  # distinct rows of B (columns of D): tile_cols * kBN
    unique_bytes: int  # per K-step: (a_rows + b_rows) * kBK * 2
    requested_bytes: int  # per K-step: tiles * kStageBytes, what the CTAs' TMA copies ask for

    @property
    def reuse(self) -> float:
        """Requested over distinct bytes: how many CTAs of the wave ask for each byte, on average."""
        return self.requested_bytes / self.unique_bytes

    def describe(self) -> str:
        return (
            f"N = {self.n}, {ORDER_NAMES[self.order]}: turn {self.turn} has {self.tiles} tiles in "
            f"{self.tile_rows} tile rows x {self.tile_cols} tile columns; per K-step they read "
            f"{self.a_rows} rows of A and {self.b_rows} rows of B = {self.unique_bytes / 1024:,.0f} KiB distinct, "
            f"{self.requested_bytes / 1024:,.0f} KiB requested ({self.reuse:.1f}x)"
        )


def footprint(w: TileWalk, turn: int = 0) -> WaveFootprint:
    """Count what the tiles of turn ``turn`` read per K-step (one kBK-deep slice of K)."""
    if not 0 <= turn < w.turns:
        raise ModelError(
            f"turn must be in 0..{w.turns - 1} at N = {w.grid.n} with {w.ctas} CTAs (got {turn})"
        )
    g = w.grid
    rows, cols = np.nonzero(w.turn == turn)
    tile_rows, tile_cols = len(set(rows.tolist())), len(set(cols.tolist()))
    a_rows, b_rows = tile_rows * g.tile_m, tile_cols * g.tile_n
    row_bytes = g.tile_k * 2  # one 64-deep row slice of A or B: 128 bytes
    return WaveFootprint(
        g.n, g.order, w.ctas, turn, int(len(rows)), tile_rows, tile_cols, a_rows, b_rows,
        (a_rows + b_rows) * row_bytes, int(len(rows)) * g.stage_bytes,
    )  # fmt: skip


def footprint_rows(sizes: tuple[int, ...] = (4096, 8192), ctas: int = H200_SMS) -> list[WaveFootprint]:
    """The first wave's footprint for each size, grouped first, then row by row."""
    return [footprint(walk(n, order, ctas)) for n in sizes for order in (1, 0)]


# ---------------------------------------------------------------------------
# The picture
# ---------------------------------------------------------------------------
def _panel(ax: Any, w: TileWalk, follow: int) -> Any:
    g = w.grid
    n = g.n
    # One colour per turn: a CTA's i-th tile is turn i.
    # heavy: matplotlib, when the figure is drawn
    from matplotlib import colormaps as plt_colormaps
    from matplotlib.patches import Rectangle

    cmap = plt_colormaps["viridis"].resampled(w.turns)
    image = ax.imshow(
        w.turn, cmap=cmap, interpolation="nearest", aspect="equal", extent=(0, n, n, 0),
        vmin=-0.5, vmax=w.turns - 0.5,
    )  # fmt: skip
    # The first wave: one tile per CTA, outlined tile by tile.
    for m_block, n_block in zip(*np.nonzero(w.turn == 0), strict=True):
        ax.add_patch(
            Rectangle(
                (n_block * g.tile_n, m_block * g.tile_m), g.tile_n, g.tile_m,
                fill=False, edgecolor="#ff3b30", linewidth=0.9,
            )
        )  # fmt: skip
    # One CTA's walk: blockIdx.x = follow, every gridDim.x-th tile of the order.
    path = w.cta_path(follow)
    xs = [(nb + 0.5) * g.tile_n for _, nb in path]
    ys = [(mb + 0.5) * g.tile_m for mb, _ in path]
    ax.plot(
        xs, ys, color="white", linewidth=1.0, marker="o", markersize=3.5, markeredgecolor="black",
        label=f"CTA {follow}'s tiles, turn by turn",
    )  # fmt: skip
    ax.legend(loc="lower left", fontsize=7, framealpha=0.85)
    fp = footprint(w)
    # Three short lines: at a size that reads on the page, one long line ran into the other panel's.
    ax.set_title(
        f"{ORDER_NAMES[g.order]} (GEMM_TILE_ORDER={g.order})\n"
        f"first wave (red): {fp.tile_rows} x {fp.tile_cols} tiles\n"
        f"per K-step {fp.a_rows} rows of A + {fp.b_rows} rows of B",
        fontsize=9,
    )
    ax.set_xlabel(
        f"columns of D\n(tile column nBlock: {g.tile_n} columns = {g.tile_n} rows of B)", fontsize=8
    )
    ax.set_ylabel(f"rows of D\n(tile row mBlock: {g.tile_m} rows = {g.tile_m} rows of A)", fontsize=8)
    ax.tick_params(labelsize=7)
    return image


@rendered
def tile_order_figure(n: int = 8192, ctas: int = H200_SMS, follow: int = 0) -> Picture:
    """D's tile grid coloured by the turn on which a CTA computes each tile, both orders side by side.

    The first wave (turn 0: tiles 0..ctas-1 of the order, one per CTA) is outlined in red; the
    white path is CTA ``follow``'s own sequence of tiles (tile = follow + i * ctas).
    """
    if not isinstance(follow, int) or not 0 <= follow < ctas:
        raise ModelError(f"follow must name a CTA, 0..{ctas - 1} (got {follow!r})")
    walks = [walk(n, order, ctas) for order in (1, 0)]
    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(12, 7.2))
    axes = fig.subplots(1, 2)
    images = [_panel(ax, w, follow) for ax, w in zip(axes, walks, strict=True)]
    bar = fig.colorbar(images[0], ax=list(axes), shrink=0.8, pad=0.02, ticks=range(walks[0].turns))
    bar.set_label("turn i: CTA b computes\ntile b + i * gridDim.x of the order", fontsize=8)
    g = walks[0].grid
    fig.suptitle(
        f"gemm4Persistent at N = {n}: {g.tiles_m} x {g.tiles_n} tiles of {g.tile_m} x {g.tile_n}, "
        f"{ctas} CTAs, {walks[0].turns} turn{'s' if walks[0].turns > 1 else ''}\n"
        "(tileCoords, mirrored from the kernel)",
        fontsize=11,
    )
    return fig
