"""Day 76's picture: which block's TMA copy loads which tile.

Computed from tma_tile.cu's own constants and its coordinate expression;
the tests compare the image data with the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..._kept import rendered
from ...errors import CourseError
from . import LESSON

if TYPE_CHECKING:  # matplotlib is imported when the figure is drawn, not when its kept rendering is shown
    from ...picture import Picture

__all__ = ["TmaTile", "tma_owner_map", "tma_tile_plan", "tma_tiles_figure"]


# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TmaTile:
    """One block's copy: blockIdx and the coordinate pair it hands the TMA engine."""

    block_x: int
    block_y: int
    x: int  # coords[0] = blockIdx.x * kTileWidth: column, the contiguous dimension
    y: int  # coords[1] = blockIdx.y * kTileHeight: row
    width: int
    height: int


def tma_tile_plan(dim: int | None = None) -> list[TmaTile]:
    """Every block of the Day 76 grid and the tile its cp.async.bulk.tensor asks for.

    Constants come from tma_tile.cu (kTileWidth, kTileHeight, TMA_DIM);
    the grid is ``dim3 grid(kGmemWidth / kTileWidth, kGmemHeight / kTileHeight)``
    and the coordinates are the kernel's::

        const int32_t coords[2] = {
            static_cast<int32_t>(blockIdx.x) * kTileWidth,
            static_cast<int32_t>(blockIdx.y) * kTileHeight};
    """
    consts = LESSON.constants({LESSON.size_macro: dim} if dim is not None else None)
    width, height = int(consts["kTileWidth"]), int(consts["kTileHeight"])
    gmem_w, gmem_h = int(consts["kGmemWidth"]), int(consts["kGmemHeight"])
    if gmem_w % width or gmem_h % height:
        raise CourseError(
            f"the matrix ({gmem_w} x {gmem_h}) must be a whole number of {width} x {height} tiles"
        )
    return [
        TmaTile(bx, by, bx * width, by * height, width, height)
        for by in range(gmem_h // height)
        for bx in range(gmem_w // width)
    ]


def tma_owner_map(plan: list[TmaTile]) -> np.ndarray:
    """(rows, cols) array: the linear id (blockIdx.y * gridDim.x + blockIdx.x) of the block that loads it."""
    grid_x = max(t.block_x for t in plan) + 1
    rows = max(t.y + t.height for t in plan)
    cols = max(t.x + t.width for t in plan)
    owner = np.full((rows, cols), -1, dtype=np.int64)
    for t in plan:
        owner[t.y : t.y + t.height, t.x : t.x + t.width] = t.block_y * grid_x + t.block_x
    return owner


@rendered
def tma_tiles_figure(dim: int | None = None) -> Picture:
    """The matrix cut into its tiles, each labelled with its block and TMA coordinates."""
    plan = tma_tile_plan(dim=dim)
    owner = tma_owner_map(plan)
    rows, cols = owner.shape
    # heavy: matplotlib, when the figure is drawn
    from matplotlib.patches import Rectangle

    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(7.0, 7.0))
    ax = fig.add_subplot()
    ax.imshow(owner, cmap="tab20", interpolation="nearest", extent=(0, cols, rows, 0))
    for t in plan:
        ax.add_patch(Rectangle((t.x, t.y), t.width, t.height, fill=False, edgecolor="white", linewidth=2))
        ax.text(
            t.x + t.width / 2,
            t.y + t.height / 2,
            f"block ({t.block_x},{t.block_y})\n{{x={t.x}, y={t.y}}}",
            ha="center",
            va="center",
            fontsize=8,
            color="black",
            bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.8, "linewidth": 0},
        )
    ax.set_xlabel("column: x, the contiguous dimension (coords[0] = blockIdx.x * kTileWidth)")
    ax.set_ylabel("row: y (coords[1] = blockIdx.y * kTileHeight)")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    ax.set_title(
        f"{rows} x {cols} floats, {len(plan)} tiles of {plan[0].height} x {plan[0].width}: "
        "one cp.async.bulk.tensor per block",
        fontsize=10,
    )
    return fig
