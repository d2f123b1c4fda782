"""Day 79's swizzle picture draws the formula, and the formula is the one gemm1_tma.cu relies on.

The kernel never computes a swizzled address: the TMA engine writes each box
with CU_TENSOR_MAP_SWIZZLE_128B and the descriptor's swizzle mode tells the
tensor core to undo it. What can be checked without a GPU is everything the
kernel contributes to that agreement: the descriptor it builds (evaluated
here from its own source line), the tensor map it asks for, the 128-byte
tile rows, and the 1024-byte alignment of every operand start it hands to
swizzledDesc(), under which the address form of the swizzle (what the
hardware applies) equals the chunk formula c XOR (r mod 8) the picture draws.
"""

from __future__ import annotations

import re
import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from course.errors import CourseError
from course.hopper import wgmma as w
from course.hopper.tensormap import TensorMapRuleError, TileMap
from course.lessons import get_lesson
from course.lessons.day79 import figures as f
from course.picture import Picture
from course.snippets import load_snippets

LESSON = get_lesson("day79")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")
SNIPPETS = load_snippets(LESSON.kernel_path)
C = LESSON.constants()
HALF = 2  # bytes of an FP16 element
SMEM_BASE = 0x400  # where the dynamic window started on an H200 (Day 78's printf); any 1024-multiple works


@pytest.fixture(autouse=True)
def _agg_backend():
    matplotlib.use("Agg")


def images(fig: Figure) -> list[np.ndarray]:
    return [
        np.asarray(artist.get_array())
        for ax in fig.axes
        for artist in ax.get_children()
        if isinstance(artist, AxesImage)
    ]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


# --- the picture is the formula ----------------------------------------------------------------
def test_the_figure_is_a_picture_jupyter_shows_as_a_png():
    fig = f.swizzle_figure()
    assert isinstance(fig, Picture)
    width, height = png_size(fig._repr_png_())
    assert width > 600 and height > 300, (width, height)
    assert repr(fig).startswith("Picture(")


def test_landing_slots_are_the_chunk_formula():
    slots = f.landing_slots()
    assert slots.shape == (8, 8)
    for r in range(8):
        for c in range(8):
            assert slots[r, c] == w.swizzle_128b_chunk(r, c) == c ^ (r % 8)


def test_each_row_is_a_permutation_and_each_chunk_column_hits_every_slot():
    slots = f.landing_slots()
    for r in range(8):
        assert sorted(slots[r].tolist()) == list(range(8))  # nothing leaves its row, nothing collides
    for c in range(8):
        # chunk c of the 8 rows (one 8 x 16 B core-matrix column) sits in 8 different slots
        assert sorted(slots[:, c].tolist()) == list(range(8))


def test_slot_contents_invert_the_landing_slots():
    slots, contents = f.landing_slots(), f.slot_contents()
    for r in range(8):
        for c in range(8):
            assert contents[r, slots[r, c]] == c


def test_the_images_hold_the_formula():
    fig = f.swizzle_figure()
    logical, written = images(fig)
    assert np.array_equal(logical, np.tile(np.arange(8), (8, 1)))
    for r in range(8):
        for c in range(8):
            assert written[r, w.swizzle_128b_chunk(r, c)] == c


def test_the_labels_say_where_each_chunk_lands():
    fig = f.swizzle_figure()
    left, right = fig.axes
    labels = set(texts(left))
    for r in range(8):
        for c in range(8):
            assert f"{c}→{c ^ r}" in labels
    assert sorted(texts(right)) == sorted(str(c) for r in range(8) for c in range(8))


@pytest.mark.parametrize("highlight", [0, 5])
def test_the_outlined_cells_are_one_chunk_of_every_row(highlight):
    fig = f.swizzle_figure(highlight)
    left, right = fig.axes
    outlined = [(round(p.get_x() + 0.5), round(p.get_y() + 0.5)) for p in right.patches]
    assert sorted(outlined) == sorted((highlight ^ r, r) for r in range(8))
    assert sorted(round(p.get_x() + 0.5) for p in left.patches) == [highlight] * 8


def test_a_bad_highlight_is_refused():
    with pytest.raises(CourseError, match="highlight must be in 0..7"):
        f.swizzle_figure(8)


# --- the formula is the one the kernel relies on ---------------------------------------------------
def _kernel_descriptor(addr: int) -> int:
    """Evaluate swizzledDesc()'s return expression, taken from the kernel source, for a shared address."""
    body = SNIPPETS["descriptor"].text.split("swizzledDesc(const void* smemPtr) {", 1)[1]
    expr = body.split("return", 1)[1].split(";", 1)[0]
    expr = re.sub(r"//[^\n]*", "", expr)
    expr = " ".join(expr.replace("uint64_t(", "(").replace("0x3FFFFu", "0x3FFFF").split())
    assert re.fullmatch(r"[\s()|&<>\dxXa-fA-F+addr]*", expr), expr  # only literals, addr and operators
    return int(eval(expr, {"__builtins__": {}}, {"addr": addr}))  # the kernel's own literal expression


def test_the_kernels_descriptor_selects_the_128_byte_swizzle():
    d = w.decode_descriptor(_kernel_descriptor(SMEM_BASE))
    assert d.swizzle == 1 and d.swizzle_name == "128-byte"
    assert d.stride_byte_offset == f.ATOM_BYTES == 8 * f.ROW_BYTES  # SBO: next 8-row group
    assert d.lbo_field == 1  # the customary filler: a K-major swizzled operand has no LBO stride
    assert d.start_address_bytes == SMEM_BASE
    assert d.problems() == []
    assert _kernel_descriptor(SMEM_BASE) == w.encode_descriptor(SMEM_BASE, lbo=16, sbo=1024, swizzle=1)


def test_the_kernels_tensor_maps_ask_the_tma_for_the_same_swizzle():
    maps = SNIPPETS["tensor-maps"].text
    assert "CU_TENSOR_MAP_SWIZZLE_128B" in maps
    assert "static_cast<cuuint32_t>(kBK), static_cast<cuuint32_t>(boxRows)" in maps
    # One box row of kBK halves is exactly one swizzle span: the rule the driver enforces holds...
    assert C["kBK"] * HALF == f.ROW_BYTES
    TileMap(C["kDim"], C["kDim"], C["kBK"], C["kBoxARows"], elem_bytes=HALF, swizzle="128B").check()
    TileMap(C["kDim"], C["kDim"], C["kBK"], C["kBoxBRows"], elem_bytes=HALF, swizzle="128B").check()
    # ...and a box twice as wide would have no pattern to follow.
    with pytest.raises(TensorMapRuleError, match="swizzle span"):
        TileMap(C["kDim"], C["kDim"], 2 * C["kBK"], C["kBoxARows"], elem_bytes=HALF, swizzle="128B").check()


def test_every_tile_starts_on_a_swizzle_atom():
    assert C["kSmemAlign"] == f.ATOM_BYTES
    assert "struct alignas(1024) SharedStorage" in SNIPPETS["smem-layout"].text
    assert "~uintptr_t(kSmemAlign - 1)" in SNIPPETS["setup"].text  # the base is rounded up to 1024
    tile_a = C["kBM"] * C["kBK"] * HALF  # SharedStorage: a[kStages][kBM * kBK], then b[kStages][kBN * kBK]
    tile_b = C["kBN"] * C["kBK"] * HALF
    for offset in [s * tile_a for s in range(C["kStages"])] + [
        C["kStages"] * tile_a + s * tile_b for s in range(C["kStages"])
    ]:
        assert offset % f.ATOM_BYTES == 0, offset


def _operand_starts() -> list[tuple[str, int, int]]:
    """(operand, byte offset of the descriptor's start from its tile, ks) for every wgmma of a K-tile.

    The offsets are the kernel's element indices times 2 bytes:
    ``&s.a[0][mi * kWgmmaM * kBK + ks * kWgmmaK]`` and ``&s.b[0][ks * kWgmmaK]``.
    """
    consumer = SNIPPETS["consumer"].text
    assert "swizzledDesc(&s.a[0][mi * kWgmmaM * kBK + ks * kWgmmaK])" in consumer
    assert "swizzledDesc(&s.b[0][ks * kWgmmaK])" in consumer
    starts = []
    for ks in range(C["kBK"] // C["kWgmmaK"]):
        for mi in range(C["kBM"] // C["kWgmmaM"]):
            starts.append(("A", (mi * C["kWgmmaM"] * C["kBK"] + ks * C["kWgmmaK"]) * HALF, ks))
        starts.append(("B", ks * C["kWgmmaK"] * HALF, ks))
    return starts


def test_each_k16_step_is_descriptor_plus_2_inside_one_128_byte_row():
    for _, offset, ks in _operand_starts():
        row_block, in_row = divmod(offset, f.ATOM_BYTES)
        assert (
            in_row == ks * C["kWgmmaK"] * HALF < f.ROW_BYTES
        )  # 0, 32, 64, 96: never leaves row 0 of an atom
        base = SMEM_BASE + row_block * f.ATOM_BYTES
        assert _kernel_descriptor(base + in_row) == _kernel_descriptor(base) + 2 * ks


def test_under_the_kernels_alignment_the_address_swizzle_is_the_chunk_formula():
    # What the TMA wrote for logical chunk c of tile row r, and what the tensor core reads from a
    # descriptor starting ks * 32 bytes into the row, are the same byte: both are the address form.
    for _, offset, ks in _operand_starts():
        start = SMEM_BASE + offset
        tile_base = start - ks * C["kWgmmaK"] * HALF - (offset // f.ATOM_BYTES) * f.ATOM_BYTES
        assert tile_base % f.ATOM_BYTES == 0
        first_row = (start - tile_base) // f.ROW_BYTES
        for r in range(first_row, first_row + 64):
            for j in range(C["kWgmmaK"] * HALF // f.CHUNK_BYTES):  # the two 16-byte chunks of a k16 slice
                c = 2 * ks + j
                logical = tile_base + r * f.ROW_BYTES + c * f.CHUNK_BYTES
                read = f.swizzled_address(start + (r - first_row) * f.ROW_BYTES + j * f.CHUNK_BYTES)
                assert read == f.swizzled_address(logical)
                assert read == tile_base + r * f.ROW_BYTES + w.swizzle_128b_chunk(r, c) * f.CHUNK_BYTES


def test_without_the_alignment_the_row_bits_are_not_the_tile_row():
    # A tile starting 512 bytes into an atom: address bits 9..7 count from the atom, not the tile,
    # so chunk c of tile row r would land at c XOR ((r + 4) mod 8) instead of c XOR r.
    base = SMEM_BASE + 512
    wrong = 0
    for r in range(8):
        for c in range(8):
            got = (
                f.swizzled_address(base + r * f.ROW_BYTES + c * f.CHUNK_BYTES) - base - r * f.ROW_BYTES
            ) // 16
            assert got == c ^ ((r + 4) % 8)
            wrong += got != w.swizzle_128b_chunk(r, c)
    assert wrong == 64


def test_swizzled_address_refuses_what_is_not_a_shared_address():
    with pytest.raises(CourseError, match="addr must be in"):
        f.swizzled_address(1 << 18)
