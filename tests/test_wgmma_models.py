"""The CPU models of wgmma_gemm.cu: each map is a bijection, the descriptor
round-trips and decodes to the kernel's constants, the accumulator map agrees
with the PTX ISA's figure and with CUTLASS, and a simulated k-loop built from
all three reproduces A @ B."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course import _paths
from course import wgmma_models as wm
from course.constants import kernel_constants

KERNEL = _paths.kernels_dir() / "wgmma_gemm.cu"


# --- the models are the kernel's, not a paraphrase -----------------------------------------
def test_constants_match_the_kernel_source():
    consts = kernel_constants(KERNEL)
    assert consts["kTileM"] == wm.TILE_M
    assert consts["kTileN"] == wm.TILE_N
    assert consts["kTileK"] == wm.TILE_K
    assert consts["kWgmmaK"] == wm.WGMMA_K
    assert consts["kAccRegs"] == wm.ACC_REGS
    assert consts["kAccRegs"] * wm.WARPGROUP == wm.TILE_M * wm.TILE_N


@pytest.mark.parametrize("name", sorted(wm.KERNEL_LINES))
def test_every_mirrored_line_is_in_the_kernel_once(name):
    text = wm.KERNEL_LINES[name]
    hits = [line for line in KERNEL.read_text(encoding="utf-8").splitlines() if text in line]
    assert len(hits) == 1, f"{name}: {text!r} found {len(hits)} times in {KERNEL.name}; update the model"


# --- coreOffset -------------------------------------------------------------------------------
def test_core_offset_is_a_bijection_onto_the_tile():
    tile = wm.core_offset_tile()
    assert tile.shape == (64, 64)
    assert sorted(tile.ravel().tolist()) == list(range(4096))


def test_scalar_and_vector_core_offset_agree():
    tile = wm.core_offset_tile()
    for mn in range(64):
        for k in range(64):
            assert wm.core_offset(mn, k) == tile[mn, k]


def test_core_offset_is_the_isa_canonical_k_major_layout_with_lbo_128_sbo_1024():
    mn, k = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    canonical_bytes = wm.canonical_k_major_offset(mn, k, lbo_bytes=128, sbo_bytes=1024)
    assert np.array_equal(wm.core_offset_tile() * 2, canonical_bytes)
    # Swapping the two strides is a different layout: the constants matter.
    swapped = wm.canonical_k_major_offset(mn, k, lbo_bytes=1024, sbo_bytes=128)
    assert not np.array_equal(wm.core_offset_tile() * 2, swapped)


def test_each_core_matrix_is_an_8x8_block_of_128_contiguous_bytes():
    index = wm.core_matrix_index_tile()
    offsets = wm.core_offset_tile()
    for core in range(64):
        rows, cols = np.nonzero(index == core)
        assert rows.max() - rows.min() == 7 and cols.max() - cols.min() == 7
        assert sorted(offsets[index == core].tolist()) == list(range(core * 64, core * 64 + 64))
    # Cores run along K first: core 1 is k 8..15 of rows 0..7, core 8 is rows 8..15.
    assert index[0, 8] == 1 and index[8, 0] == 8


@pytest.mark.parametrize(("mn", "k"), [(-1, 0), (64, 0), (0, 64)])
def test_core_offset_refuses_coordinates_outside_the_tile(mn, k):
    with pytest.raises(ValueError, match="must be in 0..63"):
        wm.core_offset(mn, k)


# --- the descriptor -----------------------------------------------------------------------------
def test_descriptor_is_the_kernels_expression():
    for addr in (0, 16, 0x400, 0x2000, 0x3FFF0):
        expected = ((addr & 0x3FFFF) >> 4) | ((128 >> 4) << 16) | ((1024 >> 4) << 32)
        assert wm.encode_descriptor(addr) == expected


def test_descriptors_match_the_values_printed_on_an_h200():
    # Instrumented wgmma_gemm.cu on an H200 (nvcc 13.0): smA[0] at 0x400, smB[1] at 0x6400,
    # tileDesc(smA[0]) = 0x4000080040, tileDesc(smB[1]) = 0x4000080640.
    assert wm.encode_descriptor(0x400) == 0x4000080040
    assert wm.encode_descriptor(0x6400) == 0x4000080640


def test_kernel_constants_decode_to_lbo_128_sbo_1024_no_swizzle():
    d = wm.decode_descriptor(wm.encode_descriptor(0x4000))
    assert d.start_address_bytes == 0x4000
    assert d.leading_byte_offset == 128
    assert d.stride_byte_offset == 1024
    assert d.swizzle == 0 and d.swizzle_name == "none"
    assert d.base_offset == 0
    assert d.unlisted_bits == 0 and d.problems() == []
    assert (d.lbo_field, d.sbo_field) == (8, 64)


@settings(max_examples=200, deadline=None)
@given(
    addr=st.integers(0, (1 << 18) // 16 - 1).map(lambda x: x * 16),
    lbo=st.integers(0, (1 << 18) // 16 - 1).map(lambda x: x * 16),
    sbo=st.integers(0, (1 << 18) // 16 - 1).map(lambda x: x * 16),
    swizzle=st.integers(0, 3),
)
def test_descriptor_round_trips(addr, lbo, sbo, swizzle):
    d = wm.decode_descriptor(wm.encode_descriptor(addr, lbo, sbo, swizzle))
    assert (d.start_address_bytes, d.leading_byte_offset, d.stride_byte_offset, d.swizzle) == (
        addr,
        lbo,
        sbo,
        swizzle,
    )
    assert d.unlisted_bits == 0


def test_fields_follow_the_isa_table_and_leave_the_rest_undefined():
    spans = [(f.lo, f.hi) for f in wm.DESCRIPTOR_FIELDS]
    assert spans == [(0, 13), (16, 29), (32, 45), (49, 51), (62, 63)]
    covered = sum(f.width for f in wm.DESCRIPTOR_FIELDS)
    assert covered + bin(wm.UNLISTED_MASK).count("1") == 64


def test_each_k16_step_moves_the_start_address_256_bytes():
    base = 0x1000
    for ks in range(4):
        desc = wm.encode_descriptor(base) + wm.k_step_offset(ks)
        d = wm.decode_descriptor(desc)
        assert wm.k_step_offset(ks) == 16 * ks  # uint64_t(ks) * (2 * 128 >> 4)
        assert d.start_address_bytes == base + 256 * ks
        assert (d.leading_byte_offset, d.stride_byte_offset) == (128, 1024)
        # 256 bytes is exactly where column k = 16 * ks starts: two core matrices along K.
        assert d.start_address_bytes - base == wm.canonical_k_major_offset(0, 16 * ks)
    assert wm.K16_STEP_BYTES == 256


def test_k_step_table_walks_the_stage_in_256_byte_steps():
    table = wm.k_step_table(0x400)
    assert [(s.ks, s.off, s.start_address_bytes, s.k_first, s.k_last) for s in table] == [
        (0, 0, 0x400, 0, 15),
        (1, 16, 0x500, 16, 31),
        (2, 32, 0x600, 32, 47),
        (3, 48, 0x700, 48, 63),
    ]
    assert table[0].desc == 0x4000080040


def test_an_addition_that_carries_out_of_the_address_field_is_reported():
    desc = wm.encode_descriptor(0x3FFF0) + wm.k_step_offset(3)  # 0x3FFF + 48 overflows 14 bits
    problems = wm.decode_descriptor(desc).problems()
    assert problems and "carried out of a field" in problems[0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"smem_addr": 8}, "multiple of 16"),
        ({"smem_addr": 0, "lbo": 100}, "multiple of 16"),
        ({"smem_addr": 1 << 18}, "must be in"),
        ({"smem_addr": 0, "swizzle": 4}, "swizzle must be in 0..3"),
    ],
)
def test_bad_descriptor_inputs_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        wm.encode_descriptor(**kwargs)


# --- the accumulator fragment ---------------------------------------------------------------
def test_fragment_map_assigns_every_element_to_exactly_one_thread_register():
    rows, cols = wm.fragment_coords()
    assert rows.shape == cols.shape == (128, 32)
    counts = np.zeros((64, 64), dtype=int)
    np.add.at(counts, (rows, cols), 1)
    assert (counts == 1).all()
    thread, register = wm.fragment_owner_tile()
    assert thread.min() == 0 and register.min() == 0
    assert np.array_equal(rows[thread, register], np.broadcast_to(np.arange(64)[:, None], (64, 64)))
    assert np.array_equal(cols[thread, register], np.broadcast_to(np.arange(64)[None, :], (64, 64)))


def test_warp_w_owns_rows_16w_to_16w_plus_15():
    thread, _ = wm.fragment_owner_tile()
    for w in range(4):
        assert (thread[16 * w : 16 * w + 16] // 32 == w).all()


def test_scalar_fragment_matches_arrays():
    rows, cols = wm.fragment_coords()
    for t in range(128):
        for r in range(32):
            assert wm.fragment_row_col(t // 32, t % 32, r) == (rows[t, r], cols[t, r])


def test_kernel_store_loop_matches_the_ptx_isa_figure_and_cutlass():
    for t in range(128):
        for r in range(32):
            kernel = wm.fragment_row_col(t // 32, t % 32, r)
            assert kernel == wm.ptx_d_fragment_row_col(t, r), (t, r)
            assert kernel == wm.cutlass_d_fragment_row_col(t, r), (t, r)


def test_the_isa_figure_is_the_m16n8_accumulator_repeated():
    # Thread 0 holds d0, d1 at (0, 0), (0, 1) and d2, d3 at (8, 0), (8, 1); d4 starts column 8.
    assert [wm.ptx_d_fragment_row_col(0, i) for i in range(5)] == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8)]
    # Lane 5 of warp 1 (thread 37): groupID 1, threadID_in_group 1.
    assert wm.ptx_d_fragment_row_col(37, 0) == (17, 2)


# --- all three together -----------------------------------------------------------------------
@pytest.mark.parametrize(("dim", "seed"), [(64, 0), (128, 1), (128, 2), (256, 3)])
def test_simulated_wgmma_k_loop_reproduces_a_times_b(dim, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, size=(dim, dim))
    b = rng.integers(-8, 9, size=(dim, dim))
    assert np.array_equal(wm.simulate_gemm(a, b), a @ b)


def test_simulation_does_not_depend_on_where_shared_memory_starts():
    rng = np.random.default_rng(7)
    a = rng.integers(-8, 9, size=(128, 128))
    b = rng.integers(-8, 9, size=(128, 128))
    assert np.array_equal(wm.simulate_gemm(a, b, smem_base=0x400), a @ b)


def test_fp16_exact_inputs_like_the_kernels_give_the_exact_product():
    rng = np.random.default_rng(20260901)
    a = rng.integers(-8, 9, size=(128, 128)) / 8.0
    b = rng.integers(-8, 9, size=(128, 128)) / 8.0
    assert np.array_equal(wm.simulate_gemm(a, b), a @ b)


def test_a_wrong_descriptor_constant_gives_a_wrong_product():
    rng = np.random.default_rng(11)
    a = rng.integers(-8, 9, size=(64, 64))
    b = rng.integers(-8, 9, size=(64, 64))
    assert not np.array_equal(wm.simulate_gemm(a, b, lbo=1024, sbo=128), a @ b)


def test_gather_reads_exactly_the_first_k16_slice():
    smem = np.zeros(2 * 4096 * 2, dtype=np.int64)
    tile = np.arange(64 * 64).reshape(64, 64)
    smem[wm.core_offset_tile()] = tile
    for ks in range(4):
        got = wm.gather_operand(smem, wm.encode_descriptor(0) + wm.k_step_offset(ks))
        assert np.array_equal(got, tile[:, 16 * ks : 16 * ks + 16])


@pytest.mark.parametrize("shape", [(65, 65), (64, 128), (0, 0)])
def test_simulate_refuses_shapes_the_kernel_cannot_run(shape):
    with pytest.raises(ValueError):
        wm.simulate_gemm(np.zeros(shape, dtype=int), np.zeros(shape, dtype=int))
