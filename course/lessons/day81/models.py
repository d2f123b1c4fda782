"""CPU model for Day 81's coding exercise: which rows of D each consumer warpgroup owns.

``kernels/gemm3_two_consumers.cu`` splits the 128 x 256 CTA tile between two
consumer warpgroups: consumer ``cons`` computes the 64-row slice ``cons``
with one m64n256k16 wgmma per k16 step, so its accumulators hold rows
[64 cons, 64 cons + 64) of the tile. Inside that slice, the accumulator
fragment is the PTX ISA's (``course.hopper.wgmma.ptx_d_fragment_row_col``): warp w
holds rows 16w..16w+15, register 0 of a lane sits in row lane / 4.
:func:`epilogue_row0` combines the two into the row of D where a thread's
first register is stored.
"""

from __future__ import annotations

from ...hopper.wgmma import WARPGROUP, check_range, ptx_d_fragment_row_col
from . import LESSON

__all__ = ["epilogue_row0"]

_K = LESSON.constants(LESSON.run_defines)
DIM = int(_K["kDim"])
BM = int(_K["kBM"])
WGMMA_M = int(_K["kWgmmaM"])
CONSUMERS = int(_K["kConsumers"])
SLICES = BM // (WGMMA_M * CONSUMERS)  # m64 slices per consumer (kMmaM): 1


def epilogue_row0(m_block: int, cons: int, mi: int, warp: int, lane: int) -> int:
    """The row of D that register 0 of (consumer ``cons``, ``warp``, ``lane``) holds, in slice ``mi``.

    Mirrors the kernel's epilogue line::

        const int row0 = mBlock * kBM + (cons * kMmaM + mi) * kWgmmaM + 16 * warp + lane / 4;

    From the definitions: the CTA owns rows [m_block * kBM, +kBM); they are
    cut into m64 slices, consumer ``cons`` owning slices cons * kMmaM ..
    cons * kMmaM + kMmaM - 1 (one slice here); within a slice the row of
    register 0 is the PTX fragment figure's.
    """
    check_range("m_block", m_block, DIM // BM)
    check_range("cons", cons, CONSUMERS)
    check_range("mi", mi, SLICES)
    check_range("warp", warp, WARPGROUP // 32)
    check_range("lane", lane, 32)
    row_in_slice, _ = ptx_d_fragment_row_col(32 * warp + lane, 0)
    return m_block * BM + (cons * SLICES + mi) * WGMMA_M + row_in_slice
