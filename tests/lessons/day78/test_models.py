"""The CPU models of wgmma_gemm.cu (course/lessons/day78/models.py).

Each map is a bijection, the descriptor decodes to the kernel's constants,
the accumulator map agrees with the PTX ISA's figure and with CUTLASS
(course.hopper.wgmma), and a simulated k-loop built from all three reproduces
A @ B. The models are the kernel's, not a paraphrase: every mirrored line
occurs once in the kernel, and the constants are read from it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from course.constants import kernel_constants
from course.hopper import wgmma as w
from course.hopper.smem_budget import fit_report, fits_cards
from course.kernel import gpus
from course.lessons import get_lesson
from course.lessons.day78 import figures
from course.lessons.day78 import models as m

LESSON = get_lesson("day78")
KERNEL = LESSON.kernel_path
SOURCE = KERNEL.read_text(encoding="utf-8")


# --- the models are the kernel's, not a paraphrase -----------------------------------------
def test_constants_are_the_kernels():
    consts = kernel_constants(KERNEL)
    assert consts["kTileM"] == m.TILE_M
    assert consts["kTileN"] == m.TILE_N
    assert consts["kTileK"] == m.TILE_K
    assert consts["kWgmmaK"] == m.WGMMA_K
    assert consts["kAccRegs"] == m.ACC_REGS
    assert consts["kAccRegs"] * 128 == m.TILE_M * m.TILE_N  # one warpgroup holds the 64x64 tile


def test_constants_agree_with_the_instruction_the_kernel_issues():
    found = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m(\d+)n(\d+)k(\d+)\.f32\.f16\.f16", SOURCE)
    assert len(found) == 1, found
    shape_m, shape_n, shape_k = (int(x) for x in found[0])
    assert (shape_m, shape_n, shape_k) == (m.TILE_M, m.TILE_N, m.WGMMA_K)
    assert m.TILE_K % m.WGMMA_K == 0
    assert m.ACC_REGS == shape_m * shape_n // 128


@pytest.mark.parametrize("name", sorted(m.KERNEL_LINES))
def test_every_mirrored_line_is_in_the_kernel_once(name):
    text = m.KERNEL_LINES[name]
    hits = [line for line in SOURCE.splitlines() if text in line]
    assert len(hits) == 1, f"{name}: {text!r} found {len(hits)} times in {KERNEL.name}; update the model"


def test_the_literal_offsets_are_the_ones_in_the_mirrored_lines():
    # LBO, SBO and the k16 step are literals in tileDesc and the k-loop, not constexprs.
    assert f"(uint64_t({m.LBO_BYTES} >> 4) << 16)" in m.KERNEL_LINES["desc_encode"]
    assert f"(uint64_t({m.SBO_BYTES} >> 4) << 32)" in m.KERNEL_LINES["desc_sbo"]
    assert "uint64_t(ks) * (2 * 128 >> 4)" in m.KERNEL_LINES["k_step"]
    assert m.K16_STEP_BYTES == (2 * 128 >> 4) << 4 == 256
    # One step is WGMMA_K values of k: WGMMA_K / 8 core matrices along K, LBO bytes apart.
    assert m.K16_STEP_BYTES == (m.WGMMA_K // 8) * m.LBO_BYTES


# --- coreOffset -------------------------------------------------------------------------------
def test_core_offset_is_a_bijection_onto_the_tile():
    tile = m.core_offset_tile()
    assert tile.shape == (64, 64)
    assert sorted(tile.ravel().tolist()) == list(range(4096))


def test_scalar_and_vector_core_offset_agree():
    tile = m.core_offset_tile()
    for mn in range(64):
        for k in range(64):
            assert m.core_offset(mn, k) == tile[mn, k]


def test_core_offset_is_the_isa_canonical_k_major_layout_with_the_descriptors_lbo_and_sbo():
    mn, k = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    canonical_bytes = w.canonical_k_major_offset(mn, k, lbo_bytes=m.LBO_BYTES, sbo_bytes=m.SBO_BYTES)
    assert np.array_equal(m.core_offset_tile() * 2, canonical_bytes)
    assert (m.LBO_BYTES, m.SBO_BYTES) == (128, 1024)
    # Swapping the two strides is a different layout: the constants matter.
    swapped = w.canonical_k_major_offset(mn, k, lbo_bytes=m.SBO_BYTES, sbo_bytes=m.LBO_BYTES)
    assert not np.array_equal(m.core_offset_tile() * 2, swapped)


def test_each_core_matrix_is_an_8x8_block_of_128_contiguous_bytes():
    index = m.core_matrix_index_tile()
    offsets = m.core_offset_tile()
    for core in range(64):
        rows, cols = np.nonzero(index == core)
        assert rows.max() - rows.min() == 7 and cols.max() - cols.min() == 7
        assert sorted(offsets[index == core].tolist()) == list(range(core * 64, core * 64 + 64))
    # Cores run along K first: core 1 is k 8..15 of rows 0..7, core 8 is rows 8..15.
    assert index[0, 8] == 1 and index[8, 0] == 8


@pytest.mark.parametrize(
    ("mn", "k", "message"),
    [
        (-1, 0, r"mn must be in 0\.\.63 \(got -1\)"),
        (64, 0, r"mn must be in 0\.\.63"),
        (0, 64, r"k must be in 0\.\.63 \(got 64\)"),
    ],
)
def test_core_offset_refuses_coordinates_outside_the_tile(mn, k, message):
    with pytest.raises(w.ModelError, match=message):
        m.core_offset(mn, k)


# --- the descriptor -----------------------------------------------------------------------------
def test_tile_desc_is_the_kernels_expression():
    for addr in (0, 16, 0x400, 0x2000, 0x3FFF0):
        # ((addr & 0x3FFFFu) >> 4) | (uint64_t(128 >> 4) << 16) | (uint64_t(1024 >> 4) << 32)
        expected = ((addr & 0x3FFFF) >> 4) | ((128 >> 4) << 16) | ((1024 >> 4) << 32)
        assert m.tile_desc(addr) == expected
        assert m.tile_desc(addr) == w.encode_descriptor(addr, 128, 1024, swizzle=0)


def test_descriptors_match_the_values_printed_on_an_h200():
    # Instrumented wgmma_gemm.cu on an H200 (nvcc 13.0): smA[0] at 0x400, smB[1] at 0x6400,
    # tileDesc(smA[0]) = 0x4000080040, tileDesc(smB[1]) = 0x4000080640.
    assert figures.MEASURED_H200["smA[0]"] == 0x400 and figures.MEASURED_H200["smB[1]"] == 0x6400
    assert m.tile_desc(0x400) == 0x4000080040
    assert m.tile_desc(0x6400) == 0x4000080640
    # The measured addresses are the kernel's layout: two 8 KiB stages of A, then two of B.
    stage = m.TILE_M * m.TILE_K * m.ELEM_BYTES
    assert figures.MEASURED_H200["smA[1]"] - figures.MEASURED_H200["smA[0]"] == stage
    assert figures.MEASURED_H200["smB[0]"] - figures.MEASURED_H200["smA[0]"] == 2 * stage


def test_kernel_constants_decode_to_lbo_128_sbo_1024_no_swizzle():
    d = w.decode_descriptor(m.tile_desc(0x4000))
    assert d.start_address_bytes == 0x4000
    assert d.leading_byte_offset == 128
    assert d.stride_byte_offset == 1024
    assert d.swizzle == 0 and d.swizzle_name == "none"
    assert d.base_offset == 0
    assert d.unlisted_bits == 0 and d.problems() == []
    assert (d.lbo_field, d.sbo_field) == (8, 64)


def test_each_k16_step_moves_the_start_address_256_bytes():
    base = 0x1000
    for ks in range(4):
        desc = m.tile_desc(base) + m.k_step_offset(ks)
        d = w.decode_descriptor(desc)
        assert m.k_step_offset(ks) == 16 * ks  # uint64_t(ks) * (2 * 128 >> 4)
        assert d.start_address_bytes == base + 256 * ks
        assert (d.leading_byte_offset, d.stride_byte_offset) == (128, 1024)
        # 256 bytes is exactly where column k = 16 * ks starts: two core matrices along K.
        assert d.start_address_bytes - base == w.canonical_k_major_offset(0, 16 * ks, 128, 1024)
        assert d.start_address_bytes - base == 2 * m.core_offset(0, 16 * ks)


def test_k_step_offset_refuses_a_step_past_the_stage():
    with pytest.raises(w.ModelError, match=r"ks must be in 0\.\.3 \(got 4\)"):
        m.k_step_offset(4)


def test_k_step_table_walks_the_stage_in_256_byte_steps():
    table = m.k_step_table(0x400)
    assert [(s.ks, s.off, s.start_address_bytes, s.k_first, s.k_last) for s in table] == [
        (0, 0, 0x400, 0, 15),
        (1, 16, 0x500, 16, 31),
        (2, 32, 0x600, 32, 47),
        (3, 48, 0x700, 48, 63),
    ]
    assert table[0].desc == 0x4000080040
    assert [s.desc for s in table] == [0x4000080040 + 16 * ks for ks in range(4)]


def test_an_addition_that_carries_out_of_the_address_field_is_reported():
    desc = m.tile_desc(0x3FFF0) + m.k_step_offset(3)  # 0x3FFF + 48 overflows 14 bits
    problems = w.decode_descriptor(desc).problems()
    assert problems and "carried out of a field" in problems[0]


# --- the accumulator fragment ---------------------------------------------------------------
def test_fragment_map_assigns_every_element_to_exactly_one_thread_register():
    rows, cols = m.fragment_coords()
    assert rows.shape == cols.shape == (128, 32)
    counts = np.zeros((64, 64), dtype=int)
    np.add.at(counts, (rows, cols), 1)
    assert (counts == 1).all()
    thread, register = m.fragment_owner_tile()
    assert thread.min() == 0 and register.min() == 0
    assert thread.max() == 127 and register.max() == 31
    assert np.array_equal(rows[thread, register], np.broadcast_to(np.arange(64)[:, None], (64, 64)))
    assert np.array_equal(cols[thread, register], np.broadcast_to(np.arange(64)[None, :], (64, 64)))


def test_warp_w_owns_rows_16w_to_16w_plus_15():
    thread, _ = m.fragment_owner_tile()
    for warp in range(4):
        assert (thread[16 * warp : 16 * warp + 16] // 32 == warp).all()


def test_scalar_fragment_matches_arrays():
    rows, cols = m.fragment_coords()
    for t in range(128):
        for r in range(32):
            assert m.fragment_row_col(t // 32, t % 32, r) == (rows[t, r], cols[t, r])


def test_kernel_store_loop_matches_the_ptx_isa_figure_and_cutlass():
    for t in range(128):
        for r in range(32):
            kernel = m.fragment_row_col(t // 32, t % 32, r)
            assert kernel == w.ptx_d_fragment_row_col(t, r), (t, r)
            assert kernel == w.cutlass_d_fragment_row_col(t, r), (t, r)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((4, 0, 0), r"warp must be in 0\.\.3"),
        ((0, 32, 0), r"lane must be in 0\.\.31"),
        ((0, 0, 32), r"reg must be in 0\.\.31"),
    ],
)
def test_fragment_row_col_refuses_what_the_consumer_warpgroup_does_not_have(args, message):
    with pytest.raises(w.ModelError, match=message):
        m.fragment_row_col(*args)


# --- all three together -----------------------------------------------------------------------
@pytest.mark.parametrize(("dim", "seed"), [(64, 0), (128, 1), (128, 2), (256, 3)])
def test_simulated_wgmma_k_loop_reproduces_a_times_b(dim, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, size=(dim, dim))
    b = rng.integers(-8, 9, size=(dim, dim))
    assert np.array_equal(m.simulate_gemm(a, b), a @ b)


def test_simulation_does_not_depend_on_where_shared_memory_starts():
    rng = np.random.default_rng(7)
    a = rng.integers(-8, 9, size=(128, 128))
    b = rng.integers(-8, 9, size=(128, 128))
    assert np.array_equal(m.simulate_gemm(a, b, smem_base=0x400), a @ b)


def test_fp16_exact_inputs_like_the_kernels_give_the_exact_product():
    rng = np.random.default_rng(20260901)
    a = rng.integers(-8, 9, size=(128, 128)) / 8.0
    b = rng.integers(-8, 9, size=(128, 128)) / 8.0
    assert np.array_equal(m.simulate_gemm(a, b), a @ b)


def test_a_wrong_descriptor_constant_gives_a_wrong_product():
    rng = np.random.default_rng(11)
    a = rng.integers(-8, 9, size=(64, 64))
    b = rng.integers(-8, 9, size=(64, 64))
    assert not np.array_equal(m.simulate_gemm(a, b, lbo=1024, sbo=128), a @ b)


def test_gather_reads_exactly_the_k16_slice_the_kernel_asks_for():
    smem = np.zeros(2 * 4096 * 2, dtype=np.int64)
    tile = np.arange(64 * 64).reshape(64, 64)
    smem[m.core_offset_tile()] = tile  # smA[0][coreOffset(mn, k)] = ...
    for ks in range(4):
        got = w.gather_operand(smem, m.tile_desc(0) + m.k_step_offset(ks))
        assert np.array_equal(got, tile[:, 16 * ks : 16 * ks + 16])


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "message"),
    [
        ((65, 65), (65, 65), r"positive multiple of 64, like GEMM_DIM \(got 65\)"),
        ((0, 0), (0, 0), r"positive multiple of 64, like GEMM_DIM \(got 0\)"),
        ((64, 128), (64, 128), r"square and the same shape.*\(got \(64, 128\), \(64, 128\)\)"),
        ((64, 64), (128, 128), r"square and the same shape.*\(got \(64, 64\), \(128, 128\)\)"),
    ],
)
def test_simulate_refuses_shapes_the_kernel_cannot_run(shape_a, shape_b, message):
    with pytest.raises(w.ModelError, match=message):
        m.simulate_gemm(np.zeros(shape_a, dtype=int), np.zeros(shape_b, dtype=int))


# --- the kernel's shared-memory pipeline, for the budget calculator ------------------------------
def test_kernel_config_is_the_kernels_own_32_kib():
    declared = re.findall(r"__shared__ __half sm([AB])\[(\d+)\]\[kTile([MN]) \* kTileK\];", SOURCE)
    assert declared == [("A", "2", "M"), ("B", "2", "N")]
    config = m.kernel_config()
    assert config.stages == int(declared[0][1])
    assert (config.tile_m, config.tile_n, config.tile_k) == (m.TILE_M, m.TILE_N, m.TILE_K)
    assert config.elem_bytes == 2  # __half
    assert config.stage_bytes == 8 * 1024 + 8 * 1024
    assert config.total_bytes == 32 * 1024
    assert not config.needs_dynamic  # static __shared__ under 48 KiB, as the kernel has it


def test_kernel_config_fits_every_card_but_runs_only_where_there_is_wgmma():
    config = m.kernel_config()
    assert fits_cards(config) == list(gpus.CARDS)
    report = fit_report(config, feature="wgmma")
    assert [f.card.name for f in report if f.fits and f.runs] == [c.name for c in gpus.CARDS if c.has_wgmma]
    assert [f.card.name for f in report if f.runs] == ["H100/H200"]
