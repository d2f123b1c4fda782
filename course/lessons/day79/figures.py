"""Day 79's picture: where the 128-byte swizzle puts each 16-byte chunk.

gemm1_tma.cu never computes a swizzled address itself. The TMA engine
writes each 128 x 64 FP16 box with ``CU_TENSOR_MAP_SWIZZLE_128B``, and the
wgmma descriptor says "128B swizzle" (bits 63..62 = 1), so the tensor core
undoes the same permutation when it reads. What the kernel does own is the
condition that makes the two agree: every tile starts on a 1024-byte
boundary (``kSmemAlign``), so the row index the pattern uses (shared-memory
address bits 9..7) is the tile's row modulo 8.

The picture is ``course.hopper.wgmma.swizzle_128b_chunk`` evaluated for one
swizzle atom, 8 rows x 8 chunks: chunk c of row r lands in slot
c XOR (r mod 8). ``swizzled_address`` is the same permutation written on
shared-memory byte addresses, the form the hardware applies (PTX ISA,
"Tensor Swizzling Modes", #tensor-swizzling-modes; CUTLASS
``Swizzle<3,4,3>``); the tests check the two agree on the kernel's aligned
tiles and disagree on a misaligned one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..._kept import rendered
from ...hopper.wgmma import check_range, swizzle_128b_chunk

if TYPE_CHECKING:  # matplotlib is imported when the figure is drawn, not when its kept rendering is shown
    from ...picture import Picture

__all__ = [
    "ATOM_BYTES",
    "CHUNK_BYTES",
    "ROW_BYTES",
    "SWIZZLE_ROWS",
    "landing_slots",
    "slot_contents",
    "swizzle_figure",
    "swizzled_address",
]

CHUNK_BYTES = 16  # the unit the swizzle permutes: 8 FP16 values of K
ROW_BYTES = 128  # one tile row: kBK = 64 halves, one swizzle span
SWIZZLE_ROWS = 8  # the pattern repeats every 8 rows
ATOM_BYTES = SWIZZLE_ROWS * ROW_BYTES  # 1024: the kernel's kSmemAlign
CHUNKS = ROW_BYTES // CHUNK_BYTES  # 8 chunks per row

# Eight categorical colours, one per logical chunk (K range) of a row.
CHUNK_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f")


def swizzled_address(addr: int) -> int:
    """The 128-byte swizzle on a shared-memory byte address: bits 6..4 ^= bits 9..7.

    Bits 6..4 of an address inside a 128-byte row are the 16-byte chunk;
    bits 9..7 are the row within a 1024-byte block of 8 rows. This is the
    address form of ``swizzle_128b_chunk`` (CUTLASS ``Swizzle<3,4,3>``).
    """
    check_range("addr", addr, 1 << 18)  # the descriptor's 18-bit shared-window address range
    return addr ^ (((addr >> 7) & 0x7) << 4)


def landing_slots(rows: int = SWIZZLE_ROWS, chunks: int = CHUNKS) -> np.ndarray:
    """(rows, chunks): entry [r, c] is the slot where chunk c of row r lands."""
    r, c = np.meshgrid(np.arange(rows), np.arange(chunks), indexing="ij")
    return np.asarray(swizzle_128b_chunk(r, c))


def slot_contents(rows: int = SWIZZLE_ROWS, chunks: int = CHUNKS) -> np.ndarray:
    """(rows, chunks): entry [r, p] is the logical chunk that sits in slot p of row r."""
    slots = landing_slots(rows, chunks)
    out = np.empty_like(slots)
    for r in range(rows):
        out[r, slots[r]] = np.arange(chunks)
    return out


def _grid(ax, values: np.ndarray, title: str, xlabel: str) -> None:
    # heavy: matplotlib, when the figure is drawn
    from matplotlib.colors import ListedColormap

    rows, cols = values.shape
    ax.imshow(
        values, cmap=ListedColormap(list(CHUNK_COLORS)), vmin=0, vmax=CHUNKS - 1, interpolation="nearest"
    )
    for edge in range(1, cols):
        ax.axvline(edge - 0.5, color="white", linewidth=1.5)
    for edge in range(1, rows):
        ax.axhline(edge - 0.5, color="white", linewidth=1.5)
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("row r of the tile (128 bytes)")
    ax.set_title(title, fontsize=10)


@rendered
def swizzle_figure(highlight: int = 0) -> Picture:
    """One swizzle atom, before and after: 8 rows x 8 chunks of 16 bytes.

    Left, the tile as it sits in global memory (K contiguous): cell (r, c)
    is chunk c of row r, coloured by c and labelled ``c→slot``. Right,
    the same 1024 bytes as the TMA engine writes them to shared memory:
    cell (r, p) is coloured and labelled by the chunk that landed in slot
    p. The outlined cells are chunk ``highlight`` of every row: one
    8 x 16-byte core matrix column, which the swizzle spreads over eight
    different slots (every slot is four of the 32 four-byte banks).
    """
    check_range("highlight", highlight, CHUNKS)
    slots = landing_slots()
    contents = slot_contents()
    # heavy: matplotlib, when the figure is drawn
    from matplotlib.patches import Rectangle

    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    fig = picture(figsize=(12, 5.6))
    left, right = fig.subplots(1, 2)
    logical = np.broadcast_to(np.arange(CHUNKS)[None, :], slots.shape).copy()
    _grid(
        left,
        logical,
        "global memory: chunk c of row r\n(label: c→slot it lands in)",
        "chunk c (K values 8c..8c+7)",
    )
    _grid(
        right,
        contents,
        "shared memory after the TMA copy (SWIZZLE_128B)\n(label: which chunk sits in slot p)",
        "slot p (bytes 16p..16p+15 of the row; banks 4p..4p+3)",
    )
    for r in range(SWIZZLE_ROWS):
        for c in range(CHUNKS):
            left.text(c, r, f"{c}→{slots[r, c]}", ha="center", va="center", fontsize=8, color="white")
            right.text(c, r, f"{contents[r, c]}", ha="center", va="center", fontsize=9, color="white")
        for ax, col in ((left, highlight), (right, int(slots[r, highlight]))):
            ax.add_patch(Rectangle((col - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.5))
    fig.suptitle(
        f"128-byte swizzle: chunk c of row r lands in slot c XOR (r mod 8). Outlined: chunk {highlight} of "
        f"rows 0..7, spread over {len(set(slots[:, highlight].tolist()))} different slots",
        fontsize=11,
    )
    return fig
