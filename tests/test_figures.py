"""Each figure builds, renders, and draws exactly what its model computes."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from course import figures
from course import wgmma_models as wm
from course.smem_budget import KERNEL_CONFIG, PipelineConfig, fit_report


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


def renders(fig: Figure) -> bool:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=40)
    return buffer.getvalue().startswith(b"\x89PNG")


# (a) Day 76 -----------------------------------------------------------------------------------
def test_tma_plan_is_the_kernels_grid_and_coordinates():
    plan = figures.tma_tile_plan()
    assert len(plan) == 16
    for t in plan:
        assert (t.x, t.y) == (
            t.block_x * 64,
            t.block_y * 64,
        )  # {blockIdx.x * kTileWidth, blockIdx.y * kTileHeight}
        assert (t.width, t.height) == (64, 64)
    assert {(t.block_x, t.block_y) for t in plan} == {(x, y) for x in range(4) for y in range(4)}


def test_tma_plan_follows_a_rebuilt_size():
    assert len(figures.tma_tile_plan(dim=512)) == 64


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
    assert renders(fig)


# (b) core matrices ---------------------------------------------------------------------------
def test_core_matrix_figure_draws_the_core_index_of_every_element():
    fig = figures.core_matrix_figure()
    (image,) = images(fig)
    assert np.array_equal(image, wm.core_offset_tile() // 64)
    joined = "\n".join(texts(fig))
    for mn, k in figures.CORE_EXAMPLES:
        assert f"(mn={mn}, k={k}) -> element {wm.core_offset(mn, k)}" in joined
    assert "core 63" in texts(fig)
    assert renders(fig)


# (c) descriptor ------------------------------------------------------------------------------
@pytest.mark.parametrize(("addr", "ks"), [(0x4000, 0), (0x4000, 3), (0x0, 1), (0x1230, 2)])
def test_descriptor_figure_draws_the_encoded_bits(addr, ks):
    fig = figures.descriptor_figure(addr, ks)
    desc = wm.encode_descriptor(addr) + wm.k_step_offset(ks)
    (image,) = images(fig)
    assert image.shape == (1, 64)
    assert int("".join(str(int(b)) for b in image[0]), 2) == desc  # bit 63 on the left
    d = wm.decode_descriptor(desc)
    joined = "\n".join(texts(fig))
    assert f"{d.start_address_bytes:#x} B" in joined
    assert "8 -> 128 B" in joined and "64 -> 1024 B" in joined
    assert f"{desc:#018x}" in fig.axes[0].get_title()


def test_descriptor_figure_defaults_to_the_address_measured_on_an_h200():
    fig = figures.descriptor_figure()
    assert fig.axes[0].get_title() == "tileDesc(0x400) = 0x0000004000080040"
    assert figures.DEFAULT_SMEM_ADDR == figures.MEASURED_H200["smA[0]"]
    assert renders(fig)


# (d) fragment --------------------------------------------------------------------------------
def test_fragment_figure_draws_the_warp_of_every_element_and_the_corner():
    fig = figures.fragment_figure()
    thread, register = wm.fragment_owner_tile()
    whole, corner = images(fig)
    assert np.array_equal(whole, thread // 32)
    assert np.array_equal(corner, thread[:16, :8] % 4)
    labels = texts(fig)
    assert "T0\nd0" in labels and "T0\nd1" in labels and "T0\nd2" in labels and "T31\nd3" in labels
    for row in range(16):
        for col in range(8):
            assert f"T{thread[row, col]}\nd{register[row, col]}" in labels
    assert renders(fig)


def test_fragment_figure_refuses_a_zoom_outside_the_tile():
    with pytest.raises(ValueError, match="zoom"):
        figures.fragment_figure((0, 8))


# (e) budget ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "config", [KERNEL_CONFIG, PipelineConfig(stages=4, tile_n=128), PipelineConfig(stages=12)]
)
def test_budget_figure_bars_are_the_card_limits_and_the_line_is_the_need(config):
    fig = figures.smem_budget_figure(config)
    ax = fig.axes[0]
    fits = fit_report(config)
    assert [bar.get_width() for bar in ax.patches] == [f.limit_bytes / 1024 for f in fits]
    need_line = ax.lines[0]
    assert need_line.get_xdata()[0] == config.total_bytes / 1024
    assert ax.lines[1].get_xdata()[0] == 48
    assert [t for t in texts(fig) if "stages max" in t] == [f"{f.max_stages} stages max" for f in fits]
    assert renders(fig)
