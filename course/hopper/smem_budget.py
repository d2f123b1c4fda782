"""The shared-memory budget of a multistage GEMM pipeline, per card.

Day 78's kernel keeps two stages of one A tile and one B tile in shared
memory::

    __shared__ __half smA[2][kTileM * kTileK];   // 2 x 64 x 64 x 2 B = 16 KiB
    __shared__ __half smB[2][kTileN * kTileK];   // 2 x 64 x 64 x 2 B = 16 KiB

2 x (8 KiB + 8 KiB) = 32 KiB. This module answers the page's question:
what happens to that budget with more stages or bigger tiles, and on which
card does it still fit?

Two ceilings matter (CUDA C++ Programming Guide, 5.1 "Compute
Capabilities", Table 31 and its footnote):

- 48 KiB: the most a block gets without asking. Statically sized
  ``__shared__`` arrays, like the kernel's, must fit under it. The kernel's
  32 KiB does.
- The per-block opt-in maximum (227 KiB on compute capability 9.0 and
  10.0, 163 KiB on 8.0, 99 KiB on 8.9 and 12.0). Going past 48 KiB needs
  *dynamic* shared memory (``extern __shared__``, the size given at launch)
  and an explicit opt-in, ``cudaFuncSetAttribute(kernel,
  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)``, before the launch.

The block's 1 KiB system reservation comes on top and is not part of the
per-block maximum: ``cuobjdump -res-usage`` on the H200 build reports
SHARED:33792 for the kernel, 32 KiB of tiles plus that 1 KiB, and the
instrumented kernel found smA[0] at shared address 0x400.

Only the operand stages are counted: this kernel's accumulator lives in
registers and it has no other shared data. A TMA pipeline would add an
8-byte mbarrier per stage, which does not change any answer here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._html import escape
from .._kept import kept
from ..errors import CourseError
from ..kernel.gpus import CARDS, Card

if TYPE_CHECKING:  # matplotlib is imported when the figure is drawn (a coding check imports this module)
    from ..picture import Picture

__all__ = [
    "STATIC_LIMIT_BYTES",
    "Fit",
    "PipelineConfig",
    "budget_table_html",
    "budget_widget",
    "fit_report",
    "fits_cards",
    "max_stages",
    "pipeline_bytes",
    "smem_budget_figure",
    "stage_bytes",
]

KIB = 1024
STATIC_LIMIT_BYTES = 48 * KIB  # CUDA guide Table 31, footnote 3: over 48 KB needs dynamic smem + opt-in
ELEM_SIZES = {"FP8 (1 B)": 1, "FP16 / BF16 (2 B)": 2, "TF32 / FP32 (4 B)": 4}


class BudgetError(CourseError):
    """A pipeline shape that makes no sense (a size below 1, not an integer)."""


def _positive(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise BudgetError(f"{name} must be an int (got {type(value).__name__} {value!r})")
    if value < 1:
        raise BudgetError(f"{name} must be at least 1 (got {value})")
    return value


def stage_bytes(tile_m: int, tile_n: int, tile_k: int, elem_bytes: int) -> int:
    """Bytes of one stage: one tile_m x tile_k A tile plus one tile_n x tile_k B tile."""
    for name, value in (
        ("tile_m", tile_m),
        ("tile_n", tile_n),
        ("tile_k", tile_k),
        ("elem_bytes", elem_bytes),
    ):
        _positive(name, value)
    return (tile_m * tile_k + tile_n * tile_k) * elem_bytes


def pipeline_bytes(
    stages: int, tile_m: int = 64, tile_n: int = 64, tile_k: int = 64, elem_bytes: int = 2
) -> int:
    """Bytes of a ``stages``-deep pipeline; the defaults are the Day 78 kernel's tiles."""
    return _positive("stages", stages) * stage_bytes(tile_m, tile_n, tile_k, elem_bytes)


@dataclass(frozen=True)
class PipelineConfig:
    """A pipeline shape: stages of (A tile + B tile)."""

    stages: int = 2  # double buffered
    tile_m: int = 64  # rows of A per stage
    tile_n: int = 64  # columns of B per stage
    tile_k: int = 64  # K depth per stage
    elem_bytes: int = 2  # __half

    def __post_init__(self) -> None:
        for name in ("stages", "tile_m", "tile_n", "tile_k", "elem_bytes"):
            _positive(name, getattr(self, name))

    @property
    def stage_bytes(self) -> int:
        return stage_bytes(self.tile_m, self.tile_n, self.tile_k, self.elem_bytes)

    @property
    def total_bytes(self) -> int:
        return self.stages * self.stage_bytes

    @property
    def needs_dynamic(self) -> bool:
        """Over 48 KiB: static ``__shared__`` arrays cannot hold it."""
        return self.total_bytes > STATIC_LIMIT_BYTES

    def describe(self) -> str:
        return (
            f"{self.stages} x ({self.tile_m}x{self.tile_k} + {self.tile_n}x{self.tile_k}) "
            f"x {self.elem_bytes} B = {_kib(self.total_bytes)}"
        )


def _kib(n: int) -> str:
    return f"{n // KIB} KiB" if n % KIB == 0 else f"{n / KIB:.1f} KiB"


def max_stages(card: Card, tile_m: int = 64, tile_n: int = 64, tile_k: int = 64, elem_bytes: int = 2) -> int:
    """The deepest pipeline of these tiles that fits the card's per-block maximum (0 if none)."""
    return card.smem_per_block_bytes // stage_bytes(tile_m, tile_n, tile_k, elem_bytes)


@dataclass(frozen=True)
class Fit:
    """One card's verdict on one configuration."""

    card: Card
    needed_bytes: int
    limit_bytes: int
    max_stages: int  # deepest pipeline of the same tiles that fits this card
    feature: str | None = None  # what the kernel needs besides memory ("wgmma"), if anything

    @property
    def fits(self) -> bool:
        return self.needed_bytes <= self.limit_bytes

    @property
    def runs(self) -> bool:
        """The card has the kernel's feature (memory aside)."""
        return self.feature is None or self.card.has(self.feature)

    @property
    def needs_opt_in(self) -> bool:
        return self.needed_bytes > STATIC_LIMIT_BYTES

    @property
    def verdict(self) -> str:
        if not self.fits:
            memory = f"does not fit: {_kib(self.needed_bytes)} > {_kib(self.limit_bytes)}"
        elif self.needs_opt_in:
            memory = "fits with dynamic shared memory and the opt-in"
        else:
            memory = "fits (static __shared__ is fine)"
        if not self.runs:
            # "fits, but": a contrast; "does not fit, and": one more reason it cannot run.
            joint = "but" if self.fits else "and"
            return f"{memory}, {joint} the card has no {self.feature}: the kernel cannot run there at all"
        return memory


def fit_report(
    config: PipelineConfig, cards: tuple[Card, ...] | None = None, feature: str | None = None
) -> list[Fit]:
    """For each card of the table: does ``config`` fit, and how deep could it go."""
    cards = CARDS if cards is None else cards
    return [
        Fit(
            card=card,
            needed_bytes=config.total_bytes,
            limit_bytes=card.smem_per_block_bytes,
            max_stages=max_stages(card, config.tile_m, config.tile_n, config.tile_k, config.elem_bytes),
            feature=feature,
        )
        for card in cards
    ]


def fits_cards(config: PipelineConfig) -> list[Card]:
    """The cards ``config`` fits (by shared memory alone; whether they run wgmma is gpus.py's question)."""
    return [fit.card for fit in fit_report(config) if fit.fits]


def budget_table_html(config: PipelineConfig, feature: str | None = None) -> str:
    """The calculator's answer as an HTML table (every string escaped)."""
    e = escape
    cell = "text-align:left;vertical-align:top;padding:2px 8px"
    rows = []
    fits = fit_report(config, feature=feature)
    for fit in fits:
        color = "#1a7f37" if fit.fits and fit.runs else ("#9a6700" if fit.fits else "#b00020")
        rows.append(
            f"<tr style='color:{color}'><td style='{cell};white-space:nowrap'>{e(fit.card.name)}</td>"
            f"<td style='{cell}'>{e(fit.card.cc_str)}</td>"
            f"<td style='{cell};white-space:nowrap'>{e(_kib(fit.limit_bytes))}</td>"
            f"<td style='{cell}'>{e(fit.verdict)}</td><td style='{cell}'>{fit.max_stages}</td></tr>"
        )
    if not any(f.fits for f in fits):
        note = (
            f"{_kib(config.total_bytes)} is more than any card gives one block: no opt-in helps. Use fewer "
            "stages or smaller tiles (the last column says how deep each card can go with these tiles)."
        )
    elif config.needs_dynamic:
        note = (
            f"{_kib(config.total_bytes)} is over the 48 KiB a block gets without asking: the tiles must be "
            "dynamic shared memory (extern __shared__, size given at launch) and the kernel must opt in "
            "with cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), "
            "on the cards where it fits."
        )
    else:
        note = f"{_kib(config.total_bytes)} is under the 48 KiB static limit: plain __shared__ arrays work."
    # line-height: shown in a widget, whose HTML takes ipywidgets' 28 px line height (double spacing).
    return (
        "<div style='line-height:1.4'>"
        f"<p><b>{e(config.describe())}</b> (one stage: {e(_kib(config.stage_bytes))})</p>"
        f"<table class='course-smem'><tr><th style='{cell}'>Card</th><th style='{cell}'>CC</th>"
        f"<th style='{cell}'>Per-block maximum</th><th style='{cell}'>This configuration</th>"
        f"<th style='{cell}'>Deepest pipeline of these tiles</th></tr>"
        f"{''.join(rows)}</table><p>{e(note)}</p></div>"
    )


@kept
def smem_budget_figure(config: PipelineConfig, feature: str | None = None) -> Picture:
    """Each card's per-block maximum as a bar, the configuration's need as a line."""
    fits = fit_report(config, feature=feature)
    from ..picture import picture  # heavy: matplotlib, only when the figure is drawn

    fig = picture(figsize=(8, 3.8))
    ax = fig.add_subplot()
    names = [f.card.name for f in fits]
    limits = [f.limit_bytes / 1024 for f in fits]
    colors = ["#59a14f" if f.fits and f.runs else ("#edc948" if f.fits else "#e15759") for f in fits]
    ax.barh(names, limits, color=colors)
    need = config.total_bytes / 1024
    ax.axvline(need, color="black", linewidth=2, label=f"this pipeline: {need:g} KiB")
    ax.axvline(
        STATIC_LIMIT_BYTES / 1024, color="grey", linestyle="--", label="48 KiB: static __shared__ limit"
    )
    for y, f in enumerate(fits):
        extra = "" if f.runs else f", no {f.feature}"
        ax.text(f.limit_bytes / 1024 + 2, y, f"{f.max_stages} stages max{extra}", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(max(limits), need) * 1.35)
    ax.set_xlabel("shared memory per thread block, KiB (CUDA C++ Programming Guide, compute capabilities)")
    ax.set_title(config.describe(), fontsize=10)
    fig.legend(loc="outside lower center", ncols=2, fontsize=8)
    return fig


def budget_widget(config: PipelineConfig | None = None, feature: str | None = None) -> Any:
    """The calculator: sliders and dropdowns, the table and the bar chart updating below.

    ``config`` is where it starts (a lesson passes its kernel's pipeline);
    ``feature`` marks the cards that lack it ("wgmma"). Returns an
    ``ipywidgets.VBox`` subclass whose controls are attributes (``stages``,
    ``tile_m``, ``tile_n``, ``tile_k``, ``elem_bytes``), whose answer is
    ``output.value`` (HTML) and whose chart is ``chart.value`` (PNG bytes),
    so it can be driven headless.
    """
    # heavy: ipywidgets, only on a page
    import ipywidgets as widgets

    from .._live import LiveBox  # heavy: ipywidgets (course._live), only on a page

    start = config or PipelineConfig()

    class BudgetCalculator(LiveBox):
        def __init__(self) -> None:
            style = {"description_width": "7em"}
            self.stages = widgets.IntSlider(
                value=start.stages, min=1, max=12, description="stages", style=style
            )
            self.tile_m = widgets.Dropdown(
                options=sorted({64, 128, 256, start.tile_m}),
                value=start.tile_m,
                description="tile M",
                style=style,
            )
            self.tile_n = widgets.Dropdown(
                options=sorted({64, 128, 192, 256, start.tile_n}),
                value=start.tile_n,
                description="tile N",
                style=style,
            )
            self.tile_k = widgets.Dropdown(
                options=sorted({32, 64, 128, start.tile_k}),
                value=start.tile_k,
                description="tile K",
                style=style,
            )
            self.elem_bytes = widgets.Dropdown(
                options=list(ELEM_SIZES.items()), value=start.elem_bytes, description="element", style=style
            )
            self.output = widgets.HTML()
            self.chart = widgets.Image(format="png", layout=widgets.Layout(max_width="720px"))
            controls = [self.stages, self.tile_m, self.tile_n, self.tile_k, self.elem_bytes]
            super().__init__(children=[*controls, self.output, self.chart])
            self.add_class("course-budget")
            for control in controls:
                control.observe(self._update, names="value")
            self._update()

        @property
        def config(self) -> PipelineConfig:
            return PipelineConfig(
                self.stages.value,
                self.tile_m.value,
                self.tile_n.value,
                self.tile_k.value,
                self.elem_bytes.value,
            )

        def _update(self, _change: object = None) -> None:
            self.output.value = budget_table_html(self.config, feature)
            self.chart.value = smem_budget_figure(self.config, feature).png()

    return BudgetCalculator()
