"""Day 88's pictures, each drawn from the lesson's models alone (no GPU, no recording).

- ``online_softmax_figure``: one query tile's walk over the key blocks (``softmax.online_softmax``
  on a fixed seeded input): the running max, the running sum and the factor O and l are rescaled
  by at each block, for four rows chosen to show the cases;
- ``fragment_figure``: which thread holds which element of the FP32 accumulator of S = Q K^T,
  16 columns of it, beside the FP16 A operand of the second wgmma (P V) those same registers
  become (``fragments``, from the PTX ISA's two figures in ``course.hopper.wgmma``).

Each picture has an opaque white face (matplotlib's default, kept), so it reads the same in
JupyterLab's Light and Dark themes; the tests compare each figure's data and labels with the
models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..._kept import rendered
from ...hopper.wgmma import A_REGISTER_VALUES, ModelError, ptx_a_fragment_row_col, ptx_d_fragment_row_col
from . import fragments, softmax

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn, not when its kept rendering is shown
    from ...picture import Picture

__all__ = [
    "FIGURE_BLOCK",
    "FIGURE_D",
    "FIGURE_KEYS",
    "FIGURE_ROWS",
    "FIGURE_SEED",
    "figure_input",
    "fragment_figure",
    "online_softmax_figure",
]

# The online softmax picture's input: four rows of raw scores over 1024 keys, blocks of 128, d = 64.
FIGURE_SEED = 88
FIGURE_KEYS = 1024
FIGURE_BLOCK = 128
FIGURE_D = 64
FIGURE_ROWS = (
    "random N(0, d) scores",
    "scores rising along the keys",
    "one large score in block 5",
    "largest score in block 0",
)
_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759")


def figure_input() -> tuple[np.ndarray, np.ndarray]:
    """(scores (4, 1024), v (1024, 64)): the seeded input ``online_softmax_figure`` draws.

    Raw scores as Q K^T leaves them for d = 64 (standard deviation sqrt(64) = 8), each row bent to
    show one case: the max found early and late, growing at every block, jumping once."""
    rng = np.random.default_rng(FIGURE_SEED)
    scale = np.sqrt(FIGURE_D)
    s = rng.standard_normal((len(FIGURE_ROWS), FIGURE_KEYS)) * scale
    s[1] += np.linspace(0.0, 6.0 * scale, FIGURE_KEYS)  # the max grows at (nearly) every block
    s[2, 5 * FIGURE_BLOCK + 17] = 8.0 * scale  # one score far above the rest, in block 5
    s[3, 3] = 6.0 * scale  # the max is in block 0: never rescaled after it
    v = rng.standard_normal((FIGURE_KEYS, FIGURE_D))
    return s, v


def figure_walk() -> softmax.Online:
    """The model's walk over ``figure_input`` (what the picture draws; the tests read it too)."""
    s, v = figure_input()
    return softmax.online_softmax(s, FIGURE_BLOCK, v)


@rendered
def online_softmax_figure() -> Picture:
    """The running max, the running sum and the rescale factor after each key block, per row."""
    walk = figure_walk()
    scale = 1.0 / np.sqrt(FIGURE_D)
    blocks = np.arange(len(walk.steps))
    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(14, 5))
    ax_m, ax_l, ax_r = fig.subplots(1, 3)
    for row, (name, colour) in enumerate(zip(FIGURE_ROWS, _COLOURS, strict=True)):
        ax_m.plot(blocks, walk.m[:, row] * scale, "o-", color=colour, label=f"row {row}: {name}")
        ax_l.plot(blocks, walk.ell[:, row], "o-", color=colour, label=f"row {row}")
        ax_r.plot(blocks, walk.rescale[:, row], "o-", color=colour, label=f"row {row}")
    ax_m.set_title("running max m (scaled: m / sqrt(d))")
    ax_m.set_ylabel("m / sqrt(d)")
    ax_l.set_title("running sum l")
    ax_l.set_yscale("log")
    ax_l.set_ylabel("l = sum exp((s - m) / sqrt(d))")
    ax_r.set_title("rescale factor on O and l")
    ax_r.set_yscale("log")
    ax_r.set_ylabel("exp((m_old - m_new) / sqrt(d))")
    ax_r.axhline(1.0, color="#57606a", linewidth=0.8, linestyle=":")
    smallest = np.unravel_index(np.argmin(walk.rescale), walk.rescale.shape)
    b, r = int(smallest[0]), int(smallest[1])
    ax_r.annotate(
        f"row {r}, block {b}: x {walk.rescale[b, r]:.2g}",
        (b, walk.rescale[b, r]),
        (0.05, 0.25),
        textcoords="axes fraction",
        arrowprops={"arrowstyle": "->", "color": "black", "linewidth": 0.8},
    )
    for ax in (ax_m, ax_l, ax_r):
        ax.set_xticks(blocks)
        ax.set_xlabel(f"key block ({FIGURE_BLOCK} keys each)")
        ax.grid(True, alpha=0.3)
    handles, labels = ax_m.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    fig.suptitle(
        f"The online softmax over {FIGURE_KEYS} keys in blocks of {FIGURE_BLOCK} (d = {FIGURE_D}, "
        f"seed {FIGURE_SEED}):\nO and l are multiplied by the factor whenever the max grows"
    )
    fig.readable()
    return fig


# ---------------------------------------------------------------------------
# The register fragment that feeds the second wgmma
# ---------------------------------------------------------------------------
_REGISTER_COLOURS = ("#a0cbe8", "#ffbe7d", "#8cd17d", "#ff9d9a")  # register R0..R3 of a k16 step
_WARP_COLOURS = _COLOURS  # warps 0..3 of the warpgroup (the colours of Day 78's warps)
ZOOM_ROWS = 16  # one warp's rows: warp 0, rows 0-15 (warps 1-3 hold rows 16-63 the same way)


def warp_tile(n: int) -> np.ndarray:
    """(64, n): the warp whose thread holds each element of S's accumulator (the ISA's D figure)."""
    fragments.check_n(n)
    warp = np.full((64, n), -1)
    for t in range(128):
        for i in range(n // 2):
            warp[ptx_d_fragment_row_col(t, i, n)] = t // 32
    return warp


def fragment_cells(k_step: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows 0-15 and the k-th 16 columns of the 64 x n S: (thread, d index, a index), each
    (16, 16) int, from the ISA's D figure and A figure separately (the tests hold them equal)."""
    fragments.check_n(n)
    if not 0 <= k_step < n // fragments.K_STEP:
        raise ModelError(f"k_step must be in 0..{n // fragments.K_STEP - 1} for n = {n} (got {k_step})")
    thread_d = np.full((ZOOM_ROWS, fragments.K_STEP), -1)
    d_index = np.full_like(thread_d, -1)
    thread_a = np.full_like(thread_d, -1)
    a_index = np.full_like(thread_d, -1)
    for t in range(32):  # warp 0
        for i in range(n // 2):
            row, col = ptx_d_fragment_row_col(t, i, n)
            if fragments.K_STEP * k_step <= col < fragments.K_STEP * (k_step + 1):
                thread_d[row, col % fragments.K_STEP], d_index[row, col % fragments.K_STEP] = t, i
        for j in range(A_REGISTER_VALUES):
            row, col = ptx_a_fragment_row_col(t, j)
            thread_a[row, col], a_index[row, col] = t, j
    if not np.array_equal(thread_d, thread_a):
        raise ModelError("the D and A figures put different threads on the same element")
    return thread_d, d_index, a_index


@rendered
def fragment_figure(thread: int = 5, k_step: int = 1, n: int = 64) -> Picture:
    """S's accumulator (top) and P's A operand (bottom) over the same 16 x 16 cells.

    Top: rows 0-15 (warp 0) and columns 16k..16k+15 of the 64 x n FP32 S, each cell the register
    d[i] that holds it. Bottom: the 64 x 16 A of the k-th P V wgmma, each cell the element a_j of
    the same thread. Colour: the .f16x2 register R(j // 2) the pair is packed into. ``thread``'s
    cells are outlined in both."""
    threads, d_index, a_index = fragment_cells(k_step, n)
    if not 0 <= thread < 32:
        raise ModelError(f"thread must be in warp 0 (0..31), the rows drawn (got {thread})")
    # heavy: matplotlib, when the figure is drawn
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(12, 15))
    ax_all, ax_s, ax_p = fig.subplots(3, 1, height_ratios=[0.75, 1, 1])
    colours = ListedColormap(_REGISTER_COLOURS)
    first = fragments.K_STEP * k_step
    ax_all.imshow(
        warp_tile(n),
        cmap=ListedColormap(_WARP_COLOURS),
        vmin=0,
        vmax=3,
        interpolation="nearest",
        aspect="auto",
    )
    for edge in range(fragments.K_STEP, n, fragments.K_STEP):
        ax_all.axvline(edge - 0.5, color="white", linewidth=1.2)
    ax_all.add_patch(
        Rectangle(
            (first - 0.5, -0.5), fragments.K_STEP, ZOOM_ROWS, fill=False, edgecolor="black", linewidth=2.5
        )
    )
    for w in range(4):
        ax_all.text(n / 2 - 0.5, 16 * w + 7.5, f"warp {w}: T{32 * w}-T{32 * w + 31}", ha="center", va="center",
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.9})  # fmt: skip
    ax_all.set_title(
        f"The whole 64 x {n} S of one warpgroup by warp; white lines: the {n // fragments.K_STEP} k16 steps of "
        f"P V; outlined: the 16 x 16 cells below"
    )
    ax_all.set_xlabel("column of S (key of the block)")
    ax_all.set_ylabel("row")
    for ax, index, name in ((ax_s, d_index, "d"), (ax_p, a_index, "a")):
        ax.imshow(a_index // 2, cmap=colours, vmin=0, vmax=3, interpolation="nearest", aspect="auto")
        for row in range(ZOOM_ROWS):
            for col in range(fragments.K_STEP):
                ax.text(col, row, f"{name}{index[row, col]}", ha="center", va="center", fontsize=12)
        for row, col in zip(*np.nonzero(threads == thread), strict=True):
            ax.add_patch(
                Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.5)
            )
        ax.set_yticks(range(ZOOM_ROWS), [f"{r}: T{4 * (r % 8)}-T{4 * (r % 8) + 3}" for r in range(ZOOM_ROWS)])
        ax.set_ylabel("row (its four threads)")
    ax_s.set_xticks(range(fragments.K_STEP), [str(first + c) for c in range(fragments.K_STEP)])
    ax_s.set_xlabel(
        f"column of S (key {first}..{first + fragments.K_STEP - 1} of the block); "
        "its thread: T = 4 (row mod 8) + (column mod 8) / 2"
    )
    ax_s.set_title(
        f"S = Q K^T, FP32 accumulator of m64n{n}k16: register d[i] of each thread (warp 0's rows 0-15; "
        "warps 1-3 hold rows 16-63 alike)"
    )
    ax_p.set_xticks(range(fragments.K_STEP))
    ax_p.set_xlabel(
        f"column of A = P[:, {first}:{first + fragments.K_STEP}] (k of the P V wgmma, step {k_step})"
    )
    ax_p.set_title(
        f"P as the A operand of the P V wgmma, step {k_step}: element a_j of the same thread; "
        "colour: its .f16x2 register R(j // 2)"
    )
    pairs = "; ".join(
        f"R{r} = (d{fragments.d_of_a(k_step, 2 * r)}, d{fragments.d_of_a(k_step, 2 * r + 1)})"
        for r in range(fragments.P_REGISTERS)
    )
    fig.suptitle(
        f"Same thread, same element: d[{A_REGISTER_VALUES}k + j] becomes a_j. Outlined: T{thread}.\n"
        f"Each thread packs {pairs} (low half, high half) and issues the second wgmma from registers"
    )
    fig.readable()
    return fig
