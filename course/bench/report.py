"""What a benchmark shows: the table, the plot, the page's "How fast is it?" section.

All CPU-only: a recorded result renders the same on a machine with no GPU.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _paths
from .._atomic import atomic_write_bytes, atomic_write_text
from .._html import escape, scroll_box
from .._table import text_table
from ..errors import CourseError, EnvironmentProblem
from ..kernel import evidence, gate
from ..lesson import Lesson
from .arith import DEFAULT_REPEATS, rate_text
from .engine import measure, spec_of
from .result import BenchResult, Reason, bench_dir, load
from .spec import SIZE_LABEL, bench_spec

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn, not by every `python -m course`
    from ..picture import Picture


def _ms(value: float) -> str:
    """Milliseconds, or microseconds under 0.1 ms (learners read "3.3 µs" faster than "0.0033 ms")."""
    return f"{value * 1e3:.3g} µs" if value < 0.1 else f"{value:.4g} ms"


def table_rows(result: BenchResult, unlike: Sequence[str] = ()) -> list[list[str]]:
    """Header and body of the size table, as text cells (shared by the terminal and HTML); a peer
    in ``unlike`` (``BenchSpec.unlike``) gets its rate alone, no ratio."""
    header = ["N", "kernel time (median, min-max)", f"kernel {result.unit}"]
    header += [
        f"{name} {result.unit}" + ("" if name in unlike else " (kernel/peer)") for name in result.peer_names
    ]
    header += ["compile s"]
    body = []
    for row in result.rows:
        t = row.kernel.timing
        cells = [
            str(row.size),
            f"{_ms(t.median_ms)} ({_ms(t.min_ms)}-{_ms(t.max_ms)})",
            rate_text(row.kernel.rate, result.unit, with_unit=False),
        ]
        for p in row.peers:
            r = "" if p.ratio is None or p.name in unlike else f" ({p.ratio:.2f}x)"
            cells.append(rate_text(p.rate, result.unit, with_unit=False) + r)
        # One unbreakable cell ("0.00, / cached" wrapped in two at 1024 px, issue 38).
        cached = {True: ",\u00a0cached", False: "", None: ""}[row.compile_cached]
        cells.append(f"{row.compile_s:.2f}{cached}")
        body.append(cells)
    return [header, *body]


def listed_reasons(result: BenchResult, unlike: Sequence[str] = ()) -> tuple[Reason, ...]:
    """The recording's numbers a table lists: all but the ratios against a peer in ``unlike``
    (their titles begin "Against <peer> at ")."""
    skip = tuple(f"Against {name} at " for name in unlike)
    return tuple(r for r in result.reasons if not (skip and r.title.startswith(skip)))


def table(result: BenchResult, unlike: Sequence[str] = ()) -> str:
    """The sizes, times and rates as a plain-text table, then the reasons (``unlike``: as
    ``table_rows`` and ``listed_reasons``)."""
    header, *body = table_rows(result, unlike)
    lines = [f"{result.lesson}: {result.kernel_name} on {result.summary()}"]
    lines.append(text_table(header, body, align="right"))
    for name, value in result.ceilings.items():
        lines.append(f"ceiling, {name}: {value:,.1f}")
    for reason in listed_reasons(result, unlike):
        lines.append(f"- {reason.title}: {reason.value_text()} [{reason.kind}] {reason.detail}")
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def peer_size(i: int) -> tuple[float, float]:
    """The ``i``-th peer's line width and marker size: each narrower than the one before, down to a floor."""
    return max(1.2, 3.2 - 0.8 * i), max(4.0, 9.0 - 2.0 * i)


def plot(result: BenchResult, size_label: str = SIZE_LABEL) -> Picture:
    """Rate against size (log2 axis): the kernel, its peers, and the run's ceilings.

    The rate axis is logarithmic when the best peer or ceiling is more than
    10x the kernel's best rate, so a slow kernel's curve does not lie flat on
    zero.
    """
    from ..picture import picture  # heavy: matplotlib (course.picture), when a plot is drawn

    fig = picture(figsize=(7.0, 4.2))
    ax = fig.add_subplot()
    sizes = list(result.sizes)
    rates = [r.kernel.rate for r in result.rows]
    ax.plot(sizes, rates, marker="o", linewidth=2, label=result.kernel_name, zorder=3)  # over every peer
    others: list[float] = []
    # Two peers can lie on one another (Day 90: Day 89's kernel and cuDNN within 0.1%): each peer is
    # drawn over the ones before it and thinner, so an earlier one shows as a rim around a later one.
    for i, name in enumerate(result.peer_names):
        peer = [r.peer(name).rate for r in result.rows]
        others += peer
        width, mark = peer_size(i)
        ax.plot(sizes, peer, marker="s", linestyle="--", linewidth=width, markersize=mark, label=name)
    for name, value in result.ceilings.items():
        others.append(value)
        ax.axhline(value, color="gray", linestyle=":", label=f"{name}: {rate_text(value, result.unit)}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, labels=[str(s) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel(size_label)
    if others and max(others) > 10 * max(rates):
        ax.set_yscale("log")
        ax.set_ylabel(f"rate ({result.unit}, log scale)")
    else:
        ax.set_ylim(bottom=0)
        ax.set_ylabel(f"rate ({result.unit})")
    ax.set_title(f"{result.lesson}: {result.device}, {result.recorded_at[:10]}", fontsize=10)
    ax.grid(True, alpha=0.3)
    # Under the axes, never over the curves (issue 38: Day 87's sat on its crossing lines).
    fig.legend(loc="outside lower center", ncols=2, fontsize=8)
    return fig


def png_bytes(result: BenchResult, size_label: str = SIZE_LABEL) -> bytes:
    return plot(result, size_label).png(dpi=110)


OPEN_REASONS = 12  # more numbers than this and the section shows them folded (<details>)


@dataclass(frozen=True)
class SpeedSection:
    """What a page's "How fast is it?" cell shows: findings, table, reasons, plot."""

    lesson: str
    result: BenchResult | None
    png: bytes | None = field(repr=False)
    measured_here: bool
    message: str
    findings: tuple[str, ...] = ()
    unlike: tuple[str, ...] = ()  # the spec's: peers shown without a ratio (``BenchSpec.unlike``)
    own_table: Any = None  # the lesson's table in place of the size table (``BenchSpec.table``)

    def _size_table(self, result: BenchResult) -> str:
        esc = escape
        rows = table_rows(result, self.unlike)
        # The headings wrap (the numbers do not), so the table fits the notebook's width.
        head = "".join(f"<th style='padding:2px 5px;vertical-align:bottom'>{esc(c)}</th>" for c in rows[0])
        # A cell wraps at its spaces only ("12.3 µs / (12.1-12.9)"), never inside a number.
        body = "".join(
            "<tr>" + "".join(f"<td style='padding:2px 5px'>{esc(c)}</td>" for c in r) + "</tr>"
            for r in rows[1:]
        )
        # A table wider than a narrow page scrolls sideways in its box (no cell breaks inside a word).
        return scroll_box(f"<table><tr>{head}</tr>{body}</table>")

    def _repr_html_(self) -> str:
        esc = escape
        color = "#1a7f37" if self.measured_here else "#1f5fa8"
        box = f"border-left:4px solid {color};padding:4px 10px;margin:4px 0"
        parts = [f"<div style='{box}'>{esc(self.message)}</div>"]
        if self.findings:
            parts.append("<ul>" + "".join(f"<li>{esc(f)}</li>" for f in self.findings) + "</ul>")
        if self.result is not None:
            own = self.own_table
            parts.append(own._repr_html_() if own is not None else self._size_table(self.result))
            listed = listed_reasons(self.result, self.unlike)
            if listed:
                cell = "text-align:left;vertical-align:top;padding:2px 8px;overflow-wrap:break-word"
                word = "text-align:left;vertical-align:top;padding:2px 8px"  # "measured" never breaks
                items = "".join(
                    f"<tr><td style='{cell}'>{esc(r.title)}</td>"
                    f"<td style='padding:2px 8px;vertical-align:top;text-align:right'>{esc(r.value_text())}</td>"
                    f"<td style='{word}'>{esc(r.kind)}</td><td style='{cell}'>{esc(r.detail)}</td></tr>"
                    for r in listed
                )
                reasons_table = (
                    # The detail, the longest text, gets half the width (it had the narrowest column);
                    # the widths are wishes a word's width overrides ("measured" never breaks).
                    "<table style='width:100%'><colgroup><col style='width:22%'>"
                    "<col style='width:14%'><col style='width:12%'><col style='width:52%'></colgroup>"
                    f"<tr><th style='{cell}'>finding</th><th style='{cell};text-align:right'>number</th>"
                    f"<th style='{word}'>source</th><th style='{cell}'>detail</th></tr>{items}</table>"
                )
                count = len(listed)
                if count <= OPEN_REASONS:
                    parts.append(
                        "<p><b>What the numbers say</b> (each with where its number comes from)</p>"
                        + reasons_table
                    )
                else:  # a page of rows (Day 87: 150) is folded, as JupyterLab folds a long output: one click
                    parts.append(
                        f"<details><summary><b>What the numbers say</b>: all {count} numbers, each with where it "
                        f"comes from (click to open)</summary>{reasons_table}</details>"
                    )
            if self.result.notes:
                parts.append(
                    "<ul>" + "".join(f"<li><small>{esc(n)}</small></li>" for n in self.result.notes) + "</ul>"
                )
        if self.png:
            data = base64.b64encode(self.png).decode("ascii")
            parts.append(
                f"<img alt='{esc(self.lesson)} rate against size' src='data:image/png;base64,{data}'/>"
            )
        return "<div class='course-bench'>" + "".join(parts) + "</div>"

    def __str__(self) -> str:
        lines = [self.message, *(f"- {f}" for f in self.findings)]
        if self.result is None:
            return "\n".join(lines)
        shown = str(self.own_table) if self.own_table is not None else table(self.result, self.unlike)
        return "\n".join(lines) + "\n" + shown


def findings(lesson: Lesson, result: BenchResult) -> tuple[str, ...]:
    spec = bench_spec(lesson)
    if spec is None or spec.findings is None:
        return ()
    return tuple(spec.findings(result))


def own_table(lesson: Lesson, result: BenchResult) -> Any:
    """The lesson's table of ``result`` (``BenchSpec.table``), or None for the engine's size table
    (no such table, or one with no rows)."""
    spec = bench_spec(lesson)
    if spec is None or spec.table is None:
        return None
    table = lesson.function(spec.table)
    if table is None:
        raise CourseError(
            f"lesson {lesson.id}: BenchSpec.table names {spec.table!r}, no function of its package"
        )
    made = table(result)
    return made if getattr(made, "rows", ()) else None


def _section(lesson: Lesson, result: BenchResult, png: bytes, here: bool, message: str) -> SpeedSection:
    spec = spec_of(lesson)
    return SpeedSection(
        lesson.id,
        result,
        png,
        here,
        message,
        findings(lesson, result),
        spec.unlike,
        own_table(lesson, result),
    )


def _shown_path(path: Path) -> str:
    """A path as a learner reads it: from the course's root where it lies there, never the machine's
    absolute path (a page's words are the same on every machine)."""
    try:
        return path.resolve().relative_to(_paths.repo_root().resolve()).as_posix()
    except ValueError:
        return path.name


def speed_section(
    lesson: Lesson,
    sizes: Sequence[int] | None = None,
    repeats: int = DEFAULT_REPEATS,
    progress: Callable[[str], Any] | None = None,
    directory: Path | None = None,
    measure_here: bool = True,
) -> SpeedSection:
    """Measure here when this GPU runs the lesson; otherwise show the recorded figures.

    ``sizes`` defaults to the spec's page sizes (a quick run). With
    COURSE_REQUIRE_GPU set, a machine that cannot run the lesson raises
    EnvironmentProblem. ``measure_here=False`` shows the recorded figures
    even on a GPU that could measure (the page's default, until the
    learner asks to measure).
    """

    spec = spec_of(lesson)
    if sizes is not None:
        spec.validate_sizes(lesson.id, sizes)
    v = gate.verdict(lesson)
    if v.runs and measure_here:
        result = measure(
            lesson,
            sizes if sizes is not None else spec.page_sizes,
            repeats,
            progress=progress or (lambda line: print(line, flush=True)),
            command=f"the page's Measure button ({lesson.id})",
        )
        message = (
            f"Measured here, just now, on {result.device} (compute capability {result.compute_capability})."
        )
        return _section(lesson, result, png_bytes(result, spec.size_label), True, message)
    if gate.gpu_required() and not v.runs:
        raise EnvironmentProblem(
            f"{gate.REQUIRE_GPU_ENV} is set but this machine cannot time {lesson.id}: {v.message()}"
        )
    recorded = load(lesson.id, directory)
    why_not = (
        "Not measured here yet: the button above times it on this GPU."
        if v.runs
        # The reason is the status line's (issue 38: said once a page); here, only that it cannot.
        else "Not measured here: this machine cannot run the kernel (the status line at the top of the page "
        "says why). On a GPU that runs this lesson a button appears to time it there."
    )
    if recorded is None:
        where = _shown_path((directory or bench_dir()) / f"{lesson.id}.json")
        return SpeedSection(
            lesson.id,
            None,
            None,
            False,
            f"{why_not} No recorded benchmark is in this checkout ({where}); "
            f"python -m course bench {lesson.id} on a Hopper GPU records one.",
        )
    png_path = (directory or bench_dir()) / f"{lesson.id}.png"
    png = png_path.read_bytes() if png_path.exists() else png_bytes(recorded, spec.size_label)
    message = (
        f"{why_not} These figures were recorded on {recorded.device} (compute capability "
        f"{recorded.compute_capability}, driver {recorded.driver or 'unknown'}) on {recorded.recorded_at[:10]} "
        f"by: {recorded.command}."
    )
    if directory is None:  # the recordings the page picked: say whose and why
        message += " " + evidence.shown().sentence()
    return _section(lesson, recorded, png, False, message)


def write(
    result: BenchResult, directory: Path | None = None, size_label: str = SIZE_LABEL
) -> tuple[Path, Path]:
    """Write <lesson>.json and <lesson>.png (atomically), by default into the folder of the GPU
    it was measured on; return both paths. ``size_label``: the spec's, under the size axis."""
    directory = directory or bench_dir(evidence.device_key(result.device))
    json_path = directory / f"{result.lesson}.json"
    png_path = directory / f"{result.lesson}.png"
    atomic_write_text(json_path, result.to_json())
    atomic_write_bytes(png_path, png_bytes(result, size_label))
    return json_path, png_path
