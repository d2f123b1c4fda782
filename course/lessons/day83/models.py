"""CPU model for Day 83's coding exercise: who loads which half of B, and for whom.

``kernels/gemm5_cluster.cu`` runs clusters of ``kClusterM`` = 2 CTAs stacked
along M. Both CTAs of a cluster compute tiles in the same tile column, so
they need the same 256 x 64 box of B per K-tile. Each CTA fetches one half of
it, rows split by its rank in the cluster, and multicasts that half into the
shared memory of every CTA of the cluster at the same offset, where the
half's barrier (same offset in each CTA) counts its bytes.
:func:`multicast_copy` states that copy from the definition.
"""

from __future__ import annotations

from ...hopper.wgmma import check_range
from . import LESSON

__all__ = ["multicast_copy"]

_K = LESSON.constants(LESSON.run_defines)
DIM = int(_K["kDim"])
BN, BK = int(_K["kBN"]), int(_K["kBK"])
STAGES = int(_K["kStages"])
CLUSTER = int(_K["kClusterM"]) * int(_K["kClusterN"])
HALF_ROWS = BN // CLUSTER  # rows of the B tile one CTA fetches


def multicast_copy(rank: int, stage: int, kt: int, n_block: int) -> tuple[int, ...]:
    """The multicast copy of B that the CTA of cluster rank ``rank`` issues for K-tile ``kt``.

    Mirrors the kernel's producer::

        tmaLoad2dMulticast(&s.b[stage][rank * kBoxBRows * kBK], &tmB,
                           &s.full[stage], kt * kBK,
                           nBlock * kBN + static_cast<int>(rank) * kBoxBRows,
                           static_cast<uint16_t>((1u << kClusterSize) - 1));

    From the definitions: the cluster's B tile is rows [n_block * kBN, +kBN)
    of B (B is N x K), K columns [kt * kBK, +kBK). Its kClusterSize CTAs
    split it into equal row blocks; rank r fetches block r, and it must land
    where the wgmma expects it in *every* CTA: rows [r * kBN / size, ...) of
    that CTA's ``s.b[stage]``, counted by ``s.full[stage]``. So the copy goes
    to all CTAs of the cluster: a mask with one bit per CTA rank.

    Returns (dst_stage, dst_row, barrier, k, row, cta_mask, map_b):
    ``dst_row`` the first row of ``s.b[dst_stage]`` the box lands on,
    ``map_b`` 1 when the copy reads through ``tmB``.
    """
    check_range("rank", rank, CLUSTER)
    check_range("stage", stage, STAGES)
    check_range("n_block", n_block, DIM // BN)
    return (stage, rank * HALF_ROWS, stage, kt * BK, n_block * BN + rank * HALF_ROWS, (1 << CLUSTER) - 1, 1)
