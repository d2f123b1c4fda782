"""CPU models for Day 87: the promotion schedule of ``gemm8_fp8.cu``, the epilogue's scale and the
block-scaled promotion (the accumulator's model is ``accuracy.aligned_chains``).

:func:`promotions` transcribes the consumer's rule (tests hold the kernel's source to it): the
wgmma chain grows one K-tile at a time, and when it is ``every`` K-tiles long, unless that K-tile
is the tile's last, its sum is added into the FP32 registers and the chain restarts; the end of
the tile adds the last chain.

:func:`block_scaled_product` models the block-scaled build (``GEMM_BLOCK_SCALES=1``): the chain of
each K-tile is promoted with its scales, ``total += partial * sA[row, kb] * sB[nb, kb]``, in float64.
"""

from __future__ import annotations

import numpy as np

from ...errors import CourseError
from . import LESSON

__all__ = ["K_TILE", "block_scaled_product", "promotions", "scale_of_d", "staged_pair"]

_K = LESSON.constants()
K_TILE = int(_K["kBK"])  # elements of K per K-tile: 128


def promotions(k_tiles: int, every: int) -> list[int]:
    """The lengths, in K-tiles, of the wgmma chains one tile's K loop is cut into: one entry per
    addition into the FP32 total (the last at the end of the tile). ``every`` = 0 never cuts."""
    if k_tiles < 1 or every < 0:
        raise CourseError(f"k_tiles must be >= 1 and every >= 0 (got {k_tiles}, {every})")
    chains, chain = [], 0
    for kt in range(k_tiles):
        chain += 1
        if chain == every and kt + 1 < k_tiles:
            chains.append(chain)
            chain = 0
    chains.append(chain)
    return chains


def scale_of_d(scale_a: float, scale_b: float) -> float:
    """What the kernel multiplies every element of D by: sA * sB, in float32 as it receives it."""
    return float(np.float32(np.float32(scale_a) * np.float32(scale_b)))


def staged_pair(sb: int, half: int, a0: int, a1: int, s: int) -> tuple[int, int, int]:
    """The coding exercise's model: (byte offset from the chunk's address, lo x 64, hi x 64) of one
    stored pair, for accumulators ``a0``, ``a1`` and scale ``s`` / 8. Box ``sb`` is 64 x 64 halves
    further on; ``half`` = 1 is 8 rows down; each value stored is its accumulator times the scale."""
    rows, cols = int(_K["kBoxDRows"]), int(_K["kBoxDCols"])
    scale = s / 8
    return (sb * rows * cols + half * 8 * cols) * 2, int(a0 * scale * 64), int(a1 * scale * 64)


def block_scaled_product(
    a: np.ndarray, b: np.ndarray, scales_a: np.ndarray, scales_b: np.ndarray
) -> np.ndarray:
    """D = A B^T as the block-scaled build forms it, in float64: ``a`` (M x K) and ``b`` (N x K) are the
    e4m3 values (not yet scaled), ``scales_a`` [M, ceil(K/128)] one per row per K-block (1 x 128),
    ``scales_b`` [ceil(N/128), ceil(K/128)] one per 128 x 128 block. For each K-tile kb the chain's sum
    ``partial = a[:, kb] b[:, kb]^T`` is added into the total times its row's scale of A and its
    column block's scale of B; nothing is left for the epilogue."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    (m, k), (n, k_b) = a.shape, b.shape
    blocks = -(-k // K_TILE)
    want_a, want_b = (m, blocks), (-(-n // K_TILE), blocks)
    if k != k_b or scales_a.shape != want_a or scales_b.shape != want_b:
        raise CourseError(
            f"A {a.shape} and B {b.shape} need the same K, scales of A {want_a} and of B {want_b} "
            f"(got {scales_a.shape} and {scales_b.shape})"
        )
    col_block = np.arange(n) // K_TILE
    total = np.zeros((m, n))
    for kb in range(blocks):
        ks = slice(kb * K_TILE, (kb + 1) * K_TILE)
        partial = a[:, ks] @ b[:, ks].T
        total += partial * scales_a[:, kb, None] * scales_b[col_block, kb][None, :]
    return total
