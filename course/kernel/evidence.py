"""Evidence: what a real GPU run printed, kept so a page can show it, one folder per GPU model.

``python -m course record`` runs each lesson on the GPU in hand and writes
``evidence/<model>/<lesson>.json``: the provenance (device, compute capability,
driver, CUDA runtime, NVRTC, CuPy and cuda-python versions, the date and
the command; ``course.kernel.provenance``) and the exact output lines. Only a real
run writes evidence: ``record`` takes the probe of a machine that has a
GPU. A page that cannot run shows the file instead, saying plainly that it
is a recording.

The layout, and which GPU's recordings a page shows, are decided here and nowhere else.
Each GPU model has a folder, ``evidence/<model>/`` (``device_key``: the device name
without "NVIDIA", lower case: ``h100-80gb-hbm3``, ``h200``), holding its runs
(``<lesson>.json``, ``<lesson>.<case>.json``), its benchmarks (``bench/``,
``course.bench.result``) and its timelines (``timeline/``, ``course.timeline.store``);
every writer puts a recording in the folder of the GPU it ran on. ``shown()`` picks the
folder every reader reads by default: the learner's GPU model when it has a recording,
else ``DEFAULT_DEVICE`` (the H100 learners rent), and its ``sentence()`` says which GPU
that is and why.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _data, _paths
from .._atomic import atomic_write_text
from .._html import escape, pre
from ..errors import CourseError
from ..lesson import Lesson
from . import gate
from .gate import Machine
from .provenance import Provenance, Provenanced

SCHEMA_VERSION = 1
# The GPU a page without one shows the recordings of: the course's learners run on cloud H100s.
DEFAULT_DEVICE = "NVIDIA H100 80GB HBM3"
# Folders of evidence/ that hold no GPU's recordings.
NOT_RECORDINGS = frozenset({"renderings", "logs"})
# Names the recordings of one GPU model (its key, ``device_key``) for every reader, overriding
# the choice ``shown()`` makes: a tool that keeps or checks another GPU's pictures sets it.
DEVICE_ENV = "COURSE_EVIDENCE_GPU"


def device_key(device: str) -> str:
    """The folder of a GPU model's recordings: "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3"."""
    words = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")
    key = words.removeprefix("nvidia-")
    if not key:
        raise CourseError(f"a GPU's name must have letters or digits to name its recordings (got {device!r})")
    return key


def recorded_keys() -> list[str]:
    """The GPU models that have recordings in this checkout (their folders under evidence/)."""
    root = _paths.evidence_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.name not in NOT_RECORDINGS and _holds_recordings(p))


def _holds_recordings(folder: Path) -> bool:
    """A GPU model's folder holds a recording (a JSON file) in it or in its bench/ or timeline/;
    the other folders of evidence/ (the kernels' development record, screenshots) hold none there."""
    return folder.is_dir() and any(
        next(where.glob("*.json"), None) is not None
        for where in (folder, folder / "bench", folder / "timeline")
    )


@dataclass(frozen=True)
class Shown:
    """Whose recordings a page shows: ``device`` (a GPU model's name), and the GPU in hand
    (``here``, None on a machine without one)."""

    device: str
    here: str | None = None
    chosen_by: str | None = None  # DEVICE_ENV when the environment named the folder

    @property
    def key(self) -> str:
        return device_key(self.device)

    @property
    def directory(self) -> Path:
        return _paths.evidence_dir() / self.key

    @property
    def short(self) -> str:
        """The model's name without the maker's: "H100 80GB HBM3"."""
        return self.device.removeprefix("NVIDIA ").strip() or self.device

    @property
    def own(self) -> bool:
        """Whether the recordings are of the GPU in hand's model."""
        return self.here is not None and device_key(self.here) == self.key

    def sentence(self) -> str:
        """Which GPU the recordings are from and why, in one sentence a page can print."""
        if self.chosen_by:
            return f"The recordings shown are the {self.device}'s, as {self.chosen_by} asks."
        if self.here is None:
            return (
                f"The recordings shown are the {self.device}'s, the GPU the course's learners run on "
                "(this machine has none)."
            )
        if self.own:
            return f"The recordings shown are of this GPU's model, the {self.device}."
        return (
            f"The recordings shown are another GPU's, the {self.device}: none of this machine's "
            f"{self.here} is kept."
        )


# A GPU model named for a while by ``showing`` (a tool drawing each GPU's pictures in turn).
_SHOWING: ContextVar[str | None] = ContextVar("course_evidence_showing", default=None)


@contextmanager
def showing(key: str) -> Iterator[Shown]:
    """Every reader reads ``evidence/<key>/`` inside this block (``tools/keep_renderings.py``
    keeps the pictures of every recorded GPU)."""
    if key not in recorded_keys():
        raise CourseError(
            f"no GPU model {key!r} has recordings here; the recorded ones are {', '.join(recorded_keys())}"
        )
    token = _SHOWING.set(key)
    try:
        yield shown()
    finally:
        _SHOWING.reset(token)


def shown(machine: Machine | None = None) -> Shown:
    """The GPU whose recordings every reader shows: the one in hand when its model was recorded,
    else ``DEFAULT_DEVICE``; ``DEVICE_ENV`` names another (a key from ``recorded_keys()``), and
    inside ``showing(key)`` it is that key's."""
    held = _SHOWING.get()
    if held is not None:
        return Shown(_device_of(held), None, "the tool")
    named = os.environ.get(DEVICE_ENV)
    if named:
        keys = recorded_keys()
        if named not in keys:
            raise CourseError(
                f"{DEVICE_ENV}={named!r} names no GPU with recordings here; the recorded ones are "
                f"{', '.join(keys) or 'none'}"
            )
        return Shown(_device_of(named), None, DEVICE_ENV)
    gpu = (machine or gate.probe()).gpu
    here = gpu.name if gpu is not None else None
    if here is not None and (_paths.evidence_dir() / device_key(here)).is_dir():
        return Shown(here, here)
    return Shown(DEFAULT_DEVICE, here)


def _device_of(key: str) -> str:
    """The device name the recordings in ``evidence/<key>/`` were made on."""
    if key == device_key(DEFAULT_DEVICE):
        return DEFAULT_DEVICE
    return _device_in(_paths.evidence_dir() / key)


@functools.lru_cache(maxsize=8)
def _device_in(folder: Path) -> str:
    for path in sorted(folder.rglob("*.json")):
        data = _data.read_json(path, "evidence")
        if isinstance(data, dict) and isinstance(data.get("device"), str):
            return str(data["device"])
    raise CourseError(f"no recording in {folder} names the GPU it was made on")


def recording_dir(key: str | None = None) -> Path:
    """The folder of one GPU model's recordings (``key``; by default the one ``shown()`` picks)."""
    return _paths.evidence_dir() / (key or shown().key)


def path_of(lesson: Lesson, name: str | None = None, key: str | None = None) -> Path:
    """Where the lesson's recorded run lives (of its named case or suggested experiment ``name``)."""
    return recording_dir(key) / (f"{lesson.id}.{name}.json" if name else f"{lesson.id}.json")


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
        out = "\n".join(self.output)
        kind = "" if self.passed else " of a run whose check <b>failed</b> (a run meant to fail)"
        if self.outcome in _OUTCOME_WORDS:
            kind = f" of a run that <b>{_OUTCOME_WORDS[self.outcome]}</b> (a run meant to show it)"
        return (
            "<div class='course-evidence'>"
            f"<p><b>Recorded on a real GPU</b>{kind}, not run here: {escape(self.device)} "
            f"(compute capability {escape(self.compute_capability)}, {self.sm_count} SMs), "
            f"{escape(self.recorded_at)}, by <code>{escape(self.command)}</code>.</p>"
            f"{pre(out)}"
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
    path = path or path_of(lesson, key=device_key(ev.device))  # the folder of the GPU it ran on
    atomic_write_text(path, json.dumps(ev.to_dict(), indent=2) + "\n")
    return ev


def load(lesson: Lesson, path: Path | None = None) -> Evidence | None:
    """The lesson's evidence, None when there is none, CourseError when it is broken."""
    path = path or path_of(lesson)
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
