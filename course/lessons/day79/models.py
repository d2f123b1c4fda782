"""CPU models for Day 79's coding exercise: which boxes the producer asks the TMA engine for.

``kernels/gemm1_tma.cu`` replaces Day 78's element-by-element producer with
three lines run by one thread per K-tile: announce the bytes, then one TMA
copy per operand. This module states, from the launch contract in the
kernel's header (tmA/tmB: dims {K, rows}, innermost first, boxes of
{kBK, kBoxARows} and {kBK, kBoxBRows} FP16 elements) and from the CTA's
place in the grid, what those three lines must ask for: the coordinates of
each box's first element (K first, then the row), where in the CTA's
``SharedStorage`` each box lands, and the byte count the barrier expects.
The coding exercise (``content/coding/day79.toml``) compares the learner's
three lines with :func:`producer_copies` for every k-tile and CTA.
"""

from __future__ import annotations

from ...hopper.wgmma import check_range
from . import LESSON

__all__ = ["HARNESS_B_OFFSET", "producer_copies"]

_K = LESSON.constants(LESSON.run_defines)
DIM = int(_K["kDim"])
BM, BN, BK = int(_K["kBM"]), int(_K["kBN"]), int(_K["kBK"])
STAGES = int(_K["kStages"])
BOX_A_ROWS, BOX_B_ROWS = int(_K["kBoxARows"]), int(_K["kBoxBRows"])
ELEM_BYTES = 2  # FP16
# The exercise's harness lays out ``s`` like the kernel's SharedStorage:
# kStages A tiles of kBM x kBK halves, then kStages B tiles. s.a[0] is byte 0.
HARNESS_B_OFFSET = STAGES * BM * BK * ELEM_BYTES


def producer_copies(kt: int, m_block: int, n_block: int) -> tuple[int, ...]:
    """What the producer of CTA (blockIdx.y = m_block, blockIdx.x = n_block) asks for at k-tile ``kt``.

    Mirrors the kernel's producer::

        mbarArriveExpectTx(&s.full[0], kStageBytes);
        tmaLoad2d(s.a[0], &tmA, &s.full[0], kt * kBK, mBlock * kBM);
        tmaLoad2d(s.b[0], &tmB, &s.full[0], kt * kBK, nBlock * kBN);

    Written from the definitions, not from those lines: the CTA owns rows
    [m_block * kBM, +kBM) of D, so it needs the same rows of A, and rows
    [n_block * kBN, +kBN) of B (B is stored N x K); K-tile ``kt`` is columns
    [kt * kBK, +kBK) of both. A TMA coordinate is the box's first element,
    innermost dimension (K) first. The barrier's phase completes when the
    bytes of both boxes have landed: each box is kBK x rows FP16 elements.

    Returns (expect_bytes, copies, a_dst, a_k, a_row, b_dst, b_k, b_row,
    barrier): ``copies`` the number of TMA copies issued (2), ``*_dst``
    the byte offset in the harness's storage (A buffer 0, B buffer
    ``HARNESS_B_OFFSET``), ``barrier`` the index of the barrier every call
    used (0; -1 in the harness if they disagree).
    """
    check_range("kt", kt, DIM // BK)
    check_range("m_block", m_block, DIM // BM)
    check_range("n_block", n_block, DIM // BN)
    expect = (BK * BOX_A_ROWS + BK * BOX_B_ROWS) * ELEM_BYTES
    k0 = kt * BK
    return (expect, 2, 0, k0, m_block * BM, HARNESS_B_OFFSET, k0, n_block * BN, 0)
