"""The lesson pages' pictures, each computed from the kernels' own formulas.

Every function returns a ``matplotlib.figure.Figure`` built without pyplot:
no global figure list, no backend needed to build it, nothing to close. A
notebook displays the returned figure; ``fig.savefig(...)`` works anywhere.

Each picture draws a model's output, never a hand-made copy of it: the
Day 76 tile map comes from tma_tile.cu's constants and its coordinate
expression, the Day 78 pictures from ``course.wgmma_models``, the budget
chart from ``course.smem_budget``. The tests compare each figure's image
data (or bar heights, or labels) with the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from . import _paths
from . import wgmma_models as wm
from .constants import kernel_constants
from .smem_budget import KERNEL_CONFIG, STATIC_LIMIT_BYTES, PipelineConfig, fit_report

__all__ = [
    "TmaTile",
    "core_matrix_figure",
    "descriptor_figure",
    "fragment_figure",
    "smem_budget_figure",
    "tma_owner_map",
    "tma_tile_plan",
    "tma_tiles_figure",
]

_WARP_COLORS = ListedColormap(["#4e79a7", "#f28e2b", "#59a14f", "#e15759"])


# ---------------------------------------------------------------------------
# (a) Day 76: which block's TMA copy loads which tile
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


def tma_tile_plan(kernel: Path | None = None, dim: int | None = None) -> list[TmaTile]:
    """Every block of the Day 76 grid and the tile its cp.async.bulk.tensor asks for.

    Constants come from tma_tile.cu (kTileWidth, kTileHeight, TMA_DIM);
    the grid is ``dim3 grid(kGmemWidth / kTileWidth, kGmemHeight / kTileHeight)``
    and the coordinates are the kernel's::

        const int32_t coords[2] = {
            static_cast<int32_t>(blockIdx.x) * kTileWidth,
            static_cast<int32_t>(blockIdx.y) * kTileHeight};
    """
    kernel = kernel or _paths.kernels_dir() / "tma_tile.cu"
    consts = kernel_constants(kernel, {"TMA_DIM": dim} if dim is not None else None)
    width, height = int(consts["kTileWidth"]), int(consts["kTileHeight"])
    gmem_w, gmem_h = int(consts["kGmemWidth"]), int(consts["kGmemHeight"])
    if gmem_w % width or gmem_h % height:
        raise ValueError(
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


def tma_tiles_figure(dim: int | None = None) -> Figure:
    """The matrix cut into its tiles, each labelled with its block and TMA coordinates."""
    plan = tma_tile_plan(dim=dim)
    owner = tma_owner_map(plan)
    rows, cols = owner.shape
    fig = Figure(figsize=(7.5, 7.5), layout="constrained")
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


# ---------------------------------------------------------------------------
# (b) Day 78: the core-matrix layout of one 64x64 FP16 tile
# ---------------------------------------------------------------------------
CORE_EXAMPLES: tuple[tuple[int, int], ...] = ((0, 0), (0, 7), (1, 0), (0, 8), (8, 0), (9, 17), (63, 63))


def _core_colors() -> ListedColormap:
    # 64 cores, categorical colours: neighbours along K (index +1) and along M (+8) always differ.
    base = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]
    return ListedColormap([base[i % len(base)] for i in range(64)])


def core_matrix_figure(examples: tuple[tuple[int, int], ...] = CORE_EXAMPLES) -> Figure:
    """Each element of the tile coloured by its core matrix; a few offsets written out."""
    index = wm.core_matrix_index_tile()
    fig = Figure(figsize=(11, 7.5), layout="constrained")
    ax, side = fig.subplots(1, 2, width_ratios=[4, 1.7])
    side.axis("off")
    ax.imshow(
        index, cmap=_core_colors(), vmin=0, vmax=63, interpolation="nearest", extent=(-0.5, 63.5, 63.5, -0.5)
    )
    for edge in range(8, 64, 8):
        ax.axhline(edge - 0.5, color="white", linewidth=1)
        ax.axvline(edge - 0.5, color="white", linewidth=1)
    for core_row in range(8):
        for core_col in range(8):
            ax.text(
                core_col * 8 + 3.5,
                core_row * 8 + 3.5,
                f"core {int(index[core_row * 8, core_col * 8])}",
                ha="center",
                va="center",
                fontsize=7,
                color="white",
            )
    lines = []
    for number, (mn, k) in enumerate(examples, start=1):
        offset = wm.core_offset(mn, k)
        ax.plot(k, mn, marker="s", markersize=6, color="black", markeredgecolor="white")
        ax.text(k + 0.8, mn + 0.8, str(number), fontsize=8, fontweight="bold", color="black", va="top")
        lines.append(f"{number}: (mn={mn}, k={k}) -> element {offset}, byte {offset * wm.ELEM_BYTES}")
    side.text(0, 1, "\n".join(lines), va="top", fontsize=8, family="monospace", transform=side.transAxes)
    ax.set_xlabel("k (K-major: contiguous inside a core row)")
    ax.set_ylabel("mn (row of A, or column of B)")
    ax.set_title(
        "coreOffset(mn, k): 8x8 core matrices of 128 B, consecutive along K then along M\n"
        "LBO = 128 B (next core along K), SBO = 1024 B (next 8 rows)",
        fontsize=10,
    )
    return fig


# ---------------------------------------------------------------------------
# (c) Day 78: the descriptor's 64 bits
# ---------------------------------------------------------------------------
# Where smA[0] really is: on an H200 (nvcc 13.0, -gencode arch=compute_90a,code=sm_90a) an
# instrumented wgmma_gemm.cu printed __cvta_generic_to_shared(smA[0]) = 0x400, smA[1] = 0x2400,
# smB[0] = 0x4400, smB[1] = 0x6400, and tileDesc(smA[0]) = 0x4000080040. The first 1 KiB of the
# shared window is the block's system reservation (CUDA guide, Table 31: 228 KB per SM, 227 per block).
DEFAULT_SMEM_ADDR = 0x400
MEASURED_H200 = {"smA[0]": 0x400, "smA[1]": 0x2400, "smB[0]": 0x4400, "smB[1]": 0x6400}


def descriptor_bits(desc: int) -> np.ndarray:
    """The descriptor as a (1, 64) array of bits, bit 63 first (left), bit 0 last."""
    return np.array([[(desc >> bit) & 1 for bit in range(63, -1, -1)]], dtype=np.int64)


def descriptor_figure(smem_addr: int = DEFAULT_SMEM_ADDR, ks: int = 0) -> Figure:
    """A bit ruler of ``tileDesc(addr) + ks * (2 * 128 >> 4)``, decoded field by field.

    The default address, 0x400, is where smA[0] was on an H200 (see
    ``MEASURED_H200``); the compiler chooses it, so print
    ``__cvta_generic_to_shared(smA[0])`` on your GPU to check.
    """
    desc = wm.encode_descriptor(smem_addr) + wm.k_step_offset(ks)
    d = wm.decode_descriptor(desc)
    bits = descriptor_bits(desc)
    fig = Figure(figsize=(13, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.imshow(
        bits,
        cmap=ListedColormap(["#f4f4f4", "#333333"]),
        vmin=0,
        vmax=1,
        aspect="auto",
        extent=(-0.5, 63.5, 0.5, -0.5),
    )
    for col in range(64):
        ax.text(
            col,
            0,
            str(int(bits[0, col])),
            ha="center",
            va="center",
            fontsize=7,
            color="white" if bits[0, col] else "black",
        )
    values = {
        "start address": f"{d.start_address_field:#x} -> {d.start_address_bytes:#x} B",
        "LBO": f"{d.lbo_field} -> {d.leading_byte_offset} B",
        "SBO": f"{d.sbo_field} -> {d.stride_byte_offset} B",
        "base offset": f"{d.base_offset}",
        "swizzle": f"{d.swizzle} ({d.swizzle_name})",
    }
    palette = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759"]
    for field, color in zip(wm.DESCRIPTOR_FIELDS, palette, strict=True):
        left, right = 63 - field.hi - 0.5, 63 - field.lo + 0.5
        ax.add_patch(Rectangle((left, -0.5), right - left, 1, fill=False, edgecolor=color, linewidth=2.5))
        ax.text(
            (left + right) / 2,
            -0.9,
            f"{field.name} [{field.hi}:{field.lo}]\n{values[field.name]}",
            ha="center",
            va="bottom",
            fontsize=8,
            color=color,
        )
    ax.set_xticks(range(0, 64, 4), [str(63 - c) for c in range(0, 64, 4)], fontsize=7)
    ax.set_yticks([])
    ax.set_ylim(0.6, -1.7)
    ax.set_xlabel("bit (unboxed bits are not defined by the PTX ISA table; tileDesc leaves them 0)")
    step = f" + {ks} * (2 * 128 >> 4)" if ks else ""
    ax.set_title(f"tileDesc({smem_addr:#x}){step} = {desc:#018x}", fontsize=10)
    return fig


# ---------------------------------------------------------------------------
# (d) Day 78: which thread's register holds which element of D
# ---------------------------------------------------------------------------
def fragment_figure(zoom: tuple[int, int] = (16, 8)) -> Figure:
    """D coloured by warp (left); the top-left ``zoom`` = (rows, cols) block with thread and register (right).

    The default zoom, rows 0-15 by columns 0-7, is one warp's m16n8 block:
    rows 0-7 hold d0/d1, rows 8-15 hold d2/d3, each lane two adjacent columns.
    """
    thread, register = wm.fragment_owner_tile()
    warp = thread // 32
    zoom_rows, zoom_cols = zoom
    if not (1 <= zoom_rows <= 64 and 1 <= zoom_cols <= 64):
        raise ValueError(f"zoom must be (rows, cols) within the 64x64 tile (got {zoom})")
    fig = Figure(figsize=(12, 7), layout="constrained")
    ax, zax = fig.subplots(1, 2, width_ratios=[1, 0.75])
    ax.imshow(
        warp, cmap=_WARP_COLORS, vmin=0, vmax=3, interpolation="nearest", extent=(-0.5, 63.5, 63.5, -0.5)
    )
    for edge in range(8, 64, 8):
        ax.axvline(edge - 0.5, color="white", linewidth=0.6)
        ax.axhline(edge - 0.5, color="white", linewidth=0.6 if edge % 16 else 1.6)
    ax.add_patch(Rectangle((-0.5, -0.5), zoom_cols, zoom_rows, fill=False, edgecolor="black", linewidth=2))
    for w in range(4):
        ax.text(
            32,
            16 * w + 7.5,
            f"warp {w}: threads T{32 * w}-T{32 * w + 31}",
            ha="center",
            va="center",
            fontsize=9,
            color="white",
        )
    ax.set_xlabel("col = 8 * (r / 4) + 2 * (lane % 4) + r % 2")
    ax.set_ylabel("row = 16 * warp + lane / 4 + (r % 4 / 2) * 8")
    ax.set_title("each warp owns 16 rows of D", fontsize=10)

    corner_threads = thread[:zoom_rows, :zoom_cols]
    zax.imshow(
        corner_threads % 4,
        cmap=_WARP_COLORS,
        vmin=0,
        vmax=3,
        alpha=0.55,
        interpolation="nearest",
        extent=(-0.5, zoom_cols - 0.5, zoom_rows - 0.5, -0.5),
    )
    for row in range(zoom_rows):
        for col in range(zoom_cols):
            zax.text(
                col,
                row,
                f"T{int(thread[row, col])}\nd{int(register[row, col])}",
                ha="center",
                va="center",
                fontsize=7,
            )
    zax.set_xticks(range(zoom_cols))
    zax.set_yticks(range(zoom_rows))
    zax.set_title(
        f"rows 0-{zoom_rows - 1}, cols 0-{zoom_cols - 1}: thread T and register d (acc[r])\n"
        "colour: lane % 4 (threadID_in_group)",
        fontsize=10,
    )
    fig.suptitle("acc[r] of consumer thread T = 32 * warp + lane: the kernel's store loop", fontsize=11)
    return fig


# ---------------------------------------------------------------------------
# (e) the shared-memory budget
# ---------------------------------------------------------------------------
def smem_budget_figure(config: PipelineConfig = KERNEL_CONFIG) -> Figure:
    """Each card's per-block maximum as a bar, the configuration's need as a line."""
    fits = fit_report(config)
    fig = Figure(figsize=(8, 3.8), layout="constrained")
    ax = fig.add_subplot()
    names = [f.card.name for f in fits]
    limits = [f.limit_bytes / 1024 for f in fits]
    colors = ["#59a14f" if f.fits else "#e15759" for f in fits]
    ax.barh(names, limits, color=colors)
    need = config.total_bytes / 1024
    ax.axvline(need, color="black", linewidth=2, label=f"this pipeline: {need:g} KiB")
    ax.axvline(
        STATIC_LIMIT_BYTES / 1024, color="grey", linestyle="--", label="48 KiB: static __shared__ limit"
    )
    for y, f in enumerate(fits):
        ax.text(f.limit_bytes / 1024 + 2, y, f"{f.max_stages} stages max", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(max(limits), need) * 1.25)
    ax.set_xlabel("shared memory per thread block, KiB (CUDA C++ Programming Guide, Table 31)")
    ax.set_title(config.describe(), fontsize=10)
    fig.legend(loc="outside lower center", ncols=2, fontsize=8)
    return fig
