"""The shared-memory budget calculator (course/hopper/smem_budget.py): per-card fits, the
48 KiB static limit and the opt-in, a kernel's feature, the table, the chart
and the widget. (Day 78's own pipeline, models.kernel_config(), is tested
with its models in tests/lessons/day78/test_models.py.)
"""

from __future__ import annotations

import re
import struct

import matplotlib
import pytest

from course.errors import CourseError
from course.hopper import smem_budget as sb
from course.kernel import gpus
from course.picture import Picture

GREEN, AMBER, RED = "#1a7f37", "#9a6700", "#b00020"  # the table's row colours


def row_colors(html: str) -> dict[str, str]:
    """Card name -> the colour of its row in the calculator's table."""
    return dict(
        (name, color)
        for color, name in re.findall(r"<tr style='color:(#[0-9a-f]{6})'><td[^>]*>([^<]+)</td>", html)
    )


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    return struct.unpack(">II", data[16:24])


# --- the arithmetic ---------------------------------------------------------------------------
def test_a_stage_is_one_a_tile_and_one_b_tile():
    assert sb.stage_bytes(64, 64, 64, 2) == 8 * 1024 + 8 * 1024
    assert sb.stage_bytes(128, 64, 32, 1) == 128 * 32 + 64 * 32
    assert sb.pipeline_bytes(2) == 32 * 1024  # defaults: 64x64x64 FP16 tiles
    assert sb.pipeline_bytes(3, 128, 128, 64, 2) == 3 * 32 * 1024
    config = sb.PipelineConfig(stages=3, tile_m=128, tile_n=256, tile_k=32, elem_bytes=4)
    assert config.stage_bytes == (128 * 32 + 256 * 32) * 4
    assert config.total_bytes == 3 * config.stage_bytes
    assert config.describe() == "3 x (128x32 + 256x32) x 4 B = 144 KiB"


@pytest.mark.parametrize(
    ("config", "fits"),
    [
        (sb.PipelineConfig(), ["H100/H200", "B200/GB200", "RTX 50", "L4 / RTX 40", "A100"]),
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
    assert [f.limit_bytes for f in report.values()] == [c.smem_per_block_bytes for c in gpus.CARDS]


def test_over_48_kib_needs_dynamic_shared_memory_and_the_opt_in():
    config = sb.PipelineConfig(stages=4)  # 64 KiB
    assert config.needs_dynamic
    html = sb.budget_table_html(config)
    assert "cudaFuncSetAttribute" in html and "cudaFuncAttributeMaxDynamicSharedMemorySize" in html
    assert all(f.needs_opt_in for f in sb.fit_report(config))
    assert {f.verdict for f in sb.fit_report(config)} == {"fits with dynamic shared memory and the opt-in"}
    at_the_limit = sb.PipelineConfig(stages=3)  # exactly 48 KiB: still static
    assert not at_the_limit.needs_dynamic
    under = sb.budget_table_html(sb.PipelineConfig())
    assert "32 KiB is under the 48 KiB static limit" in under and "cudaFuncSetAttribute" not in under


def test_a_size_that_fits_no_card_says_no_opt_in_helps():
    config = sb.PipelineConfig(stages=8, tile_m=128, tile_n=128)  # 256 KiB > 227 KiB
    html = sb.budget_table_html(config)
    assert "256 KiB is more than any card gives one block: no opt-in helps" in html
    assert "cudaFuncSetAttribute" not in html  # no advice to opt in to what cannot fit
    assert set(row_colors(html).values()) == {RED}
    assert all(
        f.verdict == f"does not fit: 256 KiB > {f.card.smem_per_block_kib} KiB" for f in sb.fit_report(config)
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stages": 0}, r"^stages must be at least 1 \(got 0\)$"),
        ({"tile_m": -64}, r"^tile_m must be at least 1 \(got -64\)$"),
        ({"elem_bytes": 2.0}, r"^elem_bytes must be an int \(got float 2\.0\)$"),
        ({"stages": True}, r"^stages must be an int \(got bool True\)$"),
    ],
)
def test_bad_configurations_are_refused_by_name(kwargs, message):
    with pytest.raises(sb.BudgetError, match=message) as info:
        sb.PipelineConfig(**kwargs)
    assert isinstance(info.value, CourseError)
    assert not isinstance(info.value, ValueError | TypeError)


def test_bad_tile_sizes_are_refused_by_the_functions_too():
    with pytest.raises(sb.BudgetError, match=r"tile_k must be at least 1 \(got 0\)"):
        sb.stage_bytes(64, 64, 0, 2)
    with pytest.raises(sb.BudgetError, match=r"stages must be at least 1 \(got -2\)"):
        sb.pipeline_bytes(-2)


# --- a kernel's feature --------------------------------------------------------------------------
def test_a_card_lacking_the_feature_is_not_shown_as_plainly_fitting():
    config = sb.PipelineConfig()  # 32 KiB: fits every card by memory
    plain = sb.fit_report(config)
    assert all(f.fits and f.runs and f.verdict == "fits (static __shared__ is fine)" for f in plain)
    report = {f.card.name: f for f in sb.fit_report(config, feature="wgmma")}
    assert report["H100/H200"].runs and report["H100/H200"].verdict == "fits (static __shared__ is fine)"
    for card in gpus.CARDS:
        if card.has("wgmma"):
            continue
        f = report[card.name]
        assert f.fits and not f.runs
        assert f.verdict == (
            "fits (static __shared__ is fine), but the card has no wgmma: the kernel cannot run there at all"
        )
    colors = row_colors(sb.budget_table_html(config, feature="wgmma"))
    assert colors == {c.name: GREEN if c.has("wgmma") else AMBER for c in gpus.CARDS}
    assert set(row_colors(sb.budget_table_html(config)).values()) == {GREEN}


def test_without_memory_the_feature_does_not_make_a_card_fit():
    config = sb.PipelineConfig(stages=8, tile_m=128, tile_n=128)
    report = {f.card.name: f for f in sb.fit_report(config, feature="wgmma")}
    assert not report["H100/H200"].fits and report["H100/H200"].runs
    # Two reasons it cannot run, joined by "and" (a "but" would set them against each other).
    assert report["A100"].verdict.startswith("does not fit: 256 KiB > 163 KiB, and the card has no wgmma")


def test_the_budget_table_is_single_spaced_inside_its_widget():
    html = sb.budget_table_html(sb.PipelineConfig(stages=2))
    assert html.startswith("<div style='line-height:1.4'>") and html.endswith("</div>")


# --- the chart -----------------------------------------------------------------------------------
def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.mark.parametrize(
    "config",
    [sb.PipelineConfig(), sb.PipelineConfig(stages=4, tile_n=128), sb.PipelineConfig(stages=12)],
)
def test_budget_figure_bars_are_the_card_limits_and_the_line_is_the_need(config):
    matplotlib.use("Agg")
    fig = sb.smem_budget_figure(config)
    ax = fig.axes[0]
    fits = sb.fit_report(config)
    assert [bar.get_width() for bar in ax.patches] == [f.limit_bytes / 1024 for f in fits]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f.card.name for f in fits]
    need_line = ax.lines[0]
    assert need_line.get_xdata()[0] == config.total_bytes / 1024
    assert ax.lines[1].get_xdata()[0] == 48
    assert [t for t in _texts(fig) if "stages max" in t] == [f"{f.max_stages} stages max" for f in fits]
    assert ax.get_title() == config.describe()


def test_budget_figure_marks_the_cards_without_the_feature():
    matplotlib.use("Agg")
    config = sb.PipelineConfig()
    plain = sb.smem_budget_figure(config)
    marked = sb.smem_budget_figure(config, feature="wgmma")
    labels = [t for t in _texts(marked) if "stages max" in t]
    assert labels == [
        f"{f.max_stages} stages max" + ("" if f.card.has("wgmma") else ", no wgmma")
        for f in sb.fit_report(config)
    ]
    plain_colors = [bar.get_facecolor() for bar in plain.axes[0].patches]
    marked_colors = [bar.get_facecolor() for bar in marked.axes[0].patches]
    assert len(set(plain_colors)) == 1  # every card fits and runs
    for card, before, after in zip(gpus.CARDS, plain_colors, marked_colors, strict=True):
        assert (before == after) == card.has("wgmma"), card.name


def test_budget_figure_is_a_picture():
    fig = sb.smem_budget_figure(sb.PipelineConfig(stages=3))
    assert isinstance(fig, Picture)
    width, height = png_size(fig._repr_png_())
    assert width > 300 and height > 300
    assert not repr(fig).startswith("<Figure size")


# --- the widget ----------------------------------------------------------------------------------
def test_calculator_widget_updates_its_table_headless():
    widget = sb.budget_widget()
    assert widget.config == sb.PipelineConfig()
    assert "2 x (64x64 + 64x64) x 2 B = 32 KiB" in widget.output.value
    widget.stages.value = 8
    widget.tile_m.value = 128
    assert "8 x (128x64 + 64x64) x 2 B = 192 KiB" in widget.output.value
    colors = row_colors(widget.output.value)
    assert [name for name, color in colors.items() if color == RED] == ["RTX 50", "L4 / RTX 40", "A100"]
    widget.elem_bytes.value = 1
    assert "x 1 B = 96 KiB" in widget.output.value
    assert widget.config == sb.PipelineConfig(8, 128, 64, 64, 1)


def test_calculator_chart_is_a_png_that_changes_with_a_control():
    widget = sb.budget_widget()
    first = widget.chart.value
    width, height = png_size(first)
    assert width > 300 and height > 300
    assert first == sb.smem_budget_figure(widget.config).png()
    widget.stages.value = 6
    second = widget.chart.value
    assert second[:8] == b"\x89PNG\r\n\x1a\n" and second != first
    assert second == sb.smem_budget_figure(sb.PipelineConfig(stages=6)).png()


def test_calculator_starts_from_a_kernels_pipeline_and_marks_its_feature():
    start = sb.PipelineConfig(stages=3, tile_m=128, tile_n=64, tile_k=32, elem_bytes=1)
    widget = sb.budget_widget(start, feature="wgmma")
    assert widget.config == start
    assert (widget.stages.value, widget.tile_m.value, widget.tile_k.value) == (3, 128, 32)
    assert "but the card has no wgmma" in widget.output.value
    assert widget.chart.value == sb.smem_budget_figure(start, feature="wgmma").png()
