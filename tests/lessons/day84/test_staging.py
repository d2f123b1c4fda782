"""The Day 84 epilogue's staging addresses, checked on the CPU.

gemm6_epilogue.cu writes each consumer's accumulators into 64 x 64 staging
boxes with hand-written 128B-swizzled addresses, then one thread hands each
box to a TMA store through the D map (CU_TENSOR_MAP_SWIZZLE_128B). The page
claims three things about that code; this module evaluates the kernel's own
address lines (quoted below; each must occur once in the kernel) for every
thread, register and pass, and checks them against independent statements:

1. every element of the 64 x 256 slice lands in exactly one staging slot;
2. it lands where the TMA store reads it: in the box of its column, at the
   128B-swizzled position of (row, column) (``course.hopper.wgmma.swizzle_128b_chunk``),
   with the accumulator's (row, column) taken from the PTX ISA's fragment
   figure (``course.hopper.wgmma.ptx_d_fragment_row_col``), not from the kernel;
3. each warp-wide store touches all 32 banks once: no bank conflicts.
"""

from __future__ import annotations

from collections import Counter

import pytest

from course.hopper.wgmma import ptx_d_fragment_row_col, swizzle_128b_chunk
from course.lessons import get_lesson

LESSON = get_lesson("day84")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")
C = LESSON.constants()
HALF = 2
BANKS, BANK_BYTES = 32, 4

# The epilogue's address arithmetic, as the kernel writes it.
KERNEL_LINES = {
    "row_addr_1": "const uint32_t rowAddr = smemAddr(s.dOut[cons][0]) +",
    "row_addr_2": "(16 * warp + lane / 4) * 128 + (lane % 4) * 4;",
    "chunk_addr": "const uint32_t chunkAddr = rowAddr + ((j ^ (lane / 4)) * 16);",
    "box": "const int box = pass * kStagingBoxes + sb;  // box of the slice",
    "reg": "const int r = (box * 8 + j) * 4 + half * 2;",
    "offset": "(sb * kBoxDRows * kBoxDCols + half * 8 * kBoxDCols) * 2,",
    "values": "acc[0][r], acc[0][r + 1]);",
    "passes": "for (int pass = 0; pass < kBN / (kBoxDCols * kStagingBoxes); ++pass) {",
    "store": "tmaStore2d(&tmD, s.dOut[cons][sb], nBlock * kBN + box * kBoxDCols,",
    "store_row": "mBlock * kBM + cons * kBoxDRows);",
}

BOX_COLS, BOX_ROWS, STAGING = int(C["kBoxDCols"]), int(C["kBoxDRows"]), int(C["kStagingBoxes"])
TILE_N = int(C["kBN"])
# for (int pass = 0; pass < kBN / (kBoxDCols * kStagingBoxes); ++pass)
PASSES = TILE_N // (BOX_COLS * STAGING)
BOX_BYTES = BOX_ROWS * BOX_COLS * HALF


def staged_stores():
    """Every st.shared of one consumer warpgroup: (pass, warp, lane, j, sb, half, byte offset, reg)."""
    for pass_ in range(PASSES):
        for warp in range(4):
            for lane in range(32):
                row_addr = (16 * warp + lane // 4) * 128 + (lane % 4) * 4  # relative to dOut[cons][0]
                for j in range(8):
                    chunk_addr = row_addr + ((j ^ (lane // 4)) * 16)
                    for sb in range(STAGING):
                        for half in range(2):
                            box = pass_ * STAGING + sb
                            r = (box * 8 + j) * 4 + half * 2
                            addr = chunk_addr + (sb * BOX_ROWS * BOX_COLS + half * 8 * BOX_COLS) * 2
                            yield pass_, warp, lane, j, sb, half, addr, r


STORES = list(staged_stores())


@pytest.mark.parametrize("name", sorted(KERNEL_LINES))
def test_every_mirrored_line_is_in_the_kernel_once(name):
    hits = [line for line in SOURCE.splitlines() if KERNEL_LINES[name] in line]
    assert len(hits) == 1, f"{name}: {KERNEL_LINES[name]!r} found {len(hits)} times; update the model"


def test_the_constants_are_the_ones_the_model_assumes():
    assert "kMmaM == 1" in SOURCE  # kMmaM is an expression; the static_assert pins it to 1 (acc[0] only)
    assert BOX_COLS * HALF == 128  # one box row is one 128-byte swizzle span
    assert BOX_ROWS == C["kWgmmaM"] == 64 and TILE_N == C["kWgmmaN"] == 256
    assert PASSES == 2 and len(STORES) == PASSES * 128 * 8 * STAGING * 2


def test_each_pass_fills_its_staging_boxes_exactly_once():
    for pass_ in range(PASSES):
        slots = Counter()
        for p, *_, addr, _r in STORES:
            if p == pass_:
                for word in range(2):  # two halves of the __half2
                    slots[addr + word * HALF] += 1
        assert set(slots) == set(range(0, STAGING * BOX_BYTES, HALF))
        assert set(slots.values()) == {1}


def test_every_value_lands_where_the_tma_store_reads_it():
    for pass_, warp, lane, _j, sb, _half, addr, r in STORES:
        thread = 32 * warp + lane
        for word in range(2):  # acc[0][r] and acc[0][r + 1]
            row, col = ptx_d_fragment_row_col(thread, r + word, n=TILE_N)
            box = col // BOX_COLS
            assert box == pass_ * STAGING + sb  # the box this pass stages in slot sb
            byte = (col % BOX_COLS) * HALF
            expected = sb * BOX_BYTES + row * 128 + swizzle_128b_chunk(row, byte // 16) * 16 + byte % 16
            assert addr + word * HALF == expected, (pass_, thread, r + word, row, col)


def test_the_slice_is_covered_once_over_both_passes():
    seen = Counter()
    for _p, warp, lane, *_rest, r in STORES:
        for word in range(2):
            seen[ptx_d_fragment_row_col(32 * warp + lane, r + word, n=TILE_N)] += 1
    assert set(seen) == {(row, col) for row in range(BOX_ROWS) for col in range(TILE_N)}
    assert set(seen.values()) == {1}


def test_each_warp_store_uses_every_bank_once():
    groups: dict[tuple[int, ...], list[int]] = {}
    for pass_, warp, _lane, j, sb, half, addr, _r in STORES:
        groups.setdefault((pass_, warp, j, sb, half), []).append(addr)
    assert len(groups) == PASSES * 4 * 8 * STAGING * 2
    for key, addrs in groups.items():
        assert len(addrs) == 32
        banks = {(a // BANK_BYTES) % BANKS for a in addrs}
        assert banks == set(range(BANKS)), key


def test_without_the_xor_the_same_store_would_conflict_eight_ways():
    # The counterfactual the kernel's comment describes: the same addresses without `j ^`.
    for warp in range(4):
        for j in range(8):
            addrs = [(16 * warp + lane // 4) * 128 + (lane % 4) * 4 + j * 16 for lane in range(32)]
            per_bank = Counter((a // BANK_BYTES) % BANKS for a in addrs)
            assert len(per_bank) == 4 and set(per_bank.values()) == {8}


def test_staging_boxes_start_on_swizzle_atoms():
    # dOut follows a[kStages][kBM*kBK] and b[kStages][kBN*kBK] in a 1024-aligned struct.
    base = C["kStages"] * (C["kBM"] + C["kBN"]) * C["kBK"] * HALF
    for cons in range(C["kConsumers"]):
        for sb in range(STAGING):
            assert (base + (cons * STAGING + sb) * BOX_BYTES) % C["kSmemAlign"] == 0
