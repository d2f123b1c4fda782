"""The PTX facts of course/hopper/wgmma.py, held to the ISA's own formulas and to CUTLASS.

Nothing here knows a lesson's kernel: the descriptor's fields and encoding,
the canonical K-major layout, the 128-byte swizzle, the accumulator
fragment (the ISA's figure against CUTLASS's layout) and the operand
gather. A lesson's models are tested against these in tests/lessons/.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.errors import CourseError
from course.hopper import wgmma as w

ALIGNED_18_BIT = st.integers(0, (1 << 18) // 16 - 1).map(lambda x: x * 16)


# --- errors -------------------------------------------------------------------------------------
def test_model_errors_are_course_errors_not_value_errors():
    assert issubclass(w.ModelError, CourseError)
    assert not issubclass(w.ModelError, ValueError | TypeError)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, r"^row must be in 0\.\.63 \(got -1\)$"),
        (64, r"^row must be in 0\.\.63 \(got 64\)$"),
        (True, r"^row must be an int \(got bool True\)$"),
        (1.0, r"^row must be an int \(got float 1\.0\)$"),
    ],
)
def test_check_range_says_which_value_and_what_was_found(value, message):
    with pytest.raises(w.ModelError, match=message):
        w.check_range("row", value, 64)


def test_check_range_accepts_numpy_integers_at_both_ends():
    w.check_range("row", np.int64(0), 64)
    w.check_range("row", np.int32(63), 64)


# --- the canonical K-major layout -----------------------------------------------------------------
def test_canonical_layout_with_lbo_128_sbo_1024_packs_a_64x64_tile_densely():
    mn, k = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    offsets = w.canonical_k_major_offset(mn, k, lbo_bytes=128, sbo_bytes=1024)
    assert sorted((offsets // 2).ravel().tolist()) == list(range(4096))
    assert (offsets % 2 == 0).all()
    # One core matrix: 8 rows of 16 contiguous bytes, 128 bytes in all.
    core = offsets[:8, :8]
    assert core.ravel().tolist() == list(range(0, 128, 2))
    # The next core along K starts LBO bytes on, the next along MN SBO bytes on.
    assert offsets[0, 8] == 128 and offsets[8, 0] == 1024


def test_the_two_strides_are_not_interchangeable():
    mn, k = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    right = w.canonical_k_major_offset(mn, k, lbo_bytes=128, sbo_bytes=1024)
    swapped = w.canonical_k_major_offset(mn, k, lbo_bytes=1024, sbo_bytes=128)
    assert not np.array_equal(right, swapped)


@pytest.mark.parametrize(("elem_bytes", "t"), [(1, 16), (2, 8), (4, 4)])
def test_a_core_row_is_16_bytes_whatever_the_element(elem_bytes, t):
    # T = 128 / element bits: elements per 16-byte core row.
    k = np.arange(t)
    row = w.canonical_k_major_offset(0, k, lbo_bytes=256, sbo_bytes=2048, elem_bytes=elem_bytes)
    assert row.tolist() == [i * elem_bytes for i in range(t)]
    assert w.canonical_k_major_offset(0, t, 256, 2048, elem_bytes) == 256  # next core: LBO
    assert w.canonical_k_major_offset(1, 0, 256, 2048, elem_bytes) == 16  # next row inside the core
    assert w.canonical_k_major_offset(8, 0, 256, 2048, elem_bytes) == 2048  # next 8 rows: SBO


# --- the 128-byte swizzle -------------------------------------------------------------------------
def _cutlass_swizzle_343(byte_offset: int) -> int:
    # CUTLASS Swizzle<3,4,3>: bits [4,7) of the byte offset XOR bits [7,10).
    return byte_offset ^ ((byte_offset >> 3) & (0b111 << 4))


def test_swizzle_128b_is_cutlass_swizzle_3_4_3():
    for row in range(16):
        for chunk in range(8):
            swizzled = _cutlass_swizzle_343(row * 128 + chunk * 16)
            assert swizzled // 128 == row  # a chunk never leaves its row
            assert w.swizzle_128b_chunk(row, chunk) == (swizzled >> 4) & 7, (row, chunk)


def test_swizzle_128b_permutes_each_row_and_repeats_every_8_rows():
    chunks = np.arange(8)
    for row in range(16):
        moved = w.swizzle_128b_chunk(row, chunks)
        assert sorted(moved.tolist()) == list(range(8))
        assert np.array_equal(moved, w.swizzle_128b_chunk(row % 8, chunks))
    assert w.swizzle_128b_chunk(0, chunks).tolist() == list(range(8))  # row 0 stays put
    assert w.swizzle_128b_chunk(1, chunks).tolist() == [1, 0, 3, 2, 5, 4, 7, 6]


def test_swizzle_array_and_scalar_forms_agree():
    rows, chunks = np.meshgrid(np.arange(16), np.arange(8), indexing="ij")
    table = w.swizzle_128b_chunk(rows, chunks)
    for row in range(16):
        for chunk in range(8):
            assert table[row, chunk] == w.swizzle_128b_chunk(row, chunk)


# --- the descriptor -------------------------------------------------------------------------------
def test_fields_follow_the_isa_table_and_leave_the_rest_undefined():
    spans = [(f.lo, f.hi) for f in w.DESCRIPTOR_FIELDS]
    assert spans == [(0, 13), (16, 29), (32, 45), (49, 51), (62, 63)]
    assert [f.name for f in w.DESCRIPTOR_FIELDS] == ["start address", "LBO", "SBO", "base offset", "swizzle"]
    covered = sum(f.width for f in w.DESCRIPTOR_FIELDS)
    assert covered + bin(w.UNLISTED_MASK).count("1") == 64
    assert all(f.mask & w.UNLISTED_MASK == 0 for f in w.DESCRIPTOR_FIELDS)
    assert w.SWIZZLE_NAMES == {0: "none", 1: "128-byte", 2: "64-byte", 3: "32-byte"}


@settings(max_examples=200, deadline=None)
@given(addr=ALIGNED_18_BIT, lbo=ALIGNED_18_BIT, sbo=ALIGNED_18_BIT, swizzle=st.integers(0, 3))
def test_encoding_is_the_isa_expression(addr, lbo, sbo, swizzle):
    # matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4, placed at bits 0, 16, 32; swizzle at 62.
    expected = (
        ((addr & 0x3FFFF) >> 4)
        | (((lbo & 0x3FFFF) >> 4) << 16)
        | (((sbo & 0x3FFFF) >> 4) << 32)
        | swizzle << 62
    )
    assert w.encode_descriptor(addr, lbo, sbo, swizzle) == expected


@settings(max_examples=200, deadline=None)
@given(addr=ALIGNED_18_BIT, lbo=ALIGNED_18_BIT, sbo=ALIGNED_18_BIT, swizzle=st.integers(0, 3))
def test_descriptor_round_trips(addr, lbo, sbo, swizzle):
    d = w.decode_descriptor(w.encode_descriptor(addr, lbo, sbo, swizzle))
    assert (d.start_address_bytes, d.leading_byte_offset, d.stride_byte_offset, d.swizzle) == (
        addr,
        lbo,
        sbo,
        swizzle,
    )
    assert d.unlisted_bits == 0 and d.base_offset == 0 and d.problems() == []
    assert d.swizzle_name == w.SWIZZLE_NAMES[swizzle]


def test_decode_reads_each_field_from_its_bits():
    raw = (0x123 << 0) | (0x45 << 16) | (0x67 << 32) | (0b101 << 49) | (2 << 62)
    d = w.decode_descriptor(raw)
    assert (d.start_address_field, d.lbo_field, d.sbo_field, d.base_offset, d.swizzle) == (
        0x123,
        0x45,
        0x67,
        0b101,
        2,
    )
    assert (d.start_address_bytes, d.leading_byte_offset, d.stride_byte_offset) == (0x1230, 0x450, 0x670)
    assert d.raw == raw and d.unlisted_bits == 0


def test_an_addition_that_carries_out_of_the_address_field_is_reported():
    desc = w.encode_descriptor(0x3FFF0, 128, 1024) + 48  # 0x3FFF + 48 overflows 14 bits
    d = w.decode_descriptor(desc)
    assert d.unlisted_bits == 1 << 14
    problems = d.problems()
    assert (
        len(problems) == 1 and "carried out of a field" in problems[0] and "0x0000000000004000" in problems[0]
    )


def test_a_base_offset_without_a_swizzle_is_reported_and_with_one_is_not():
    no_swizzle = w.encode_descriptor(0x400, 128, 1024) | (1 << 49)
    assert w.decode_descriptor(no_swizzle).problems() == [
        "a base offset is set, but it only applies to the swizzled modes"
    ]
    swizzled = w.encode_descriptor(0x400, 128, 1024, swizzle=1) | (1 << 49)
    assert w.decode_descriptor(swizzled).problems() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((8, 128, 1024), r"smem_addr must be a multiple of 16 bytes: .* \(got 8\)"),
        ((0, 100, 1024), r"lbo must be a multiple of 16 bytes: .* \(got 100\)"),
        ((0, 128, 1000), r"sbo must be a multiple of 16 bytes: .* \(got 1000\)"),
        ((1 << 18, 128, 1024), r"smem_addr must be in 0\.\.262143 \(got 262144\)"),
        ((-16, 128, 1024), r"smem_addr must be in 0\.\.262143 \(got -16\)"),
        ((0, 128, 1024, 4), r"swizzle must be in 0\.\.3 \(got 4\)"),
        ((1024.0, 128, 1024), r"smem_addr must be an int \(got float"),
    ],
)
def test_bad_descriptor_inputs_are_refused_by_name(args, message):
    with pytest.raises(w.ModelError, match=message) as info:
        w.encode_descriptor(*args)
    assert not isinstance(info.value, ValueError | TypeError)


@pytest.mark.parametrize("desc", [-1, 1 << 64])
def test_decode_refuses_what_is_not_64_bits(desc):
    with pytest.raises(w.ModelError, match=r"desc must be in 0\.\."):
        w.decode_descriptor(desc)


# --- the accumulator fragment ---------------------------------------------------------------------
def test_the_isa_figure_is_the_m16n8_accumulator_repeated():
    # Thread 0 holds d0, d1 at (0, 0), (0, 1) and d2, d3 at (8, 0), (8, 1); d4 starts column 8.
    assert [w.ptx_d_fragment_row_col(0, i) for i in range(5)] == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8)]
    # Lane 5 of warp 1 (thread 37): groupID 1, threadID_in_group 1.
    assert w.ptx_d_fragment_row_col(37, 0) == (17, 2)
    assert w.ptx_d_fragment_row_col(127, 31) == (63, 63)


@pytest.mark.parametrize("n", [8, 64, 256])
def test_isa_figure_and_cutlass_agree_and_cover_the_tile_once(n):
    seen = np.zeros((64, n), dtype=int)
    for t in range(128):
        for i in range(n // 2):
            ptx = w.ptx_d_fragment_row_col(t, i, n)
            assert ptx == w.cutlass_d_fragment_row_col(t, i, n), (t, i)
            seen[ptx] += 1
    assert (seen == 1).all()


@pytest.mark.parametrize(
    ("thread", "i", "message"), [(128, 0, r"thread must be in 0\.\.127"), (0, 32, r"i must be in 0\.\.31")]
)
def test_fragment_maps_refuse_what_a_warpgroup_does_not_hold(thread, i, message):
    for mapping in (w.ptx_d_fragment_row_col, w.cutlass_d_fragment_row_col):
        with pytest.raises(w.ModelError, match=message):
            mapping(thread, i)


# --- the register-sourced A fragment (m64nNk16, .f16/.bf16) -------------------------------------
def test_the_isa_a_figure_is_the_m16n8k16_a_fragment_per_warp():
    # Thread 0: a0, a1 at (0, 0), (0, 1); a2, a3 at (8, 0), (8, 1); a4..a7 the same 8 columns on.
    assert [w.ptx_a_fragment_row_col(0, i) for i in range(8)] == [
        (0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9),
    ]  # fmt: skip
    # Lane 5 of warp 1 (thread 37): groupID 1, threadID_in_group 1.
    assert w.ptx_a_fragment_row_col(37, 0) == (17, 2)
    assert w.ptx_a_fragment_row_col(127, 7) == (63, 15)


def test_isa_a_figure_and_cutlass_agree_and_cover_the_64x16_tile_once():
    seen = np.zeros((64, 16), dtype=int)
    for t in range(128):
        for i in range(8):
            ptx = w.ptx_a_fragment_row_col(t, i)
            assert ptx == w.cutlass_a_fragment_row_col(t, i), (t, i)
            seen[ptx] += 1
    assert (seen == 1).all()


def test_a_fragment_maps_refuse_what_a_warpgroup_does_not_hold():
    for mapping in (w.ptx_a_fragment_row_col, w.cutlass_a_fragment_row_col):
        with pytest.raises(w.ModelError, match=r"thread must be in 0\.\.127"):
            mapping(128, 0)
        with pytest.raises(w.ModelError, match=r"i must be in 0\.\.7"):
            mapping(0, 8)


# --- what one wgmma reads -------------------------------------------------------------------------
def _smem_with_tile_at(base: int, tile: np.ndarray) -> np.ndarray:
    """Shared memory (2-byte elements) holding ``tile`` in the canonical layout at byte ``base``."""
    mn, k = np.meshgrid(np.arange(tile.shape[0]), np.arange(tile.shape[1]), indexing="ij")
    smem = np.full((base + 2 * tile.size + 256) // 2, -1, dtype=np.int64)
    smem[(base + w.canonical_k_major_offset(mn, k, 128, 1024)) // 2] = tile
    return smem


@pytest.mark.parametrize("base", [0, 0x400])
def test_gather_reads_the_k16_slice_the_descriptor_points_at(base):
    tile = np.arange(64 * 64).reshape(64, 64)
    smem = _smem_with_tile_at(base, tile)
    for ks in range(4):
        desc = w.encode_descriptor(base + 256 * ks, 128, 1024)
        assert np.array_equal(w.gather_operand(smem, desc), tile[:, 16 * ks : 16 * ks + 16])


def test_gather_with_swapped_strides_reads_something_else():
    tile = np.arange(64 * 64).reshape(64, 64)
    smem = _smem_with_tile_at(0, tile)
    assert not np.array_equal(w.gather_operand(smem, w.encode_descriptor(0, 1024, 128)), tile[:, :16])


def test_gather_refuses_a_swizzled_a_malformed_or_an_out_of_range_descriptor():
    smem = np.zeros(4096, dtype=np.int64)  # 8 KiB
    with pytest.raises(w.ModelError, match=r"no-swizzle layout only \(descriptor has 128-byte\)"):
        w.gather_operand(smem, w.encode_descriptor(0, 128, 1024, swizzle=1))
    with pytest.raises(w.ModelError, match="malformed descriptor: bits the ISA does not define"):
        w.gather_operand(smem, w.encode_descriptor(0x3FFF0, 128, 1024) + 48)
    with pytest.raises(w.ModelError, match=r"reaches byte \d+, past the 8192-byte shared memory"):
        w.gather_operand(smem, w.encode_descriptor(0x2000, 128, 1024))
