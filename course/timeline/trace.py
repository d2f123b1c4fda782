"""The timeline: Chrome Trace Event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing open.

The Trace Event Format (Google's "Trace Event Format" document, the one
Chrome's trace viewer and Perfetto's JSON importer read) is an object with
``traceEvents``: here, per recorded CTA a process (``pid``) named by a
``process_name`` metadata event ("CTA 0 (SM 12)"), per warpgroup a thread
(``tid``) named by ``thread_name`` ("warpgroup 0: producer"), and one
complete event (``ph: "X"``, ``ts`` and ``dur`` in microseconds) per
activity of ``summary.row_intervals``: named by the activity, its category
the role, its ``args`` the stage, the event kind that began it, CTA,
warpgroup and SM. Triton's Proton intra-kernel profiler writes the same
shape (a process per CTA, a thread per warp, ``X`` events per scope,
``displayTimeUnit: "ns"``). A last process, "kernel", holds one event over
the whole kernel's span (every CTA's start and end stamps). Times count
from the earliest stamp of either, so no event starts before zero.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._atomic import atomic_write_text
from .model import _BY_NAME, Timeline, TimelineError
from .summary import row_intervals

TRACE_FIELDS = ("ph", "ts", "pid", "tid", "name")  # what every event of the trace carries


def to_trace(timeline: Timeline) -> dict[str, Any]:
    """The timeline as a Trace Event Format object (``traceEvents`` plus ``otherData``)."""
    # Both are absolute %globaltimer; the recorded rows count from timeline.origin_ns.
    base = min(timeline.origin_ns, timeline.span.start_ns)
    shift_us = (timeline.origin_ns - base) / 1e3
    events: list[dict[str, Any]] = []

    def meta(what: str, pid: int, tid: int, **args: Any) -> None:
        events.append({"ph": "M", "name": what, "pid": pid, "tid": tid, "ts": 0, "args": args})

    ctas = {row.cta: row.smid for row in timeline.rows}
    for i, (cta, sm) in enumerate(sorted(ctas.items())):
        meta("process_name", cta, 0, name=f"CTA {cta} (SM {sm})")
        meta("process_sort_index", cta, 0, sort_index=i)
    for row in timeline.rows:
        meta("thread_name", row.cta, row.warpgroup, name=f"warpgroup {row.warpgroup}: {row.role}")
        meta("thread_sort_index", row.cta, row.warpgroup, sort_index=row.warpgroup)
        for iv, event in zip(row_intervals(row), row.events, strict=False):
            args: dict[str, Any] = {
                "kind": event.kind,
                "role": iv.role,
                "cta": iv.cta,
                "warpgroup": iv.warpgroup,
                "sm": row.smid,
            }
            if iv.stage is not None:
                args["stage"] = iv.stage
            events.append(
                {
                    "ph": "X",
                    "name": iv.activity,
                    "cat": iv.role,
                    "pid": iv.cta,
                    "tid": iv.warpgroup,
                    "ts": round(shift_us + iv.start_ns / 1e3, 3),  # to the ns: the stamps' own unit
                    "dur": round(iv.ns / 1e3, 3),
                    "args": args,
                }
            )
    kernel_pid = max(ctas) + 1
    meta("process_name", kernel_pid, 0, name=f"kernel: all {timeline.span.ctas} CTAs")
    meta("process_sort_index", kernel_pid, 0, sort_index=len(ctas))
    meta("thread_name", kernel_pid, 0, name="first start to last end")
    events.append(
        {
            "ph": "X",
            "name": f"{timeline.lesson} at N = {timeline.n}",
            "cat": "kernel",
            "pid": kernel_pid,
            "tid": 0,
            "ts": round((timeline.span.start_ns - base) / 1e3, 3),
            "dur": round(timeline.span.ns / 1e3, 3),
            "args": {"ctas": timeline.span.ctas, "grid": list(timeline.grid), "block": list(timeline.block)},
        }
    )
    p = timeline.provenance
    other = {
        "lesson": timeline.lesson,
        "n": timeline.n,
        "clock": timeline.clock.describe(),
        "kinds": sorted(_BY_NAME),
    }
    if p is not None:
        other.update(device=p.device, recorded_at=p.recorded_at, command=p.command)
    return {"displayTimeUnit": "ns", "traceEvents": events, "otherData": other}


def write_trace(timeline: Timeline, path: Path) -> Path:
    """Write the trace (atomically) to ``path``; return it."""
    path = Path(path)
    text = json.dumps(to_trace(timeline), separators=(",", ":")) + "\n"
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise TimelineError(f"cannot write the trace ({e.strerror or e})", path=path) from None
    return path
