"""Evidence: what a real GPU run printed, kept so a page can show it.

``python -m course record`` runs each lesson on the GPU in hand and writes
``evidence/<lesson>.json``: the device, its compute capability, the driver,
CUDA runtime, NVRTC, CuPy and cuda-python versions, the date, and the exact
output lines. Only a real run writes evidence: ``record`` takes a passed
``RunResult`` and the probe of a machine that has a GPU. A page that cannot
run shows the file instead, saying plainly that it is a recording.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._atomic import atomic_write_text
from ._html import escape
from .errors import CourseError
from .gate import Machine
from .lessons import Lesson

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Evidence:
    schema_version: int
    lesson: str
    recorded_at: str  # ISO 8601, UTC
    command: str
    device: str
    compute_capability: str
    sm_count: int
    versions: dict[str, str | None]
    output: list[str]
    passed: bool
    timings_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.device} (compute capability {self.compute_capability}), driver CUDA "
            f"{self.versions.get('driver (CUDA)')}, CuPy {self.versions.get('cupy')}, "
            f"NVRTC {self.versions.get('nvrtc')}, recorded {self.recorded_at[:10]}"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
            for k, v in self.versions.items()
        )
        out = escape("\n".join(self.output))
        return (
            "<div class='course-evidence'>"
            f"<p><b>Recorded on a real GPU</b>, not run here: {escape(self.device)} "
            f"(compute capability {escape(self.compute_capability)}, {self.sm_count} SMs), "
            f"{escape(self.recorded_at)}, by <code>{escape(self.command)}</code>.</p>"
            f"<pre>{out}</pre>"
            f"<details><summary>versions</summary><table>{rows}</table></details></div>"
        )

    def __str__(self) -> str:
        return "\n".join(
            [f"Recorded on a real GPU (not run here): {self.summary()}"]
            + [f"  {line}" for line in self.output]
        )


def record(
    lesson: Lesson,
    machine: Machine,
    output: list[str],
    passed: bool,
    command: str,
    timings: dict[str, float] | None = None,
    notes: list[str] | None = None,
    path: Path | None = None,
) -> Evidence:
    """Write the evidence of a run that really happened on ``machine``'s GPU."""
    if machine.gpu is None:
        raise CourseError("evidence is written only from a run on a real GPU, and this machine has none")
    if not output:
        raise CourseError("evidence needs the run's output lines (got none)")
    ev = Evidence(
        schema_version=SCHEMA_VERSION,
        lesson=lesson.id,
        recorded_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        command=command,
        device=machine.gpu.name,
        compute_capability=machine.gpu.cc_str,
        sm_count=machine.gpu.sm_count,
        versions=dict(machine.versions),
        output=list(output),
        passed=passed,
        timings_s={k: round(v, 4) for k, v in (timings or {}).items()},
        notes=list(notes or []),
    )
    atomic_write_text(path or lesson.evidence_path, json.dumps(asdict(ev), indent=2) + "\n")
    return ev


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if name not in data:
        raise CourseError(f"evidence field {name!r} is missing", path=path)
    if not isinstance(data[name], kind):
        raise CourseError(
            f"evidence field {name!r} must be {getattr(kind, '__name__', kind)} (got {type(data[name]).__name__})",
            path=path,
        )
    return data[name]


def _versions(data: dict[str, Any], path: Path) -> dict[str, str | None]:
    versions = _field(data, "versions", dict, path)
    for key, value in versions.items():
        if value is not None and not isinstance(value, str):
            raise CourseError(
                f"evidence version {key!r} must be text or null (got {type(value).__name__})", path=path
            )
    return versions


def _text_list(data: dict[str, Any], name: str, path: Path) -> list[str]:
    items = _field(data, name, list, path)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise CourseError(
                f"evidence field {name!r} must hold text lines (item {i} is {type(item).__name__})", path=path
            )
    return items


def load(lesson: Lesson, path: Path | None = None) -> Evidence | None:
    """The lesson's evidence, None when there is none, CourseError when it is broken."""
    path = path or lesson.evidence_path
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CourseError(f"evidence is not valid JSON: {e.msg}", path=path, line=e.lineno) from None
    if not isinstance(data, dict):
        raise CourseError("evidence must be a JSON object", path=path)
    version = _field(data, "schema_version", int, path)
    if version != SCHEMA_VERSION:
        raise CourseError(
            f"evidence schema_version must be {SCHEMA_VERSION} (got {version}); record it again", path=path
        )
    if _field(data, "lesson", str, path) != lesson.id:
        raise CourseError(f"evidence is for lesson {data['lesson']!r}, not {lesson.id!r}", path=path)
    return Evidence(
        schema_version=version,
        lesson=data["lesson"],
        recorded_at=_field(data, "recorded_at", str, path),
        command=_field(data, "command", str, path),
        device=_field(data, "device", str, path),
        compute_capability=_field(data, "compute_capability", str, path),
        sm_count=_field(data, "sm_count", int, path),
        versions=_versions(data, path),
        output=_text_list(data, "output", path),
        passed=_field(data, "passed", bool, path),
        timings_s=data.get("timings_s", {}),
        notes=data.get("notes", []),
    )
