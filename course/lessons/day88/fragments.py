"""Why P can stay in registers: the accumulator of S = Q K^T is, 16 columns at a time, the A operand
of the next wgmma.

The first wgmma (m64nNk16, N = the key block) leaves each thread of the warpgroup N / 2 FP32
values of the 64 x N tile S (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16",
"WGMMA .m64nNk16 register fragment layout for accumulator matrix D"). The second, O += P V,
takes its 64 x 16 A from registers ("Multiplicand A in registers": four .f16x2 registers a0..a7,
"WGMMA .m64nNk16 register fragment layout for matrix A"). Both figures give warp w rows
16w..16w+15 and both lay each warp's 16 rows out as the mma.m16n8 fragments, so for the k-th
16 columns of S::

    d[8k + j]  of thread t  sits where  a_j  of thread t  sits (column + 16k), j = 0..7

and the kernel converts in place, with no shuffle and no shared memory:
register r (r = 0..3) of step k = (low half) d[8k + 2r], (high half) d[8k + 2r + 1], each
rounded to FP16 (``__floats2half2_rn(acc[8k + 2r], acc[8k + 2r + 1])``: CUDA Math API, "a
stored in low 16 bits"). CUTLASS says the same in one line: ``ALayout_64x16`` is
``CLayout_64x16`` (include/cute/atom/mma_traits_sm90_gmma.hpp). It holds for 16-bit P only:
an 8-bit A packs k32 per instruction and needs a permute (Colfax Research, "Adding FP8 to
FlashAttention", layout conformance).

Everything here is computed from ``course.hopper.wgmma``'s two figure functions; the tests and
``figures.fragment_figure`` check they agree element for element.
"""

from __future__ import annotations

import numpy as np

from ...hopper.wgmma import (
    A_REGISTER_VALUES,
    WARPGROUP,
    ModelError,
    check_range,
    ptx_a_fragment_row_col,
    ptx_d_fragment_row_col,
)

__all__ = [
    "K_STEP",
    "P_REGISTERS",
    "a_operand",
    "check_n",
    "d_of_a",
    "layout_mismatches",
    "pack_p",
    "scatter_accumulator",
]

K_STEP = 16  # columns of P one m64nNk16 consumes
P_REGISTERS = A_REGISTER_VALUES // 2  # .f16x2 registers of A per thread per k16 step


def check_n(n: int) -> None:
    if not isinstance(n, (int, np.integer)) or n % K_STEP or not K_STEP <= n <= 256:
        raise ModelError(f"n (the key block, S's columns) must be a multiple of 16 in 16..256 (got {n!r})")


def d_of_a(k_step: int, j: int) -> int:
    """The accumulator register d[i] of S that becomes element a_j of the A operand at k16 step
    ``k_step``: i = 8 k_step + j (same thread, same element)."""
    check_range("k_step", k_step, 256 // K_STEP)
    check_range("j", j, A_REGISTER_VALUES)
    return A_REGISTER_VALUES * k_step + j


def layout_mismatches(n: int) -> list[tuple[int, int, int]]:
    """Every (thread, k_step, j) where d[8 k_step + j] of S does not sit where a_j of P's k_step-th
    16 columns sits: the list that must be empty for P to go to the second wgmma unmoved."""
    check_n(n)
    bad = []
    for t in range(WARPGROUP):
        for ks in range(n // K_STEP):
            for j in range(A_REGISTER_VALUES):
                row, col = ptx_a_fragment_row_col(t, j)
                if ptx_d_fragment_row_col(t, d_of_a(ks, j), n) != (row, K_STEP * ks + col):
                    bad.append((t, ks, j))
    return bad


def scatter_accumulator(s: np.ndarray) -> np.ndarray:
    """(128, n / 2): what each thread's accumulator registers hold after S = Q K^T, for a 64 x n S."""
    s = np.asarray(s)
    if s.ndim != 2 or s.shape[0] != 64:
        raise ModelError(f"S must be 64 x n (got shape {s.shape})")
    n = s.shape[1]
    check_n(n)
    acc = np.empty((WARPGROUP, n // 2), dtype=s.dtype)
    for t in range(WARPGROUP):
        for i in range(n // 2):
            acc[t, i] = s[ptx_d_fragment_row_col(t, i, n)]
    return acc


def pack_p(acc: np.ndarray, dtype: type[np.floating] = np.float16) -> np.ndarray:
    """(n / 16, 128, 4) uint32: each thread's A registers for every k16 step, converted in place:
    register r of step k holds d[8k + 2r] rounded to ``dtype`` in its low 16 bits and
    d[8k + 2r + 1] in its high 16 bits (the kernel's ``__floats2half2_rn``; FP16 only here:
    numpy has no BF16)."""
    acc = np.asarray(acc, dtype=np.float32)
    if acc.ndim != 2 or acc.shape[0] != WARPGROUP:
        raise ModelError(f"acc must be (128 threads, n / 2 registers) (got shape {acc.shape})")
    if np.dtype(dtype) != np.float16:
        raise ModelError(f"pack_p models FP16 P only (got {np.dtype(dtype).name})")
    check_n(2 * acc.shape[1])
    bits = acc.astype(np.float16).view(np.uint16).astype(np.uint32)  # (128, n / 2)
    low, high = bits[:, 0::2], bits[:, 1::2]  # d[2r'] and d[2r' + 1], r' = 4k + r
    regs = low | (high << 16)  # (128, n / 4)
    return regs.reshape(WARPGROUP, -1, P_REGISTERS).transpose(1, 0, 2).copy()


def a_operand(regs: np.ndarray, k_step: int) -> np.ndarray:
    """The 64 x 16 FP16 A the second wgmma reads at ``k_step`` from the registers ``pack_p`` made,
    placed by the ISA's A figure alone (``ptx_a_fragment_row_col``)."""
    regs = np.asarray(regs, dtype=np.uint32)
    if regs.ndim != 3 or regs.shape[1:] != (WARPGROUP, P_REGISTERS):
        raise ModelError(f"regs must be (k16 steps, 128, 4) (got shape {regs.shape})")
    check_range("k_step", k_step, regs.shape[0])
    a = np.empty((64, K_STEP), dtype=np.float16)
    for t in range(WARPGROUP):
        for j in range(A_REGISTER_VALUES):
            half = (int(regs[k_step, t, j // 2]) >> (16 * (j % 2))) & 0xFFFF
            a[ptx_a_fragment_row_col(t, j)] = np.array([half], dtype=np.uint16).view(np.float16)[0]
    return a
