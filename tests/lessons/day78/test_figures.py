"""Day 78's figures build, render as images, and draw exactly what the models compute."""

from __future__ import annotations

import re
import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from course.hopper import wgmma as w
from course.lessons.day78 import figures
from course.lessons.day78 import models as m
from course.picture import Picture


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


# --- every figure is a picture a notebook shows --------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [figures.core_matrix_figure, figures.descriptor_figure, figures.fragment_figure],
    ids=lambda f: f.__name__,
)
def test_each_figure_is_a_picture_jupyter_shows_as_a_png(make):
    fig = make()
    assert isinstance(fig, Picture)
    width, height = png_size(fig._repr_png_())
    assert width > 300 and height > 300, (width, height)
    assert not repr(fig).startswith("<Figure size")
    assert repr(fig).startswith("Picture(") and f"{width}x{height} px" in repr(fig)


# --- core matrices ---------------------------------------------------------------------------
def test_core_matrix_figure_draws_the_core_index_of_every_element():
    fig = figures.core_matrix_figure()
    image, corner = images(fig)
    assert np.array_equal(image, m.core_offset_tile() // 64)
    # The zoom panel is the same tile's top-left corner, where five of the examples are numbered.
    z = figures.ZOOM + 1
    assert np.array_equal(corner, (m.core_offset_tile() // 64)[:z, :z])
    zoom = fig.axes[2]
    numbered = {t.get_text() for t in zoom.texts if t.get_text().isdigit()}
    in_corner = [i for i, (mn, k) in enumerate(figures.CORE_EXAMPLES, 1) if mn <= z - 3 and k <= z - 3]
    assert numbered == {str(i) for i in in_corner} and len(in_corner) == 5
    joined = "\n".join(texts(fig))
    for mn, k in figures.CORE_EXAMPLES:
        offset = m.core_offset(mn, k)
        assert f"(mn={mn}, k={k}) -> element {offset}, byte {2 * offset}" in joined
    labels = texts(fig)
    for core in range(64):
        assert f"core {core}" in labels


def test_core_matrix_figure_follows_the_examples_it_is_given():
    joined = "\n".join(texts(figures.core_matrix_figure(((5, 9),))))
    assert f"1: (mn=5, k=9) -> element {m.core_offset(5, 9)}" in joined
    assert "(mn=63, k=63)" not in joined


# --- descriptor ------------------------------------------------------------------------------
@pytest.mark.parametrize(("addr", "ks"), [(0x4000, 0), (0x4000, 3), (0x0, 1), (0x1230, 2)])
def test_descriptor_figure_draws_the_encoded_bits(addr, ks):
    fig = figures.descriptor_figure(addr, ks)
    # tileDesc(addr) + ks * (2 * 128 >> 4), from the ISA's encoding rather than the model.
    desc = w.encode_descriptor(addr, 128, 1024) + ks * (2 * 128 >> 4)
    (image,) = images(fig)
    assert image.shape == (1, 64)
    assert int("".join(str(int(b)) for b in image[0]), 2) == desc  # bit 63 on the left
    d = w.decode_descriptor(desc)
    joined = "\n".join(texts(fig))
    assert f"{d.start_address_field:#x} -> {d.start_address_bytes:#x} B" in joined
    assert "8 -> 128 B" in joined and "64 -> 1024 B" in joined
    assert "0 (none)" in joined
    for field in w.DESCRIPTOR_FIELDS:
        assert f"{field.name} [{field.hi}:{field.lo}]" in joined
    assert f"{desc:#018x}" in fig.axes[0].get_title()


def test_descriptor_figure_defaults_to_the_address_measured_on_an_h200():
    fig = figures.descriptor_figure()
    assert fig.axes[0].get_title() == "tileDesc(0x400) = 0x0000004000080040"
    assert figures.DEFAULT_SMEM_ADDR == figures.MEASURED_H200["smA[0]"]


def test_descriptor_bits_put_bit_63_first():
    assert figures.descriptor_bits(1 << 63)[0].tolist() == [1] + [0] * 63
    assert figures.descriptor_bits(1)[0].tolist() == [0] * 63 + [1]
    desc = 0x4000080040
    bits = figures.descriptor_bits(desc)
    assert bits.shape == (1, 64) and int("".join(map(str, bits[0])), 2) == desc


# --- fragment --------------------------------------------------------------------------------
def test_fragment_figure_draws_the_warp_of_every_element_and_the_corner():
    fig = figures.fragment_figure()
    thread, register = m.fragment_owner_tile()
    whole, corner = images(fig)
    assert np.array_equal(whole, thread // 32)
    assert np.array_equal(corner, thread[:16, :8] % 4)
    labels = texts(fig)
    assert "T0\nd0" in labels and "T0\nd1" in labels and "T0\nd2" in labels and "T31\nd3" in labels
    for row in range(16):
        for col in range(8):
            assert f"T{thread[row, col]}\nd{register[row, col]}" in labels


def test_fragment_figure_zooms_where_it_is_asked():
    fig = figures.fragment_figure((4, 4))
    thread, register = m.fragment_owner_tile()
    _, corner = images(fig)
    assert corner.shape == (4, 4)
    labels = [t for t in texts(fig) if t.startswith("T") and "\nd" in t]
    assert sorted(labels) == sorted(f"T{thread[r, c]}\nd{register[r, c]}" for r in range(4) for c in range(4))


@pytest.mark.parametrize("zoom", [(0, 8), (16, 65)])
def test_fragment_figure_refuses_a_zoom_outside_the_tile(zoom):
    message = re.escape(f"zoom must be (rows, cols) within the 64x64 tile (got {zoom})")
    with pytest.raises(w.ModelError, match=message):
        figures.fragment_figure(zoom)
