"""CPU models of the Day 78 kernel's indexing, line by line.

``kernels/wgmma_gemm.cu`` has three pieces of index arithmetic that the
hardware takes on trust: where element (mn, k) of a tile lands in shared
memory (``coreOffset``), the 64-bit matrix descriptor that tells wgmma where
the tile is (``tileDesc``), and which thread's which register holds element
(row, col) of the accumulator (the store loop after the pipeline). This
module restates each of them in Python, quoting the kernel line it mirrors,
and then ties them together: :func:`simulate_gemm` runs the kernel's
producer, its k-loop of wgmma issues and its store loop on the CPU, with
the wgmma itself reading shared memory *only* through the decoded
descriptor and the PTX ISA's canonical layout (``course.hopper.wgmma``). If any of
the three pieces disagreed with the others, the simulated product would
not equal ``A @ B``. The tests hold the store loop to the PTX ISA's
accumulator figure and to CUTLASS's encoding of it (``course.hopper.wgmma``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...hopper.smem_budget import PipelineConfig
from ...hopper.wgmma import (
    WARPGROUP,
    ModelError,
    check_range,
    decode_descriptor,
    encode_descriptor,
    gather_operand,
)
from . import LESSON

__all__ = [
    "ACC_REGS",
    "K16_STEP_BYTES",
    "KERNEL_LINES",
    "LBO_BYTES",
    "SBO_BYTES",
    "TILE_K",
    "TILE_M",
    "TILE_N",
    "WGMMA_K",
    "KStep",
    "core_matrix_index_tile",
    "core_offset",
    "core_offset_tile",
    "fragment_coords",
    "fragment_owner_tile",
    "fragment_row_col",
    "k_step_offset",
    "k_step_table",
    "simulate_gemm",
    "tile_desc",
]

# ---------------------------------------------------------------------------
# The kernel's constants, read from wgmma_gemm.cu (never copied).
# ---------------------------------------------------------------------------
_K = LESSON.constants()
TILE_M = int(_K["kTileM"])  # rows of D one CTA owns
TILE_N = int(_K["kTileN"])  # columns of D one CTA owns
TILE_K = int(_K["kTileK"])  # K depth staged in shared memory per tile
WGMMA_K = int(_K["kWgmmaK"])  # K depth of one wgmma.mma_async.m64n64k16
ACC_REGS = int(_K["kAccRegs"])  # 64x64 floats / 128 threads
ELEM_BYTES = 2  # __half
CORE_BYTES = 128  # a core matrix: 8 rows of 16 bytes, "each 128 contiguous bytes"
# The descriptor's two offsets are literals inside tileDesc, not constexprs;
# KERNEL_LINES below pins the lines they come from.
LBO_BYTES = 128  # tileDesc: uint64_t(128 >> 4) << 16
SBO_BYTES = 1024  # tileDesc: uint64_t(1024 >> 4) << 32
K16_STEP_BYTES = 2 * 128  # const uint64_t off = uint64_t(ks) * (2 * 128 >> 4);

# The exact source text each model mirrors; the tests require every one of
# these to appear exactly once in kernels/wgmma_gemm.cu.
KERNEL_LINES: dict[str, str] = {
    "core_offset": "return ((mn / 8) * (kTileK / 8) + k / 8) * 64 + (mn % 8) * 8 + (k % 8);",
    "desc_addr": "const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));",
    "desc_encode": "return ((addr & 0x3FFFFu) >> 4) | (uint64_t(128 >> 4) << 16) |",
    "desc_sbo": "(uint64_t(1024 >> 4) << 32);",
    "k_step": "const uint64_t off = uint64_t(ks) * (2 * 128 >> 4);",
    "issue": "wgmmaM64n64k16(acc, tileDesc(smA[s]) + off,",
    "store_row": "const int row = rowBase + 16 * warp + lane / 4 + (r % 4 / 2) * 8;",
    "store_col": "const int col = colBase + 8 * (r / 4) + 2 * (lane % 4) + r % 2;",
    "load_a": "smA[s][coreOffset(mn, k)] =",
    "load_b": "smB[s][coreOffset(mn, k)] =",
    "read_a": "a[(rowBase + mn) * kDim + kt * kTileK + k];",
    "read_b": "b[(kt * kTileK + k) * kDim + colBase + mn];",
}


# ---------------------------------------------------------------------------
# 1. Where an element lives: coreOffset
# ---------------------------------------------------------------------------
def core_offset(mn: int, k: int) -> int:
    """Element offset of (mn, k) in a 64x64 tile, exactly as ``coreOffset``.

    ``return ((mn / 8) * (kTileK / 8) + k / 8) * 64 + (mn % 8) * 8 + (k % 8);``

    Read it as: core matrix number ((mn/8) * 8 + k/8), each core 64
    elements (128 bytes), cores consecutive along K, then along M (or N).
    Inside a core, row mn % 8 of 8 contiguous elements.
    """
    check_range("mn", mn, TILE_M)
    check_range("k", k, TILE_K)
    return ((mn // 8) * (TILE_K // 8) + k // 8) * 64 + (mn % 8) * 8 + (k % 8)


def core_offset_tile() -> np.ndarray:
    """``core_offset`` for the whole tile: a (64, 64) int array, [mn, k]."""
    mn = np.arange(TILE_M)[:, None]
    k = np.arange(TILE_K)[None, :]
    # Same expression as the kernel line; C's / on non-negative ints is //.
    return ((mn // 8) * (TILE_K // 8) + k // 8) * 64 + (mn % 8) * 8 + (k % 8)


def core_matrix_index_tile() -> np.ndarray:
    """Which 8x8 core matrix (0..63) each element of the tile belongs to."""
    return core_offset_tile() // (CORE_BYTES // ELEM_BYTES)


# ---------------------------------------------------------------------------
# 2. The 64-bit matrix descriptor: tileDesc
# ---------------------------------------------------------------------------
def tile_desc(smem_addr: int, lbo: int = LBO_BYTES, sbo: int = SBO_BYTES) -> int:
    """``tileDesc``: the descriptor the kernel builds for a tile at ``smem_addr`` (no swizzle)."""
    return encode_descriptor(smem_addr, lbo, sbo)


def k_step_offset(ks: int) -> int:
    """What the k-loop adds to both descriptors at step ``ks``.

    ``const uint64_t off = uint64_t(ks) * (2 * 128 >> 4);`` -- 16 in the
    start-address field, which stores bytes >> 4: 256 bytes, two 128-byte
    core matrices along K, i.e. the next 16 values of k.
    """
    check_range("ks", ks, TILE_K // WGMMA_K)
    return ks * (2 * 128 >> 4)


@dataclass(frozen=True)
class KStep:
    """One k16 step of the consumer loop: what the two descriptors point at."""

    ks: int
    off: int  # added to the descriptor: ks * (2 * 128 >> 4)
    desc: int  # tileDesc(smem_addr) + off
    start_address_bytes: int
    k_first: int  # first k of the tile this step reads
    k_last: int


def k_step_table(smem_addr: int = 0x400) -> list[KStep]:
    """The four k16 steps over one 64-deep stage starting at ``smem_addr``.

    Each step adds 16 to the descriptor: the start address moves 256 bytes,
    and the operand the tensor core reads moves 16 columns along K.
    """
    base = tile_desc(smem_addr)
    steps = []
    for ks in range(TILE_K // WGMMA_K):
        desc = base + k_step_offset(ks)
        start = decode_descriptor(desc).start_address_bytes
        steps.append(KStep(ks, k_step_offset(ks), desc, start, ks * WGMMA_K, ks * WGMMA_K + WGMMA_K - 1))
    return steps


# ---------------------------------------------------------------------------
# 3. Who holds what: the accumulator fragment (the kernel's store loop)
# ---------------------------------------------------------------------------
def fragment_row_col(warp: int, lane: int, reg: int) -> tuple[int, int]:
    """Row and column of D (within the 64x64 tile) held in ``acc[reg]`` of (warp, lane).

    The kernel's store loop, without rowBase/colBase::

        const int row = rowBase + 16 * warp + lane / 4 + (r % 4 / 2) * 8;
        const int col = colBase + 8 * (r / 4) + 2 * (lane % 4) + r % 2;
    """
    check_range("warp", warp, WARPGROUP // 32)
    check_range("lane", lane, 32)
    check_range("reg", reg, ACC_REGS)
    r = reg
    return 16 * warp + lane // 4 + (r % 4 // 2) * 8, 8 * (r // 4) + 2 * (lane % 4) + r % 2


def fragment_coords() -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols), each (128, 32): the element thread t's register r holds."""
    t = np.arange(WARPGROUP)[:, None]
    r = np.arange(ACC_REGS)[None, :]
    warp, lane = t // 32, t % 32
    rows = 16 * warp + lane // 4 + (r % 4 // 2) * 8
    cols = 8 * (r // 4) + 2 * (lane % 4) + r % 2
    return np.broadcast_to(rows, (WARPGROUP, ACC_REGS)).copy(), np.broadcast_to(
        cols, (WARPGROUP, ACC_REGS)
    ).copy()


def fragment_owner_tile() -> tuple[np.ndarray, np.ndarray]:
    """For the 64x64 tile of D: (thread, register), two (64, 64) int arrays.

    ``thread[row, col]`` is the consumer thread (0..127, warp = thread // 32)
    and ``register[row, col]`` the index into its ``acc[32]``. Elements no
    thread holds would stay -1; the tests check there are none.
    """
    rows, cols = fragment_coords()
    thread = np.full((TILE_M, TILE_N), -1, dtype=np.int64)
    register = np.full((TILE_M, TILE_N), -1, dtype=np.int64)
    t = np.broadcast_to(np.arange(WARPGROUP)[:, None], rows.shape)
    r = np.broadcast_to(np.arange(ACC_REGS)[None, :], rows.shape)
    thread[rows, cols] = t
    register[rows, cols] = r
    return thread, register


# ---------------------------------------------------------------------------
# 4. Everything together: the kernel's GEMM on the CPU
# ---------------------------------------------------------------------------
def simulate_gemm(
    a: np.ndarray,
    b: np.ndarray,
    *,
    lbo: int = LBO_BYTES,
    sbo: int = SBO_BYTES,
    smem_base: int = 0,
) -> np.ndarray:
    """Run wgmmaGemm on the CPU: producer, k-loop of wgmma, store loop.

    ``a`` is M x K (row-major), ``b`` is K x N (row-major), all three sizes
    the same multiple of 64, like the kernel's kDim. Use integer inputs to
    compare exactly. ``lbo``/``sbo`` replace the descriptor's 128/1024, to
    see what a wrong constant does; ``smem_base`` is where smA starts in the
    CTA's shared window.

    Order inside one k-tile follows the kernel: the producer fills stage
    s^1 first, then the consumer's four wgmmas read stage s, so a producer
    that wrote the wrong stage would corrupt the result.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape != b.shape:
        raise ModelError(
            f"a and b must be square and the same shape, like kDim x kDim (got {a.shape}, {b.shape})"
        )
    k_dim = a.shape[0]
    if k_dim == 0 or k_dim % 64:
        raise ModelError(f"the size must be a positive multiple of 64, like GEMM_DIM (got {k_dim})")
    acc_dtype = np.float64 if (a.dtype.kind == "f" or b.dtype.kind == "f") else np.int64
    stage_elems = TILE_M * TILE_K  # __shared__ __half smA[2][kTileM * kTileK];
    sm_a = smem_base  # byte address of smA[0]
    sm_b = smem_base + 2 * stage_elems * ELEM_BYTES  # smB follows smA
    smem = np.zeros((sm_b + 2 * stage_elems * ELEM_BYTES) // ELEM_BYTES, dtype=acc_dtype)
    d = np.zeros((k_dim, k_dim), dtype=acc_dtype)
    offsets = core_offset_tile()  # [mn, k]
    rows, cols = fragment_coords()  # [t, r]
    k_tiles = k_dim // TILE_K  # constexpr int kTiles = kDim / kTileK;

    def load_stage(s: int, kt: int, row_base: int, col_base: int) -> None:
        # for e: idx = t + e * 128; mn = idx / kTileK; k = idx % kTileK -- every (mn, k) once.
        # a[(rowBase + mn) * kDim + kt * kTileK + k]
        a_tile = a[row_base : row_base + TILE_M, kt * TILE_K : (kt + 1) * TILE_K]
        # b[(kt * kTileK + k) * kDim + colBase + mn]: B is read transposed, [mn = n, k]
        b_tile = b[kt * TILE_K : (kt + 1) * TILE_K, col_base : col_base + TILE_N].T
        smem[(sm_a // ELEM_BYTES) + s * stage_elems + offsets] = a_tile  # smA[s][coreOffset(mn, k)] =
        smem[(sm_b // ELEM_BYTES) + s * stage_elems + offsets] = b_tile  # smB[s][coreOffset(mn, k)] =

    for by in range(k_dim // TILE_M):
        for bx in range(k_dim // TILE_N):
            row_base, col_base = by * TILE_M, bx * TILE_N
            acc = np.zeros((WARPGROUP, ACC_REGS), dtype=acc_dtype)  # float acc[kAccRegs] = {};
            load_stage(0, 0, row_base, col_base)  # prologue
            for kt in range(k_tiles):
                s = kt & 1
                if kt + 1 < k_tiles:
                    load_stage(s ^ 1, kt + 1, row_base, col_base)  # producer: the other stage
                for ks in range(TILE_K // WGMMA_K):
                    off = k_step_offset(ks)
                    desc_a = tile_desc(sm_a + s * stage_elems * ELEM_BYTES, lbo, sbo) + off
                    desc_b = tile_desc(sm_b + s * stage_elems * ELEM_BYTES, lbo, sbo) + off
                    a_op = gather_operand(smem, desc_a, TILE_M)  # 64 x 16, A[m, k]
                    b_op = gather_operand(smem, desc_b, TILE_N)  # 64 x 16, B[k, n] stored as [n, k]
                    part = a_op @ b_op.T  # the tensor core's m64n64k16 product
                    acc = acc + part[rows, cols]  # each thread's registers take their elements
            d[row_base + rows, col_base + cols] = acc  # d[row * kDim + col] = acc[r];
    return d


# The kernel's shared-memory pipeline, for the budget calculator (course.hopper.smem_budget):
# __shared__ __half smA[2][kTileM * kTileK]; __shared__ __half smB[2][kTileN * kTileK];
def kernel_config() -> PipelineConfig:
    return PipelineConfig(stages=2, tile_m=TILE_M, tile_n=TILE_N, tile_k=TILE_K, elem_bytes=ELEM_BYTES)
