"""CPU model of the last kernel's swizzled epilogue store (kernels/gemm6_epilogue.cu).

The D tensor map is encoded with the 128-byte swizzle, so the TMA store
reads each 128-byte row of a staging box with its 16-byte chunks permuted:
chunk c of row r sits at chunk position c XOR (r mod 8)
(``course.hopper.wgmma.swizzle_128b_chunk``, the same pattern the loads of A and B
use). A thread's registers for chunk j land in row 16 * warp + lane / 4 of
the box (Day 78's fragment layout), so the model needs only that row.
"""

from __future__ import annotations

from ...hopper.wgmma import swizzle_128b_chunk

__all__ = ["swizzled_chunk_offset"]

CHUNK_BYTES = 16


def swizzled_chunk_offset(lane: int, j: int) -> int:
    """Bytes from the start of the thread's row to where chunk ``j`` of it is stored.

    Mirrors ``const uint32_t chunkAddr = rowAddr + ((j ^ (lane / 4)) * 16);``
    from the swizzle's definition: the thread's row is 16 * warp + lane / 4,
    and 16 * warp is a multiple of 8, so row % 8 is (lane / 4) % 8.
    """
    row = lane // 4  # plus 16 * warp, which changes nothing modulo 8
    return int(swizzle_128b_chunk(row, j)) * CHUNK_BYTES
