"""Day 87's tables and pictures for the page, rendered from the benchmark recording alone and from
the accumulator's model (``accuracy``).

- ``model_figure``: the model accumulator's error against K, one chain against promoted every 128;
- ``curves_figure``: the measured accuracy curves, the fitted model dashed beside the kernel's;
  both draw D's own FP16 rounding (``accuracy.FP16_FLOOR``, computed on the CPU) as a grey dotted line;

- ``promotion``: the promoting build's rate at each interval beside the default build, and at P=1
  beside cuBLASLt's default, each row with its tile and the host's pick per size
  (``records.promotion_table``, ``records.tile_checks``);
- ``speed_against_lt``: the default build at each recorded size, its ratio against its like only
  (``bench.LIKE``: cuBLASLt with fast accumulation; neither promotes); the speed section shows it
  (``speed``, its ``BenchSpec.table``) in place of the engine's size table;
- ``block_speed``: the block-scaled build beside the default build, the promoting build at P=1 and
  cuBLASLt (``records.block_table``);
- ``skewed_accuracy``: per-tensor against block scales on skewed inputs (``records.block_accuracy``).

Without a recording each says so and shows no number.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Any

from ..._kept import rendered
from ...bench.result import BenchResult, bench_dir, load
from ...bench.spec import KERNEL
from ...errors import CourseError
from ..day86.figures import Table  # the ladder's titled table (HTML on a page, text in a terminal)
from . import LESSON, accuracy, bench, chooser
from .bench import (
    ACCURACY_KS,
    ACCURACY_MN,
    CURVE_KERNELS,
    DISTS,
    LT,
    LT_BLOCK,
    METRICS,
    REFERENCES,
    SCALINGS,
)
from .records import accuracy_curve, block_accuracy, block_table, promotion_table, tile_checks

if TYPE_CHECKING:  # matplotlib is imported when a picture is drawn, not when its kept rendering is shown
    from ...picture import Picture

_NOT_RECORDED = (
    "Not recorded yet: this has not been measured on a real GPU for this page, so there are no numbers "
    "to show here. On an H100 or H200, `python -m course bench day87` measures it."
)


def _recording() -> BenchResult | None:
    return load(LESSON.id)


def _where(result: BenchResult) -> str:
    return f"Recorded on {result.device} ({result.sm_count} SMs) on {result.recorded_at[:10]}."


def promotion() -> Table:
    """The promoting build at each interval, beside the default build, and at P=1 beside cuBLASLt's
    default (its like: both promote); each row says its tile: the one the host picked for the size
    (``chooser.choose_promoting``), and the other at P=1 where the recording timed it."""
    result = _recording()
    rows = promotion_table(result) if result is not None else []
    if result is None or not rows:
        return Table(_NOT_RECORDED, (), ())
    body = tuple(
        (
            str(r.n),
            r.tile if r.chosen else f"{r.tile} (not picked)",
            "never" if r.p == 0 else f"every {128 * r.p} of K (P={r.p})",
            f"{r.rate:,.0f}",
            f"{r.ratio:.2f}x",
            f"{r.vs_lt:.2f}x" if r.p == 1 else "",
        )
        for r in rows
    )
    checks = tile_checks(result)
    model = (
        "the one whose busiest SM finishes first, counting its rounds of tiles on the SMs and "
        f"{bench.WIDE}'s speed per unit of work, {chooser.TILE_SPEED[bench.WIDE]:g}x {chooser.SQUARE}'s (fitted "
        "to the H100's first run of both)"
    )
    if checks:
        how = f" The tile is the host's pick for the size: {model}." + "".join(
            f" At N={c.n} the model put {bench.WIDE} at {c.predicted:.2f}x the {chooser.SQUARE}"
            + (f" and the batch measured {c.measured:.2f}x" if c.measured is not None else "")
            + f": {c.chosen}."
            for c in checks
        )
    else:
        picks = ", ".join(
            f"{chooser.choose_promoting(n, n, result.sm_count)} at N={n}"
            for n, _ in groupby(r.n for r in rows)
        )
        how = (
            f" Recorded before the host picked a tile per size: every row is the {chooser.SQUARE} build. The host "
            f"now picks {model}: on {result.sm_count} SMs, {picks}."
        )
    return Table(
        "The price of promotion: the promoting build in the same interleaved batches",
        ("N", "tile", "promotion", "TFLOP/s", "x default build", f"x {LT} (P=1 only)"),
        body,
        _where(result) + f" {LT}'s default promotes (its error matches P=1's on the accuracy curve), so only "
        "P=1 is set beside it." + how,
    )


def speed_against_lt() -> Table:
    """The default build against cuBLASLt FP8 at each recorded size: a ratio against its like only
    (``bench.LIKE``: never promoting, cuBLASLt with fast accumulation), the other mode's rate alone."""
    result = _recording()
    if result is None or not result.rows:
        return Table(_NOT_RECORDED, (), ())
    return speed(result)


def speed(result: BenchResult) -> Table:
    """``speed_against_lt``'s table of a result (a recording, or the page's measurement); the speed
    section shows it in place of the engine's table (``BenchSpec.table``), so the page shows these
    rates once (issue 38)."""
    if not result.rows:
        return Table(_NOT_RECORDED, (), ())
    names = [p.name for p in result.rows[0].peers]
    like = bench.LIKE[KERNEL]
    body = tuple(
        (
            str(row.size),
            f"{row.kernel.rate:,.0f}",
            *(
                f"{p.rate:,.0f} ({p.ratio:.2f}x)"
                if p.ratio is not None and p.name == like
                else f"{p.rate:,.0f}"
                for p in row.peers
            ),
        )
        for row in result.rows
    )
    return Table(
        f"TFLOP/s, e4m3 in, FP16 out: the default build, which never promotes, over {like} (which does not "
        "either) in brackets",
        ("N", "default build (never promoting)", *names),
        body,
        _where(result) + f" {LT} (its default) promotes: its like is the promoting build, in the table of "
        "the price of promotion below.",
    )


def block_speed() -> Table:
    """The block-scaled build (128 x 128, scales applied at every promotion) in the same batches."""
    result = _recording()
    rows = block_table(result) if result is not None else []
    if result is None or not rows:
        return Table(_NOT_RECORDED, (), ())
    body = tuple(
        (
            str(n),
            f"{rate:,.0f}",
            f"{ratio:.2f}x",
            f"{vs_p1:.2f}x",
            f"{vs_lt:.2f}x",
            f"{vs_block:.2f}x" if vs_block is not None else "not timed",
        )
        for n, rate, ratio, vs_p1, vs_lt, vs_block in rows
    )
    return Table(
        "Block scales (1 x 128 of A, 128 x 128 of B) applied at every promotion, in the same interleaved batches",
        ("N", "TFLOP/s", "x default build", "x per-tensor 128x128, P=1", f"x {LT}", f"x {LT_BLOCK}"),
        body,
        _where(result)
        + f" {LT_BLOCK} is its like: the same inputs and scales (cuBLAS 12.9 and later); a recording made "
        "before the course timed it says 'not timed'.",
    )


def skewed_accuracy() -> Table:
    """Per-tensor against block scales on inputs whose rows and blocks differ in magnitude by up to 2^15."""
    result = _recording()
    errs = block_accuracy(result) if result is not None else {}
    if result is None or not errs:
        return Table(_NOT_RECORDED, (), ())
    body = tuple(
        (
            "x".join(map(str, shape)),
            scaling,
            *(
                f"{e[(scaling, r, m)]:.1e}" if (scaling, r, m) in e else ""
                for r in REFERENCES
                for m in METRICS
            ),
        )
        for shape, e in errs.items()
        for scaling in SCALINGS
    )
    return Table(
        "Relative error of D on skewed inputs: row i of A times 2^(i % 16 - 8), B's 128-row block j times "
        "2^(j % 8 - 8)",
        ("M x N x K", "scales", *(f"{m} ({r.split()[0]})" for r in REFERENCES for m in METRICS)),
        body,
        _where(result) + " R is the float64 product of the original inputs, or of the dequantised ones (what "
        "the kernel was given). The worst 1x128 piece is the largest ||D - R|| / ||R|| over pieces of one row "
        "and 128 columns of D, each of one magnitude.",
    )


FLOOR_COLOUR = "#8c959f"
FLOOR_LABEL = "D's own FP16 rounding (computed)"


def _floor(ax: Any, dist: str) -> None:
    """D's rounding floor (``accuracy.FP16_FLOOR``) on ``ax``: a grey dotted line with its points."""
    ax.loglog(
        ACCURACY_KS, accuracy.FP16_FLOOR[dist], ":", color=FLOOR_COLOUR, linewidth=1.5, label=FLOOR_LABEL
    )


@rendered
def model_figure(bits: int = 14) -> Picture:
    """The model alone, on U(0, 1) inputs: one chain over all of K against promotion every 128."""
    # heavy: matplotlib, when the picture is drawn (a kept rendering is shown without it)
    from ...picture import picture

    errs = accuracy.model_errors("uniform", (bits,), (0, accuracy.kernel_every(1)))[0]
    fig = picture(figsize=(8, 4.4))
    ax = fig.add_subplot()
    ax.loglog(
        ACCURACY_KS,
        errs[0],
        "o-",
        color=accuracy.STYLE[CURVE_KERNELS[0][0]][0],
        label=f"one chain, {bits} bits kept",
    )
    ax.loglog(
        ACCURACY_KS,
        errs[1],
        "s-",
        color=accuracy.STYLE[CURVE_KERNELS[1][0]][0],
        label="promoted every 128 of K",
    )
    _floor(ax, "uniform")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ACCURACY_KS, [str(k) for k in ACCURACY_KS])
    ax.set_xlabel("K")
    ax.set_ylabel("||D - R|| / ||R||")
    ax.set_title(f"The model: U(0, 1) inputs in e4m3, {bits} bits kept per aligned group of {accuracy.GROUP}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.readable()
    return fig


def curves_figure() -> Picture | Table:
    """The measured curves for both distributions, the fitted model dashed beside the kernel's;
    without a recording, a table that says so."""
    result = load(LESSON.id)  # not the fit's recording: a kept picture needs no fit
    if result is None or not accuracy_curve(result):
        return Table(_NOT_RECORDED, (), ())
    return recorded_curves_figure()


@rendered(reads=lambda: [bench_dir() / f"{LESSON.id}.json"])
def recorded_curves_figure() -> Picture:
    """The picture of ``curves_figure``, drawn from the recording (kept with it)."""
    # heavy: matplotlib, when the picture is drawn (a kept rendering is shown without it)
    from ...picture import picture

    result, fitted = accuracy.recorded()
    if result is None:
        raise CourseError("Day 87 has no recorded benchmark to draw its accuracy curves from")
    curve = accuracy_curve(result)
    fig = picture(figsize=(11, 4.8))
    axes = fig.subplots(1, 2, sharey=True)
    for ax, dist in zip(axes, DISTS, strict=True):
        lines = curve.get(dist, {})
        for name, points in lines.items():
            colour, marker = accuracy.STYLE.get(name, ("#000000", "."))
            ks, errs = zip(*points, strict=True)
            ax.loglog(ks, errs, marker=marker, color=colour, label=name, linewidth=1.5)
        if fitted is not None:
            model = accuracy.kernel_curves(dist, fitted.bits)
            for i, (name, _, _) in enumerate(CURVE_KERNELS):
                if name in lines:
                    ax.loglog(
                        ACCURACY_KS, model[i], "--", color=accuracy.STYLE[name][0], alpha=0.6, linewidth=1
                    )
        _floor(ax, dist)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ACCURACY_KS, [str(k) for k in ACCURACY_KS])
        ax.set_xlabel("K")
        ax.set_title("N(0, 1) inputs" if dist == "normal" else "U(0, 1) inputs, all positive")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("||D - R|| / ||R||")
    handles, labels = axes[1].get_legend_handles_labels()
    if fitted is not None:
        (dash,) = axes[1].plot([], [], "--", color="#57606a")
        handles, labels = [*handles, dash], [*labels, f"model, {fitted.bits} bits kept (dashed)"]
    fig.legend(handles, labels, loc="outside lower center", ncols=4)
    fig.suptitle(f"Measured at M = N = {ACCURACY_MN} on {result.device}, {result.recorded_at[:10]}")
    fig.readable()
    return fig
