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
descriptor and the PTX ISA's canonical layout. If any of the three pieces
disagreed with the others, the simulated product would not equal ``A @ B``.

References (the section numbers move between PTX ISA releases, the anchors
do not; cite by name):

- PTX ISA, "Matrix Descriptor Format" (9.7.15.5.1.2.2 in PTX ISA 8.x,
  9.7.16.5.1.2.2 in 9.x),
  https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor
- PTX ISA, "Leading Dimension Byte Offset", "Stride Dimension Byte Offset"
  and "Canonical Layouts" (same chapter): K-major, no swizzle, the layout
  is ((8,m),(T,2k)):((1T,SBO),(1,LBO)) in elements, T = 128 / element bits.
- PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16", Figure 149
  ("WGMMA .m64nNk16 register fragment layout for accumulator matrix D"):
  the ISA gives that layout as a picture only. :func:`ptx_d_fragment_row_col`
  writes the picture down as four warps each holding the mma.m16n8 C/D
  pattern ("Matrix Fragments for mma.m16n8k16 with floating point type":
  row = groupID for c0, c1 and groupID + 8 for c2, c3; col =
  threadID_in_group * 2 + (i & 0x1)) once per 8-column block, and
  :func:`cutlass_d_fragment_row_col` evaluates CUTLASS's own encoding of
  the same figure (``GMMA::CLayout_64xN`` in
  ``include/cute/atom/mma_traits_sm90_gmma.hpp``). The tests hold the
  kernel's store loop to both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ACC_REGS",
    "DESCRIPTOR_FIELDS",
    "K16_STEP_BYTES",
    "KERNEL_LINES",
    "LBO_BYTES",
    "SBO_BYTES",
    "TILE_K",
    "TILE_M",
    "TILE_N",
    "WGMMA_K",
    "Descriptor",
    "DescriptorField",
    "KStep",
    "canonical_k_major_offset",
    "core_matrix_index_tile",
    "core_offset",
    "core_offset_tile",
    "cutlass_d_fragment_row_col",
    "decode_descriptor",
    "encode_descriptor",
    "fragment_coords",
    "fragment_owner_tile",
    "fragment_row_col",
    "gather_operand",
    "k_step_offset",
    "k_step_table",
    "ptx_d_fragment_row_col",
    "simulate_gemm",
]

# ---------------------------------------------------------------------------
# The kernel's constants. tests/test_wgmma_models.py reads wgmma_gemm.cu
# (course.constants.kernel_constants) and fails if any of these drifts.
# ---------------------------------------------------------------------------
TILE_M = 64  # constexpr int kTileM = 64;   // rows of D one CTA owns
TILE_N = 64  # constexpr int kTileN = 64;   // columns of D one CTA owns
TILE_K = 64  # constexpr int kTileK = 64;   // K depth staged in shared memory per tile
WGMMA_K = 16  # constexpr int kWgmmaK = 16;  // K depth of one wgmma.mma_async.m64n64k16
ACC_REGS = 32  # constexpr int kAccRegs = 32;  // 64x64 floats / 128 threads
WARPGROUP = 128  # threads per warpgroup: const int t = threadIdx.x % 128;
ELEM_BYTES = 2  # __half
CORE_ROWS = 8  # a core matrix is 8 rows ...
CORE_BYTES = 128  # ... of 16 bytes: 8x8 FP16, "each 128 contiguous bytes"
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


def _check_range(name: str, value: int, upper: int) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int (got {type(value).__name__} {value!r})")
    if not 0 <= value < upper:
        raise ValueError(f"{name} must be in 0..{upper - 1} (got {value})")


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
    _check_range("mn", mn, TILE_M)
    _check_range("k", k, TILE_K)
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


def canonical_k_major_offset(
    mn: np.ndarray | int,
    k: np.ndarray | int,
    lbo_bytes: int = LBO_BYTES,
    sbo_bytes: int = SBO_BYTES,
    elem_bytes: int = ELEM_BYTES,
) -> np.ndarray | int:
    """Byte offset of (mn, k) in the PTX ISA's canonical K-major, no-swizzle layout.

    PTX ISA "Canonical Layouts": K-major, no swizzling is
    ((8,m),(T,2k)):((1T,SBO),(1,LBO)), T = 128 / sizeof-bits(element),
    strides in elements (LBO and SBO given in bytes in the descriptor). So
    row mn steps T elements (16 bytes) inside a core and SBO bytes every 8
    rows; column k steps 1 element inside a core and LBO bytes every T
    columns. This is what the tensor core computes from a descriptor; it
    owes nothing to ``coreOffset``.
    """
    t = 16 // elem_bytes  # T: elements per 16-byte core row
    return (mn % 8) * 16 + (mn // 8) * sbo_bytes + (k % t) * elem_bytes + (k // t) * lbo_bytes


# ---------------------------------------------------------------------------
# 2. The 64-bit matrix descriptor: tileDesc
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class DescriptorField:
    """One row of the PTX ISA's "Matrix Descriptor Format" table."""

    name: str
    lo: int  # lowest bit
    hi: int  # highest bit, inclusive
    meaning: str

    @property
    def width(self) -> int:
        return self.hi - self.lo + 1

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lo

    def get(self, raw: int) -> int:
        return (raw >> self.lo) & ((1 << self.width) - 1)


# The table of PTX ISA "Matrix Descriptor Format" (wgmma). Bits 14-15, 30-31,
# 46-48 and 52-61 are not in the table: nothing is defined there, and
# tileDesc leaves them 0. (The Blackwell tcgen05 "Shared Memory Descriptor"
# is a different format: it fixes bits 46-48 to 0b001 and widens the
# swizzle field to bits 61-63, so a wgmma descriptor is not a tcgen05 one.)
DESCRIPTOR_FIELDS: tuple[DescriptorField, ...] = (
    DescriptorField("start address", 0, 13, "matrix-descriptor-encode(matrix start address)"),
    DescriptorField("LBO", 16, 29, "matrix-descriptor-encode(leading dimension byte offset)"),
    DescriptorField("SBO", 32, 45, "matrix-descriptor-encode(stride dimension byte offset)"),
    DescriptorField(
        "base offset", 49, 51, "matrix base offset; valid for every swizzle mode except no-swizzle"
    ),
    DescriptorField("swizzle", 62, 63, "0 none, 1 128-byte, 2 64-byte, 3 32-byte swizzle"),
)
_FIELD = {f.name: f for f in DESCRIPTOR_FIELDS}
UNLISTED_MASK = ((1 << 64) - 1) & ~sum(f.mask for f in DESCRIPTOR_FIELDS)
SWIZZLE_NAMES = {0: "none", 1: "128-byte", 2: "64-byte", 3: "32-byte"}


def _encode(x: int) -> int:
    # PTX ISA: matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
    return (x & 0x3FFFF) >> 4


def encode_descriptor(smem_addr: int, lbo: int = LBO_BYTES, sbo: int = SBO_BYTES, swizzle: int = 0) -> int:
    """The descriptor ``tileDesc`` builds, for a shared-window byte address.

    With the defaults this is the kernel's expression exactly::

        ((addr & 0x3FFFFu) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(1024 >> 4) << 32)

    ``smem_addr`` is what ``__cvta_generic_to_shared`` returns: a byte
    offset into the CTA's shared memory, not a generic pointer. The PTX ISA
    requires the start address, LBO and SBO to be 16-byte aligned, because
    the encoding drops the low 4 bits; an unaligned value is refused here
    rather than silently rounded down, which is what the hardware would see.
    """
    for name, value in (("smem_addr", smem_addr), ("lbo", lbo), ("sbo", sbo)):
        _check_range(name, value, 1 << 18)
        if value % 16:
            raise ValueError(
                f"{name} must be a multiple of 16 bytes: the descriptor stores it >> 4 (got {value})"
            )
    _check_range("swizzle", swizzle, 4)
    return _encode(smem_addr) | (_encode(lbo) << 16) | (_encode(sbo) << 32) | (swizzle << 62)


def k_step_offset(ks: int) -> int:
    """What the k-loop adds to both descriptors at step ``ks``.

    ``const uint64_t off = uint64_t(ks) * (2 * 128 >> 4);`` -- 16 in the
    start-address field, which stores bytes >> 4: 256 bytes, two 128-byte
    core matrices along K, i.e. the next 16 values of k.
    """
    _check_range("ks", ks, TILE_K // WGMMA_K)
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
    base = encode_descriptor(smem_addr)
    steps = []
    for ks in range(TILE_K // WGMMA_K):
        desc = base + k_step_offset(ks)
        start = decode_descriptor(desc).start_address_bytes
        steps.append(KStep(ks, k_step_offset(ks), desc, start, ks * WGMMA_K, ks * WGMMA_K + WGMMA_K - 1))
    return steps


@dataclass(frozen=True)
class Descriptor:
    """A decoded wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format")."""

    raw: int
    start_address_field: int  # bits 13-0, the address >> 4
    lbo_field: int  # bits 29-16
    sbo_field: int  # bits 45-32
    base_offset: int  # bits 51-49
    swizzle: int  # bits 63-62
    unlisted_bits: int  # raw & bits the ISA table does not define; 0 in a well-formed one

    @property
    def start_address_bytes(self) -> int:
        return self.start_address_field << 4

    @property
    def leading_byte_offset(self) -> int:
        return self.lbo_field << 4

    @property
    def stride_byte_offset(self) -> int:
        return self.sbo_field << 4

    @property
    def swizzle_name(self) -> str:
        return SWIZZLE_NAMES[self.swizzle]

    def problems(self) -> list[str]:
        """What is wrong with this descriptor by the ISA's table, in words (empty if nothing)."""
        found = []
        if self.unlisted_bits:
            found.append(
                f"bits the ISA does not define are set (0x{self.unlisted_bits:016x}); "
                "an addition carried out of a field?"
            )
        if self.swizzle == 0 and self.base_offset:
            found.append("a base offset is set, but it only applies to the swizzled modes")
        return found


def decode_descriptor(desc: int) -> Descriptor:
    """Split a 64-bit descriptor into the ISA's fields."""
    _check_range("desc", desc, 1 << 64)
    return Descriptor(
        raw=int(desc),
        start_address_field=_FIELD["start address"].get(desc),
        lbo_field=_FIELD["LBO"].get(desc),
        sbo_field=_FIELD["SBO"].get(desc),
        base_offset=_FIELD["base offset"].get(desc),
        swizzle=_FIELD["swizzle"].get(desc),
        unlisted_bits=int(desc) & UNLISTED_MASK,
    )


# ---------------------------------------------------------------------------
# 3. Who holds what: the accumulator fragment (the kernel's store loop)
# ---------------------------------------------------------------------------
def fragment_row_col(warp: int, lane: int, reg: int) -> tuple[int, int]:
    """Row and column of D (within the 64x64 tile) held in ``acc[reg]`` of (warp, lane).

    The kernel's store loop, without rowBase/colBase::

        const int row = rowBase + 16 * warp + lane / 4 + (r % 4 / 2) * 8;
        const int col = colBase + 8 * (r / 4) + 2 * (lane % 4) + r % 2;
    """
    _check_range("warp", warp, WARPGROUP // 32)
    _check_range("lane", lane, 32)
    _check_range("reg", reg, ACC_REGS)
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


def ptx_d_fragment_row_col(thread: int, i: int, n: int = TILE_N) -> tuple[int, int]:
    """Figure 149 of the PTX ISA, written down independently of the kernel.

    The figure shows warp w of the warpgroup owning rows 16w..16w+15, and
    in each 8-column block j the registers d(4j)..d(4j+3) laid out as the
    mma.m16n8 accumulator: groupID = %laneid >> 2, threadID_in_group =
    %laneid % 4; row = groupID for c0, c1 and groupID + 8 for c2, c3;
    col = threadID_in_group * 2 + (i & 0x1).
    """
    _check_range("thread", thread, WARPGROUP)
    _check_range("i", i, n // 2)
    warp_id, laneid = thread // 32, thread % 32
    group_id, thread_in_group = laneid >> 2, laneid % 4
    block, c = i // 4, i % 4  # which 8-column block, which c0..c3 inside it
    row = 16 * warp_id + group_id + (8 if c >= 2 else 0)
    col = 8 * block + thread_in_group * 2 + (c & 0x1)
    return row, col


def cutlass_d_fragment_row_col(thread: int, i: int, n: int = TILE_N) -> tuple[int, int]:
    """CUTLASS's ``GMMA::CLayout_64xN`` evaluated at (thread, value i).

    ``Layout<Shape <Shape <  _4,_8, _4>,Shape < _2,_2,Int<N/8>>>,
             Stride<Stride<_128,_1,_16>,Stride<_64,_8,   _512>>>``
    maps (thread, value) to a column-major index m + 64 n of the 64xN tile.
    Coordinates split colexicographically (first mode fastest), as CuTe does.
    """
    _check_range("thread", thread, WARPGROUP)
    _check_range("i", i, n // 2)
    t0, t1, t2 = thread % 4, (thread // 4) % 8, thread // 32
    v0, v1, v2 = i % 2, (i // 2) % 2, i // 4
    index = t0 * 128 + t1 * 1 + t2 * 16 + v0 * 64 + v1 * 8 + v2 * 512
    return index % 64, index // 64


# ---------------------------------------------------------------------------
# 4. Everything together: the kernel's GEMM on the CPU
# ---------------------------------------------------------------------------
def gather_operand(smem: np.ndarray, desc: int, rows: int = 64, k: int = WGMMA_K) -> np.ndarray:
    """What one wgmma reads for a K-major, no-swizzle operand: a (rows, k) array.

    Only the decoded descriptor is used (start address, LBO, SBO) with the
    ISA's canonical layout; ``smem`` is the CTA's shared memory as an array
    of 2-byte elements indexed by byte address // 2.
    """
    d = decode_descriptor(desc)
    if d.swizzle != 0:
        raise ValueError(f"this model reads the no-swizzle layout only (descriptor has {d.swizzle_name})")
    if d.problems():
        raise ValueError("malformed descriptor: " + "; ".join(d.problems()))
    mn = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    addr = np.asarray(
        d.start_address_bytes + canonical_k_major_offset(mn, kk, d.leading_byte_offset, d.stride_byte_offset)
    )
    if addr.max() // ELEM_BYTES >= smem.size:
        raise ValueError(
            f"the descriptor reaches byte {int(addr.max())}, "
            f"past the {smem.size * ELEM_BYTES}-byte shared memory"
        )
    return smem[addr // ELEM_BYTES]


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
        raise ValueError(
            f"a and b must be square and the same shape, like kDim x kDim (got {a.shape}, {b.shape})"
        )
    k_dim = a.shape[0]
    if k_dim == 0 or k_dim % 64:
        raise ValueError(f"the size must be a positive multiple of 64, like GEMM_DIM (got {k_dim})")
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

    def tile_desc(byte_addr: int) -> int:
        return encode_descriptor(byte_addr, lbo, sbo)

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
                    desc_a = tile_desc(sm_a + s * stage_elems * ELEM_BYTES) + off
                    desc_b = tile_desc(sm_b + s * stage_elems * ELEM_BYTES) + off
                    a_op = gather_operand(smem, desc_a, TILE_M)  # 64 x 16, A[m, k]
                    b_op = gather_operand(smem, desc_b, TILE_N)  # 64 x 16, B[k, n] stored as [n, k]
                    part = a_op @ b_op.T  # the tensor core's m64n64k16 product
                    acc = acc + part[rows, cols]  # each thread's registers take their elements
            d[row_base + rows, col_base + cols] = acc  # d[row * kDim + col] = acc[r];
    return d
