"""The timeline: store (see course.timeline)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _data
from .._atomic import atomic_write_bytes, atomic_write_text
from ..errors import CourseError
from ..kernel.evidence import device_key, recording_dir
from ..kernel.provenance import Provenance
from .decode import build, validate_row
from .draw import png_bytes
from .model import _BY_NAME, KINDS, ROLES, SCHEMA_VERSION, KernelSpan, Layout, RawRow, Timeline, TimelineError


# ---------------------------------------------------------------------------
# Evidence: JSON and PNG.
# ---------------------------------------------------------------------------
def timeline_dir(key: str | None = None) -> Path:
    """Where one GPU model's recorded timelines live: evidence/<model>/timeline/ (``key``, by
    default the model a page shows, ``course.kernel.evidence.shown``)."""
    return recording_dir(key) / "timeline"


def _row_dict(raw: RawRow, role: str) -> dict[str, Any]:
    gt = list(raw.gt_ns)
    return {
        "cta": raw.cta,
        "warpgroup": raw.warpgroup,
        "role": role,
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
    roles = {(r.cta, r.warpgroup): r.role for r in timeline.rows}
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
        "rows": [_row_dict(r, roles[(r.cta, r.warpgroup)]) for r in timeline.raw],
        "notes": list(timeline.notes),
    }


def to_json(timeline: Timeline) -> str:

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


def from_dict(data: Any, path: Path | None = None, roles: Sequence[str] = ()) -> Timeline:
    """A Timeline from parsed JSON; TimelineError naming the field when something is off.

    ``roles``: the lesson's declared warpgroup roles. A row's ``role`` (files recorded before
    rows named one have none) must agree with them; the declaration names the rows."""
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
        named: dict[int, str] = {}
        for i, r in enumerate(g(data, "rows", list, path, top)):
            where = f"rows[{i}]"
            role = _data.optional(r, "role", str, path, where)
            if role is not None:
                wg = g(r, "warpgroup", int, path, where)
                want = roles[wg] if 0 <= wg < len(roles) else named.get(wg, role)
                if role not in ROLES or role != want:
                    raise TimelineError(
                        f"{where}: role {role!r}, but warpgroup {wg} is "
                        + (f"the lesson's {want}" if role in ROLES else f"one of {', '.join(ROLES)}"),
                        path=path,
                    )
                named[wg] = role
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
            roles=roles or [named.get(wg, "") for wg in range(layout.warpgroups)],
        )
    except TimelineError as e:
        if e.path is not None:
            raise
        raise TimelineError(e.message, path=path) from None
    except CourseError as e:
        raise TimelineError(e.message, path=e.path or path) from None


def write(timeline: Timeline, directory: Path | None = None) -> tuple[Path, Path]:
    """Write <lesson>.json and <lesson>.png (atomically), by default into the folder of the GPU
    it was recorded on; return both paths."""
    if directory is None and timeline.provenance is not None:
        directory = timeline_dir(device_key(timeline.provenance.device))
    directory = directory or timeline_dir()
    json_path = directory / f"{timeline.lesson}.json"
    png_path = directory / f"{timeline.lesson}.png"
    atomic_write_text(json_path, to_json(timeline))
    atomic_write_bytes(png_path, png_bytes(timeline))
    return json_path, png_path


def recorded_path(lesson_id: str, directory: Path | None = None) -> Path:
    """The file a lesson's recorded timeline is in (it may not exist)."""
    return (directory or timeline_dir()) / f"{lesson_id}.json"


def load(lesson_id: str, directory: Path | None = None, roles: Sequence[str] = ()) -> Timeline | None:
    """The recorded timeline of a lesson, None when there is none, TimelineError when it is broken.

    ``roles``: the lesson's declared warpgroup roles (``Lesson.warpgroup_roles``; ``from_dict``)."""
    path = recorded_path(lesson_id, directory)
    if not path.exists():
        return None
    timeline = from_dict(_data.read_json(path, "the timeline", TimelineError), path, roles)
    if timeline.lesson != lesson_id:
        raise TimelineError(f"the timeline is for lesson {timeline.lesson!r}, not {lesson_id!r}", path=path)
    return timeline


@dataclass(frozen=True)
class RecordedCost:
    """What recording cost a lesson's kernel, from the honesty checks (``checks.json``): the
    stamped build against the plain one, both checked, timed interleaved on the same GPU."""

    n: int
    plain_ms: float
    timeline_ms: float
    device: str
    recorded_at: str

    @property
    def ratio(self) -> float:
        return self.timeline_ms / self.plain_ms

    def sentence(self) -> str:
        pct = (self.ratio - 1.0) * 100.0
        cost = f"{pct:.0f}% of its time" if pct >= 0.5 else "nothing measurable"
        return (
            f"Recording costs this kernel {cost} at N = {self.n} ({self.plain_ms * 1000:.0f} µs built plain, "
            f"{self.timeline_ms * 1000:.0f} µs recording; both checked, then timed interleaved on the "
            f"{self.device}, {self.recorded_at[:10]})"
            + (
                ", so the recorded run is about that much slower than the kernel the speed section times."
                if pct >= 10
                else "."
            )
        )


CHECKS_FILE = "checks.json"


def recorded_cost(lesson_id: str, directory: Path | None = None) -> RecordedCost | None:
    """The recorded cost of the stamps for ``lesson_id``; None where the checks did not measure it."""
    path = (directory or timeline_dir()) / CHECKS_FILE
    if not path.exists():
        return None
    data = _data.read_json(path, "the timeline checks", TimelineError)
    entry = (data.get("lessons") or {}).get(lesson_id) if isinstance(data, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("overhead"), dict):
        return None
    overhead = entry["overhead"]
    try:
        return RecordedCost(
            int(entry.get("n", data.get("n"))),
            float(overhead["plain_ms"]),
            float(overhead["timeline_ms"]),
            str(data["device"]),
            str(data["recorded_at"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise TimelineError(f"the overhead of {lesson_id} cannot be read ({e})", path=path) from None
