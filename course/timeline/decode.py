"""The timeline: decode (see course.timeline)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..kernel.provenance import Provenance

if TYPE_CHECKING:
    pass
from .model import (
    _BY_CODE,
    _BY_NAME,
    _HEADER_WORDS,
    KINDS,
    LAYOUT_VERSION,
    MAGIC,
    SYMBOL,
    ClockFit,
    Event,
    KernelSpan,
    Layout,
    RawRow,
    Row,
    Timeline,
    TimelineError,
)


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


def row_role(raw: RawRow, declared: Sequence[str] = ()) -> str:
    """The row's role: the lesson's declaration for its warpgroup, checked against what it stamped.

    Without a declaration (a lesson that names none), the role its events reveal."""
    seen = _role(raw.kinds)
    role = declared[raw.warpgroup] if raw.warpgroup < len(declared) else ""
    if not role:
        return seen
    if seen not in ("other", role) and role != "producer+consumer":
        other = next(_BY_CODE[k].name for k in raw.kinds if _BY_CODE[k].role not in (None, role))
        raise TimelineError(
            f"{_where(raw.cta, raw.warpgroup)}: the lesson declares this warpgroup a {role}, but it stamped "
            f"{other}, a {_BY_NAME[other].role}'s event: the kernel and the lesson's "
            "warpgroup_roles disagree"
        )
    return role


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
    roles: Sequence[str] = (),
) -> Timeline:
    """A Timeline from validated raw rows: roles (``roles``: the lesson's, by warpgroup), clock fit, times."""
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
        rows.append(Row(raw.cta, raw.warpgroup, raw.smid, row_role(raw, roles), events, raw.full, ok))
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
    roles: Sequence[str] = (),
) -> Timeline:
    """A buffer the kernel filled, as a validated Timeline (TimelineError when it is not one)."""
    raws, span = decode_raw(buffer, layout, math.prod(grid))
    return build(raws, span, layout, lesson, n, grid, block, provenance, launch_ms, roles=roles)
