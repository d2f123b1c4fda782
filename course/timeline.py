"""Inside the kernel: a producer/consumer timeline that the kernel records itself.

Most cloud GPUs give no profiler counters, and timing variants of a kernel
with parts removed says how long each part takes, not when. So the kernels
that teach a pipeline carry their own stamps: built with
``-DCOURSE_TIMELINE``, one elected thread per warpgroup writes an event at
each ``COURSE_TL(kind, stage)`` line (a producer waiting for a free stage,
issuing its loads; a consumer waiting for data, issuing wgmma, waiting for
it, releasing a stage; a barrier; the epilogue). Built without the macro,
those lines are ``((void)0)`` and the cubin is the same, byte for byte
(``tests/test_timeline_kernels.py``). The recipe is the one Triton's Proton,
TVM's and FlashInfer's in-kernel profilers share: a buffer, fixed slots,
one writer per slot, no atomics, a compile-time switch.

This module is the host side, for any lesson whose kernel carries the
block (``instrumented(lesson)``); it knows no lesson by name:

- ``record``: compile with the macro, point the kernel's ``courseTimeline``
  at a zeroed buffer (``RawModule.get_global``: the kernel's signature is
  unchanged), run the lesson's workload once (after warm-up launches that
  record nothing), check its result, read the buffer back;
- ``decode``: the buffer into typed ``Row``s of ``Event``s, refusing a
  truncated or corrupt buffer with a ``TimelineError`` that says what is
  wrong and where;
- ``intervals``, ``summarize``: each event begins an activity that lasts
  until the warpgroup's next event; time per activity per role, and how
  much of the consumer's wgmma time the producer spent loading;
- ``figure``: one row per warpgroup of the recorded CTAs, coloured by
  activity, stages labelled, time in microseconds;
- ``write`` / ``load``: ``evidence/timeline/<lesson>.json`` (the raw
  events, with provenance) and ``.png``.

The buffer (8-byte words), as the kernel's block lays it out:

- ``[0, head)``: ``ctas * warpgroups`` slots of ``2 * capacity`` words, one
  per warpgroup of the recorded CTAs (linear CTA ids ``0..ctas-1``); an
  event is ``[%globaltimer, clock64 low 32 bits << 32 | stage << 8 | kind]``;
  a slot that fills up keeps overwriting its last place, so the last event
  kept is the latest one (its end);
- ``[head, head + 8)``: magic ``"COURSETL"``, layout version, ``ctas``,
  ``warpgroups``, ``capacity``, the CTAs the kernel ran;
- ``[head + 8, head + 8 + ctas * warpgroups)``: per slot, who recorded it:
  ``1 << 32 | smid << 8 | warpgroup`` (0: nobody);
- then ``[start, end]`` (``%globaltimer``) of every warpgroup of every CTA
  that the kernel elected a recorder in: the whole kernel's span.

Two clocks, on purpose. ``%globaltimer`` is in nanoseconds and the same
clock on every SM, so rows from different SMs line up; but it may tick
coarsely (``globaltimer_resolution`` measures it; public reports range from
32 ns to 1 us). ``clock64`` counts the SM's own cycles: fine-grained, but
each SM's counter starts elsewhere. The timeline places each event at its
row's ``%globaltimer`` anchor plus its ``clock64`` distance, converted to
nanoseconds at one rate for all rows (every SM runs the same clock; the
rate is the median of the rows' least-squares slopes). A row whose
``%globaltimer`` strays from that line by more than twice the timer's
observed step (+ 100 ns) keeps raw ``%globaltimer``. ``Timeline.clock``
says which rows used which.
"""

from __future__ import annotations

import base64
import functools
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _data, _paths
from ._atomic import atomic_write_bytes, atomic_write_text
from ._html import escape
from .errors import CheckFailed, CourseError
from .picture import Picture, picture
from .provenance import Provenance

if TYPE_CHECKING:
    from .compile import Compiled
    from .host import Workload
    from .lesson import Lesson

__all__ = [
    "ACTIVITIES",
    "DEFAULT_N",
    "KINDS",
    "Event",
    "Interval",
    "KernelSpan",
    "Layout",
    "Overhead",
    "Row",
    "Summary",
    "Timeline",
    "TimelineError",
    "TimelineSection",
    "TimerResolution",
    "decode",
    "figure",
    "globaltimer_resolution",
    "instrumented",
    "intervals",
    "load",
    "measure_overhead",
    "record",
    "summarize",
    "timeline_dir",
    "timeline_section",
    "write",
]

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


KINDS: tuple[Kind, ...] = (
    Kind(1, "START", "setup", None, False),
    Kind(2, "END", None, None, False),
    Kind(3, "WAIT_EMPTY", "wait: free stage", "producer", True),
    Kind(4, "LOAD", "load", "producer", True),
    Kind(5, "WAIT_FULL", "wait: data", "consumer", True),
    Kind(6, "MMA", "wgmma issue", "consumer", True),
    Kind(7, "MMA_WAIT", "wgmma wait", "consumer", True),
    Kind(8, "RELEASE", "other", "consumer", True),
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
    "other": "#f2f2f2",
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
                f"{lesson.id} cannot record a timeline; the instrumented lessons are: "
                f"{', '.join(instrumented_lessons()) or 'none'}",
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
    except OSError:
        return False


def instrumented_lessons() -> list[str]:
    from .lessons import LESSONS

    return [lesson_id for lesson_id, lesson in LESSONS.items() if instrumented(lesson)]


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


# ---------------------------------------------------------------------------
# Decoding and validation.
# ---------------------------------------------------------------------------
def _as_words(buffer: Any) -> np.ndarray:
    if isinstance(buffer, (bytes, bytearray, memoryview)):
        raw = bytes(buffer)
        if len(raw) % 8:
            raise TimelineError(
                f"the timeline buffer holds {len(raw)} bytes, not a whole number of 8-byte words: it was cut short"
            )
        return np.frombuffer(raw, dtype="<u8")
    words = np.asarray(buffer)
    if words.ndim != 1 or words.dtype != np.uint64:
        raise TimelineError(
            f"the timeline buffer must be a 1-D array of uint64 words (got {words.ndim}-D {words.dtype})"
        )
    return words


def _where(cta: int, wg: int) -> str:
    return f"CTA {cta} warpgroup {wg}"


def validate_row(raw: RawRow, capacity: int | None = None) -> None:
    """A slot's events must make sense: known kinds, time never going back, START first, END last."""
    where = _where(raw.cta, raw.warpgroup)
    n = len(raw.kinds)
    if not (len(raw.stages) == len(raw.gt_ns) == len(raw.clock32) == n):
        raise TimelineError(f"{where}: the event fields have different lengths")
    if n == 0:
        raise TimelineError(f"{where}: a recorder that stamped no event (every recorder stamps START first)")
    if capacity is not None and n > capacity:
        raise TimelineError(f"{where}: {n} events in a slot of {capacity}")
    for i, code in enumerate(raw.kinds):
        if code not in _BY_CODE:
            known = ", ".join(f"{k.code} {k.name}" for k in KINDS)
            raise TimelineError(
                f"{where}, event {i}: kind {code} (0x{code:x}) is not an event kind (the kinds: {known}); "
                "the buffer is corrupt or was written by another layout"
            )
    for i, stage in enumerate(raw.stages):
        if not 0 <= stage <= 255:
            raise TimelineError(f"{where}, event {i}: stage {stage} is outside 0..255")
    for i, c in enumerate(raw.clock32):
        if not 0 <= c < 1 << 32:
            raise TimelineError(f"{where}, event {i}: clock {c} is not a 32-bit value")
    for i in range(1, n):
        if raw.gt_ns[i] < raw.gt_ns[i - 1]:
            raise TimelineError(
                f"{where}, event {i} ({_BY_CODE[raw.kinds[i]].name}): %globaltimer {raw.gt_ns[i]} ns is earlier "
                f"than event {i - 1}'s {raw.gt_ns[i - 1]} ns; one thread's stamps never go back in time, so "
                "the buffer is corrupt"
            )
    names = [_BY_CODE[c].name for c in raw.kinds]
    if names[0] != "START":
        raise TimelineError(f"{where}: the first event is {names[0]}, not START")
    if "START" in names[1:]:
        raise TimelineError(f"{where}: START appears again at event {names.index('START', 1)}")
    if "END" in names[:-1]:
        raise TimelineError(f"{where}: END at event {names.index('END')} is not the last event")
    if names[-1] != "END" and not raw.full:
        raise TimelineError(
            f"{where}: the last event is {names[-1]}, not END: the warpgroup never stamped its end (the kernel "
            "stopped early, or the buffer was read before it finished)"
        )


def decode_raw(buffer: Any, layout: Layout, grid_ctas: int) -> tuple[tuple[RawRow, ...], KernelSpan]:
    """The slots and the kernel span from a buffer, validated; TimelineError says what is wrong."""
    words = _as_words(buffer)
    need = layout.words(grid_ctas)
    if len(words) != need:
        what = "truncated" if len(words) < need else "longer than the layout"
        raise TimelineError(
            f"the timeline buffer holds {len(words)} words; the layout ({layout.ctas} CTAs x "
            f"{layout.warpgroups} warpgroups x {layout.capacity} events) for {grid_ctas} CTAs needs {need}: {what}"
        )
    head = [int(w) for w in words[layout.head : layout.head + _HEADER_WORDS]]
    if not any(head):
        raise TimelineError(
            "nothing was recorded: the layout words are zero. The kernel must be built with -DCOURSE_TIMELINE "
            f"and its {SYMBOL} pointed at the buffer before the launch"
        )
    if head[0] != MAGIC:
        raise TimelineError(
            f"not a timeline buffer: word {layout.head} is 0x{head[0]:016x}, the magic is 0x{MAGIC:016x} "
            '("COURSETL")'
        )
    if head[1] != LAYOUT_VERSION:
        raise TimelineError(
            f"layout version {head[1]} in the buffer; this course reads version {LAYOUT_VERSION}"
        )
    theirs = (head[2], head[3], head[4])
    ours = (layout.ctas, layout.warpgroups, layout.capacity)
    if theirs != ours:
        raise TimelineError(
            f"the kernel's layout (ctas, warpgroups, capacity) = {theirs} is not the host's {ours}: the kernel "
            "file and the layout the host read disagree"
        )
    if head[5] != grid_ctas:
        raise TimelineError(f"the kernel ran {head[5]} CTAs; the host launched {grid_ctas}")
    rows: list[RawRow] = []
    cap = layout.capacity
    for slot in range(layout.slots):
        cta, wg = divmod(slot, layout.warpgroups)
        owner = int(words[layout.head + _HEADER_WORDS + slot])
        events = words[2 * cap * slot : 2 * cap * (slot + 1)].reshape(cap, 2)
        second = events[:, 1]
        used = np.flatnonzero(second == 0)
        count = int(used[0]) if used.size else cap
        where = _where(cta, wg)
        if events[count:].any():
            bad = count + int(np.flatnonzero(events[count:].any(axis=1))[0])
            raise TimelineError(
                f"{where}: event {bad} follows an empty place at event {count}; a slot is written from its "
                "start without gaps, so the buffer is corrupt"
            )
        if owner == 0:
            if count:
                raise TimelineError(f"{where}: {count} events but no owner word: the buffer is corrupt")
            continue
        if cta >= grid_ctas:
            raise TimelineError(f"{where}: recorded, but the kernel ran only {grid_ctas} CTAs")
        if owner >> 32 != 1 or owner & 0xFF != wg:
            raise TimelineError(
                f"{where}: the owner word 0x{owner:016x} is not (1 << 32 | SM << 8 | {wg}): the buffer is corrupt"
            )
        if (second[:count] >> np.uint64(16) & np.uint64(0xFFFF)).any():
            i = int(np.flatnonzero(second[:count] >> np.uint64(16) & np.uint64(0xFFFF))[0])
            raise TimelineError(
                f"{where}, event {i}: bits 16..31 are set; they are unused, so the buffer is corrupt"
            )
        raw = RawRow(
            cta,
            wg,
            (owner >> 8) & 0xFFFFFF,
            tuple(int(k) for k in second[:count] & np.uint64(0xFF)),
            tuple(int(s) for s in (second[:count] >> np.uint64(8)) & np.uint64(0xFF)),
            tuple(int(t) for t in events[:count, 0]),
            tuple(int(c) for c in second[:count] >> np.uint64(32)),
            count == cap,
        )
        validate_row(raw, cap)
        rows.append(raw)
    if not rows:
        raise TimelineError("the layout words are set but no warpgroup recorded an event")
    pairs = words[layout.span_offset :].reshape(grid_ctas, layout.warpgroups, 2)
    span = _kernel_span(pairs, rows)
    return tuple(rows), span


def _kernel_span(pairs: np.ndarray, rows: Sequence[RawRow]) -> KernelSpan:
    starts, ends = pairs[..., 0], pairs[..., 1]
    half = (starts == 0) != (ends == 0)
    if half.any():
        cta, wg = (int(v) for v in np.argwhere(half)[0])
        which = "an end but no start" if starts[cta, wg] == 0 else "a start but no end"
        raise TimelineError(f"kernel span: {_where(cta, wg)} stamped {which}")
    both = starts != 0
    backwards = both & (ends < starts)
    if backwards.any():
        cta, wg = (int(v) for v in np.argwhere(backwards)[0])
        raise TimelineError(f"kernel span: {_where(cta, wg)} ends before it starts")
    silent = ~both.any(axis=1)
    if silent.any():
        cta = int(np.flatnonzero(silent)[0])
        raise TimelineError(
            f"kernel span: CTA {cta} of {len(pairs)} stamped no start: every CTA's elected threads stamp one, so "
            "the kernel did not run all its CTAs or the buffer is corrupt"
        )
    for raw in rows:
        if not both[raw.cta, raw.warpgroup]:
            raise TimelineError(f"kernel span: {_where(raw.cta, raw.warpgroup)} recorded events but no span")
    return KernelSpan(
        int(starts[both].min()), int(ends[both].max()), int(pairs.shape[0]), int(np.count_nonzero(both))
    )


def _role(kinds: Iterable[int]) -> str:
    roles = {_BY_CODE[k].role for k in kinds} - {None}
    if roles == {"producer", "consumer"}:
        return "producer+consumer"
    if len(roles) == 1:
        return roles.pop()  # type: ignore[return-value]
    return "other"


def _unwrap(clock32: Sequence[int]) -> np.ndarray:
    c = np.asarray(clock32, dtype=np.int64)
    steps = np.diff(c) % (1 << 32)  # one thread's stamps are far less than 2^32 cycles apart
    return np.concatenate([[0], np.cumsum(steps)]).astype(np.int64)


def _fit_clock(raws: Sequence[RawRow]) -> tuple[ClockFit, list[np.ndarray], list[bool]]:
    """Event times per row, in ns after the row's first %globaltimer stamp (float; %globaltimer
    itself is ~1.8e18 ns, beyond float64's integer precision, so rows keep it as their int anchor)."""
    gts = [np.asarray(r.gt_ns, dtype=np.int64) for r in raws]
    cycles = [_unwrap(r.clock32) for r in raws]
    steps = [int(d) for g in gts for d in np.diff(g) if d > 0]
    step = min(steps) if steps else None
    # Every SM runs the same clock: each row's least-squares slope estimates it,
    # and their median is robust to a row whose clock64 disagrees.
    slopes = []
    for g, c in zip(gts, cycles, strict=True):
        if len(g) < 3 or c[-1] == 0:
            continue
        gc, cc = (g - g[0]).astype(np.float64), c.astype(np.float64)
        gc -= gc.mean()
        cc -= cc.mean()
        slopes.append(float(np.dot(cc, gc)) / float(np.dot(cc, cc)))
    slope = float(np.median(slopes)) if slopes else None
    if slope is not None and not 0.1 <= slope <= 10.0:  # 100 MHz .. 10 GHz: anything else is not a clock fit
        slope = None
    tolerance = 2.0 * (step or 0) + 100.0
    times: list[np.ndarray] = []
    fitted: list[bool] = []
    worst = 0.0
    for g, c in zip(gts, cycles, strict=True):
        rel = (g - g[0]).astype(np.float64)
        if slope is None or len(g) < 2:
            times.append(rel)
            fitted.append(False)
            continue
        intercept = float(np.mean(rel - slope * c))
        t = intercept + slope * c.astype(np.float64)
        residual = float(np.max(np.abs(rel - t)))
        if residual > tolerance:
            times.append(rel)
            fitted.append(False)
            continue
        worst = max(worst, residual)
        times.append(t)
        fitted.append(True)
    fit = ClockFit(slope if any(fitted) else None, step, sum(fitted), len(fitted) - sum(fitted), worst)
    return fit, times, fitted


def build(
    raws: Sequence[RawRow],
    span: KernelSpan,
    layout: Layout,
    lesson: str,
    n: int,
    grid: Sequence[int],
    block: Sequence[int],
    provenance: Provenance | None = None,
    launch_ms: float | None = None,
    notes: Sequence[str] = (),
) -> Timeline:
    """A Timeline from validated raw rows: roles, clock fit, event times."""
    if not raws:
        raise TimelineError("a timeline needs at least one recorded warpgroup")
    for raw in raws:
        validate_row(raw, layout.capacity)
    clock, times, fitted = _fit_clock(raws)
    origin = min(raw.gt_ns[0] + round(float(t[0])) for raw, t in zip(raws, times, strict=True))
    rows = []
    for raw, t, ok in sorted(zip(raws, times, fitted, strict=True), key=lambda x: (x[0].cta, x[0].warpgroup)):
        cyc = _unwrap(raw.clock32)
        shift = raw.gt_ns[0] - origin  # a small int: exact in float64
        events = tuple(
            Event(_BY_CODE[k].name, s, g, int(c), shift + float(ti))
            for k, s, g, c, ti in zip(raw.kinds, raw.stages, raw.gt_ns, cyc, t, strict=True)
        )
        rows.append(Row(raw.cta, raw.warpgroup, raw.smid, _role(raw.kinds), events, raw.full, ok))
    return Timeline(
        lesson,
        n,
        tuple(int(g) for g in grid),
        tuple(int(b) for b in block),
        layout,
        tuple(raws),
        tuple(rows),
        span,
        origin,
        clock,
        provenance,
        launch_ms,
        tuple(notes),
    )


def decode(
    buffer: Any,
    layout: Layout,
    grid: Sequence[int],
    lesson: str = "",
    n: int = 0,
    block: Sequence[int] = (),
    provenance: Provenance | None = None,
    launch_ms: float | None = None,
) -> Timeline:
    """A buffer the kernel filled, as a validated Timeline (TimelineError when it is not one)."""
    raws, span = decode_raw(buffer, layout, math.prod(grid))
    return build(raws, span, layout, lesson, n, grid, block, provenance, launch_ms)


# ---------------------------------------------------------------------------
# Intervals and the summary.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    cta: int
    warpgroup: int
    role: str
    activity: str
    stage: int | None  # the pipeline stage, for events that name one
    start_ns: float
    end_ns: float

    @property
    def ns(self) -> float:
        return self.end_ns - self.start_ns


def row_intervals(row: Row) -> list[Interval]:
    """Each event begins an activity that lasts until the row's next event."""
    out = []
    last = len(row.events) - 1
    for i in range(last):
        e, nxt = row.events[i], row.events[i + 1]
        kind = _BY_CODE[_BY_NAME[e.kind].code]
        activity = kind.activity or "other"
        if row.full and i == last - 1:
            activity = NOT_RECORDED  # the events between these two were dropped
        stage = e.stage if kind.staged else None
        out.append(Interval(row.cta, row.warpgroup, row.role, activity, stage, e.t_ns, nxt.t_ns))
    return out


def intervals(timeline: Timeline) -> list[Interval]:
    return [iv for row in timeline.rows for iv in row_intervals(row)]


def _union(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _measure(spans: Sequence[tuple[float, float]]) -> float:
    return sum(b - a for a, b in spans)


def _intersection(x: Sequence[tuple[float, float]], y: Sequence[tuple[float, float]]) -> float:
    total, i, j = 0.0, 0, 0
    while i < len(x) and j < len(y):
        lo, hi = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if hi > lo:
            total += hi - lo
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class ActivityTime:
    role: str
    activity: str
    ns: float  # summed over the role's rows
    share: float  # of the role's rows' total time
    rows: int


@dataclass(frozen=True)
class Overlap:
    """One CTA: the consumer's wgmma time, and how much of it the producer spent loading."""

    cta: int
    load_ns: float
    wgmma_ns: float
    both_ns: float

    @property
    def share(self) -> float | None:
        return self.both_ns / self.wgmma_ns if self.wgmma_ns > 0 else None


@dataclass(frozen=True)
class Summary:
    lesson: str
    activities: tuple[ActivityTime, ...]
    overlaps: tuple[Overlap, ...]
    role_ns: dict[str, float]
    recorded_ns: float
    kernel_ns: int
    recorded_ctas: int
    grid_ctas: int
    launch_ms: float | None
    clock: str

    def share(self, role: str, activities: Sequence[str]) -> float | None:
        """Fraction of ``role``'s time spent in ``activities`` (None when the role is absent)."""
        total = self.role_ns.get(role)
        if not total:
            return None
        return sum(a.ns for a in self.activities if a.role == role and a.activity in activities) / total

    def load_share(self) -> float | None:
        """The producer's time loading, as a fraction of its time (a warpgroup doing both roles counts)."""
        for role in ("producer", "producer+consumer"):
            s = self.share(role, LOAD_ACTIVITIES)
            if s is not None:
                return s
        return None

    def wgmma_share(self) -> float | None:
        for role in ("consumer", "producer+consumer"):
            s = self.share(role, WGMMA_ACTIVITIES)
            if s is not None:
                return s
        return None

    def overlap_share(self) -> float | None:
        w = sum(o.wgmma_ns for o in self.overlaps)
        return sum(o.both_ns for o in self.overlaps) / w if w > 0 else None

    def table_rows(self) -> list[list[str]]:
        rows = [["role", "activity", "time (us, all rows)", "share of the role's time", "rows"]]
        for a in self.activities:
            rows.append([a.role, a.activity, f"{a.ns / 1e3:,.1f}", f"{100 * a.share:.1f}%", str(a.rows)])
        return rows

    def findings(self) -> list[str]:
        out = [
            f"{self.recorded_ctas} of {self.grid_ctas} CTAs recorded event by event; their stamps cover "
            f"{self.recorded_ns / 1e3:,.1f} us. Every CTA stamped its start and end: the whole kernel spans "
            f"{self.kernel_ns / 1e3:,.1f} us"
            + (
                f" (CUDA events around the same launch: {self.launch_ms * 1e3:,.1f} us)."
                if self.launch_ms
                else "."
            )
        ]
        load, mma = self.load_share(), self.wgmma_share()
        if load is not None:
            out.append(f"The producer spends {100 * load:.1f}% of its time issuing or copying loads.")
        if mma is not None:
            out.append(f"The consumer spends {100 * mma:.1f}% of its time issuing or waiting for wgmma.")
        waits = [(r, self.share(r, WAIT_ACTIVITIES)) for r in self.role_ns]
        for role, w in waits:
            if w:
                out.append(f"The {role} waits (data, a free stage, a barrier) {100 * w:.1f}% of its time.")
        o = self.overlap_share()
        if o is not None:
            out.append(
                f"While the consumer issued or waited for wgmma, the producer was loading {100 * o:.1f}% of the "
                "time (a TMA producer's thread only issues; the copy engine does the rest on its own)."
            )
        out.append(self.clock[0].upper() + self.clock[1:] + ".")
        return out

    def text(self) -> str:
        rows = self.table_rows()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join([*(f"- {f}" for f in self.findings()), "", *lines])

    def html(self) -> str:
        rows = self.table_rows()
        cell = "padding:2px 8px;text-align:left;white-space:nowrap"
        head = "".join(f"<th style='{cell}'>{escape(c)}</th>" for c in rows[0])
        body = "".join(
            "<tr>" + "".join(f"<td style='{cell}'>{escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:]
        )
        items = "".join(f"<li>{escape(f)}</li>" for f in self.findings())
        return f"<ul>{items}</ul><table><tr>{head}</tr>{body}</table>"


def summarize(timeline: Timeline) -> Summary:
    ivs = intervals(timeline)
    role_ns: dict[str, float] = {}
    role_rows: dict[str, int] = {}
    for row in timeline.rows:
        role_ns[row.role] = role_ns.get(row.role, 0.0) + (row.end_ns - row.start_ns)
        role_rows[row.role] = role_rows.get(row.role, 0) + 1
    totals: dict[tuple[str, str], float] = {}
    for iv in ivs:
        key = (iv.role, iv.activity)
        totals[key] = totals.get(key, 0.0) + iv.ns
    order = list(ACTIVITIES)
    activities = tuple(
        ActivityTime(role, act, ns, ns / role_ns[role] if role_ns[role] else 0.0, role_rows[role])
        for (role, act), ns in sorted(
            totals.items(), key=lambda kv: (ROLES.index(kv[0][0]), order.index(kv[0][1]))
        )
    )
    overlaps = []
    for cta in timeline.recorded_ctas:
        mine = [iv for iv in ivs if iv.cta == cta]
        loads = _union(
            (iv.start_ns, iv.end_ns)
            for iv in mine
            if iv.activity in LOAD_ACTIVITIES and iv.role in ("producer", "producer+consumer")
        )
        mma = _union(
            (iv.start_ns, iv.end_ns)
            for iv in mine
            if iv.activity in WGMMA_ACTIVITIES and iv.role in ("consumer", "producer+consumer")
        )
        if loads or mma:
            overlaps.append(Overlap(cta, _measure(loads), _measure(mma), _intersection(loads, mma)))
    return Summary(
        timeline.lesson,
        activities,
        tuple(overlaps),
        role_ns,
        timeline.recorded_ns,
        timeline.span.ns,
        len(timeline.recorded_ctas),
        timeline.grid_ctas,
        timeline.launch_ms,
        timeline.clock.describe(),
    )


# ---------------------------------------------------------------------------
# The picture.
# ---------------------------------------------------------------------------
_DENSE = 60  # events in a row above which the figure adds a zoomed panel


def _zoom_window(timeline: Timeline, periods: int = 6) -> tuple[float, float] | None:
    """A window over a few consumer k-steps in the middle of the first consumer row."""
    for row in timeline.rows:
        starts = [e.t_ns for e in row.events if e.kind == "MMA"]
        if len(starts) > periods + 2:
            mid = len(starts) // 2 - periods // 2
            lo, hi = starts[mid], starts[mid + periods]
            if hi > lo:
                return lo, hi
    return None


def figure(timeline: Timeline, window_us: tuple[float, float] | None = None, zoom: bool = True) -> Picture:
    """One row per recorded warpgroup, coloured by activity; a zoomed panel when rows are dense."""
    rows = timeline.rows
    ivs = {(r.cta, r.warpgroup): row_intervals(r) for r in rows}
    whole = (0.0, max(r.end_ns for r in rows) / 1e3)
    windows = [window_us or whole]
    dense = max(len(r.events) for r in rows) > _DENSE
    if zoom and window_us is None and dense:
        z = _zoom_window(timeline)
        if z is not None:
            windows.append((z[0] / 1e3, z[1] / 1e3))
    height = 0.9 + 0.32 * len(rows)
    fig = picture(figsize=(12, 0.9 + height * len(windows)))
    axes = fig.subplots(len(windows), 1, squeeze=False)[:, 0]
    used: list[str] = []
    for p, (ax, (lo, hi)) in enumerate(zip(axes, windows, strict=True)):
        width = hi - lo
        for i, row in enumerate(rows):
            y = len(rows) - 1 - i
            by_activity: dict[str, list[tuple[float, float]]] = {}
            for iv in ivs[(row.cta, row.warpgroup)]:
                a, b = iv.start_ns / 1e3, iv.end_ns / 1e3
                if b < lo or a > hi:
                    continue
                by_activity.setdefault(iv.activity, []).append((a, max(b - a, width * 1e-4)))
                if iv.stage is not None and (b - a) > 0.025 * width:
                    ax.text(
                        (max(a, lo) + min(b, hi)) / 2,
                        y,
                        str(iv.stage),
                        ha="center",
                        va="center",
                        fontsize=6,
                        clip_on=True,
                    )
            for activity, bars in by_activity.items():
                hatch = "////" if activity == NOT_RECORDED else None
                ax.broken_barh(
                    bars,
                    (y - 0.38, 0.76),
                    facecolors=ACTIVITIES[activity],
                    edgecolor="#555555" if hatch else "none",
                    hatch=hatch,
                    linewidth=0.3,
                )
                if activity not in used:
                    used.append(activity)
            releases = [e.t_ns / 1e3 for e in row.events if e.kind == "RELEASE" and lo <= e.t_ns / 1e3 <= hi]
            if releases:
                ax.vlines(releases, y + 0.38, y + 0.5, color="black", linewidth=0.5)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([r.label for r in reversed(rows)], fontsize=7)
        ax.set_xlim(lo, hi)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.set_xlabel("time (us) since the first recorded stamp", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(True, axis="x", alpha=0.3)
        if p == 1:
            ax.set_title(
                f"zoom: {hi - lo:,.2f} us in the middle of the run (numbers: pipeline stages)", fontsize=8
            )
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=ACTIVITIES[a], edgecolor="#555555", label=a) for a in ACTIVITIES if a in used]
    axes[0].legend(
        handles=handles, fontsize=7, ncol=min(len(handles), 5), loc="lower left", bbox_to_anchor=(0, 1.0)
    )
    where = ""
    if timeline.provenance is not None:
        where = f", {timeline.provenance.device}, {timeline.provenance.recorded_at[:10]}"
    fig.suptitle(
        f"{timeline.lesson} at N = {timeline.n}: each warpgroup of {len(timeline.recorded_ctas)} of its "
        f"{timeline.grid_ctas} CTAs{where}",
        fontsize=9,
    )
    return fig


def png_bytes(timeline: Timeline) -> bytes:
    return figure(timeline).png(dpi=110)


# ---------------------------------------------------------------------------
# Evidence: JSON and PNG.
# ---------------------------------------------------------------------------
def timeline_dir() -> Path:
    """Where recorded timelines live: evidence/timeline/."""
    return _paths.evidence_dir() / "timeline"


def _row_dict(raw: RawRow) -> dict[str, Any]:
    gt = list(raw.gt_ns)
    return {
        "cta": raw.cta,
        "warpgroup": raw.warpgroup,
        "smid": raw.smid,
        "full": raw.full,
        "t0_ns": gt[0],
        "kind": list(raw.kinds),
        "stage": list(raw.stages),
        "dt_ns": [0] + [b - a for a, b in zip(gt, gt[1:], strict=False)],
        "clock0": raw.clock32[0],
        "dclock": [0] + [(b - a) % (1 << 32) for a, b in zip(raw.clock32, raw.clock32[1:], strict=False)],
    }


def to_dict(timeline: Timeline) -> dict[str, Any]:
    if timeline.provenance is None:
        raise TimelineError(
            "only a recording made on a GPU is written as evidence (this timeline has no provenance)"
        )
    p = timeline.provenance
    return {
        "schema_version": SCHEMA_VERSION,
        "lesson": timeline.lesson,
        **p.fields(),
        "n": timeline.n,
        "grid": list(timeline.grid),
        "block": list(timeline.block),
        "launch_ms": timeline.launch_ms,
        "layout": {
            "ctas": timeline.layout.ctas,
            "warpgroups": timeline.layout.warpgroups,
            "capacity": timeline.layout.capacity,
        },
        "kinds": {str(k.code): k.name for k in KINDS},
        "span": {
            "start_ns": timeline.span.start_ns,
            "end_ns": timeline.span.end_ns,
            "ctas": timeline.span.ctas,
            "warpgroups": timeline.span.warpgroups,
        },
        "clock": timeline.clock.describe(),
        "rows": [_row_dict(r) for r in timeline.raw],
        "notes": list(timeline.notes),
    }


def to_json(timeline: Timeline) -> str:
    import json

    data = to_dict(timeline)
    rows = data.pop("rows")
    # One line per row: the event arrays are long, and one number per line would make the file huge.
    head = json.dumps({**data, "rows": []}, indent=1)
    lines = ",\n  ".join(json.dumps(r, separators=(",", ":")) for r in rows)
    return head.replace('"rows": []', '"rows": [\n  ' + lines + "\n ]") + "\n"


def _int_list(data: Any, name: str, path: Path | None, where: str) -> list[int]:
    items = _data.get(data, name, list, path, where)
    for i, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TimelineError(
                f"{where}: {name}[{i}] must be an integer (got {type(v).__name__})", path=path
            )
    return list(items)


def _clocks(clock0: int, deltas: list[int], path: Path | None, where: str) -> tuple[int, ...]:
    """clock64's low 32 bits from the first value and the steps (mod 2^32)."""
    if not 0 <= clock0 < 1 << 32 or any(not 0 <= d < 1 << 32 for d in deltas):
        raise TimelineError(f"{where}: clock0 and dclock must be 32-bit values", path=path)
    return tuple(c % (1 << 32) for c in itertools.accumulate([clock0, *deltas[1:]])) if deltas else ()


def from_dict(data: Any, path: Path | None = None) -> Timeline:
    """A Timeline from parsed JSON; TimelineError naming the field when something is off."""
    g, top = _data.get, "timeline"
    try:
        version = g(data, "schema_version", int, path, top)
        if version != SCHEMA_VERSION:
            raise TimelineError(
                f"timeline schema_version must be {SCHEMA_VERSION} (got {version}); record it again",
                path=path,
            )
        lay = g(data, "layout", dict, path, top)
        layout = Layout(
            g(lay, "ctas", int, path, "layout"),
            g(lay, "warpgroups", int, path, "layout"),
            g(lay, "capacity", int, path, "layout"),
        )
        kinds = g(data, "kinds", dict, path, top)
        for code, name in kinds.items():
            if not str(code).isdigit() or _BY_NAME.get(name) is None or _BY_NAME[name].code != int(code):
                raise TimelineError(
                    f"kinds: {code!r} -> {name!r} is not this course's event kind {code}; the file was written "
                    "by another version of the kernels' block",
                    path=path,
                )
        sp = g(data, "span", dict, path, top)
        span = KernelSpan(
            g(sp, "start_ns", int, path, "span"),
            g(sp, "end_ns", int, path, "span"),
            g(sp, "ctas", int, path, "span"),
            g(sp, "warpgroups", int, path, "span"),
        )
        if span.end_ns < span.start_ns:
            raise TimelineError("span: end_ns is before start_ns", path=path)
        raws = []
        for i, r in enumerate(g(data, "rows", list, path, top)):
            where = f"rows[{i}]"
            kind = _int_list(r, "kind", path, where)
            dt = _int_list(r, "dt_ns", path, where)
            if any(d < 0 for d in dt):
                j = next(j for j, d in enumerate(dt) if d < 0)
                raise TimelineError(f"{where}: dt_ns[{j}] = {dt[j]}: times must not go backwards", path=path)
            t0 = g(r, "t0_ns", int, path, where)
            gt = list(itertools.accumulate([t0, *dt[1:]])) if dt else []
            raw = RawRow(
                g(r, "cta", int, path, where),
                g(r, "warpgroup", int, path, where),
                g(r, "smid", int, path, where),
                tuple(kind),
                tuple(_int_list(r, "stage", path, where)),
                tuple(int(x) for x in gt),
                _clocks(g(r, "clock0", int, path, where), _int_list(r, "dclock", path, where), path, where),
                g(r, "full", bool, path, where),
            )
            try:
                validate_row(raw, layout.capacity)
            except TimelineError as e:
                raise TimelineError(f"{where}: {e.message}", path=path) from None
            raws.append(raw)
        grid = _int_list(data, "grid", path, top)
        launch = _data.optional(data, "launch_ms", float, path, top)
        return build(
            raws,
            span,
            layout,
            g(data, "lesson", str, path, top),
            g(data, "n", int, path, top),
            grid,
            _int_list(data, "block", path, top),
            Provenance.from_dict(data, path, top),
            float(launch) if launch is not None else None,
            _data.text_list(data, "notes", path, top),
        )
    except TimelineError as e:
        if e.path is not None:
            raise
        raise TimelineError(e.message, path=path) from None
    except CourseError as e:
        raise TimelineError(e.message, path=e.path or path) from None


def write(timeline: Timeline, directory: Path | None = None) -> tuple[Path, Path]:
    """Write <lesson>.json and <lesson>.png (atomically); return both paths."""
    directory = directory or timeline_dir()
    json_path = directory / f"{timeline.lesson}.json"
    png_path = directory / f"{timeline.lesson}.png"
    atomic_write_text(json_path, to_json(timeline))
    atomic_write_bytes(png_path, png_bytes(timeline))
    return json_path, png_path


def load(lesson_id: str, directory: Path | None = None) -> Timeline | None:
    """The recorded timeline of a lesson, None when there is none, TimelineError when it is broken."""
    path = (directory or timeline_dir()) / f"{lesson_id}.json"
    if not path.exists():
        return None
    timeline = from_dict(_data.read_json(path, "the timeline", TimelineError), path)
    if timeline.lesson != lesson_id:
        raise TimelineError(f"the timeline is for lesson {timeline.lesson!r}, not {lesson_id!r}", path=path)
    return timeline


# ---------------------------------------------------------------------------
# On the GPU.
# ---------------------------------------------------------------------------
def compile_instrumented(lesson: Lesson, n: int, source: str | None = None) -> Compiled:
    """The lesson's kernel at size N, with the stamps compiled in."""
    from .compile import compile_lesson

    return compile_lesson(lesson, defines={lesson.size_macro: n, DEFINE: 1}, source=source)


def set_buffer(compiled: Compiled, address: int) -> None:
    """Point the module's courseTimeline at ``address`` (0: record nothing)."""
    import cupy as cp

    try:
        symbol = compiled.module.get_global(SYMBOL)
    except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as e:
        raise TimelineError(
            f"the compiled {compiled.lesson.kernel_file} has no {SYMBOL} ({e}): it was not built with "
            f"-D{DEFINE}, or its timeline block is missing",
            path=compiled.lesson.kernel_path,
        ) from None
    value = np.array([address], dtype=np.uint64)
    symbol.copy_from_host(value.ctypes.data, value.nbytes)


_HOLD_NS = 200_000  # GPU-side hold before a timed launch, so the events time the GPU's work


def _timed_launch(work: Workload, j: int = 0) -> float:
    """One launch between CUDA events, behind a GPU-side hold; milliseconds."""
    import cupy as cp

    from .bench.arith import MIN_REPEATS
    from .bench.timing import Timer
    from .compile import LaunchError

    timer = Timer(MIN_REPEATS)
    stream = cp.cuda.get_current_stream()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    c = work.config
    try:
        timer.hold((1,), (1,), (np.uint64(_HOLD_NS),))
        start.record(stream)
        work.launch(j)
        end.record(stream)
        end.synchronize()
    except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as e:
        raise LaunchError(work.compiled, c.grid, c.block, c.shared_mem, str(e)) from None
    return float(cp.cuda.get_elapsed_time(start, end))


def record(
    lesson: Lesson,
    n: int = DEFAULT_N,
    progress: Callable[[str], Any] = print,
    command: str | None = None,
    warmup: int = 2,
) -> Timeline:
    """Record the lesson's timeline on this GPU at size N: compile, warm up, one recorded launch, check.

    Raises EnvironmentProblem when this machine cannot run the lesson,
    CheckFailed when the instrumented kernel computes a wrong result, and
    TimelineError when the kernel has no stamps or the buffer is not valid.
    """
    import cupy as cp

    from . import gate

    layout = Layout.of(lesson)
    spec = lesson.bench_spec()
    if spec is not None:
        spec.validate_sizes(lesson.id, [n])
    machine = gate.probe()
    gate.ensure_runs(lesson, machine)
    provenance = Provenance.of(machine, command or f"python -m course timeline {lesson.id} --n {n}")
    progress(f"{lesson.id}: compiling {lesson.kernel_file} with -D{DEFINE} at N = {n} ...")
    compiled = compile_instrumented(lesson, n)
    progress(compiled.summary())
    work = lesson.host().workload(compiled, n, 1, "bench")
    c = work.config
    grid_ctas = math.prod(c.grid)
    buf = cp.zeros(layout.words(grid_ctas), dtype=cp.uint64)
    try:
        set_buffer(compiled, 0)  # the warm-up launches record nothing
        for _ in range(warmup):
            _timed_launch(work)
        set_buffer(compiled, int(buf.data.ptr))
        work.poison(0)
        buf.fill(0)
        launch_ms = _timed_launch(work)
        check = work.check(work.out(0))
        if not check.passed:
            from .bench.engine import mismatch_text

            raise CheckFailed(mismatch_text(f"{lesson.id} N={n}, built with -D{DEFINE}", check))
        words = cp.asnumpy(buf)
    finally:
        set_buffer(compiled, 0)
    progress(
        f"{lesson.id}: recorded one launch of {grid_ctas} CTAs ({launch_ms * 1e3:,.1f} us by CUDA events); checked"
    )
    return decode(words, layout, c.grid, lesson.id, n, c.block, provenance, launch_ms)


@dataclass(frozen=True)
class TimerResolution:
    """%globaltimer read in a tight loop by one thread."""

    reads: int
    changes: int  # reads that returned a new value
    min_step_ns: int  # smallest nonzero difference between consecutive reads
    mean_step_ns: float
    elapsed_ns: int
    cycles: int  # clock64 over the same loop

    @property
    def ghz(self) -> float:
        return self.cycles / self.elapsed_ns if self.elapsed_ns else float("nan")


_PROBE_SOURCE = r"""
extern "C" __global__ void courseTimerProbe(unsigned long long* out, int reads) {
    unsigned long long first, prev, now, minStep = ~0ull, changes = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(first));
    const long long c0 = clock64();
    prev = first;
    for (int i = 0; i < reads; ++i) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now != prev) {
            minStep = now - prev < minStep ? now - prev : minStep;
            ++changes;
            prev = now;
        }
    }
    const long long c1 = clock64();
    out[0] = minStep;
    out[1] = changes;
    out[2] = prev - first;
    out[3] = static_cast<unsigned long long>(c1 - c0);
}
"""


def globaltimer_resolution(reads: int = 1 << 20) -> TimerResolution:
    """Measure %globaltimer's step on this GPU: the smallest nonzero difference between consecutive reads."""
    import cupy as cp

    kernel = cp.RawKernel(_PROBE_SOURCE, "courseTimerProbe")
    out = cp.zeros(4, dtype=cp.uint64)
    kernel((1,), (1,), (out, np.int32(reads)))
    o = [int(v) for v in cp.asnumpy(out)]
    changes = o[1]
    return TimerResolution(
        reads, changes, o[0] if changes else 0, o[2] / changes if changes else float("nan"), o[2], o[3]
    )


@dataclass(frozen=True)
class Overhead:
    plain_ms: float
    timeline_ms: float  # the instrumented kernel, recording
    repeats: int

    @property
    def ratio(self) -> float:
        return self.timeline_ms / self.plain_ms


def measure_overhead(
    lesson: Lesson,
    n: int = DEFAULT_N,
    repeats: int = 20,
    extra: Mapping[str, Compiled] | None = None,
    progress: Callable[[str], Any] = print,
) -> tuple[Overhead, dict[str, float]]:
    """The kernel with and without the stamps (recording), checked, then timed interleaved.

    Inputs rotate over enough buffer sets to miss L2, as in ``course bench``.
    ``extra`` are other builds of the same kernel (variants) timed in the
    same interleaved batches, unchecked; their medians come back by name.
    """
    import cupy as cp

    from . import gate
    from .bench.engine import Context, release, spec_of
    from .bench.timing import Timer

    spec = spec_of(lesson)
    machine = gate.probe()
    gate.ensure_runs(lesson, machine)
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    sms = machine.gpu.sm_count if machine.gpu else 0
    ctx = Context(lesson, spec, Timer(repeats), l2, sms, progress, (n,))
    plain = ctx.compile(n, defines={})
    stamped = compile_instrumented(lesson, n)
    work = ctx.workload(n, plain)
    layout = Layout.of(lesson)
    buf = cp.zeros(layout.words(math.prod(work.config.grid)), dtype=cp.uint64)
    c = work.config

    def launcher(compiled: Compiled) -> Callable[[int], None]:
        compiled.allow_shared(c.shared_mem)

        def call(j: int) -> None:
            compiled.function(c.grid, c.block, work.args(j), shared_mem=c.shared_mem)

        return call

    calls = {"plain": launcher(plain), "timeline": launcher(stamped)}
    try:
        set_buffer(stamped, int(buf.data.ptr))
        ctx.verify(n, work, {name: (call, None) for name, call in calls.items()})
        for name, compiled in (extra or {}).items():
            calls[name] = launcher(compiled)
        timings = ctx.timer.time_together(
            {k: [functools.partial(f, j) for j in range(work.sets)] for k, f in calls.items()}
        )
    finally:
        set_buffer(stamped, 0)
        release()
    overhead = Overhead(timings["plain"].median_ms, timings["timeline"].median_ms, repeats)
    return overhead, {k: t.median_ms for k, t in timings.items()}


# ---------------------------------------------------------------------------
# What a page shows.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TimelineSection:
    lesson: str
    timeline: Timeline | None
    png: bytes | None = field(repr=False)
    recorded_here: bool
    message: str

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.recorded_here else "#1f5fa8"
        parts = [
            f"<div style='border-left:4px solid {color};padding:4px 10px;margin:4px 0'>{escape(self.message)}</div>"
        ]
        if self.timeline is not None:
            parts.append(summarize(self.timeline).html())
        if self.png:
            data = base64.b64encode(self.png).decode("ascii")
            parts.append(f"<img alt='{escape(self.lesson)} timeline' src='data:image/png;base64,{data}'/>")
        return "<div class='course-timeline'>" + "".join(parts) + "</div>"

    def __str__(self) -> str:
        out = self.message
        if self.timeline is not None:
            out += "\n" + summarize(self.timeline).text()
        return out


def timeline_section(lesson: Lesson, directory: Path | None = None) -> TimelineSection:
    """The recorded timeline of a lesson, as a page shows it (no GPU needed)."""
    recorded = load(lesson.id, directory)
    where = (directory or timeline_dir()) / f"{lesson.id}.json"
    if recorded is None:
        return TimelineSection(
            lesson.id,
            None,
            None,
            False,
            f"No recorded timeline of {lesson.id} is in this checkout ({where}); `python -m course timeline "
            f"{lesson.id}` on a Hopper GPU records one.",
        )
    png_path = where.with_suffix(".png")
    png = png_path.read_bytes() if png_path.exists() else png_bytes(recorded)
    p = recorded.provenance
    said = (
        f"Recorded on {p.device} (compute capability {p.compute_capability}) on {p.recorded_at[:10]} by: {p.command}."
        if p is not None
        else "Recorded timeline."
    )
    return TimelineSection(lesson.id, recorded, png, False, said)


def section_of(timeline: Timeline, message: str) -> TimelineSection:
    return TimelineSection(timeline.lesson, timeline, png_bytes(timeline), True, message)
