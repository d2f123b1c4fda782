"""Evidence: what a real GPU run printed, kept so a page can show it.

``python -m course record`` runs each lesson on the GPU in hand and writes
``evidence/<lesson>.json``: the provenance (device, compute capability,
driver, CUDA runtime, NVRTC, CuPy and cuda-python versions, the date and
the command; ``course.kernel.provenance``) and the exact output lines. Only a real
run writes evidence: ``record`` takes the probe of a machine that has a
GPU. A page that cannot run shows the file instead, saying plainly that it
is a recording.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _data
from .._atomic import atomic_write_text
from .._html import escape
from ..errors import CourseError
from ..lesson import Lesson
from .gate import Machine
from .provenance import Provenance, Provenanced

SCHEMA_VERSION = 1
# How a page words a recorded run's outcome (the sandbox's outcomes of a run that launched).
_OUTCOME_WORDS = {
    "fault": "faulted",
    "timeout": "hung and was stopped",
    "failed-check": "ran to the end with a wrong result",
    "refused": "was refused before it ran",
}


@dataclass(frozen=True)
class Evidence(Provenanced):
    lesson: str
    provenance: Provenance
    output: list[str]
    passed: bool
    timings_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION
    # For a run of an edited kernel in a separate process (a suggested experiment): what it came
    # to, one of the sandbox's outcomes ("fault", "timeout", "failed-check", ...); None otherwise.
    outcome: str | None = None

    def summary(self) -> str:
        return self.provenance.summary()

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "lesson": self.lesson,
            **self.provenance.fields(),
            "output": list(self.output),
            "passed": self.passed,
            "timings_s": dict(self.timings_s),
            "notes": list(self.notes),
            **({"outcome": self.outcome} if self.outcome is not None else {}),
        }

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(str(v))}</td></tr>"
            for k, v in self.versions.items()
        )
        out = escape("\n".join(self.output))
        kind = "" if self.passed else " of a run whose check <b>failed</b> (a run meant to fail)"
        if self.outcome in _OUTCOME_WORDS:
            kind = f" of a run that <b>{_OUTCOME_WORDS[self.outcome]}</b> (a run meant to show it)"
        return (
            "<div class='course-evidence'>"
            f"<p><b>Recorded on a real GPU</b>{kind}, not run here: {escape(self.device)} "
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

    def __repr__(self) -> str:
        return f"Evidence({self.lesson}, {self.summary()}, passed={self.passed})"


def record(
    lesson: Lesson,
    machine: Machine,
    output: list[str],
    passed: bool,
    command: str,
    timings: dict[str, float] | None = None,
    notes: list[str] | None = None,
    path: Path | None = None,
    outcome: str | None = None,
) -> Evidence:
    """Write the evidence of a run that really happened on ``machine``'s GPU."""
    if not output:
        raise CourseError("evidence needs the run's output lines (got none)")
    ev = Evidence(
        lesson=lesson.id,
        provenance=Provenance.of(machine, command),
        output=list(output),
        passed=passed,
        timings_s={k: round(v, 4) for k, v in (timings or {}).items()},
        notes=list(notes or []),
        outcome=outcome,
    )
    atomic_write_text(path or lesson.evidence_path, json.dumps(ev.to_dict(), indent=2) + "\n")
    return ev


def load(lesson: Lesson, path: Path | None = None) -> Evidence | None:
    """The lesson's evidence, None when there is none, CourseError when it is broken."""
    path = path or lesson.evidence_path
    if not path.exists():
        return None
    data = _data.read_json(path, "evidence")
    where = "evidence"
    version = _data.get(data, "schema_version", int, path, where)
    if version != SCHEMA_VERSION:
        raise CourseError(
            f"evidence schema_version must be {SCHEMA_VERSION} (got {version}); record it again", path=path
        )
    if _data.get(data, "lesson", str, path, where) != lesson.id:
        raise CourseError(f"evidence is for lesson {data['lesson']!r}, not {lesson.id!r}", path=path)
    return Evidence(
        lesson=data["lesson"],
        provenance=Provenance.from_dict(data, path, where),
        output=_data.text_list(data, "output", path, where),
        passed=_data.get(data, "passed", bool, path, where),
        timings_s=dict(data.get("timings_s", {})),
        notes=list(data.get("notes", [])),
        schema_version=version,
        outcome=_data.optional(data, "outcome", str, path, where),
    )
