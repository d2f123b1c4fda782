"""The shared-memory budget: the kernel's 32 KiB, per-card fits, and the calculator."""

from __future__ import annotations

import re

import matplotlib
import pytest

from course import _paths, gpus
from course import smem_budget as sb
from course.constants import kernel_constants

KERNEL = _paths.kernels_dir() / "wgmma_gemm.cu"


def test_default_is_the_kernels_own_32_kib():
    source = KERNEL.read_text(encoding="utf-8")
    consts = kernel_constants(KERNEL)
    assert "__shared__ __half smA[2][kTileM * kTileK];" in source
    assert "__shared__ __half smB[2][kTileN * kTileK];" in source
    config = sb.KERNEL_CONFIG
    assert (config.tile_m, config.tile_n, config.tile_k) == (
        consts["kTileM"],
        consts["kTileN"],
        consts["kTileK"],
    )
    assert config.stages == 2 and config.elem_bytes == 2
    assert sb.stage_bytes(64, 64, 64, 2) == 8 * 1024 + 8 * 1024
    assert config.total_bytes == sb.pipeline_bytes(2) == 32 * 1024
    assert not config.needs_dynamic  # static __shared__ under 48 KiB, as the kernel has it


def test_kernel_config_fits_every_card():
    assert sb.fits_cards() == list(gpus.CARDS)


@pytest.mark.parametrize(
    ("config", "fits"),
    [
        (
            sb.PipelineConfig(stages=4, tile_n=128),
            ["H100/H200", "B200/GB200", "RTX 50", "L4 / RTX 40", "A100"],
        ),
        (sb.PipelineConfig(stages=4, tile_m=128, tile_n=128), ["H100/H200", "B200/GB200", "A100"]),
        (sb.PipelineConfig(stages=7, tile_m=128, tile_n=128), ["H100/H200", "B200/GB200"]),
        (sb.PipelineConfig(stages=8, tile_m=128, tile_n=128), []),
    ],
)
def test_which_cards_a_configuration_fits(config, fits):
    assert [card.name for card in sb.fits_cards(config)] == fits


def test_deepest_pipeline_per_card():
    report = {f.card.name: f for f in sb.fit_report(sb.PipelineConfig(tile_m=128, tile_n=128))}
    # one stage = (128*64 + 128*64) * 2 B = 32 KiB
    assert report["H100/H200"].max_stages == 227 // 32 == 7
    assert report["A100"].max_stages == 163 // 32 == 5
    assert report["RTX 50"].max_stages == 99 // 32 == 3
    assert sb.max_stages(gpus.CARDS[0]) == 227 // 16


def test_over_48_kib_needs_dynamic_shared_memory_and_the_opt_in():
    config = sb.PipelineConfig(stages=4)  # 64 KiB
    assert config.needs_dynamic
    html = sb.budget_table_html(config)
    assert "cudaFuncSetAttribute" in html and "cudaFuncAttributeMaxDynamicSharedMemorySize" in html
    assert all(f.needs_opt_in for f in sb.fit_report(config))
    assert "under the 48 KiB static limit" in sb.budget_table_html()


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"stages": 0}, ValueError),
        ({"tile_m": -64}, ValueError),
        ({"elem_bytes": 2.0}, TypeError),
        ({"stages": True}, TypeError),
    ],
)
def test_bad_configurations_are_refused(kwargs, error):
    with pytest.raises(error, match="must be"):
        sb.PipelineConfig(**kwargs)


def test_calculator_widget_updates_its_table_headless():
    widget = sb.budget_widget()
    assert "2 x (64x64 + 64x64) x 2 B = 32 KiB" in widget.output.value
    widget.stages.value = 8
    widget.tile_m.value = 128
    assert "8 x (128x64 + 64x64) x 2 B = 192 KiB" in widget.output.value
    rows = re.findall(r"<tr( style=\"color:#b00020\")?><td>([^<]+)</td>", widget.output.value)
    assert [name for style, name in rows if style] == ["RTX 50", "L4 / RTX 40", "A100"]
    widget.elem_bytes.value = 1
    assert "x 1 B = 96 KiB" in widget.output.value
    assert widget.config == sb.PipelineConfig(8, 128, 64, 64, 1)


def test_budget_plot_is_the_figure():
    matplotlib.use("Agg")
    fig = sb.budget_plot(sb.PipelineConfig(stages=3))
    assert fig.axes[0].lines[0].get_xdata()[0] == 48
