"""Day 78's pictures, each computed from the kernel's own formulas.

The core-matrix layout, the descriptor's bits and the accumulator fragment
are drawn from ``models`` (which mirrors wgmma_gemm.cu line by line) and
``course.hopper.wgmma`` (the PTX ISA's tables); the tests compare each figure's
image data or labels with the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..._kept import rendered
from ...hopper.wgmma import DESCRIPTOR_FIELDS, ModelError, decode_descriptor
from . import models

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn, not when its kept rendering is shown
    from matplotlib.colors import ListedColormap

    from ...picture import Picture

__all__ = [
    "CORE_EXAMPLES",
    "DEFAULT_SMEM_ADDR",
    "MEASURED_H200",
    "core_matrix_figure",
    "descriptor_bits",
    "descriptor_figure",
    "fragment_figure",
]


def _warp_colors() -> ListedColormap:
    # heavy: matplotlib, when a figure is drawn
    from matplotlib.colors import ListedColormap

    return ListedColormap(["#4e79a7", "#f28e2b", "#59a14f", "#e15759"])


# ---------------------------------------------------------------------------
CORE_EXAMPLES: tuple[tuple[int, int], ...] = ((0, 0), (0, 7), (1, 0), (0, 8), (8, 0), (9, 17), (63, 63))


def _core_colors() -> ListedColormap:
    # heavy: matplotlib, when a figure is drawn
    from matplotlib.colors import ListedColormap

    # 64 cores, categorical colours: neighbours along K (index +1) and along M (+8) always differ.
    base = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]
    return ListedColormap([base[i % len(base)] for i in range(64)])


def _ink(rgba: tuple[float, ...]) -> str:
    """Black or white, whichever reads better on ``rgba`` (WCAG relative luminance)."""
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgba[:3])
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


def _free_spot(
    k: int, mn: int, points: list[tuple[int, int]], placed: list[tuple[float, float]]
) -> tuple[float, float]:
    """Where to put an example's number: the nearest spot, 4 to 12 elements away in one of 8
    directions, inside the tile, off every core's label, at least 4 elements from every other number
    and 3 from every marker."""
    for radius in (4, 6, 8, 10, 12):
        for dx, dy in ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (0, 1), (-1, 0), (0, -1)):
            x, y = k + dx * radius, mn + dy * radius
            if not (1 <= x <= 62 and 1 <= y <= 62):
                continue
            clear_of_labels = not (abs(x % 8 - 3.5) < 4 and abs(y % 8 - 3.5) < 1.8)  # a cell's "core N"
            if (
                clear_of_labels
                and all(abs(x - a) + abs(y - b) >= 4 for a, b in placed)
                and all(abs(x - a) + abs(y - b) >= 3 for a, b in points)
            ):
                return x, y
    return min(max(k + 4, 1), 62), min(max(mn + 4, 1), 62)


ZOOM = 10  # the zoom panel shows elements 0..ZOOM of the tile's top-left corner, both ways


def _label(
    ax: Any, number: int, point: tuple[float, float], spot: tuple[float, float], size: float = 10
) -> None:
    """The example's number in a white box at ``spot``, with a line to its element."""
    ax.annotate(
        str(number), point, spot, fontsize=size, fontweight="bold", ha="center", va="center",
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "black", "linewidth": 0.6},
        arrowprops={"arrowstyle": "-", "color": "black", "linewidth": 0.8},
    )  # fmt: skip


@rendered
def core_matrix_figure(examples: tuple[tuple[int, int], ...] = CORE_EXAMPLES) -> Picture:
    """Each element of the tile coloured by its core matrix; a few offsets written out.

    Examples in the top-left corner (five of the seven by default, within 8 elements of (0, 0))
    are numbered in a zoom panel beside the tile, where each element is large enough that the
    numbers and their lines stay apart; on the whole tile they are marked, and the corner is framed.
    """
    index = models.core_matrix_index_tile()
    # heavy: matplotlib, when the figure is drawn
    from matplotlib.patches import Rectangle

    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(11, 7.5))
    grid = fig.add_gridspec(2, 2, width_ratios=[4, 1.7], height_ratios=[1, 1.3])
    ax = fig.add_subplot(grid[:, 0])
    side = fig.add_subplot(grid[0, 1])
    zoom = fig.add_subplot(grid[1, 1])
    side.axis("off")
    colors = _core_colors()
    ax.imshow(index, cmap=colors, vmin=0, vmax=63, interpolation="nearest", extent=(-0.5, 63.5, 63.5, -0.5))
    zoom.imshow(
        index[: ZOOM + 1, : ZOOM + 1], cmap=colors, vmin=0, vmax=63, interpolation="nearest",
        extent=(-0.5, ZOOM + 0.5, ZOOM + 0.5, -0.5),
    )  # fmt: skip
    for edge in range(8, 64, 8):
        ax.axhline(edge - 0.5, color="white", linewidth=1)
        ax.axvline(edge - 0.5, color="white", linewidth=1)
    zoom.axhline(7.5, color="white", linewidth=1.5)
    zoom.axvline(7.5, color="white", linewidth=1.5)
    for x, y, mn0, k0 in ((4.5, 4.5, 0, 0), (9.2, 4.5, 0, 8), (4.5, 9.5, 8, 0), (9.2, 9.5, 8, 8)):
        core = int(index[mn0, k0])
        zoom.text(x, y, f"core {core}", ha="center", va="center", fontsize=9, color=_ink(colors(core)))
    for core_row in range(8):
        for core_col in range(8):
            core = int(index[core_row * 8, core_col * 8])
            ax.text(
                core_col * 8 + 3.5,
                core_row * 8 + 3.5,
                f"core {core}",
                ha="center",
                va="center",
                fontsize=10,
                color=_ink(colors(core)),  # black on the light colours (yellow, pink), white on the dark
            )
    in_zoom = [(mn, k) for mn, k in examples if mn <= ZOOM - 2 and k <= ZOOM - 2]
    if in_zoom:
        ax.add_patch(
            Rectangle(
                (-0.5, -0.5), ZOOM + 1, ZOOM + 1, fill=False, edgecolor="black", linewidth=1.2, linestyle="--"
            )
        )
    lines = []
    placed: list[tuple[float, float]] = []
    points = [(k, mn) for mn, k in examples]
    zoom_placed: list[tuple[float, float]] = []
    for number, (mn, k) in enumerate(examples, start=1):
        offset = models.core_offset(mn, k)
        ax.plot(k, mn, marker="s", markersize=5, color="black", markeredgecolor="white")
        lines.append(f"{number}: (mn={mn}, k={k}) -> element {offset}, byte {offset * models.ELEM_BYTES}")
        if (mn, k) in in_zoom:
            zoom.plot(k, mn, marker="s", markersize=9, color="black", markeredgecolor="white")
            # In the zoom an element is about 20 px: the number sits 1.5 elements off, clear of the others.
            spot = _zoom_spot(k, mn, [(kk, m) for m, kk in in_zoom], zoom_placed)
            zoom_placed.append(spot)
            _label(zoom, number, (k, mn), spot)
            continue
        # The number in a white box away from every marker and every other number, with a line to its
        # element: examples one element apart (0,0) and (1,0) no longer print over each other.
        x, y = _free_spot(k, mn, points, placed)
        placed.append((x, y))
        _label(ax, number, (k, mn), (x, y))
    side.text(0, 1, "\n".join(lines), va="top", fontsize=8, family="monospace", transform=side.transAxes)
    zoom.set_xticks(range(0, ZOOM + 1, 2))
    zoom.set_yticks(range(0, ZOOM + 1, 2))
    zoom.set_title(f"the corner, (mn, k) = (0..{ZOOM}, 0..{ZOOM})", fontsize=9)
    if not in_zoom:
        zoom.set_visible(False)
    ax.set_xlabel("k (K-major: contiguous inside a core row)")
    ax.set_ylabel("mn (row of A, or column of B)")
    ax.set_title(
        "coreOffset(mn, k): 8x8 core matrices of 128 B, consecutive along K then along M\n"
        "LBO = 128 B (next core along K), SBO = 1024 B (next 8 rows)",
        fontsize=10,
    )
    return fig


def _zoom_spot(
    k: int, mn: int, points: list[tuple[int, int]], placed: list[tuple[float, float]]
) -> tuple[float, float]:
    """A spot 1.5-3 elements from (k, mn) inside the zoom, 2 from every number and 1.4 from every marker."""
    for radius in (1.5, 2.2, 3.0):
        for dx, dy in ((1, 1), (1, 0), (0, 1), (1, -1), (-1, 1), (-1, 0), (0, -1), (-1, -1)):
            x, y = k + dx * radius, mn + dy * radius
            if not (0 <= x <= ZOOM and 0 <= y <= ZOOM):
                continue
            if all(abs(x - a) + abs(y - b) >= 2 for a, b in placed) and all(
                abs(x - a) + abs(y - b) >= 1.4 for a, b in points
            ):
                return x, y
    return min(k + 1.5, ZOOM), min(mn + 1.5, ZOOM)


# ---------------------------------------------------------------------------
# (c) Day 78: the descriptor's 64 bits
# ---------------------------------------------------------------------------
# Where smA[0] really is: on an H200 (nvcc 13.0, -gencode arch=compute_90a,code=sm_90a) an
# instrumented wgmma_gemm.cu printed __cvta_generic_to_shared(smA[0]) = 0x400, smA[1] = 0x2400,
# smB[0] = 0x4400, smB[1] = 0x6400, and tileDesc(smA[0]) = 0x4000080040. The first 1 KiB of the
# shared window is the block's system reservation (CUDA guide, Table 31: 228 KB per SM, 227 per block).
DEFAULT_SMEM_ADDR = 0x400
MEASURED_H200 = {"smA[0]": 0x400, "smA[1]": 0x2400, "smB[0]": 0x4400, "smB[1]": 0x6400}


def _two_colors() -> ListedColormap:
    # heavy: matplotlib, when a figure is drawn
    from matplotlib.colors import ListedColormap

    return ListedColormap(["#f4f4f4", "#333333"])


def descriptor_bits(desc: int) -> np.ndarray:
    """The descriptor as a (1, 64) array of bits, bit 63 first (left), bit 0 last."""
    return np.array([[(desc >> bit) & 1 for bit in range(63, -1, -1)]], dtype=np.int64)


@rendered
def descriptor_figure(smem_addr: int = DEFAULT_SMEM_ADDR, ks: int = 0) -> Picture:
    """A bit ruler of ``tileDesc(addr) + ks * (2 * 128 >> 4)``, decoded field by field.

    The default address, 0x400, is where smA[0] was on an H200 (see
    ``MEASURED_H200``); the compiler chooses it, so print
    ``__cvta_generic_to_shared(smA[0])`` on your GPU to check.
    """
    desc = models.tile_desc(smem_addr) + models.k_step_offset(ks)
    d = decode_descriptor(desc)
    bits = descriptor_bits(desc)
    # heavy: matplotlib, when the figure is drawn
    from matplotlib.patches import Rectangle

    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(13, 3.6))
    ax = fig.add_subplot()
    ax.imshow(
        bits,
        cmap=_two_colors(),
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
    for field, color in zip(DESCRIPTOR_FIELDS, palette, strict=True):
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
@rendered
def fragment_figure(zoom: tuple[int, int] = (16, 8)) -> Picture:
    """D coloured by warp (left); the top-left ``zoom`` = (rows, cols) block with thread and register (right).

    The default zoom, rows 0-15 by columns 0-7, is one warp's m16n8 block:
    rows 0-7 hold d0/d1, rows 8-15 hold d2/d3, each lane two adjacent columns.
    """
    thread, register = models.fragment_owner_tile()
    warp = thread // 32
    zoom_rows, zoom_cols = zoom
    if not (1 <= zoom_rows <= 64 and 1 <= zoom_cols <= 64):
        raise ModelError(f"zoom must be (rows, cols) within the 64x64 tile (got {zoom})")
    # heavy: matplotlib, when the figure is drawn
    from matplotlib.patches import Rectangle

    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(12, 10))  # tall enough for two lines of readable text in each zoomed cell
    ax, zax = fig.subplots(1, 2, width_ratios=[1, 0.75])
    ax.imshow(
        warp, cmap=_warp_colors(), vmin=0, vmax=3, interpolation="nearest", extent=(-0.5, 63.5, 63.5, -0.5)
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
            fontsize=11,
            color="black",
            bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": "none", "alpha": 0.9},
        )
    ax.set_xlabel("col = 8 * (r / 4) + 2 * (lane % 4) + r % 2")
    ax.set_ylabel("row = 16 * warp + lane / 4 + (r % 4 / 2) * 8")
    ax.set_title("each warp owns 16 rows of D", fontsize=10)

    corner_threads = thread[:zoom_rows, :zoom_cols]
    zax.imshow(
        corner_threads % 4,
        cmap=_warp_colors(),
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
