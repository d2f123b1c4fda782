"""The timeline: draw (see course.timeline)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import ACTIVITIES, NOT_RECORDED, Timeline
from .summary import _DENSE, row_intervals

if TYPE_CHECKING:  # matplotlib is imported when a timeline is drawn, not by every `python -m course`
    from ..picture import Picture


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
    from ..picture import picture  # heavy: matplotlib (course.picture), when a timeline is drawn

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
        ax.set_xlabel("time (µs) since the first recorded stamp", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(True, axis="x", alpha=0.3)
        if p == 1:
            ax.set_title(
                f"zoom: {hi - lo:,.2f} µs in the middle of the run (numbers: pipeline stages)", fontsize=8
            )
    # heavy: matplotlib, when a figure is drawn
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
