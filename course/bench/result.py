"""Benchmark results: typed, written as JSON, read back with located errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import _data
from ..errors import CourseError
from ..kernel.evidence import recording_dir
from ..kernel.provenance import Provenance, Provenanced
from .arith import median

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Timing:
    """Event-timed milliseconds per call over ``repeats`` timed batches."""

    median_ms: float
    min_ms: float
    max_ms: float
    repeats: int
    calls_per_repeat: int  # launches per timed batch (each on the next buffer set)
    buffers: int  # sets rotated over
    gap_repeats: int = 0  # batches where the GPU may have waited on the host's launches

    @classmethod
    def from_samples(
        cls, per_call_ms: Sequence[float], calls_per_repeat: int, buffers: int, gaps: int = 0
    ) -> Timing:
        return cls(
            median(per_call_ms),
            min(per_call_ms),
            max(per_call_ms),
            len(per_call_ms),
            calls_per_repeat,
            buffers,
            gaps,
        )


@dataclass(frozen=True)
class Measurement:
    """One thing timed at one size: the kernel, a peer or a variant."""

    name: str
    timing: Timing
    rate: float  # in the result's unit (GB/s or TFLOP/s)
    ratio: float | None = None  # the kernel's rate over this one (peers only)


@dataclass(frozen=True)
class SizeRow:
    size: int
    work: float  # bytes or FLOPs per call
    compile_s: float
    compile_cached: bool | None
    check: str  # what was verified before timing
    kernel: Measurement
    peers: tuple[Measurement, ...]

    def peer(self, name: str) -> Measurement:
        for p in self.peers:
            if p.name == name:
                return p
        raise CourseError(
            f"no peer named {name!r} at size {self.size} (peers: {', '.join(p.name for p in self.peers)})"
        )


REASON_KINDS = ("measured", "derived", "counted", "queried", "estimate", "not measured")


@dataclass(frozen=True)
class Reason:
    """One reason for the kernel's speed, with its number and where the number comes from."""

    title: str
    value: float | None
    unit: str
    kind: str  # one of REASON_KINDS
    detail: str
    # A ratio measured repeat by repeat in interleaved batches: the lowest and highest of those
    # ratios (``value`` is their median). None for a single number.
    low: float | None = None
    high: float | None = None

    @property
    def within_noise(self) -> bool | None:
        """Whether the spread of a ratio covers 1.0 (None when no spread was recorded)."""
        if self.low is None or self.high is None:
            return None
        return self.low <= 1.0 <= self.high

    def __post_init__(self) -> None:
        if self.kind not in REASON_KINDS:
            raise CourseError(f"a reason's kind must be one of {', '.join(REASON_KINDS)} (got {self.kind!r})")

    def value_text(self) -> str:
        if self.value is None:
            return "n/a"
        number = f"{self.value:,.0f}" if abs(self.value) >= 100 else f"{self.value:.3g}"
        return f"{number} {self.unit}".strip()


@dataclass(frozen=True)
class BenchResult(Provenanced):
    lesson: str
    provenance: Provenance
    l2_bytes: int
    unit: str  # "GB/s" or "TFLOP/s"
    kernel_name: str
    rows: tuple[SizeRow, ...]
    reasons: tuple[Reason, ...] = ()
    ceilings: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    schema_version: int = SCHEMA_VERSION

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(r.size for r in self.rows)

    @property
    def peer_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.rows[0].peers) if self.rows else ()

    def row(self, size: int) -> SizeRow:
        for r in self.rows:
            if r.size == size:
                return r
        raise CourseError(f"{self.lesson} was not measured at N={size} (sizes: {list(self.sizes)})")

    def summary(self) -> str:
        return (
            f"{self.device} (compute capability {self.compute_capability}, {self.sm_count} SMs), "
            f"driver {self.driver or 'unknown'}, CuPy {self.versions.get('cupy')}, "
            f"recorded {self.recorded_at}"
        )

    def to_dict(self) -> dict[str, Any]:
        p = self.provenance
        return {
            "schema_version": self.schema_version,
            "lesson": self.lesson,
            "recorded_at": p.recorded_at,
            "command": p.command,
            "device": p.device,
            "compute_capability": p.compute_capability,
            "sm_count": p.sm_count,
            "l2_bytes": self.l2_bytes,
            "driver": p.driver,
            "versions": dict(p.versions),
            "unit": self.unit,
            "kernel_name": self.kernel_name,
            "rows": [asdict(r) for r in self.rows],
            "reasons": [asdict(r) for r in self.reasons],
            "ceilings": dict(self.ceilings),
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def _timing_from(d: Any, path: Path | None, where: str) -> Timing:
    g = _data.get
    return Timing(
        median_ms=float(g(d, "median_ms", float, path, where)),
        min_ms=float(g(d, "min_ms", float, path, where)),
        max_ms=float(g(d, "max_ms", float, path, where)),
        repeats=g(d, "repeats", int, path, where),
        calls_per_repeat=g(d, "calls_per_repeat", int, path, where),
        buffers=g(d, "buffers", int, path, where),
        gap_repeats=g(d, "gap_repeats", int, path, where) if "gap_repeats" in d else 0,
    )


def _measurement_from(d: Any, path: Path | None, where: str) -> Measurement:
    name = _data.get(d, "name", str, path, where)
    where = f"{where} {name!r}"
    r = _data.optional(d, "ratio", float, path, where)
    return Measurement(
        name=name,
        timing=_timing_from(_data.get(d, "timing", dict, path, where), path, f"{where} timing"),
        rate=float(_data.get(d, "rate", float, path, where)),
        ratio=None if r is None else float(r),
    )


def result_from_dict(data: Any, path: Path | None = None) -> BenchResult:
    """A BenchResult from parsed JSON; CourseError naming the field when something is off."""
    g, top = _data.get, "benchmark"
    version = g(data, "schema_version", int, path, top)
    if version != SCHEMA_VERSION:
        raise CourseError(
            f"benchmark schema_version must be {SCHEMA_VERSION} (got {version}); record it again", path=path
        )
    rows = []
    for i, row in enumerate(g(data, "rows", list, path, top)):
        where = f"rows[{i}]"
        rows.append(
            SizeRow(
                size=g(row, "size", int, path, where),
                work=float(g(row, "work", float, path, where)),
                compile_s=float(g(row, "compile_s", float, path, where)),
                compile_cached=_data.optional(row, "compile_cached", bool, path, where),
                check=g(row, "check", str, path, where),
                kernel=_measurement_from(g(row, "kernel", dict, path, where), path, f"{where} kernel"),
                peers=tuple(
                    _measurement_from(p, path, f"{where} peers[{j}]")
                    for j, p in enumerate(g(row, "peers", list, path, where))
                ),
            )
        )
    reasons = []
    for i, r in enumerate(data.get("reasons", [])):
        where = f"reasons[{i}]"
        value = _data.optional(r, "value", float, path, where)
        reasons.append(
            Reason(
                title=g(r, "title", str, path, where),
                value=None if value is None else float(value),
                unit=g(r, "unit", str, path, where),
                kind=g(r, "kind", str, path, where),
                detail=g(r, "detail", str, path, where),
                low=_float_or_none(_data.optional(r, "low", float, path, where)),
                high=_float_or_none(_data.optional(r, "high", float, path, where)),
            )
        )
    ceilings = g(data, "ceilings", dict, path, top) if "ceilings" in data else {}
    provenance = Provenance.from_dict(data, path, top)
    # "driver" is written for readers of the file; it is derived from the versions when read.
    return BenchResult(
        lesson=g(data, "lesson", str, path, top),
        provenance=provenance,
        l2_bytes=g(data, "l2_bytes", int, path, top),
        unit=g(data, "unit", str, path, top),
        kernel_name=g(data, "kernel_name", str, path, top),
        rows=tuple(rows),
        reasons=tuple(reasons),
        ceilings={str(k): float(v) for k, v in ceilings.items()},
        notes=tuple(str(n) for n in data.get("notes", [])),
        schema_version=version,
    )


def bench_dir(key: str | None = None) -> Path:
    """Where one GPU model's recorded benchmarks live: evidence/<model>/bench/ (``key``, by default
    the model a page shows, ``course.kernel.evidence.shown``)."""
    return recording_dir(key) / "bench"


def load(lesson_id: str, directory: Path | None = None) -> BenchResult | None:
    """The recorded benchmark of a lesson (in ``directory``, by default ``bench_dir()``), None when
    there is none, CourseError when it is broken."""
    path = (directory or bench_dir()) / f"{lesson_id}.json"
    if not path.exists():
        return None
    result = result_from_dict(_data.read_json(path, "the benchmark"), path)
    if result.lesson != lesson_id:
        raise CourseError(f"the benchmark is for lesson {result.lesson!r}, not {lesson_id!r}", path=path)
    return result
