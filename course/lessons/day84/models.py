"""CPU model for Day 84's coding exercise: where a thread's accumulators land in the staging box.

``kernels/gemm6_epilogue.cu`` stores D through shared memory: each consumer
writes its 64 x 256 slice, 64 columns at a time, into 64 x 64 FP16 staging
boxes (``s.dOut[cons][sb]``, 64 rows of 128 bytes each), and a TMA store
copies each box to D. Every thread first computes ``rowAddr``: the shared
address, in box 0 of its consumer, of the row its register 0 belongs to,
plus the byte of that register pair inside a 16-byte chunk; the swizzled
chunk and the box are added per register. :func:`staging_row_addr` states
that address from the definitions: the accumulator's row and column from
the PTX ISA's fragment figure (``course.hopper.wgmma.ptx_d_fragment_row_col``),
128 bytes per box row, 2 bytes per FP16 element.
"""

from __future__ import annotations

from ...hopper.wgmma import WARPGROUP, check_range, ptx_d_fragment_row_col
from . import LESSON

__all__ = ["staging_row_addr"]

_K = LESSON.constants(LESSON.run_defines)
CONSUMERS = int(_K["kConsumers"])
BOX_ROWS, BOX_COLS = int(_K["kBoxDRows"]), int(_K["kBoxDCols"])
BOXES = int(_K["kStagingBoxes"])
ELEM_BYTES = 2  # FP16
ROW_BYTES = BOX_COLS * ELEM_BYTES  # one box row: 64 halves = 128 bytes, one swizzle row
CONSUMER_BYTES = BOXES * BOX_ROWS * BOX_COLS * ELEM_BYTES  # s.dOut[cons]: kStagingBoxes boxes


def staging_row_addr(cons: int, warp: int, lane: int) -> tuple[int, int, int]:
    """(consumer's staging area, row of the box, byte within the row) of ``rowAddr``.

    Mirrors the kernel's lines::

        const uint32_t rowAddr = smemAddr(s.dOut[cons][0]) +
                                 (16 * warp + lane / 4) * 128 + (lane % 4) * 4;

    measured from ``s.dOut[0][0]``: the consumer's staging area
    ``cons`` (each ``kStagingBoxes`` boxes long), then the accumulator row
    of the thread's register 0 (the PTX figure: row 16 * warp + lane / 4 of
    the m64 slice), then the byte of its first column inside the 128-byte
    row, unswizzled (the chunk's XOR is the next line's job): the pair
    (col, col + 1) starts at byte 2 * col, col = 2 * (lane % 4).
    """
    check_range("cons", cons, CONSUMERS)
    check_range("warp", warp, WARPGROUP // 32)
    check_range("lane", lane, 32)
    row, col = ptx_d_fragment_row_col(32 * warp + lane, 0)
    return cons, row, col * ELEM_BYTES
