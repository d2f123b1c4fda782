"""Day 82's tile-order model and picture (course/lessons/day82/figures.py).

The model is the kernel's, not a paraphrase: every mirrored line occurs
once in gemm4_persistent.cu, and the constants are read from it. The walk
covers every tile exactly once in both orders and for any grid size; the
two orders have the shapes the page describes; the picture draws exactly
the model's turn arrays and outlines exactly the first wave.
"""

from __future__ import annotations

import math
import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle

from course.hopper.wgmma import ModelError
from course.lessons import get_lesson
from course.lessons.day82 import figures as f
from course.picture import Picture
from course.snippets import load_snippets

LESSON = get_lesson("day82")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")
SIZES = (1024, 2048, 4096, 8192)  # the sizes the kernel's header says work


@pytest.fixture(autouse=True)
def _agg_backend():
    matplotlib.use("Agg")


def lines_with(text: str) -> list[int]:
    return [n for n, line in enumerate(SOURCE.splitlines(), 1) if text in line]


# --- the model is the kernel's ----------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(f.KERNEL_LINES))
def test_every_mirrored_line_is_in_the_kernel_once(name):
    text = f.KERNEL_LINES[name]
    assert len(lines_with(text)) == 1, f"{name}: {text!r} is not on exactly one line; update the model"


def test_the_walk_is_written_once_by_the_producer_and_once_by_the_consumers():
    regions = load_snippets(LESSON.kernel_path)
    hits = lines_with(f.WALK_LINE)
    assert len(hits) == 2
    producer, consumer = regions["producer"], regions["consumer"]
    assert [h for h in hits if producer.start <= h <= producer.end] == [hits[0]]
    assert [h for h in hits if consumer.start <= h <= consumer.end] == [hits[1]]
    # ... and each maps its tile through the same function.
    assert len(lines_with("tileCoords(tile, mBlock, nBlock);")) == 2


def test_the_mirrored_schedule_lines_sit_in_the_schedule_region():
    schedule = load_snippets(LESSON.kernel_path)["schedule"]
    for name in (
        "order_switch",
        "row_m",
        "row_n",
        "group",
        "first_m",
        "rows",
        "in_group",
        "grouped_m",
        "grouped_n",
    ):
        (line,) = lines_with(f.KERNEL_LINES[name])
        assert schedule.start <= line <= schedule.end, name


def test_the_default_grid_is_the_h200s_from_the_header():
    assert f"one CTA per SM ({f.H200_SMS} on" in SOURCE


@pytest.mark.parametrize("order", [0, 1])
def test_constants_come_from_the_kernel(order):
    c = LESSON.constants({"GEMM_DIM": 8192, "GEMM_TILE_ORDER": order})
    g = f.tile_grid(8192, order)
    assert (g.n, g.order, g.tile_m, g.tile_n, g.tile_k, g.group_m) == (
        c["kDim"], c["kTileOrder"], c["kBM"], c["kBN"], c["kBK"], c["kGroupM"],
    )  # fmt: skip
    assert g.stage_bytes == (c["kBM"] + c["kBN"]) * c["kBK"] * 2 == 48 * 1024  # "4 x 48 KiB"
    assert (g.tiles_m, g.tiles_n, g.num_tiles) == (8192 // 128, 8192 // 256, 64 * 32)


# --- every tile, exactly once ------------------------------------------------------------------
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("order", [1, 0])
@pytest.mark.parametrize("ctas", [f.H200_SMS, 1, 7, 100, 2048, 5000])
def test_the_walk_covers_every_tile_exactly_once(n, order, ctas):
    w = f.walk(n, order, ctas)
    g = w.grid
    assert w.visits.shape == (g.tiles_m, g.tiles_n)
    assert (w.visits == 1).all()
    assert sorted(w.position.ravel().tolist()) == list(range(g.num_tiles))
    # tile = blockIdx.x + turn * gridDim.x
    np.testing.assert_array_equal(w.cta, w.position % ctas)
    np.testing.assert_array_equal(w.turn, w.position // ctas)
    assert w.turns == math.ceil(g.num_tiles / ctas)


@pytest.mark.parametrize("order", [1, 0])
def test_tile_coords_is_a_bijection_onto_the_tile_grid(order):
    for n in SIZES:
        g = f.tile_grid(n, order)
        coords = {f.tile_coords(t, g) for t in range(g.num_tiles)}
        assert coords == {(m, c) for m in range(g.tiles_m) for c in range(g.tiles_n)}


# --- the two orders have the shapes the page describes -----------------------------------------
@pytest.mark.parametrize("n", SIZES)
def test_row_by_row_is_row_major(n):
    w = f.walk(n, 0)
    g = w.grid
    expected = np.arange(g.num_tiles).reshape(g.tiles_m, g.tiles_n)
    np.testing.assert_array_equal(w.position, expected)


@pytest.mark.parametrize("n", SIZES)
def test_grouped_walks_down_a_column_of_its_group_then_right(n):
    g = f.tile_grid(n, 1)
    for t in range(g.num_tiles - 1):
        (m0, c0), (m1, c1) = f.tile_coords(t, g), f.tile_coords(t + 1, g)
        group0, group1 = m0 // g.group_m, m1 // g.group_m
        if group0 != group1:  # into the next group: back to its top row, column 0
            assert (m1, c1) == (group1 * g.group_m, 0)
        elif c0 == c1:  # down the column
            assert m1 == m0 + 1
        else:  # next column: from the group's bottom row to its top row
            assert c1 == c0 + 1 and m1 == group0 * g.group_m
            assert m0 == min(g.tiles_m, (group0 + 1) * g.group_m) - 1


def test_first_wave_footprints_at_8192():
    grouped = f.footprint(f.walk(8192, 1))
    rows = f.footprint(f.walk(8192, 0))
    assert grouped.tiles == rows.tiles == f.H200_SMS
    # grouped: all 16 rows of the first group, 132 / 16 -> 9 columns
    assert (grouped.tile_rows, grouped.tile_cols) == (16, 9)
    assert (grouped.a_rows, grouped.b_rows) == (2048, 2304)
    # row by row: 132 / 32 -> 5 tile rows, every one of the 32 columns: all of B
    assert (rows.tile_rows, rows.tile_cols) == (5, 32)
    assert (rows.a_rows, rows.b_rows) == (640, 8192)
    assert grouped.unique_bytes == (2048 + 2304) * 128
    assert grouped.requested_bytes == rows.requested_bytes == f.H200_SMS * 48 * 1024
    assert grouped.reuse > 2 * rows.reuse


def test_at_1024_the_one_short_group_makes_both_orders_cover_everything():
    for order in (0, 1):
        w = f.walk(1024, order)
        assert w.turns == 1 and w.grid.num_tiles == 32
        fp = f.footprint(w)
        assert (fp.a_rows, fp.b_rows) == (1024, 1024)


def test_footprint_rows_lists_grouped_then_row_by_row():
    got = [(r.n, r.order) for r in f.footprint_rows((4096, 8192))]
    assert got == [(4096, 1), (4096, 0), (8192, 1), (8192, 0)]
    assert "2304 rows of B" in f.footprint(f.walk(8192, 1)).describe()


def test_cta_path_is_every_gridDim_th_tile():
    w = f.walk(4096, 1)
    path = w.cta_path(5)
    assert path == [f.tile_coords(t, w.grid) for t in (5, 137, 269, 401)]
    for i, (m, c) in enumerate(path):
        assert w.cta[m, c] == 5 and w.turn[m, c] == i


# --- refusals ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda: f.tile_grid(1000),
        lambda: f.tile_grid(0),
        lambda: f.tile_grid(4096.0),
        lambda: f.tile_grid(4096, 2),
        lambda: f.walk(4096, 1, 0),
        lambda: f.footprint(f.walk(4096), 4),
        lambda: f.tile_coords(512, f.tile_grid(4096)),
        lambda: f.tile_order_figure(4096, follow=132),
    ],
)
def test_bad_arguments_are_refused_with_a_model_error(call):
    with pytest.raises(ModelError):
        call()


# --- the picture -----------------------------------------------------------------------------------
def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("n", [4096, 8192])
def test_the_picture_draws_the_models_turns_and_outlines_the_first_wave(n):
    fig = f.tile_order_figure(n)
    assert isinstance(fig, Picture)
    width, height = png_size(fig._repr_png_())
    assert width > 600 and height > 300
    panels = [ax for ax in fig.axes if any(isinstance(a, AxesImage) for a in ax.get_children())]
    assert len(panels) == 2
    for ax, order in zip(panels, (1, 0), strict=True):
        w = f.walk(n, order)
        (image,) = [a for a in ax.get_children() if isinstance(a, AxesImage)]
        np.testing.assert_array_equal(np.asarray(image.get_array()), w.turn)
        boxes = {
            (round(p.get_y() / w.grid.tile_m), round(p.get_x() / w.grid.tile_n))
            for p in ax.patches
            if isinstance(p, Rectangle) and not p.get_fill()
        }
        wave = set(zip(*np.nonzero(w.turn == 0), strict=True))
        assert boxes == {(int(m), int(c)) for m, c in wave}
        fp = f.footprint(w)
        assert f"{fp.a_rows} rows of A + {fp.b_rows} rows of B" in ax.get_title()
        assert f"GEMM_TILE_ORDER={order}" in ax.get_title()
        # the white path is CTA 0's own walk
        (line,) = ax.get_lines()
        xs, ys = line.get_data()
        assert [
            (round(y / w.grid.tile_m - 0.5), round(x / w.grid.tile_n - 0.5))
            for x, y in zip(xs, ys, strict=True)
        ] == w.cta_path(0)
    assert repr(fig).startswith("Picture('gemm4Persistent at N = ")
