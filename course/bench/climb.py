"""The climb: every step of a family of lessons, its recorded rate against the size, with its peer, on one plot.

A family (``course.bench.spec.Climb``, named by each step's ``BenchSpec.climb``) is the GEMM
ladder (TFLOP/s against N, with cuBLAS) or attention (TFLOP/s against the sequence length S,
non-causal, with PyTorch's cuDNN and flash backends); a lesson that declares the family joins it,
recorded or not. Drawn from the recorded benchmark evidence (``evidence/<model>/bench/``, the GPU
model ``course.kernel.evidence.shown`` picks; the table and the plot name it) of every step up to a
given day, so each step's page shows where it stands on its whole ladder, and re-recording redraws
it. A step with no recording on that GPU is left out of the picture and named by the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._html import escape
from .._kept import Rendering, file_stamps, kept, kept_rendering, rendering_key
from ..errors import CourseError
from ..kernel import evidence
from ..lesson import Lesson
from .engine import measure
from .result import BenchResult, Measurement, SizeRow, bench_dir, load
from .spec import GEMM_CLIMB, Climb, bench_spec

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


def _family(lesson: Lesson) -> Climb | None:
    """The climb ``lesson`` is a step of (its ``BenchSpec.climb``), None for none."""
    spec = bench_spec(lesson)
    return spec.climb if spec is not None and spec.unit == "TFLOP/s" else None


def climb_families(lessons: Iterable[Lesson]) -> dict[str, Climb]:
    """Every climb the lessons' benchmarks declare, by name, in the order their first steps come."""
    out: dict[str, Climb] = {}
    for lesson in lessons:
        family = _family(lesson)
        if family is not None:
            out.setdefault(family.name, family)
    return out


def family_of(upto: Lesson, lessons: Iterable[Lesson], family: str | None = None) -> Climb | None:
    """The climb ``upto``'s page draws: the one named (``family``, a name from ``climb_families``),
    else the one its benchmark is a step of; a page without a benchmark (Day 85) draws the GEMM
    ladder's; None for a benchmark that is a step of none."""
    if family is not None:
        known = climb_families(lessons)
        if family not in known:
            raise CourseError(
                f"no lesson's benchmark is a step of a climb named {family!r} (page {upto.id}); "
                f"the climbs are: {', '.join(known) or 'none'}"
            )
        return known[family]
    if bench_spec(upto) is None:
        return GEMM_CLIMB
    return _family(upto)


def climb_upto(page: Lesson, lessons: Iterable[Lesson], family: str | None = None) -> Lesson:
    """The step a page's climb of ``family`` goes up to: the page's own lesson, unless the page comes
    before every step of that family (Day 85 showing attention's): then the family's last step, so
    that a step joining the family later (a recorded Day 90) joins that page's climb too."""
    lessons = tuple(lessons)
    climb = family_of(page, lessons, family)
    steps = [s for s in lessons if climb is not None and _family(s) == climb]
    if not steps or any(s.day <= page.day for s in steps):
        return page
    return max(steps, key=lambda s: s.day)


def climb_lessons(upto: Lesson, lessons: Iterable[Lesson], family: str | None = None) -> list[Lesson]:
    """Every step of the climb ``family_of(upto, lessons, family)`` among ``lessons`` (the registry's,
    in order), recorded or not, up to and including ``upto``'s day; none for a lesson whose benchmark
    is a step of no climb (``BenchSpec.climb`` None), so its page draws none."""
    lessons = tuple(lessons)
    climb = family_of(upto, lessons, family)
    if climb is None:
        return []
    return [s for s in lessons if s.day <= upto.day and _family(s) == climb]


def measure_climb(
    upto: Lesson,
    lessons: Iterable[Lesson],
    sizes: Sequence[int] | None = None,
    progress: Callable[[str], Any] = print,
    family: str | None = None,
) -> list[ClimbRow]:
    """Measure every step up to ``upto`` on this GPU, one after the other in this process.

    ``sizes`` default to each step's page sizes. Each step is checked before
    it is timed, with its peers beside it, as ``python -m course bench`` does.
    """

    rows = []
    for lesson in climb_lessons(upto, lessons, family):
        spec = bench_spec(lesson)
        assert spec is not None  # climb_lessons keeps only lessons with a spec
        wanted = [n for n in (sizes or spec.page_sizes) if n in spec.sizes or n <= spec.max_size]
        result = measure(
            lesson, wanted, progress=progress, command=f"the climb measured on the page ({upto.id})"
        )
        rows.append(ClimbRow(lesson, result))
    return rows


def recorded_climb(upto: Lesson, lessons: Iterable[Lesson], family: str | None = None) -> list[ClimbRow]:
    """Every step of the climb (``climb_lessons``) with a recorded benchmark on the GPU model shown."""
    out = []
    for lesson in climb_lessons(upto, lessons, family):
        result = load(lesson.id)
        if result is not None:
            out.append(ClimbRow(lesson, result))
    return out


def unrecorded_steps(upto: Lesson, lessons: Iterable[Lesson], family: str | None = None) -> list[Lesson]:
    """The steps of the climb (``climb_lessons``) with no recorded benchmark on the GPU model shown:
    the table names them (the H200 has none of attention's yet)."""
    return [s for s in climb_lessons(upto, lessons, family) if not (bench_dir() / f"{s.id}.json").exists()]


def _recordings(upto: Lesson, lessons: tuple[Lesson, ...], family: str | None = None) -> Any:
    """What the recorded climb is drawn from: its files' stamps."""
    return file_stamps(bench_dir() / f"{s.id}.json" for s in climb_lessons(upto, lessons, family))


@kept(depends_on=_recordings)
def recorded_climb_figure(upto: Lesson, lessons: tuple[Lesson, ...], family: str | None = None) -> Picture:
    """The climb drawn from the recordings (``recorded_climb``): drawn once per kernel, again
    when one of the recordings' files changes (Run All again shows the PNG already drawn)."""
    return climb_figure(upto, recorded_climb(upto, lessons, family), family_of(upto, lessons, family))


def climb_rendering_key(upto: Lesson, lessons: tuple[Lesson, ...], family: str | None = None) -> str:
    """The key of the recorded climb's kept rendering: this module's and the picture's code, the
    family, the steps' names and their recordings (``course._kept.rendering_key``)."""
    climb = family_of(upto, lessons, family)
    steps = climb_lessons(upto, lessons, family)
    named = repr([(upto.id, upto.day, climb)] + [(s.id, s.day, s.kernel_file) for s in steps])
    code = (
        Path(__file__),
        Path(__file__).with_name("result.py"),
        Path(__file__).with_name("spec.py"),
        Path(__file__).parents[1] / "picture.py",
    )
    return rendering_key("climb", code, [named, *(bench_dir() / f"{s.id}.json" for s in steps)])


def recorded_climb_picture(
    upto: Lesson, lessons: tuple[Lesson, ...], family: str | None = None
) -> Picture | Rendering:
    """The recorded climb as a page shows it: the rendering kept with the evidence when one was
    drawn from exactly these recordings with this code (``tools/keep_renderings.py``; a test checks
    each is the drawing of today's recordings), else drawn here (``recorded_climb_figure``)."""
    found = kept_rendering(climb_rendering_key(upto, lessons, family))
    return found if found is not None else recorded_climb_figure(upto, lessons, family)


def _peer(at: SizeRow, climb: Climb) -> Measurement | None:
    """The peer a size's row is set against in the table: the family's first named one, else the row's first."""
    if climb.peers:
        return next((p for p in at.peers if p.name == climb.peers[0]), None)
    return at.peers[0] if at.peers else None


def _ratio(at: SizeRow, peer: Measurement) -> float:
    """The kernel's rate over the peer's, as recorded (the same run's)."""
    return peer.ratio if peer.ratio is not None else at.kernel.rate / peer.rate


def climb_figure(upto: Lesson, rows: Sequence[ClimbRow], family: Climb | None = None) -> Picture:
    """TFLOP/s against the size (log2) for each step so far, solid; each distinct peer the family
    draws (``Climb.peers``; every one when it names none), dashed. ``family``: GEMM's by default."""
    climb = family or GEMM_CLIMB
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
                if climb.peers and p.name not in climb.peers:
                    continue
                xs, ys = peers.setdefault(p.name, ([], []))
                if x.size not in xs:
                    xs.append(x.size)
                    ys.append(p.rate)
    # Each library peer its own dash pattern (four grey dashed lines could not be told apart).
    dashes = ("--", "-.", (0, (1, 1)), (0, (5, 2, 1, 2, 1, 2)), (0, (8, 3)))
    for i, (name, (xs, ys)) in enumerate(peers.items()):
        order = sorted(range(len(xs)), key=xs.__getitem__)
        ax.plot([xs[i] for i in order], [ys[i] for i in order], linestyle=dashes[i % len(dashes)],
                color="black", alpha=0.45 + 0.3 * ("float16" in name or name in climb.peers[:1]), label=name)  # fmt: skip
    if sizes:
        ticks = sorted(sizes)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, labels=[str(s) for s in ticks])
        ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel(climb.size_label)
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
    where = rows[0].result.device if rows else f"not recorded on the {evidence.shown().device} yet"
    ax.set_title(f"{climb.title} up to Day {upto.day}: {where}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    # Under the axes, never over the lines (issue 38: 13 entries covered the small sizes' points).
    if ax.get_legend_handles_labels()[0]:  # no recorded step, no legend
        fig.legend(loc="outside lower center", ncols=3, fontsize=8)
    return fig


@dataclass(frozen=True)
class ClimbTable:
    rows: tuple[ClimbRow, ...]
    size: int
    family: Climb = GEMM_CLIMB
    # The steps with no recording on the GPU shown, and that GPU ('' when every step is recorded).
    unrecorded: tuple[Lesson, ...] = ()
    shown_device: str = ""

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
            peer = None if at is None else _peer(at, self.family)
            if at is None or peer is None:
                continue
            bought = "" if before is None else f"{at.kernel.rate / before:.2f}x"
            before = at.kernel.rate
            body.append(
                f"<tr><td style='{cell}'>Day {row.lesson.day}</td>"
                f"<td style='text-align:left;padding:2px 8px'>{e(row.lesson.title)}</td>"
                f"<td style='{cell}'>{at.kernel.rate:,.0f}</td><td style='{cell}'>{bought}</td>"
                f"<td style='{cell}'>{peer.rate:,.0f}</td><td style='{cell}'>{_ratio(at, peer):.2f}x</td>"
                f"<td style='{cell}'>{at.kernel.rate / DATASHEET_PEAK_TFLOPS:.0%}</td></tr>"
            )
        head = "".join(
            f"<th style='{heading}'>{h}</th>"
            for h in (
                "day",
                "step",
                "TFLOP/s",
                "vs step before",
                f"{self.family.peer} TFLOP/s",
                f"kernel / {self.family.peer}",
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
        if not self.rows and self.unrecorded:
            return f"<p>{e(self.missing())}</p>"
        missing = f" {e(self.missing())}" if self.unrecorded else ""
        return (
            f"<p>At {self.family.size_name} = {self.size}, {said}. {e(self.family.note)} Peak: "
            f"{DATASHEET_PEAK_TFLOPS:.0f} TFLOP/s ({e(DATASHEET)}).{missing}</p>"
            f"<table><tr>{head}</tr>{''.join(body)}</table>"
        )

    def missing(self) -> str:
        """The steps with no recording on the GPU shown, named, and how one is recorded ('' for none)."""
        if not self.unrecorded:
            return ""
        days = [f"Day {s.day}" for s in self.unrecorded]
        named = days[0] if len(days) == 1 else f"{', '.join(days[:-1])} and {days[-1]}"
        where = f" on the {self.shown_device}" if self.shown_device else ""
        left = "the climb has no step to show" if not self.rows else "the table and the plot leave them out"
        return (
            f"Not recorded yet{where}: {named} ({self.family.title.lower()}); {left}. "
            f"`python -m course bench {self.unrecorded[0].id}` on a Hopper GPU records one."
        )

    def __str__(self) -> str:
        lines = []
        for row in self.rows:
            at = next((x for x in row.result.rows if x.size == self.size), None)
            peer = None if at is None else _peer(at, self.family)
            if at is not None and peer is not None:
                lines.append(
                    f"Day {row.lesson.day}: {at.kernel.rate:,.0f} TFLOP/s, {_ratio(at, peer):.2f}x {self.family.peer}"
                )
        if self.unrecorded:
            lines.append(self.missing())
        return "\n".join(lines)


def climb_table(
    rows: Sequence[ClimbRow],
    size: int = 4096,
    family: Climb | None = None,
    unrecorded: Sequence[Lesson] = (),
) -> ClimbTable:
    """The climb's rows at ``size`` (GEMM's family by default), naming the steps ``unrecorded`` on the
    GPU whose recordings are shown (``unrecorded_steps``)."""
    shown = evidence.shown().device if unrecorded else ""
    return ClimbTable(tuple(rows), size, family or GEMM_CLIMB, tuple(unrecorded), shown)
