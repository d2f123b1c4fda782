"""wgmma facts from the PTX ISA, as code: the matrix descriptor, the
canonical shared-memory layouts, the accumulator fragment.

Shared by every lesson whose kernel issues ``wgmma.mma_async``; a lesson's
own models (``course/lessons/<id>/models.py``) mirror its kernel's lines
and test them against these. References (PTX section numbers move between
releases; cite by name and anchor):

- PTX ISA, "Matrix Descriptor Format",
  https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor
- PTX ISA, "Leading Dimension Byte Offset", "Stride Dimension Byte Offset",
  "Canonical Layouts" (same chapter): K-major without swizzle is
  ((8,m),(T,2k)):((1T,SBO),(1,LBO)) in elements, T = 128 / element bits;
  the 128-byte swizzle permutes the 16-byte chunks of each 128-byte row by
  XOR with the row index modulo 8.
- PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16", the figure
  "WGMMA .m64nNk16 register fragment layout for accumulator matrix D",
  https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#wgmma-64n16-d
- the same section, "Multiplicand A in registers" and the figure "WGMMA
  .m64nNk16 register fragment layout for matrix A",
  https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#wgmma-64n16-a
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import CourseError

__all__ = [
    "DESCRIPTOR_FIELDS",
    "SWIZZLE_NAMES",
    "Descriptor",
    "DescriptorField",
    "ModelError",
    "canonical_k_major_offset",
    "check_range",
    "cutlass_a_fragment_row_col",
    "cutlass_d_fragment_row_col",
    "decode_descriptor",
    "encode_descriptor",
    "gather_operand",
    "ptx_a_fragment_row_col",
    "ptx_d_fragment_row_col",
    "swizzle_128b_chunk",
]

WARPGROUP = 128  # threads of a warpgroup: four consecutive warps


class ModelError(CourseError):
    """A model was asked about something outside what it models (a bad index, a malformed descriptor)."""


def check_range(name: str, value: int, upper: int) -> None:
    """``0 <= value < upper`` for an int, or a ModelError that says which and what was found."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise ModelError(f"{name} must be an int (got {type(value).__name__} {value!r})")
    if not 0 <= value < upper:
        raise ModelError(f"{name} must be in 0..{upper - 1} (got {value})")


def canonical_k_major_offset(
    mn: np.ndarray | int,
    k: np.ndarray | int,
    lbo_bytes: int,
    sbo_bytes: int,
    elem_bytes: int = 2,
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


def swizzle_128b_chunk(row: np.ndarray | int, chunk: np.ndarray | int) -> np.ndarray | int:
    """Where the 16-byte ``chunk`` (0..7) of 128-byte ``row`` lands under the 128-byte swizzle.

    TMA's CU_TENSOR_MAP_SWIZZLE_128B and the wgmma descriptor's swizzle mode
    1 agree on one pattern: within each 1024-byte block of eight 128-byte
    rows, chunk c of row r is stored at chunk c XOR (r mod 8) (CUDA C++
    Programming Guide, TMA swizzle modes; CUTLASS ``Swizzle<3,4,3>``).
    """
    return np.bitwise_xor(chunk, np.asarray(row) % 8) if isinstance(row, np.ndarray) else chunk ^ (row % 8)


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


def encode_descriptor(smem_addr: int, lbo: int, sbo: int, swizzle: int = 0) -> int:
    """The descriptor ``tileDesc`` builds, for a shared-window byte address.

    Day 78's ``tileDesc`` is this with lbo=128, sbo=1024, swizzle=0::

        ((addr & 0x3FFFFu) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(1024 >> 4) << 32)

    ``smem_addr`` is what ``__cvta_generic_to_shared`` returns: a byte
    offset into the CTA's shared memory, not a generic pointer. The PTX ISA
    requires the start address, LBO and SBO to be 16-byte aligned, because
    the encoding drops the low 4 bits; an unaligned value is refused here
    rather than silently rounded down, which is what the hardware would see.
    """
    for name, value in (("smem_addr", smem_addr), ("lbo", lbo), ("sbo", sbo)):
        check_range(name, value, 1 << 18)
        if value % 16:
            raise ModelError(
                f"{name} must be a multiple of 16 bytes: the descriptor stores it >> 4 (got {value})"
            )
    check_range("swizzle", swizzle, 4)
    return _encode(smem_addr) | (_encode(lbo) << 16) | (_encode(sbo) << 32) | (swizzle << 62)


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
    check_range("desc", desc, 1 << 64)
    return Descriptor(
        raw=int(desc),
        start_address_field=_FIELD["start address"].get(desc),
        lbo_field=_FIELD["LBO"].get(desc),
        sbo_field=_FIELD["SBO"].get(desc),
        base_offset=_FIELD["base offset"].get(desc),
        swizzle=_FIELD["swizzle"].get(desc),
        unlisted_bits=int(desc) & UNLISTED_MASK,
    )


def ptx_d_fragment_row_col(thread: int, i: int, n: int = 64) -> tuple[int, int]:
    """Figure 149 of the PTX ISA, written down independently of the kernel.

    The figure shows warp w of the warpgroup owning rows 16w..16w+15, and
    in each 8-column block j the registers d(4j)..d(4j+3) laid out as the
    mma.m16n8 accumulator: groupID = %laneid >> 2, threadID_in_group =
    %laneid % 4; row = groupID for c0, c1 and groupID + 8 for c2, c3;
    col = threadID_in_group * 2 + (i & 0x1).
    """
    check_range("thread", thread, WARPGROUP)
    check_range("i", i, n // 2)
    warp_id, laneid = thread // 32, thread % 32
    group_id, thread_in_group = laneid >> 2, laneid % 4
    block, c = i // 4, i % 4  # which 8-column block, which c0..c3 inside it
    row = 16 * warp_id + group_id + (8 if c >= 2 else 0)
    col = 8 * block + thread_in_group * 2 + (c & 0x1)
    return row, col


def cutlass_d_fragment_row_col(thread: int, i: int, n: int = 64) -> tuple[int, int]:
    """CUTLASS's ``GMMA::CLayout_64xN`` evaluated at (thread, value i).

    ``Layout<Shape <Shape <  _4,_8, _4>,Shape < _2,_2,Int<N/8>>>,
             Stride<Stride<_128,_1,_16>,Stride<_64,_8,   _512>>>``
    maps (thread, value) to a column-major index m + 64 n of the 64xN tile.
    Coordinates split colexicographically (first mode fastest), as CuTe does.
    """
    check_range("thread", thread, WARPGROUP)
    check_range("i", i, n // 2)
    t0, t1, t2 = thread % 4, (thread // 4) % 8, thread // 32
    v0, v1, v2 = i % 2, (i // 2) % 2, i // 4
    index = t0 * 128 + t1 * 1 + t2 * 16 + v0 * 64 + v1 * 8 + v2 * 512
    return index % 64, index // 64


A_REGISTER_VALUES = 8  # a0..a7: four .f16x2 registers of one m64nNk16 A fragment, per thread


def ptx_a_fragment_row_col(thread: int, i: int) -> tuple[int, int]:
    """Row and column (of the 64 x 16 A of one m64nNk16) of element ``a<i>`` held by ``thread``.

    PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16", "Multiplicand
    A in registers": for .f16/.bf16, four .f16x2 registers, elements a0..a7
    low to high (register r holds a(2r) in its low half, a(2r+1) in its
    high half). The figure "WGMMA .m64nNk16 register fragment layout for
    matrix A" shows warp w of the warpgroup owning rows 16w..16w+15, each
    laid out as the A of mma.m16n8k16 ("Matrix Fragments for mma.m16n8k16
    with floating point type"): groupID = %laneid >> 2, threadID_in_group
    = %laneid % 4; row = groupID for a0, a1, a4, a5 and groupID + 8
    otherwise; col = threadID_in_group * 2 + (i & 0x1), plus 8 for i >= 4.
    """
    check_range("thread", thread, WARPGROUP)
    check_range("i", i, A_REGISTER_VALUES)
    warp_id, laneid = thread // 32, thread % 32
    group_id, thread_in_group = laneid >> 2, laneid % 4
    row = 16 * warp_id + group_id + (8 if i % 4 >= 2 else 0)
    col = thread_in_group * 2 + (i & 0x1) + (8 if i >= 4 else 0)
    return row, col


def cutlass_a_fragment_row_col(thread: int, i: int) -> tuple[int, int]:
    """CUTLASS's ``GMMA::ALayout_64x16`` (the register-sourced A of 16-bit types) at (thread, value i).

    ``Layout<Shape <Shape <  _4,_8, _4>,Shape < _2,_2,  _2>>,
             Stride<Stride<_128,_1,_16>,Stride<_64,_8,_512>>>``
    (include/cute/atom/mma_traits_sm90_gmma.hpp), the same layout as
    ``CLayout_64x16``: a column-major index m + 64 k of the 64 x 16 tile.
    """
    check_range("thread", thread, WARPGROUP)
    check_range("i", i, A_REGISTER_VALUES)
    t0, t1, t2 = thread % 4, (thread // 4) % 8, thread // 32
    v0, v1, v2 = i % 2, (i // 2) % 2, i // 4
    index = t0 * 128 + t1 * 1 + t2 * 16 + v0 * 64 + v1 * 8 + v2 * 512
    return index % 64, index // 64


def gather_operand(smem: np.ndarray, desc: int, rows: int = 64, k: int = 16) -> np.ndarray:
    """What one wgmma reads for a K-major, no-swizzle operand: a (rows, k) array.

    Only the decoded descriptor is used (start address, LBO, SBO) with the
    ISA's canonical layout; ``smem`` is the CTA's shared memory as an array
    of 2-byte elements indexed by byte address // 2.
    """
    d = decode_descriptor(desc)
    if d.swizzle != 0:
        raise ModelError(f"this model reads the no-swizzle layout only (descriptor has {d.swizzle_name})")
    if d.problems():
        raise ModelError("malformed descriptor: " + "; ".join(d.problems()))
    mn = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    addr = np.asarray(
        d.start_address_bytes + canonical_k_major_offset(mn, kk, d.leading_byte_offset, d.stride_byte_offset)
    )
    if addr.max() // 2 >= smem.size:
        raise ModelError(
            f"the descriptor reaches byte {int(addr.max())}, past the {smem.size * 2}-byte shared memory"
        )
    return smem[addr // 2]
