"""Day 88's figures build on a CPU, render as opaque images, and draw exactly what the models compute."""

from __future__ import annotations

import io
import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from PIL import Image

from course.hopper import wgmma as w
from course.hopper.wgmma import ModelError
from course.lessons.day88 import figures
from course.lessons.day88 import softmax as sm
from course.picture import Picture


@pytest.fixture(autouse=True)
def _agg_backend():
    # The figures never touch pyplot; Agg makes sure nothing could open a window either.
    matplotlib.use("Agg")


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (it must be one)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def cell_texts(ax) -> dict[tuple[int, int], str]:  # type: ignore[no-untyped-def]
    return {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}


@pytest.mark.parametrize(
    "make", [figures.online_softmax_figure, figures.fragment_figure], ids=lambda f: f.__name__
)
def test_each_figure_is_a_picture_jupyter_shows_as_an_opaque_png(make):
    fig = make.__wrapped__()  # the drawing itself, not a kept rendering
    assert isinstance(fig, Picture)
    data = fig._repr_png_()
    width, height = png_size(data)
    assert width > 300 and height > 300, (width, height)
    assert repr(fig).startswith("Picture(") and f"{width}x{height} px" in repr(fig)
    # An opaque white face: black text stays readable on JupyterLab's Dark theme.
    with Image.open(io.BytesIO(data)) as image:
        rgba = image.convert("RGBA")
        assert rgba.getpixel((0, 0)) == (255, 255, 255, 255)
        assert rgba.getextrema()[3] == (255, 255)


# --- the online softmax ---------------------------------------------------------------------------
def test_the_online_softmax_figure_draws_the_models_trace():
    fig = figures.online_softmax_figure.__wrapped__()
    walk = figures.figure_walk()
    ax_m, ax_l, ax_r = fig.axes
    scale = 1 / np.sqrt(figures.FIGURE_D)
    for ax, expected in ((ax_m, walk.m * scale), (ax_l, walk.ell), (ax_r, walk.rescale)):
        lines = [line for line in ax.get_lines() if line.get_label().startswith("row")]
        assert len(lines) == len(figures.FIGURE_ROWS)
        for row, line in enumerate(lines):
            assert np.array_equal(line.get_xdata(), np.arange(len(walk.steps)))
            assert np.array_equal(line.get_ydata(), expected[:, row]), (ax.get_title(), row)


def test_the_figures_input_shows_each_case_it_names():
    walk = figures.figure_walk()
    s, v = figures.figure_input()
    assert np.abs(walk.o - sm.attention_reference(s, np.eye(s.shape[1]), v, scale=1 / 8).o).max() <= 1e-12
    rescaled = walk.rescale[1:] < 1  # blocks 1..7
    assert rescaled[:, 1].sum() >= 5  # rising scores: the max grows at most blocks
    assert np.argmin(walk.rescale[:, 2]) == 5 and walk.rescale[5, 2] < 0.01  # the one large score
    assert not rescaled[:, 3].any()  # max in block 0: never rescaled


def test_the_annotation_names_the_smallest_rescale():
    fig = figures.online_softmax_figure.__wrapped__()
    walk = figures.figure_walk()
    b, r = np.unravel_index(np.argmin(walk.rescale), walk.rescale.shape)
    notes = [t.get_text() for t in fig.axes[2].texts]
    assert notes == [f"row {r}, block {b}: x {walk.rescale[b, r]:.2g}"]


# --- the register fragment ------------------------------------------------------------------------------
@pytest.mark.parametrize(("thread", "k_step", "n"), [(5, 1, 64), (0, 0, 64), (31, 7, 128)])
def test_the_fragment_figure_labels_every_cell_by_the_isas_two_figures(thread, k_step, n):
    fig = figures.fragment_figure.__wrapped__(thread, k_step, n)
    ax_all, ax_s, ax_p = fig.axes
    # The overview: every element of the 64 x n S coloured by the warp of the thread that holds it.
    (overview,) = [a for a in ax_all.get_children() if isinstance(a, AxesImage)]
    warps = np.asarray(overview.get_array())
    assert warps.shape == (64, n)
    for t in (0, 37, 70, 127):
        for i in range(n // 2):
            assert warps[w.ptx_d_fragment_row_col(t, i, n)] == t // 32
    assert np.array_equal(warps, np.repeat(np.arange(4), 16)[:, None] * np.ones((1, n), dtype=int))
    (zoom,) = [p for p in ax_all.patches if isinstance(p, Rectangle)]
    assert (zoom.get_x() + 0.5, zoom.get_y() + 0.5, zoom.get_width(), zoom.get_height()) == (
        16 * k_step,
        0,
        16,
        16,
    )
    s_cells, p_cells = cell_texts(ax_s), cell_texts(ax_p)
    assert len(s_cells) == len(p_cells) == 16 * 16
    for t in range(32):  # warp 0: rows 0-15
        for i in range(n // 2):
            row, col = w.ptx_d_fragment_row_col(t, i, n)
            if 16 * k_step <= col < 16 * (k_step + 1):
                assert s_cells[(row, col - 16 * k_step)] == f"d{i}"
        for j in range(8):
            row, col = w.ptx_a_fragment_row_col(t, j)
            assert p_cells[(row, col)] == f"a{j}"
            assert s_cells[(row, col)] == f"d{8 * k_step + j}"  # the same cell: d[8k + j] becomes a_j
    # The outlined cells are the thread's own, the same eight in both panels.
    for ax in (ax_s, ax_p):
        boxes = {
            (round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in ax.patches if isinstance(p, Rectangle)
        }
        assert boxes == {w.ptx_a_fragment_row_col(thread, j) for j in range(8)}
    # Both panels colour a cell by the register R(j // 2) that packs it.
    for ax in (ax_s, ax_p):
        (image,) = [a for a in ax.get_children() if isinstance(a, AxesImage)]
        colours = np.asarray(image.get_array())
        for (row, col), text in p_cells.items():
            assert colours[row, col] == int(text[1:]) // 2


def test_the_fragment_figures_title_lists_the_pairs_packed():
    fig = figures.fragment_figure.__wrapped__()
    title = fig.get_suptitle()
    assert "R0 = (d8, d9); R1 = (d10, d11); R2 = (d12, d13); R3 = (d14, d15)" in title
    assert "T5" in title


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((5, 4, 64), r"k_step must be in 0\.\.3 for n = 64 \(got 4\)"),
        ((32, 0, 64), r"thread must be in warp 0 \(0\.\.31\)"),
        ((0, 0, 40), r"multiple of 16 in 16\.\.256 \(got 40\)"),
    ],
)
def test_the_fragment_figure_refuses_what_it_cannot_draw(args, message):
    with pytest.raises(ModelError, match=message):
        figures.fragment_figure.__wrapped__(*args)


def test_the_page_calls_are_kept_with_the_evidence():
    # course._kept.rendered: the page's call is drawn once per kernel and its rendering kept, keyed
    # by this package's source (tools/keep_renderings.py draws it once the lesson is registered).
    for make in (figures.online_softmax_figure, figures.fragment_figure):
        assert make.rendering_key().startswith(f"figure-course.lessons.day88.figures.{make.__name__}-")
