"""The timeline: model (see course.timeline)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import CourseError
from ..kernel.provenance import Provenance

if TYPE_CHECKING:
    from ..lesson import Lesson


SCHEMA_VERSION = 1
LAYOUT_VERSION = 1
MAGIC = int.from_bytes(b"COURSETL", "little")
DEFINE = "COURSE_TIMELINE"
SYMBOL = "courseTimeline"  # the kernel's __device__ pointer to the buffer
BLOCK_BEGIN = "// ---- Timeline stamps: the same block in every instrumented kernel ----"
BLOCK_END = "// ---- end of the timeline block ----"
DEFAULT_N = 4096  # the size the recorded timelines and the honesty checks use
_HEADER_WORDS = 8
_WORD_MASK = (1 << 64) - 1


class TimelineError(CourseError):
    """A timeline buffer or file that cannot be read as one: what is wrong, and where."""


# ---------------------------------------------------------------------------
# What the kernel stamps: the enum of the kernels' block, and what each begins.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Kind:
    code: int  # the kernel's enum value (TL_<name>)
    name: str
    activity: str | None  # the activity this event begins (None: the row ends)
    role: str | None  # the role an event of this kind reveals
    staged: bool  # its stage field names a pipeline stage


# A consumer's time from releasing a stage (its arrival on the stage's empty barrier, stamped
# RELEASE) to its next stamp (the next stage's wait, or the epilogue): named for where it begins,
# not "other" (issue 38: a learner could not tell what the pale bars were).
AFTER_RELEASE = "after release"

KINDS: tuple[Kind, ...] = (
    Kind(1, "START", "setup", None, False),
    Kind(2, "END", None, None, False),
    Kind(3, "WAIT_EMPTY", "wait: free stage", "producer", True),
    Kind(4, "LOAD", "load", "producer", True),
    Kind(5, "WAIT_FULL", "wait: data", "consumer", True),
    Kind(6, "MMA", "wgmma issue", "consumer", True),
    Kind(7, "MMA_WAIT", "wgmma wait", "consumer", True),
    Kind(8, "RELEASE", AFTER_RELEASE, "consumer", True),
    Kind(9, "SYNC", "wait: barrier", None, False),
    Kind(10, "EPI", "epilogue", "consumer", False),
)
_BY_CODE = {k.code: k for k in KINDS}
_BY_NAME = {k.name: k for k in KINDS}
NOT_RECORDED = "not recorded (slot full)"

# Activities in legend order, with their colours.
ACTIVITIES: dict[str, str] = {
    "load": "#1f77b4",
    "wait: free stage": "#9ecae1",
    "wait: data": "#ff7f0e",
    "wgmma issue": "#2ca02c",
    "wgmma wait": "#98df8a",
    "wait: barrier": "#8c8c8c",
    "epilogue": "#9467bd",
    "setup": "#e0e0e0",
    AFTER_RELEASE: "#f2f2f2",
    "other": "#fafafa",  # an event after END (no kernel stamps one)
    NOT_RECORDED: "#ffffff",
}
LOAD_ACTIVITIES = ("load",)
WGMMA_ACTIVITIES = ("wgmma issue", "wgmma wait")
WAIT_ACTIVITIES = ("wait: free stage", "wait: data", "wait: barrier")
ROLES = ("producer", "consumer", "producer+consumer", "other")


def kind_named(name: str) -> Kind:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise TimelineError(f"no event kind named {name!r} (the kinds: {', '.join(_BY_NAME)})") from None


# ---------------------------------------------------------------------------
# The layout, read from the kernel's own constants.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    ctas: int  # CTAs recorded event by event (kTlCtas)
    warpgroups: int  # slots per CTA (kTlWarpgroups)
    capacity: int  # events kept per slot (kTlCap), a power of 2

    def __post_init__(self) -> None:
        for name in ("ctas", "warpgroups", "capacity"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise TimelineError(f"layout: {name} must be a positive integer (got {value!r})")
        if self.capacity & (self.capacity - 1) or self.capacity < 2:
            raise TimelineError(f"layout: capacity must be a power of 2, at least 2 (got {self.capacity})")
        if self.warpgroups > 16:
            raise TimelineError(f"layout: at most 16 warpgroups per CTA (got {self.warpgroups})")

    @property
    def slots(self) -> int:
        return self.ctas * self.warpgroups

    @property
    def head(self) -> int:
        """Word index of the layout words (after the slots' events)."""
        return 2 * self.capacity * self.slots

    @property
    def span_offset(self) -> int:
        """Word index of the first CTA's [start, end] pairs."""
        return self.head + _HEADER_WORDS + self.slots

    def words(self, grid_ctas: int) -> int:
        """The buffer's length, in 8-byte words, for a launch of ``grid_ctas`` CTAs."""
        return self.span_offset + 2 * self.warpgroups * grid_ctas

    @classmethod
    def of(cls, lesson: Lesson) -> Layout:
        """The layout the lesson's kernel declares (kTlCtas, kTlWarpgroups, kTlCap)."""
        if not instrumented(lesson):
            raise TimelineError(
                f"{lesson.kernel_file} carries no timeline stamps (no COURSE_TIMELINE block), so "
                f"{lesson.id} cannot record a timeline (python -m course timeline --help lists the "
                "lessons that can)",
                path=lesson.kernel_path,
            )
        c = lesson.constants()
        try:
            return cls(int(c["kTlCtas"]), int(c["kTlWarpgroups"]), int(c["kTlCap"]))
        except KeyError as e:
            raise TimelineError(
                f"the kernel's timeline block must declare constexpr unsigned {e.args[0]}",
                path=lesson.kernel_path,
            ) from None


def instrumented(lesson: Lesson) -> bool:
    """Whether the lesson's kernel carries the timeline block."""
    try:
        return BLOCK_BEGIN in lesson.kernel_path.read_text(encoding="utf-8")
    except (OSError, CourseError):  # no kernel file, or no course material at all
        return False


# ---------------------------------------------------------------------------
# Typed results.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    kind: str  # KINDS name: "LOAD", "MMA", ...
    stage: int
    gt_ns: int  # %globaltimer as stamped, ns
    cycles: int  # clock64 cycles since the row's first event
    t_ns: float  # on the timeline: ns since its origin (the earliest recorded stamp)


@dataclass(frozen=True)
class RawRow:
    """One slot as stamped: what ``decode`` reads and the JSON keeps."""

    cta: int
    warpgroup: int
    smid: int
    kinds: tuple[int, ...]
    stages: tuple[int, ...]
    gt_ns: tuple[int, ...]
    clock32: tuple[int, ...]  # clock64's low 32 bits
    full: bool  # the slot filled up: events before the last one were dropped


@dataclass(frozen=True)
class Row:
    cta: int
    warpgroup: int
    smid: int
    role: str  # ROLES
    events: tuple[Event, ...]
    full: bool
    clock_fit: bool  # times from clock64 fitted to %globaltimer; False: raw %globaltimer

    @property
    def start_ns(self) -> float:
        return self.events[0].t_ns

    @property
    def end_ns(self) -> float:
        return self.events[-1].t_ns

    @property
    def label(self) -> str:
        return f"CTA {self.cta} (SM {self.smid}) wg {self.warpgroup}: {self.role}"


@dataclass(frozen=True)
class KernelSpan:
    """First start and last end over every warpgroup of every CTA (absolute %globaltimer)."""

    start_ns: int
    end_ns: int
    ctas: int
    warpgroups: int  # warpgroup recorders that stamped both ends

    @property
    def ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class ClockFit:
    ns_per_cycle: float | None  # None: no fit (too few events, or an implausible slope)
    step_ns: int | None  # the smallest nonzero %globaltimer step seen between events
    fitted_rows: int
    raw_rows: int
    max_residual_ns: float  # largest |%globaltimer - fit| over the fitted rows

    def describe(self) -> str:
        if self.ns_per_cycle is None:
            return (
                "event times are raw %globaltimer (no clock64 fit: too few events or an implausible slope); "
                f"its smallest step in this recording: {self.step_ns} ns"
            )
        ghz = 1.0 / self.ns_per_cycle
        fell = f"; {self.raw_rows} row(s) fell back to raw %globaltimer" if self.raw_rows else ""
        return (
            f"event times: each row's %globaltimer, refined by clock64 at {ghz:.3f} GHz (the median of the rows' "
            f"least-squares fits; largest deviation {self.max_residual_ns:.0f} ns; smallest %globaltimer step seen "
            f"{self.step_ns} ns){fell}"
        )


@dataclass(frozen=True)
class Timeline:
    lesson: str
    n: int
    grid: tuple[int, ...]
    block: tuple[int, ...]
    layout: Layout
    raw: tuple[RawRow, ...] = field(repr=False)
    rows: tuple[Row, ...]
    span: KernelSpan
    origin_ns: int  # absolute %globaltimer of the timeline's zero
    clock: ClockFit
    provenance: Provenance | None = None
    launch_ms: float | None = None  # CUDA events around the recorded launch
    notes: tuple[str, ...] = ()

    @property
    def grid_ctas(self) -> int:
        return math.prod(self.grid)

    @property
    def recorded_ctas(self) -> tuple[int, ...]:
        return tuple(sorted({r.cta for r in self.rows}))

    @property
    def recorded_ns(self) -> float:
        """First to last stamp over the recorded CTAs."""
        return max(r.end_ns for r in self.rows) - min(r.start_ns for r in self.rows)

    def roles(self) -> tuple[str, ...]:
        return tuple(r for r in ROLES if any(row.role == r for row in self.rows))
