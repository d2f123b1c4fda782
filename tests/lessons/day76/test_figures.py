"""Day 76's figure builds, renders as an image, and draws exactly the kernel's tile plan."""

from __future__ import annotations

import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from course.errors import CourseError
from course.lessons import get_lesson
from course.lessons.day76 import figures
from course.picture import Picture

LESSON = get_lesson("day76")


@pytest.fixture(autouse=True)
def _agg_backend():
    # The figures never touch pyplot; Agg makes sure nothing could open a window either.
    matplotlib.use("Agg")


def images(fig: Figure) -> list[np.ndarray]:
    return [
        np.asarray(artist.get_array())
        for ax in fig.axes
        for artist in ax.get_children()
        if isinstance(artist, AxesImage)
    ]


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (it must be one)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_tma_plan_is_the_kernels_grid_and_coordinates():
    consts = LESSON.constants()
    assert (consts["kTileWidth"], consts["kTileHeight"], consts["kGmemWidth"]) == (64, 64, 256)
    plan = figures.tma_tile_plan()
    assert len(plan) == 16
    for t in plan:
        # {blockIdx.x * kTileWidth, blockIdx.y * kTileHeight}
        assert (t.x, t.y) == (t.block_x * 64, t.block_y * 64)
        assert (t.width, t.height) == (64, 64)
    assert {(t.block_x, t.block_y) for t in plan} == {(x, y) for x in range(4) for y in range(4)}


def test_tma_plan_follows_a_rebuilt_size():
    plan = figures.tma_tile_plan(dim=512)
    assert len(plan) == 64
    assert max(t.x for t in plan) == max(t.y for t in plan) == 512 - 64


def test_tma_plan_refuses_a_size_that_is_not_whole_tiles():
    with pytest.raises(
        CourseError, match=r"the matrix \(100 x 100\) must be a whole number of 64 x 64 tiles"
    ):
        figures.tma_tile_plan(dim=100)


def test_tma_owner_map_covers_every_element_once():
    owner = figures.tma_owner_map(figures.tma_tile_plan())
    assert owner.shape == (256, 256)
    assert (owner >= 0).all()
    assert np.array_equal(np.bincount(owner.ravel()), np.full(16, 64 * 64))
    assert owner[0, 64] == 1 and owner[64, 0] == 4  # x (column) is blockIdx.x


def test_tma_figure_draws_the_owner_map_and_labels_each_tile():
    fig = figures.tma_tiles_figure()
    (image,) = images(fig)
    assert np.array_equal(image, figures.tma_owner_map(figures.tma_tile_plan()))
    labels = texts(fig)
    for t in figures.tma_tile_plan():
        assert f"block ({t.block_x},{t.block_y})\n{{x={t.x}, y={t.y}}}" in labels
    assert len(labels) == 16
    assert fig.axes[0].get_title().startswith("256 x 256 floats, 16 tiles of 64 x 64")


def test_tma_figure_follows_a_rebuilt_size():
    fig = figures.tma_tiles_figure(dim=512)
    (image,) = images(fig)
    assert image.shape == (512, 512)
    assert len(texts(fig)) == 64


def test_the_figure_is_a_picture_jupyter_shows_as_a_png():
    fig = figures.tma_tiles_figure()
    assert isinstance(fig, Picture)
    width, height = png_size(fig._repr_png_())
    assert width > 300 and height > 300, (width, height)
    assert not repr(fig).startswith("<Figure size")
    assert repr(fig).startswith("Picture(") and f"{width}x{height} px" in repr(fig)
