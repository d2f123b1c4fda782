"""Day 86's tables and picture for the page: the chooser's picks per shape, the recorded shape
table, and the Stream-K schedule.

Each is rendered from its sources only: the picks from the chooser's model at a given SM count
(arithmetic, nothing measured), the shape table from the benchmark recording of this lesson
(``course.bench.result.load``; without a recording it says so and shows no number), and the
Stream-K plans and picture from the schedule's transcription (``course.lessons._streamk``, the
kernel's ``makeProblem`` and ``nextWork`` line for line): which cluster computes which K-iterations
of which tile, counted in K-iterations, not timed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._html import escape, scroll_box
from ..._kept import rendered
from ..._table import text_table
from ...bench.result import BenchResult, load
from ...bench.timing import GRAPHS
from ...errors import CourseError
from .. import _streamk
from .._ladder import ragged_problem
from . import LESSON, chooser
from .bench import (
    GEMMEX,
    LT_PEERS,
    ShapeRow,
    deterministic_table,
    geometric_mean,
    shape_name,
    shape_table,
    wave_shapes,
    wave_table,
)
from .variants import DEPENDENT

if TYPE_CHECKING:  # matplotlib is imported when the figure is drawn, not when its kept rendering is shown
    from ...picture import Picture


@dataclass(frozen=True)
class Table:
    """A titled table a page shows as HTML and a terminal as text."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def _repr_html_(self) -> str:
        cell = "style='text-align:right;padding:2px 5px'"
        # A value stays on one line ("0.80x (0.78-0.82)" took three at 1280 px and made the 32-row
        # shape table 1,500 px tall); a table wider than the page scrolls sideways in its box instead.
        value = "style='text-align:right;padding:2px 5px;white-space:nowrap'"
        head = "".join(f"<th {cell}>{escape(h)}</th>" for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td {value}>{escape(v)}</td>" for v in row) + "</tr>" for row in self.rows
        )
        note = f"<p><small>{escape(self.note)}</small></p>" if self.note else ""
        # Wider than a narrow page (the shape table's graph columns), it scrolls sideways in its box.
        table = scroll_box(f"<table><tr>{head}</tr>{body}</table>")
        return f"<p><b>{escape(self.title)}</b></p>{table}{note}"

    def __str__(self) -> str:
        table = text_table(self.header, self.rows, "right") if self.rows else ""
        return "\n".join(x for x in (self.title, table, self.note) if x)

    def __repr__(self) -> str:
        return str(self)


def picks(sms: int, shapes: Sequence[tuple[int, int, int]] = chooser.PAGE_SHAPES) -> Table:
    """What the chooser picks for each shape on a GPU with ``sms`` SMs, with the model's numbers."""
    rows = []
    for shape in shapes:
        c = chooser.choose(*shape, sms)
        rows.append(
            (
                shape_name(shape),
                f"{c.bm}x{c.bn}" + (" small" if c.small else ""),
                str(c.cluster) + c.axis,
                str(c.split),
                str(c.units),
                str(c.waves),
                f"{c.est_us:,.1f}",
            )
        )
    return Table(
        f"The chooser's picks for {sms} SMs (the model's estimate, not a measurement)",
        ("M x N x K", "tile", "cluster", "split", "units", "waves", "model us"),
        tuple(rows),
    )


def recorded_shapes() -> Table:
    """The shape table from this lesson's benchmark recording: pick, both rates, the ratio."""
    result = load(LESSON.id)
    if result is None:
        return Table(
            "Not recorded yet: the shape table has not been measured on a real GPU for this page, so there "
            "are no numbers to show here. On an H100 or H200, `python -m course bench day86` measures it.",
            (),
            (),
        )
    return shapes(result)


_PICK = re.compile(
    r"tile (\S+), cluster (\d+)( along N)?(, small build \(2 CTAs an SM\))?(?:, A box (\d+) rows)?, split (\d+)"
)


def _pick_cell(pick: str) -> str:
    """ "tile 128x256, cluster 2, split 1" as "128x256, 2, 1" (the column's heading names the three;
    the small build's tile as "64x64 small", a decode tile's short A box of 8 rows as "64x64 A8", a cluster of two
    along N as "2N"): at 1024 px the long form took four lines a row (issue 38). A pick in another form is
    shown whole."""
    found = _PICK.match(pick)
    if not found:
        return pick.split(":")[0]
    tile, cluster, along, small, rows, split = found.groups()
    return f"{tile}{' small' if small else ''}{f' A{rows}' if rows else ''}, {cluster}{'N' if along else ''}, {split}"


def _picks_since(rows: list[ShapeRow], sms: int) -> str:
    """Where the chooser of this checkout picks another build than the recording ran (the recording ran its
    pick of the time): a sentence naming each, else nothing."""
    moved = []
    for r in rows:
        try:
            now = chooser.choose(*r.shape, sms)
        except CourseError:  # a recording without a usable SM count: nothing to compare
            return ""
        if _pick_cell(r.pick) != _pick_cell(now.describe()):
            moved.append(f"{shape_name(r.shape)}: {_pick_cell(now.describe())}")
    return f" Since this recording the chooser picks another build at {'; '.join(moved)}." if moved else ""


def _dependent_said(result: BenchResult) -> str:
    """What programmatic dependent launch bought in the recording, in CUDA graphs: a sentence, or nothing
    for a recording made before it was measured."""
    said = [
        f"{r.title[: -len(DEPENDENT + GRAPHS)]} {r.value:.2f}x"
        for r in result.reasons
        if r.title.endswith(DEPENDENT + GRAPHS) and r.value
    ]
    if not said:
        return ""
    # The rule (host.dependent_launch) came after the first recording that launched dependent: that one
    # launched every shape so, and its engine note says so without "one round".
    where = (
        "Where its grid is one round of units the kernel is launched dependent"
        if any("in one round" in n for n in result.notes)
        else "In this recording the kernel is launched dependent at every shape"
    )
    return (
        f" {where} (programmatic dependent launch); its rate over the same pick launched the plain way, on "
        f"the same buffers in CUDA graphs: {', '.join(said)}."
    )


def shapes(result: BenchResult) -> Table:
    """The shape table of a result (a recording, or the page's measurement: its squares only); the
    speed section shows it in place of the engine's table of the squares (``BenchSpec.table``)."""
    rows = shape_table(result)

    def lt_cell(r: ShapeRow, name: str) -> str:
        x = r.lt.get(name)
        return "not measured" if x is None else f"{x.rate:,.0f} ({x.ratio:.2f}x)"

    def graph_cells(r: ShapeRow) -> tuple[str, str]:
        mine, theirs = r.graphs.get("kernel"), r.graphs.get(GEMMEX)
        return (
            "not measured" if mine is None else f"{mine.rate:,.0f}",
            "not measured" if theirs is None else f"{theirs.rate:,.0f} ({theirs.ratio:.2f}x)",
        )

    body = tuple(
        (
            shape_name(r.shape),
            _pick_cell(r.pick),
            f"{r.kernel:,.0f}",
            f"{r.peer:,.0f}",
            f"{r.ratio:.2f}x"
            + (f" ({r.low:.2f}-{r.high:.2f})" if r.low is not None and r.high is not None else ""),
            *graph_cells(r),
            *(lt_cell(r, name) for name in LT_PEERS),
        )
        for r in rows
    )
    summary = ""
    if rows:
        ratios = [r.ratio for r in rows]
        summary = (
            f"{len(rows)} shapes; geometric mean {geometric_mean(ratios):.2f}x cuBLAS gemmEx, lowest "
            f"{min(ratios):.2f}x. Recorded on {result.device} ({result.sm_count} SMs) on "
            f"{result.recorded_at[:10]}; the chooser's pick for that SM count"
            + (
                "; cluster 2N: two CTAs side by side along N, sharing A."
                if any(" along N" in r.pick for r in rows)
                else "."
            )
            + (" 64x64 A8: an A box of 8 rows." if any(", A box " in r.pick for r in rows) else "")
        )
        for name in LT_PEERS:
            if all(name in r.lt for r in rows):
                to_lt = [r.lt[name].ratio for r in rows]
                summary += f" Against {name}: geometric mean {geometric_mean(to_lt):.2f}x."
        missing = [n for n in result.notes if "not measured on this machine" in n]
        if missing:
            summary += " " + " ".join(missing)
        elif not any(r.lt for r in rows):
            summary += " This recording has no cuBLASLt columns: it was made before they were measured."
        graphed = [r.graphs[GEMMEX].ratio for r in rows if GEMMEX in r.graphs]
        if len(graphed) == len(rows):
            summary += (
                f" In CUDA graphs: geometric mean {geometric_mean(graphed):.2f}x cuBLAS gemmEx, lowest "
                f"{min(graphed):.2f}x."
            )
        elif not any(r.graphs for r in rows):
            summary += " This recording has no CUDA-graph columns: it was made before they were measured."
        failed = [n for n in result.notes if "not timed in CUDA graphs" in n]
        if failed:
            summary += " " + " ".join(failed)
        summary += _dependent_said(result)
        summary += _picks_since(rows, result.sm_count)
    return Table(
        f"Against cuBLAS on the {result.device}, shape by shape (TFLOP/s; the ratio's spread over "
        "interleaved repeats in brackets; launched one by one, then each batch in a CUDA graph, interleaved "
        "in the same run; the cuBLASLt columns give its rate and the kernel's ratio to it, launched one by one)",
        (
            "M x N x K",
            "the chooser's pick (tile, cluster, split)",
            "kernel",
            "cuBLAS gemmEx",
            "ratio",
            "kernel, graphs",
            "gemmEx, graphs (ratio)",
            "cuBLASLt heuristic",
            "cuBLASLt autotuned",
        ),
        body,
        summary,
    )


def recorded_waves() -> Table:
    """The last partial wave's cost per build, from this lesson's benchmark recording."""
    result = load(LESSON.id)
    rows = wave_table(result) if result is not None else []
    if result is None or not rows:
        return Table(
            "Not recorded yet: the last partial wave has not been measured on a real GPU for this page, so "
            "there are no numbers to show here. On an H100 or H200, `python -m course bench day86` measures it.",
            (),
            (),
        )
    body = tuple(
        (
            f"128x{r.bn} c{r.cluster}",
            " vs ".join(shape_name(s) for s in wave_shapes(r.bn, r.cluster, result.sm_count)),
            f"{r.full_us:,.1f}",
            f"{r.plus_us:,.1f}",
            f"{r.ratio:.2f}x"
            + (f" ({r.low:.2f}-{r.high:.2f})" if r.low is not None and r.high is not None else ""),
            f"{model_wave_ratio(r.bn, r.cluster, result.sm_count):.2f}x",
        )
        for r in rows
    )
    return Table(
        f"On the {result.device}: one full wave of units, then one unit more (split 1; time per launch; "
        "the ratio's spread over interleaved repeats in brackets), beside the chooser's model of the same "
        "two problems",
        (
            "build",
            "problems (one full wave vs one unit more)",
            "full wave us",
            "one unit more us",
            "time ratio",
            "model's ratio",
        ),
        body,
        f"Recorded on {result.device} ({result.sm_count} SMs) on {result.recorded_at[:10]}. The model prices "
        f"the lone unit at LONE_UNIT = {chooser.LONE_UNIT:.2f} of a wave, a round figure fitted to the H200's "
        "and the H100's recordings with clusters of two; the gap between the last two columns is what it "
        "misses on this GPU (clusters of one, whose full wave is slowed by every CTA loading its own B, "
        "measure lower: the chooser's docstring says why the model does not follow them).",
    )


def model_wave_ratio(bn: int, cluster: int, sms: int) -> float:
    """The chooser's time for one unit more than a full wave over its time for the full wave."""
    full, plus = (chooser.estimate(*s, sms, bn, cluster, 1) for s in wave_shapes(bn, cluster, sms))
    assert full is not None and plus is not None  # split 1 is always valid
    return plus.est_us / full.est_us


def recorded_deterministic() -> Table:
    """What the deterministic split-K build cost where the chooser split K, from the recording."""
    result = load(LESSON.id)
    rows = deterministic_table(result) if result is not None else []
    if result is None or not rows:
        return Table(
            "Not recorded yet: the deterministic build's cost has not been measured on a real GPU for this "
            "page. On an H100 or H200, `python -m course bench day86` measures it.",
            (),
            (),
        )
    return Table(
        "Deterministic split-K (-DGEMM_DETERMINISTIC=1) against the default build, same split and buffers "
        "(its rate over the default's; spread over interleaved repeats in brackets)",
        ("M x N x K", "timed", "rate ratio", "per call"),
        tuple(
            (
                shape_name(r.shape),
                r.mode,
                f"{r.ratio:.3f}x"
                + (f" ({r.low:.3f}-{r.high:.3f})" if r.low is not None and r.high is not None else ""),
                r.times,
            )
            for r in rows
        ),
        f"Recorded on {result.device} ({result.sm_count} SMs) on {result.recorded_at[:10]}.",
    )


# ---------------------------------------------------------------------------
# Stream-K: the schedule of the -DGEMM_STREAMK=1 build, counted in K-iterations
# ---------------------------------------------------------------------------
STREAMK_SHAPE = (1000, 3000, 704)  # one of issue 39's ragged shapes: 96 cluster tiles for 66 clusters
STREAMK_SMS = 132  # an H100 SXM or an H200
# The page's table: squares, the decode step and the two ragged middle-sized shapes.
STREAMK_SHAPES: tuple[tuple[int, int, int], ...] = (
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (128, 8192, 8192),
    (1000, 3000, 704),
    (4104, 776, 1240),
)


def streamk_schedule(
    shape: tuple[int, int, int] = STREAMK_SHAPE, sms: int = STREAMK_SMS, bn: int = 128, cluster: int = 2
) -> _streamk.StreamK:
    """The Stream-K build's schedule (``makeProblem``) for one shape, build and SM count."""
    c = LESSON.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_STREAMK": 1})
    return ragged_problem(c, shape, 1).stream_k(sms)


def streamk_build(shape: tuple[int, int, int], sms: int) -> chooser.Choice:
    """The cheapest build of the chooser's that has a Stream-K form: 128-row tiles (``rows64=False``), a
    cluster along M (``along_n=False``), and not 128 x 200 (its Stream-K build spills: test_wide39)."""
    return next(c for c in chooser.candidates(*shape, sms, rows64=False, along_n=False) if c.bn != 200)


def streamk_plans(sms: int = STREAMK_SMS, shapes: Sequence[tuple[int, int, int]] = STREAMK_SHAPES) -> Table:
    """Per shape, the chooser's cheapest build with a Stream-K form (``streamk_build``) compiled with -DGEMM_STREAMK=1: the waves of whole tiles it would run unsplit, and
    what the hybrid makes of them (schedule arithmetic)."""
    rows = []
    for shape in shapes:
        pick = streamk_build(shape, sms)
        s = streamk_schedule(shape, sms, pick.bn, pick.cluster)
        last = s.tiles - (-(-s.tiles // s.slots) - 1) * s.slots
        per = f"{s.sk_per}" + (f"-{s.sk_per + 1}" if s.sk_big else "") if s.sk_units else "-"
        rows.append(
            (
                shape_name(shape),
                f"128x{pick.bn} c{pick.cluster}",
                f"{s.tiles} x {s.k_tiles}",
                str(s.slots),
                f"{-(-s.tiles // s.slots)} ({last} of {s.slots})",
                str(s.dp_tiles),
                str(s.sk_tiles),
                str(s.sk_units),
                per,
                str(s.shared_tiles()),
            )
        )
    return Table(
        f"The Stream-K hybrid on {sms} SMs, per shape, for the 128-row build the chooser picks (arithmetic on "
        "the schedule, nothing timed)",
        (
            "M x N x K",
            "build",
            "tiles x K-iterations",
            "clusters",
            "waves unsplit (last wave)",
            "data-parallel tiles",
            "Stream-K tiles",
            "Stream-K units",
            "iterations a unit",
            "shared tiles",
        ),
        tuple(rows),
        "Whole waves stay data-parallel; otherwise the last two waves' worth of tiles (one wave when there "
        "is only the partial one) are cut into as many units as have at least "
        f"{_streamk.MIN_ITERS} K-iterations each, at most one per cluster (CUTLASS's rule). No shared "
        "tile: every unit got whole tiles, the plain schedule's work; a dash: no Stream-K unit at all.",
    )


def _streamk_sources() -> tuple[Path, ...]:
    """What the picture is drawn from besides this package: the schedule and the kernel's constants."""
    return Path(_streamk.__file__), LESSON.kernel_path


def _walk_bars(ax: Any, rows: list[list[tuple[int, int, int, bool]]], colour: Any) -> None:
    """One row of bars per cluster: (tile, first iteration, iterations, shared) in walking order."""
    for y, row in enumerate(rows):
        x = 0
        for tile, _k0, length, shared in row:
            ax.barh(
                y, length, left=x, height=0.8, color=colour(tile % 20),
                edgecolor="black" if shared else "none", linewidth=0.6, hatch="///" if shared else None,
            )  # fmt: skip
            x += length


@rendered(reads=_streamk_sources)
def streamk_figure(
    shape: tuple[int, int, int] = STREAMK_SHAPE, sms: int = STREAMK_SMS, bn: int = 128, cluster: int = 2
) -> Picture:
    """Each cluster's K-iterations, tile by tile, unsplit (left) and in the Stream-K build (right).

    One row per persistent cluster, one bar per piece of work it computes, as long as its
    K-iterations and coloured by its tile (20 colours, repeating); a hatched bar is a piece of a
    shared tile, whose contributions the fixup adds. The x axis counts K-iterations in the order a
    cluster computes them: the fixup's cost and the fill of every piece are not in it."""
    s = streamk_schedule(shape, sms, bn, cluster)
    unsplit = [
        [(t, 0, s.k_tiles, False) for t in range(c, s.tiles, s.slots)] for c in range(s.slots)
    ]  # split 1: cluster c computes tiles c, c + slots, ..., each whole
    streamk = [
        [(pc.tile, pc.k_begin, pc.k_end - pc.k_begin, pc.segs > 1) for pc in s.walk(c)]
        for c in range(s.slots)
    ]
    longest = [max(sum(p[2] for p in row) for row in rows) for rows in (unsplit, streamk)]
    # heavy: matplotlib, when the figure is drawn
    from matplotlib import colormaps

    # heavy: the picture imports matplotlib, when the figure is drawn
    from ...picture import picture

    colour = colormaps["tab20"]
    fig = picture(figsize=(12, 6.5))
    axes = fig.subplots(1, 2, sharey=True, sharex=True)
    waves = -(-s.tiles // s.slots)
    last = s.tiles - (waves - 1) * s.slots
    titles = (
        f"split 1: {waves} waves of whole tiles,\nthe last on {last} of {s.slots} clusters; "
        f"the busiest: {longest[0]} iterations",
        f"Stream-K: {s.sk_units} units of {s.sk_per}"
        + (f"-{s.sk_per + 1}" if s.sk_big else "")
        + f" iterations,\n{s.shared_tiles()} tiles shared (hatched); the busiest: {longest[1]}",
    )
    for ax, rows, title, end in zip(axes, (unsplit, streamk), titles, longest, strict=True):
        _walk_bars(ax, rows, colour)
        ax.axvline(end, color="#d62728", linestyle="--", linewidth=1.2)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("K-iterations computed, in walking order (not time)", fontsize=9)
    axes[0].invert_yaxis()  # cluster 0 on top (the axes share y: once inverts both)
    axes[0].set_ylabel(f"persistent cluster (0 to {s.slots - 1})", fontsize=9)
    m, n, k = shape
    fig.suptitle(
        f"{m} x {n} x {k}, tile 128 x {bn}, clusters of {cluster}, {sms} SMs: {s.tiles} cluster tiles "
        f"of {s.k_tiles} K-iterations\non {s.slots} clusters (colour: the tile; the kernel's "
        "makeProblem and nextWork, transcribed)",
        fontsize=10,
    )
    return fig
