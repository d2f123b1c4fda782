"""Day 86's tables for the page: the chooser's picks per shape, and the recorded shape table.

Both are rendered from their sources only: the picks from the chooser's model at a given SM
count (arithmetic, nothing measured), the shape table from the benchmark recording of this
lesson (``course.bench.result.load``); without a recording it says so and shows no number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..._html import escape
from ..._table import text_table
from ...bench.result import BenchResult, load
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


@dataclass(frozen=True)
class Table:
    """A titled table a page shows as HTML and a terminal as text."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""

    def _repr_html_(self) -> str:
        cell = "style='text-align:right;padding:2px 5px'"
        head = "".join(f"<th {cell}>{escape(h)}</th>" for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td {cell}>{escape(v)}</td>" for v in row) + "</tr>" for row in self.rows
        )
        note = f"<p><small>{escape(self.note)}</small></p>" if self.note else ""
        # Wider than a narrow page (the shape table's graph columns), it scrolls sideways in its box.
        table = f"<div style='overflow-x:auto'><table><tr>{head}</tr>{body}</table></div>"
        return f"<p><b>{escape(self.title)}</b></p>{table}{note}"

    def __str__(self) -> str:
        table = text_table(self.header, self.rows, "right") if self.rows else ""
        return "\n".join(x for x in (self.title, table, self.note) if x)

    def __repr__(self) -> str:
        return str(self)


def picks(sms: int, shapes: Sequence[tuple[int, int, int]] = chooser.SHAPES) -> Table:
    """What the chooser picks for each shape on a GPU with ``sms`` SMs, with the model's numbers."""
    rows = []
    for shape in shapes:
        c = chooser.choose(*shape, sms)
        rows.append(
            (
                shape_name(shape),
                f"128x{c.bn}",
                str(c.cluster),
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


_PICK = re.compile(r"tile (\S+), cluster (\d+), split (\d+)")


def _pick_cell(pick: str) -> str:
    """ "tile 128x256, cluster 2, split 1" as "128x256, 2, 1" (the column's heading names the three):
    at 1024 px the long form took four lines a row (issue 38). A pick in another form is shown whole."""
    found = _PICK.match(pick)
    return ", ".join(found.groups()) if found else pick.split(":")[0]


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
            f"{result.recorded_at[:10]}; the chooser's pick for that SM count."
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
