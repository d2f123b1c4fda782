"""The climb: every GEMM lesson's recorded rate against N, with cuBLAS, on one plot.

Drawn from the recorded benchmark evidence (``evidence/<model>/bench/``, the GPU model
``course.kernel.evidence.shown`` picks; the table and the plot name it) of every
lesson measured in TFLOP/s up to a given day, so each step's page shows
where it stands on the whole ladder, and re-recording redraws it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._html import escape
from .._kept import Rendering, file_stamps, kept, kept_rendering, rendering_key
from ..lesson import Lesson
from .engine import measure
from .result import BenchResult, bench_dir, load
from .spec import bench_spec

if TYPE_CHECKING:  # matplotlib is imported when the climb is drawn, not when a kept rendering is shown
    from ..picture import Picture

# The tensor cores' dense FP16/BF16 peak of an H100 or H200 SXM with FP32
# accumulation, from NVIDIA's datasheets (H100 Tensor Core GPU datasheet,
# "FP16 Tensor Core" 1,979 TFLOP/s with sparsity, half that dense; H200 the
# same). A ceiling no GEMM reaches: clocks drop under the tensor cores' power.
DATASHEET_PEAK_TFLOPS = 989.4
DATASHEET = "NVIDIA H100/H200 SXM datasheets: dense FP16 Tensor Core, 1,979 TFLOP/s with sparsity halved"


@dataclass(frozen=True)
class ClimbRow:
    lesson: Lesson
    result: BenchResult


def climb_lessons(upto: Lesson, lessons: Iterable[Lesson]) -> list[Lesson]:
    """Every lesson of ``lessons`` (the registry's, in order) measured in TFLOP/s (the GEMMs),
    up to and including ``upto``'s day; none for a lesson whose benchmark is no step of the climb
    (``BenchSpec.climb`` False), so its page draws no climb."""
    own = bench_spec(upto)
    if own is not None and not own.climb:
        return []
    out = []
    for lesson in lessons:
        spec = bench_spec(lesson)
        if lesson.day <= upto.day and spec is not None and spec.unit == "TFLOP/s" and spec.climb:
            out.append(lesson)
    return out


def measure_climb(
    upto: Lesson,
    lessons: Iterable[Lesson],
    sizes: Sequence[int] | None = None,
    progress: Callable[[str], Any] = print,
) -> list[ClimbRow]:
    """Measure every step up to ``upto`` on this GPU, one after the other in this process.

    ``sizes`` default to each step's page sizes. Each step is checked before
    it is timed, with cuBLAS beside it, as ``python -m course bench`` does.
    """

    rows = []
    for lesson in climb_lessons(upto, lessons):
        spec = bench_spec(lesson)
        assert spec is not None  # climb_lessons keeps only lessons with a spec
        wanted = [n for n in (sizes or spec.page_sizes) if n in spec.sizes or n <= spec.max_size]
        result = measure(
            lesson, wanted, progress=progress, command=f"the climb measured on the page ({upto.id})"
        )
        rows.append(ClimbRow(lesson, result))
    return rows


def recorded_climb(upto: Lesson, lessons: Iterable[Lesson]) -> list[ClimbRow]:
    """Every TFLOP/s lesson of ``lessons`` with a recorded benchmark, up to and including ``upto``'s day."""
    out = []
    for lesson in climb_lessons(upto, lessons):
        result = load(lesson.id)
        if result is not None:
            out.append(ClimbRow(lesson, result))
    return out


def _recordings(upto: Lesson, lessons: tuple[Lesson, ...]) -> Any:
    """What the recorded climb is drawn from: its files' stamps."""
    return file_stamps(bench_dir() / f"{lesson.id}.json" for lesson in climb_lessons(upto, lessons))


@kept(depends_on=_recordings)
def recorded_climb_figure(upto: Lesson, lessons: tuple[Lesson, ...]) -> Picture:
    """The climb drawn from the recordings (``recorded_climb``): drawn once per kernel, again
    when one of the recordings' files changes (Run All again shows the PNG already drawn)."""
    return climb_figure(upto, recorded_climb(upto, lessons))


def climb_rendering_key(upto: Lesson, lessons: tuple[Lesson, ...]) -> str:
    """The key of the recorded climb's kept rendering: this module's and the picture's code, the
    steps' names and their recordings (``course._kept.rendering_key``)."""
    steps = climb_lessons(upto, lessons)
    named = repr([(upto.id, upto.day)] + [(s.id, s.day, s.kernel_file) for s in steps])
    code = (Path(__file__), Path(__file__).with_name("result.py"), Path(__file__).parents[1] / "picture.py")
    return rendering_key("climb", code, [named, *(bench_dir() / f"{s.id}.json" for s in steps)])


def recorded_climb_picture(upto: Lesson, lessons: tuple[Lesson, ...]) -> Picture | Rendering:
    """The recorded climb as a page shows it: the rendering kept with the evidence when one was
    drawn from exactly these recordings with this code (``tools/keep_renderings.py``; a test checks
    each is the drawing of today's recordings), else drawn here (``recorded_climb_figure``)."""
    found = kept_rendering(climb_rendering_key(upto, lessons))
    return found if found is not None else recorded_climb_figure(upto, lessons)


def climb_figure(upto: Lesson, rows: Sequence[ClimbRow]) -> Picture:
    """TFLOP/s against N (log2) for each step so far, solid; each distinct cuBLAS peer, dashed."""
    # heavy: matplotlib, when the climb is drawn
    from ..picture import picture

    fig = picture(figsize=(8.0, 4.6))
    ax = fig.add_subplot()
    peers: dict[str, tuple[list[int], list[float]]] = {}
    sizes: set[int] = set()
    for row in rows:
        r = row.result
        ax.plot(
            r.sizes,
            [x.kernel.rate for x in r.rows],
            marker="o",
            linewidth=2.5 if row.lesson.id == upto.id else 1.2,
            label=f"Day {row.lesson.day}: {row.lesson.kernel_file}",
        )
        sizes.update(r.sizes)
        for x in r.rows:
            for p in x.peers:
                xs, ys = peers.setdefault(p.name, ([], []))
                if x.size not in xs:
                    xs.append(x.size)
                    ys.append(p.rate)
    # Each library peer its own dash pattern (four grey dashed lines could not be told apart).
    dashes = ("--", "-.", (0, (1, 1)), (0, (5, 2, 1, 2, 1, 2)), (0, (8, 3)))
    for i, (name, (xs, ys)) in enumerate(peers.items()):
        order = sorted(range(len(xs)), key=xs.__getitem__)
        ax.plot([xs[i] for i in order], [ys[i] for i in order], linestyle=dashes[i % len(dashes)],
                color="black", alpha=0.45 + 0.3 * ("float16" in name), label=name)  # fmt: skip
    if sizes:
        ticks = sorted(sizes)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, labels=[str(s) for s in ticks])
        ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel("N (M = N = K)")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.axhline(DATASHEET_PEAK_TFLOPS, color="gray", linestyle=":")
    # The peak's line named where it is drawn (one legend entry fewer).
    ax.annotate(
        f"datasheet peak {DATASHEET_PEAK_TFLOPS:.0f}",
        (0.01, DATASHEET_PEAK_TFLOPS),
        xycoords=("axes fraction", "data"),
        xytext=(0, -3),
        textcoords="offset points",
        va="top",
        fontsize=8,
        color="dimgray",
    )
    where = rows[0].result.device if rows else "no recording"
    ax.set_title(f"The climb up to Day {upto.day}: {where}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    # Under the axes, never over the lines (issue 38: 13 entries covered the small sizes' points).
    if ax.get_legend_handles_labels()[0]:  # no recorded step, no legend
        fig.legend(loc="outside lower center", ncols=3, fontsize=8)
    return fig


@dataclass(frozen=True)
class ClimbTable:
    rows: tuple[ClimbRow, ...]
    size: int

    def _repr_html_(self) -> str:
        e = escape
        cell = "text-align:left;padding:2px 8px;white-space:nowrap"
        # Headings and the step's title wrap, numbers do not: the table fits a 1024 px window
        # with the file browser open (issue 22, item 4).
        heading = "text-align:left;padding:2px 8px;vertical-align:bottom"
        body = []
        before: float | None = None
        for row in self.rows:
            at = next((x for x in row.result.rows if x.size == self.size), None)
            if at is None or not at.peers:
                continue
            peer = at.peers[0]
            bought = "" if before is None else f"{at.kernel.rate / before:.2f}x"
            before = at.kernel.rate
            body.append(
                f"<tr><td style='{cell}'>Day {row.lesson.day}</td>"
                f"<td style='text-align:left;padding:2px 8px'>{e(row.lesson.title)}</td>"
                f"<td style='{cell}'>{at.kernel.rate:,.0f}</td><td style='{cell}'>{bought}</td>"
                f"<td style='{cell}'>{peer.rate:,.0f}</td><td style='{cell}'>{peer.ratio:.2f}x</td>"
                f"<td style='{cell}'>{at.kernel.rate / DATASHEET_PEAK_TFLOPS:.0%}</td></tr>"
            )
        head = "".join(
            f"<th style='{heading}'>{h}</th>"
            for h in (
                "day",
                "step",
                "TFLOP/s",
                "vs step before",
                "cuBLAS TFLOP/s",
                "kernel / cuBLAS",
                "of peak",
            )
        )
        # Which GPU every number is from: each step's recording names its own.
        devices = list(dict.fromkeys(row.result.device for row in self.rows))
        dates = sorted(row.result.recorded_at[:10] for row in self.rows)
        when = dates[0] if dates and dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}" if dates else ""
        said = (
            f"on the {e(' and the '.join(devices))}, recorded {e(when)}"
            if devices
            else "nothing recorded yet"
        )
        return (
            f"<p>At N = {self.size}, {said}. cuBLAS is the same run's, with the step's own types (Day 78: FP32 "
            f"out; the ladder: FP16 out). Peak: {DATASHEET_PEAK_TFLOPS:.0f} TFLOP/s ({e(DATASHEET)}).</p>"
            f"<table><tr>{head}</tr>{''.join(body)}</table>"
        )

    def __str__(self) -> str:
        lines = []
        for row in self.rows:
            at = next((x for x in row.result.rows if x.size == self.size), None)
            if at is not None and at.peers:
                lines.append(
                    f"Day {row.lesson.day}: {at.kernel.rate:,.0f} TFLOP/s, {at.peers[0].ratio:.2f}x cuBLAS"
                )
        return "\n".join(lines)


def climb_table(rows: Sequence[ClimbRow], size: int = 4096) -> ClimbTable:
    return ClimbTable(tuple(rows), size)
