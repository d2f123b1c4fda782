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
