"""The timeline: summary (see course.timeline)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._html import escape
from .._table import text_table

if TYPE_CHECKING:
    pass
from .model import (
    _BY_CODE,
    _BY_NAME,
    ACTIVITIES,
    LOAD_ACTIVITIES,
    NOT_RECORDED,
    ROLES,
    WAIT_ACTIVITIES,
    WGMMA_ACTIVITIES,
    Row,
    Timeline,
)


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
        activity = kind.activity or "other"  # END begins nothing: a row's last event (never drawn)
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
class Ahead:
    """One consumer row: its wgmma time, and how much of it a copy of another stage was outstanding.

    A copy is outstanding from the producer's LOAD stamp (the TMA copy issued) until this consumer's
    wait for that stage's fill ends (the data had landed by then). The copy engine's own progress is
    not stamped, so this says the copy *could* run beside the math, not that its bytes moved then.
    """

    cta: int
    warpgroup: int
    wgmma_ns: float
    ahead_ns: float


def _ahead(timeline: Timeline, ivs: Sequence[Interval]) -> tuple[Ahead, ...]:
    out = []
    for cta in timeline.recorded_ctas:
        rows = [r for r in timeline.rows if r.cta == cta]
        loads: dict[int, list[float]] = {}
        for row in rows:
            if row.role in ("producer", "producer+consumer"):
                for e in row.events:
                    if e.kind == "LOAD":
                        loads.setdefault(e.stage, []).append(e.t_ns)
        for row in rows:
            if row.role not in ("consumer", "producer+consumer"):
                continue
            waits: dict[int, list[float]] = {}
            for e, nxt in zip(row.events, row.events[1:], strict=False):
                if e.kind == "WAIT_FULL":
                    waits.setdefault(e.stage, []).append(nxt.t_ns)  # the wait ends at the next stamp
            if not waits:
                continue  # no full barrier to pair a copy with (Day 78's producer copies by hand)
            outstanding = _union(
                (issued, ended)
                for stage, issues in loads.items()
                for issued, ended in zip(issues, waits.get(stage, []), strict=False)
            )
            mma = _union(
                (iv.start_ns, iv.end_ns)
                for iv in ivs
                if iv.cta == cta and iv.warpgroup == row.warpgroup and iv.activity in WGMMA_ACTIVITIES
            )
            out.append(Ahead(cta, row.warpgroup, _measure(mma), _intersection(outstanding, mma)))
    return tuple(out)


def role_label(role: str) -> str:
    """How a role reads in the table: one warpgroup doing both jobs says so."""
    return "one warpgroup, producer and consumer" if role == "producer+consumer" else role


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
    ahead: tuple[Ahead, ...] = ()

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
        """Of the consumer's wgmma time, the share during which the producer's thread was in a load
        interval (issuing a TMA copy, or on Day 78 copying element by element)."""
        w = sum(o.wgmma_ns for o in self.overlaps)
        return sum(o.both_ns for o in self.overlaps) / w if w > 0 else None

    def ahead_share(self) -> float | None:
        """Of the consumers' wgmma time, the share during which a copy of another stage had been
        issued and not yet waited for (``Ahead``); None without full-barrier waits to pair copies with."""
        w = sum(a.wgmma_ns for a in self.ahead)
        return sum(a.ahead_ns for a in self.ahead) / w if w > 0 else None

    @property
    def one_warpgroup(self) -> bool:
        """Every recorded row does both jobs: one warpgroup loads and computes."""
        return set(self.role_ns) == {"producer+consumer"}

    def table_rows(self) -> list[list[str]]:
        rows = [["role", "activity", "time (µs, all rows)", "share of the role's time", "rows"]]
        for a in self.activities:
            rows.append(
                [role_label(a.role), a.activity, f"{a.ns / 1e3:,.1f}", f"{100 * a.share:.1f}%", str(a.rows)]
            )
        return rows

    def findings(self) -> list[str]:
        out = [
            f"{self.recorded_ctas} of {self.grid_ctas} CTAs recorded event by event; their stamps cover "
            f"{self.recorded_ns / 1e3:,.1f} µs. Every CTA stamped its start and end: the whole kernel spans "
            f"{self.kernel_ns / 1e3:,.1f} µs"
            + (
                f" (CUDA events around the same launch: {self.launch_ms * 1e3:,.1f} µs)."
                if self.launch_ms
                else "."
            )
        ]
        load, mma = self.load_share(), self.wgmma_share()
        ahead = self.ahead_share()
        if self.one_warpgroup:
            wait = self.share("producer+consumer", WAIT_ACTIVITIES) or 0.0
            out.append(
                "One warpgroup does both jobs here (the table's role: one warpgroup, producer and consumer): it spends "
                f"{100 * (load or 0):.1f}% of its time issuing loads, {100 * (mma or 0):.1f}% issuing or "
                f"waiting for wgmma, and {100 * wait:.1f}% waiting (data, a barrier)."
            )
            if ahead is not None:
                out.append(
                    "It issues a tile's copy, waits for the data, then computes, so while it computes no "
                    f"copy is outstanding: {100 * ahead:.1f}% of its wgmma time. Overlapping the two is "
                    "the next step's work."
                )
            out.append(self.clock[0].upper() + self.clock[1:] + ".")
            return out
        if load is not None:
            out.append(f"The producer spends {100 * load:.1f}% of its time issuing or copying loads.")
        if mma is not None:
            out.append(f"The consumer spends {100 * mma:.1f}% of its time issuing or waiting for wgmma.")
        waits = [(r, self.share(r, WAIT_ACTIVITIES)) for r in self.role_ns]
        for role, w in waits:
            if w:
                out.append(f"The {role} waits (data, a free stage, a barrier) {100 * w:.1f}% of its time.")
        o = self.overlap_share()
        if ahead is not None:
            out.append(
                f"While a consumer issued or waited for wgmma, a copy of another stage had been issued and "
                f"not yet waited for {100 * ahead:.1f}% of the time: the ring kept copies issued ahead of the math. "
                "(The producer's thread only issues each copy, so it is in a load interval for "
                f"{100 * (o or 0):.1f}% of that time; the copy engine moves the bytes on its own, and when "
                "each copy landed was not stamped.)"
            )
        elif o is not None:
            out.append(
                f"While the consumer issued or waited for wgmma, the producer was copying {100 * o:.1f}% of the time."
            )
        out.append(self.clock[0].upper() + self.clock[1:] + ".")
        return out

    def text(self) -> str:
        header, *rows = self.table_rows()
        return "\n".join(
            [
                *(f"- {f}" for f in self.findings()),
                "",
                text_table(header, rows, ("left", "left", "right", "right", "right")),
            ]
        )

    def html(self) -> str:
        rows = self.table_rows()
        cell = "padding:2px 8px;text-align:left;vertical-align:bottom"  # wraps at spaces: fits 1024 px
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
        _ahead(timeline, ivs),
    )


# ---------------------------------------------------------------------------
# The picture.
# ---------------------------------------------------------------------------
_DENSE = 60  # events in a row above which the figure adds a zoomed panel
