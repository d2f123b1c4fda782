"""How fast is it? The lessons' kernels timed on this GPU, beside their peers.

What is measured, and how (``.library/device/METHOD.md`` is the method):

- Each kernel size is a compile-time parameter (``-DTMA_DIM=N``,
  ``-DGEMM_DIM=N``): one compile per size, its time reported apart from
  the rate.
- Correct first: at every size the kernel and each peer are checked on
  fresh random inputs, output poisoned with NaN, before anything is timed
  (Day 76 bit-exact on every element, Day 78 relative error against a
  float64 product on the GPU, with the max(|ref|, 1) floor).
- Timed with CUDA events after a warm-up; the median of at least 20
  repeats, with min and max. Inputs rotate over enough buffers that the
  rotated working set is at least 4x the L2 cache, so a repeat never reads
  what the previous one left in L2. Small launches are timed in batches
  behind a short GPU-side hold, so the host's launch cost is not timed
  (repeats where the GPU may still have waited on the host are counted).
- Always side by side with peers measured in the same run: Day 76 against
  CuPy's own ``x + 1`` and a device-to-device copy (same bytes); Day 78
  against cuBLAS on the same FP16 inputs with an FP32 result and FP32
  accumulation (``cublasGemmEx``, the call CuPy's own matmul makes).
- "Why it is far from cuBLAS": variants of the Day 78 kernel built at run
  time from the same source by text substitution (producer loads only,
  wgmma only, neither), and the cuBLAS peak of the same run. Every reason
  says whether its number was measured, derived from measured numbers,
  counted from the code, queried from the driver, or is an estimate.

The arithmetic (bytes, FLOPs, rates, rotation counts), the result types,
their JSON, the plot and the variant sources are CPU-only and tested on
machines with no GPU; the measuring functions need the lesson's GPU.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from . import _paths, gate
from ._atomic import atomic_write_bytes, atomic_write_text
from ._html import escape
from .compile import OfflineCompile, compile_offline
from .constants import kernel_constants
from .errors import CheckFailed, CourseError, EnvironmentProblem
from .lessons import Lesson, get_lesson

__all__ = [
    "BenchResult",
    "Measurement",
    "Reason",
    "SizeRow",
    "SpeedSection",
    "Timing",
    "load",
    "measure",
    "plot",
    "speed_section",
    "table",
    "write",
]

SCHEMA_VERSION = 1

# The sizes each lesson is timed at. The command line runs SIZES; a page
# runs PAGE_SIZES so that its cell stays quick: each size is one NVRTC
# compile (about 2 s cold for the TMA kernel, 0.5 s for the GEMM, 0.03 s
# from CuPy's cache), and the timing itself takes well under a second.
SIZES: dict[str, tuple[int, ...]] = {
    "day76": (256, 512, 1024, 2048, 4096, 8192, 16384),
    "day78": (256, 512, 1024, 2048, 4096),
}
PAGE_SIZES: dict[str, tuple[int, ...]] = {
    "day76": (256, 1024, 4096, 8192),
    "day78": (256, 512, 1024, 2048, 4096),
}
# The macro that sets each kernel's size, and the largest size allowed:
# wgmma_gemm.cu indexes with int, so N*N must stay below 2^31.
SIZE_MACRO = {"day76": "TMA_DIM", "day78": "GEMM_DIM"}
MAX_SIZE = {"day76": 32768, "day78": 32768}
SIZE_STEP = 64  # both kernels tile by 64 and static_assert that the tiles cover the matrix

DEFAULT_REPEATS = 20
MIN_REPEATS = 20  # METHOD.md: the median of many repeats; fewer is noise
ROTATION_FACTOR = 4  # rotated working set >= 4x L2
MAX_CALLS_PER_REPEAT = 32  # launches per timed batch, for the small sizes
PEAK_SIZE = 8192  # the size at which cuBLAS's peak is measured in the same run
GEMM_TOLERANCE = 1e-3  # the kernel's own kRelTolerance

# Leads from shared/notes/hardware-facts.md (an H200, 2026-11-29), used
# only where the same run measured nothing better, and labelled as leads.
LEAD_COPY_BYTES_PER_S = 4.3e12  # device-to-device copy, read + write
LEAD_BF16_FLOPS = 770e12  # dense bf16 cuBLAS matmul, 8192^3, low end

KERNEL = "kernel"
PEER_ADD = "x + 1 (CuPy)"
PEER_COPY = "D2D copy"
PEER_CUBLAS = "cuBLAS gemmEx"


# ---------------------------------------------------------------------------
# Arithmetic: what each call moves or computes, and the rates.
# ---------------------------------------------------------------------------


def _positive_int(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise CourseError(f"{name} must be a positive integer (got {value!r})")
    return value


def tma_bytes(n: int) -> int:
    """Bytes one Day 76 launch moves: N*N floats read once, N*N written once."""
    _positive_int("size", n)
    return n * n * 4 + n * n * 4


def gemm_flops(n: int) -> int:
    """FLOPs of an N x N x N matrix product: one multiply and one add per term."""
    _positive_int("size", n)
    return 2 * n**3


def gemm_bytes(n: int) -> int:
    """The fewest bytes an N^3 FP16 GEMM with FP32 output moves: A, B read once, D written once."""
    _positive_int("size", n)
    return 2 * n * n * 2 + n * n * 4


def gemm_producer_bytes(n: int, tile: int = 64) -> int:
    """Bytes the Day 78 producer requests: every CTA reads its A strip and B strip once per K-tile.

    (N/64)^2 CTAs x (N/64) K-tiles x (64x64 A + 64x64 B) FP16 = N^3/16 bytes,
    N/64 times the N*N*4 bytes of A and B: the 64x64 tile's re-reads, counted.
    """
    _positive_int("size", n)
    tiles = n // tile
    return tiles**3 * (2 * tile * tile * 2)


def ctas(n: int, tile: int = 64) -> int:
    """CTAs in the (N/64, N/64) grid both kernels launch."""
    _positive_int("size", n)
    return (n // tile) ** 2


def tile_intensity(tile_m: int, tile_n: int) -> float:
    """FLOPs per byte loaded by an M x N output tile of an FP16 GEMM: 2*M*N*k / ((M + N)*k*2 bytes)."""
    _positive_int("tile rows", tile_m)
    _positive_int("tile columns", tile_n)
    return tile_m * tile_n / (tile_m + tile_n)


def waves(n_ctas: int, sms: int, per_sm: int) -> float:
    """How many times the grid fills the GPU (CTAs over SMs x resident CTAs per SM)."""
    if sms <= 0 or per_sm <= 0:
        raise CourseError(f"SMs and CTAs per SM must be positive (got {sms}, {per_sm})")
    return n_ctas / (sms * per_sm)


def gb_per_s(nbytes: float, ms: float) -> float:
    """Bytes moved in ``ms`` milliseconds, in GB/s (1 GB = 1e9 bytes)."""
    if ms <= 0:
        raise CourseError(f"a time must be positive to give a rate (got {ms} ms)")
    return nbytes / (ms * 1e-3) / 1e9


def tflop_per_s(flops: float, ms: float) -> float:
    """FLOPs done in ``ms`` milliseconds, in TFLOP/s (1 TFLOP = 1e12)."""
    if ms <= 0:
        raise CourseError(f"a time must be positive to give a rate (got {ms} ms)")
    return flops / (ms * 1e-3) / 1e12


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``; the kernel's rate over a peer's (below 1: the kernel is slower)."""
    if denominator <= 0:
        raise CourseError(f"the rate compared against must be positive (got {denominator})")
    return numerator / denominator


def median(values: Sequence[float]) -> float:
    """The median of the repeats (the mean of the middle two for an even count)."""
    if not values:
        raise CourseError("a median needs at least one value (got none)")
    return float(statistics.median(values))


def floor_ms(work: float, rate_per_s: float) -> float:
    """The least time ``work`` (bytes or FLOPs) can take at ``rate_per_s``, in ms."""
    if rate_per_s <= 0:
        raise CourseError(f"a ceiling rate must be positive (got {rate_per_s})")
    return work / rate_per_s * 1e3


def rotation_buffers(set_bytes: int, l2_bytes: int, factor: int = ROTATION_FACTOR, minimum: int = 2) -> int:
    """Input/output sets to rotate over so that together they are >= ``factor`` x L2.

    With fewer, repeat r+1 would find repeat r's data still in L2 and the
    benchmark would measure the cache, not device memory. At least
    ``minimum`` sets, so no two consecutive calls touch the same buffers.
    """
    _positive_int("bytes per set", set_bytes)
    _positive_int("L2 size", l2_bytes)
    _positive_int("factor", factor)
    return max(minimum, math.ceil(factor * l2_bytes / set_bytes))


def validate_sizes(lesson_id: str, sizes: Sequence[int]) -> tuple[int, ...]:
    """The sizes, checked against what the lesson's kernel can be built for."""
    if lesson_id not in SIZE_MACRO:
        raise CourseError(
            f"no benchmark for lesson {lesson_id!r}; the benchmarks are: {', '.join(SIZE_MACRO)}"
        )
    if not sizes:
        raise CourseError(f"at least one size is needed for {lesson_id} (got none)")
    out = []
    for n in sizes:
        if (
            isinstance(n, bool)
            or not isinstance(n, int)
            or n < SIZE_STEP
            or n % SIZE_STEP
            or n > MAX_SIZE[lesson_id]
        ):
            raise CourseError(
                f"sizes for {lesson_id} must be multiples of {SIZE_STEP} from {SIZE_STEP} to "
                f"{MAX_SIZE[lesson_id]} (got {n!r}): the kernel tiles the matrix by 64 x 64"
            )
        out.append(n)
    return tuple(sorted(set(out)))


def validate_repeats(repeats: int) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < MIN_REPEATS:
        raise CourseError(
            f"repeats must be an integer of at least {MIN_REPEATS} (got {repeats!r}): "
            "the median of fewer repeats is noise"
        )
    return repeats


# ---------------------------------------------------------------------------
# Results: typed, written as JSON, read back with located errors.
# ---------------------------------------------------------------------------


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
    work: float  # bytes (Day 76) or FLOPs (Day 78) per call
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
    """One reason the kernel is slower, with its number and where the number comes from."""

    title: str
    value: float | None
    unit: str
    kind: str  # one of REASON_KINDS
    detail: str

    def __post_init__(self) -> None:
        if self.kind not in REASON_KINDS:
            raise CourseError(f"a reason's kind must be one of {', '.join(REASON_KINDS)} (got {self.kind!r})")

    def value_text(self) -> str:
        if self.value is None:
            return "n/a"
        number = f"{self.value:,.0f}" if abs(self.value) >= 100 else f"{self.value:.3g}"
        return f"{number} {self.unit}".strip()


@dataclass(frozen=True)
class BenchResult:
    schema_version: int
    lesson: str
    recorded_at: str  # ISO 8601, UTC
    command: str
    device: str
    compute_capability: str
    sm_count: int
    l2_bytes: int
    driver: str | None
    versions: dict[str, str | None]
    unit: str  # "GB/s" or "TFLOP/s"
    kernel_name: str
    rows: tuple[SizeRow, ...]
    reasons: tuple[Reason, ...] = ()
    ceilings: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(r.size for r in self.rows)

    @property
    def peer_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.rows[0].peers) if self.rows else ()

    def summary(self) -> str:
        return (
            f"{self.device} (compute capability {self.compute_capability}, {self.sm_count} SMs), "
            f"driver {self.driver or 'unknown'}, CuPy {self.versions.get('cupy')}, "
            f"recorded {self.recorded_at}"
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"


def _get(
    data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], path: Path | None, where: str
) -> Any:
    if not isinstance(data, Mapping):
        raise CourseError(f"{where} must be a JSON object (got {type(data).__name__})", path=path)
    if name not in data:
        raise CourseError(f"{where}: field {name!r} is missing", path=path)
    value = data[name]
    if kind is float:
        kind = (int, float)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float))):
        expected = getattr(kind, "__name__", "number" if kind == (int, float) else str(kind))
        raise CourseError(
            f"{where}: field {name!r} must be {expected} (got {type(value).__name__})", path=path
        )
    return value


def _optional(
    data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], path: Path | None, where: str
) -> Any:
    return None if data.get(name) is None else _get(data, name, kind, path, where)


def _timing_from(d: Any, path: Path | None, where: str) -> Timing:
    return Timing(
        median_ms=float(_get(d, "median_ms", float, path, where)),
        min_ms=float(_get(d, "min_ms", float, path, where)),
        max_ms=float(_get(d, "max_ms", float, path, where)),
        repeats=_get(d, "repeats", int, path, where),
        calls_per_repeat=_get(d, "calls_per_repeat", int, path, where),
        buffers=_get(d, "buffers", int, path, where),
        gap_repeats=_get(d, "gap_repeats", int, path, where) if "gap_repeats" in d else 0,
    )


def _measurement_from(d: Any, path: Path | None, where: str) -> Measurement:
    name = _get(d, "name", str, path, where)
    where = f"{where} {name!r}"
    r = _optional(d, "ratio", float, path, where)
    return Measurement(
        name=name,
        timing=_timing_from(_get(d, "timing", dict, path, where), path, f"{where} timing"),
        rate=float(_get(d, "rate", float, path, where)),
        ratio=None if r is None else float(r),
    )


def result_from_dict(data: Any, path: Path | None = None) -> BenchResult:
    """A BenchResult from parsed JSON; CourseError naming the field when something is off."""
    top = "benchmark"
    version = _get(data, "schema_version", int, path, top)
    if version != SCHEMA_VERSION:
        raise CourseError(
            f"benchmark schema_version must be {SCHEMA_VERSION} (got {version}); record it again", path=path
        )
    rows = []
    for i, row in enumerate(_get(data, "rows", list, path, top)):
        where = f"rows[{i}]"
        rows.append(
            SizeRow(
                size=_get(row, "size", int, path, where),
                work=float(_get(row, "work", float, path, where)),
                compile_s=float(_get(row, "compile_s", float, path, where)),
                compile_cached=_optional(row, "compile_cached", bool, path, where),
                check=_get(row, "check", str, path, where),
                kernel=_measurement_from(_get(row, "kernel", dict, path, where), path, f"{where} kernel"),
                peers=tuple(
                    _measurement_from(p, path, f"{where} peers[{j}]")
                    for j, p in enumerate(_get(row, "peers", list, path, where))
                ),
            )
        )
    reasons = []
    for i, r in enumerate(data.get("reasons", [])):
        where = f"reasons[{i}]"
        value = _optional(r, "value", float, path, where)
        reasons.append(
            Reason(
                title=_get(r, "title", str, path, where),
                value=None if value is None else float(value),
                unit=_get(r, "unit", str, path, where),
                kind=_get(r, "kind", str, path, where),
                detail=_get(r, "detail", str, path, where),
            )
        )
    ceilings = _get(data, "ceilings", dict, path, top) if "ceilings" in data else {}
    return BenchResult(
        schema_version=version,
        lesson=_get(data, "lesson", str, path, top),
        recorded_at=_get(data, "recorded_at", str, path, top),
        command=_get(data, "command", str, path, top),
        device=_get(data, "device", str, path, top),
        compute_capability=_get(data, "compute_capability", str, path, top),
        sm_count=_get(data, "sm_count", int, path, top),
        l2_bytes=_get(data, "l2_bytes", int, path, top),
        driver=_optional(data, "driver", str, path, top),
        versions=dict(_get(data, "versions", dict, path, top)),
        unit=_get(data, "unit", str, path, top),
        kernel_name=_get(data, "kernel_name", str, path, top),
        rows=tuple(rows),
        reasons=tuple(reasons),
        ceilings={str(k): float(v) for k, v in ceilings.items()},
        notes=tuple(str(n) for n in data.get("notes", [])),
    )


def bench_dir() -> Path:
    """Where recorded benchmarks live: evidence/bench/."""
    return _paths.evidence_dir() / "bench"


def write(result: BenchResult, directory: Path | None = None) -> tuple[Path, Path]:
    """Write <lesson>.json and <lesson>.png (atomically); return both paths."""
    directory = directory or bench_dir()
    json_path = directory / f"{result.lesson}.json"
    png_path = directory / f"{result.lesson}.png"
    atomic_write_text(json_path, result.to_json())
    atomic_write_bytes(png_path, png_bytes(result))
    return json_path, png_path


def load(lesson_id: str, directory: Path | None = None) -> BenchResult | None:
    """The recorded benchmark of a lesson, None when there is none, CourseError when it is broken."""
    path = (directory or bench_dir()) / f"{lesson_id}.json"
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CourseError(f"the benchmark is not valid JSON: {e.msg}", path=path, line=e.lineno) from None
    result = result_from_dict(data, path)
    if result.lesson != lesson_id:
        raise CourseError(f"the benchmark is for lesson {result.lesson!r}, not {lesson_id!r}", path=path)
    return result


# ---------------------------------------------------------------------------
# Table and plot.
# ---------------------------------------------------------------------------


def _rate_text(rate: float, unit: str, with_unit: bool = True) -> str:
    number = f"{rate:,.0f}" if unit == "GB/s" else f"{rate:,.1f}"
    return f"{number} {unit}" if with_unit else number


def table_rows(result: BenchResult) -> list[list[str]]:
    """Header and body of the size table, as text cells (shared by the terminal and HTML)."""
    header = ["N", "kernel ms (median, min-max)", f"kernel {result.unit}"]
    header += [f"{name} {result.unit} (kernel/peer)" for name in result.peer_names]
    header += ["compile s"]
    body = []
    for row in result.rows:
        t = row.kernel.timing
        cells = [
            str(row.size),
            f"{t.median_ms:.4g} ({t.min_ms:.4g}-{t.max_ms:.4g})",
            _rate_text(row.kernel.rate, result.unit, with_unit=False),
        ]
        for p in row.peers:
            r = "" if p.ratio is None else f" ({p.ratio:.2f}x)"
            cells.append(_rate_text(p.rate, result.unit, with_unit=False) + r)
        cached = {True: ", cached", False: "", None: ""}[row.compile_cached]
        cells.append(f"{row.compile_s:.2f}{cached}")
        body.append(cells)
    return [header, *body]


def table(result: BenchResult) -> str:
    """The sizes, times and rates as a plain-text table, then the reasons."""
    rows = table_rows(result)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"{result.lesson}: {result.kernel_name} on {result.summary()}"]
    for i, r in enumerate(rows):
        lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    for name, value in result.ceilings.items():
        lines.append(f"ceiling, {name}: {value:,.1f}")
    for reason in result.reasons:
        lines.append(f"- {reason.title}: {reason.value_text()} [{reason.kind}] {reason.detail}")
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


COPY_CEILING = f"{PEER_COPY} best GB/s"
CUBLAS_CEILING = "cuBLAS peak TFLOP/s"


def plot(result: BenchResult) -> Any:
    """Rate against size (log2 axis): the kernel and its peers; Day 76 also the copy's best rate."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.add_subplot()
    sizes = list(result.sizes)
    ax.plot(sizes, [r.kernel.rate for r in result.rows], marker="o", linewidth=2, label=result.kernel_name)
    for name in result.peer_names:
        ax.plot(sizes, [r.peer(name).rate for r in result.rows], marker="s", linestyle="--", label=name)
    for key, label in ((COPY_CEILING, f"{PEER_COPY}, best"), (CUBLAS_CEILING, "cuBLAS peak")):
        if key in result.ceilings:
            value = result.ceilings[key]
            ax.axhline(value, color="gray", linestyle=":", label=f"{label}: {_rate_text(value, result.unit)}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, labels=[str(s) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("N (matrix is N x N)")
    ax.set_ylabel(f"rate ({result.unit})")
    ax.set_ylim(bottom=0)
    ax.set_title(f"{result.lesson}: {result.device}, {result.recorded_at[:10]}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def png_bytes(result: BenchResult) -> bytes:
    buf = io.BytesIO()
    plot(result).savefig(buf, format="png", dpi=110)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# Day 78 variants: the same source with one part removed, for "why so slow".
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Substitution:
    old: str  # matched with any run of whitespace standing for any other
    new: str
    why: str


_NO_WGMMA = Substitution(
    "wgmmaM64n64k16(acc, tileDesc(smA[s]) + off, tileDesc(smB[s]) + off);",
    # The descriptors still escape into an asm with a memory clobber, so
    # the compiler must keep the producer's shared-memory stores (and the
    # global loads that feed them) exactly as in the real kernel.
    'asm volatile("" :: "l"(tileDesc(smA[s]) + off), "l"(tileDesc(smB[s]) + off) : "memory");',
    "the four wgmma.mma_async issues removed; fence, commit and wait_group 0 stay (with nothing to wait for)",
)
_NO_LOOP_LOADS = Substitution(
    "loadStage(s ^ 1, kt + 1);",
    "/* bench variant: no load in the loop */",
    "the producer's in-loop global->shared copy removed",
)
_BOTH_STAGES_ONCE = Substitution(
    "loadStage(0, 0);",
    "loadStage(0, 0); loadStage(1, 0);  /* bench variant: both stages filled once, real data */",
    "the prologue fills both stages once, so wgmma reads real data",
)

VARIANTS: dict[str, tuple[Substitution, ...]] = {
    "loads only": (_NO_WGMMA,),
    "wgmma only": (_NO_LOOP_LOADS, _BOTH_STAGES_ONCE),
    "neither": (_NO_WGMMA, _NO_LOOP_LOADS, _BOTH_STAGES_ONCE),
}


def _pattern(old: str) -> re.Pattern[str]:
    return re.compile(r"\s+".join(re.escape(token) for token in old.split()))


def variant_source(source: str, name: str, path: Path | None = None) -> str:
    """The Day 78 source with variant ``name``'s substitutions, each matched exactly once."""
    try:
        subs = VARIANTS[name]
    except KeyError:
        raise CourseError(f"no variant named {name!r}; the variants are: {', '.join(VARIANTS)}") from None
    out = source
    for sub in subs:
        matches = list(_pattern(sub.old).finditer(out))
        found = len(matches)
        if found != 1:
            raise CourseError(
                f"variant {name!r}: the text to replace must occur exactly once in the kernel "
                f"(found {found}): "
                f"{sub.old!r}. The kernel changed; update VARIANTS in course/bench.py to match it",
                path=path,
            )
        out = out[: matches[0].start()] + sub.new + out[matches[0].end() :]
    return out


def compile_source_offline(
    lesson: Lesson, source: str, defines: Mapping[str, int | str] | None = None, arch: str | None = None
) -> OfflineCompile:
    """Compile modified lesson source (a variant) without a GPU: ``compile_offline`` with ``source``."""
    return compile_offline(lesson, arch=arch, defines=defines, source=source)


# ---------------------------------------------------------------------------
# The reasons, from numbers (pure: tested with synthetic numbers).
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GemmBreakdown:
    """What the Day 78 run measured at one size, for ``gemm_reasons``."""

    size: int
    kernel_ms: float
    loads_ms: float  # variant "loads only"
    wgmma_ms: float  # variant "wgmma only"
    neither_ms: float  # variant "neither"
    cublas_ms: float  # cuBLAS at the same size
    peak_tflops: float | None  # cuBLAS at peak_size, same run
    peak_size: int | None
    sms: int
    ctas_per_sm: int
    ctas_per_sm_kind: str  # "queried" (driver occupancy API) or "estimate"
    regs: int | None
    local_bytes: int | None


def gemm_reasons(b: GemmBreakdown) -> tuple[Reason, ...]:
    n = b.size
    flops = gemm_flops(n)
    k_rate = tflop_per_s(flops, b.kernel_ms)
    reasons: list[Reason] = []
    if b.peak_tflops:
        reasons.append(
            Reason(
                "Fraction of the measured cuBLAS peak",
                100.0 * k_rate / b.peak_tflops,
                "%",
                "measured",
                f"the kernel does {k_rate:.1f} TFLOP/s at N={n}; cuBLAS (FP16 inputs, FP32 accumulate and "
                f"output) reached {b.peak_tflops:.0f} TFLOP/s at N={b.peak_size} in the same run, and "
                f"{tflop_per_s(flops, b.cublas_ms):.0f} TFLOP/s at N={n}.",
            )
        )
    req = gemm_producer_bytes(n)
    reasons.append(
        Reason(
            "The producer's global->shared copy alone",
            b.loads_ms,
            "ms",
            "measured",
            f"variant with the wgmma issues removed: {100 * b.loads_ms / b.kernel_ms:.0f}% of the kernel's "
            f"{b.kernel_ms:.3g} ms at N={n}. With 64x64 tiles every CTA re-reads its strips of A and B, "
            f"{req / 1e9:.2f} GB requested (N^3/16, counted) against {gemm_bytes(n) / 1e9:.2f} GB of data: "
            f"{gb_per_s(req, b.loads_ms):.0f} GB/s effective. Loads are 2 bytes per thread, and B is read "
            "down its columns (neighbouring threads 2N bytes apart), so each warp's B load touches "
            "32 sectors.",
        )
    )
    reasons.append(
        Reason(
            "wgmma alone (the producer's loads removed)",
            tflop_per_s(flops, b.wgmma_ms),
            "TFLOP/s",
            "measured",
            f"variant that fills both stages once and then only computes: {b.wgmma_ms:.3g} ms at N={n}. Per "
            "64-deep K-tile one warpgroup issues four m64n64k16, commits, and waits for all of them "
            "(wait_group 0) before the CTA-wide barrier: the tensor cores drain every tile.",
        )
    )
    reasons.append(
        Reason(
            "Barriers, epilogue and launch (neither loads nor wgmma)",
            b.neither_ms,
            "ms",
            "measured",
            f"variant with both removed: the K loop's __syncthreads, the prologue and the FP32 stores, "
            f"{100 * b.neither_ms / b.kernel_ms:.0f}% of the kernel's time.",
        )
    )
    serial = b.loads_ms + b.wgmma_ms - b.neither_ms
    overlap = max(b.loads_ms, b.wgmma_ms)
    reasons.append(
        Reason(
            "How much the producer and the consumer overlap",
            b.kernel_ms,
            "ms",
            "derived",
            f"kernel {b.kernel_ms:.3g} ms; fully serial would be about loads + wgmma - neither = "
            f"{serial:.3g} ms, "
            f"perfect overlap max(loads, wgmma) = {overlap:.3g} ms. The slower of the two sets the pace.",
        )
    )
    grid = ctas(n)
    spill = "" if not b.local_bytes else f", {b.local_bytes} bytes of local memory per thread (spills)"
    regs = "" if b.regs is None else f"; {b.regs} registers per thread{spill}"
    reasons.append(
        Reason(
            "64x64 tiles: CTAs against SMs",
            float(grid),
            "CTAs",
            "counted",
            f"{grid} CTAs of 256 threads on {b.sms} SMs with {b.ctas_per_sm} resident per SM "
            f"({b.ctas_per_sm_kind}{regs}): {waves(grid, b.sms, b.ctas_per_sm):.2f} waves. At N=256 the "
            f"grid is 16 CTAs, so {100 * min(16, b.sms) / b.sms:.0f}% of the SMs have work. An M x N tile "
            f"does M*N/(M+N) FLOPs per byte it loads: {tile_intensity(64, 64):.0f} for 64x64, "
            f"{tile_intensity(128, 128):.0f} for 128x128, {tile_intensity(128, 256):.0f} for 128x256.",
        )
    )
    reasons.append(
        Reason(
            "wait_group 0 every tile, against a deeper pipeline",
            None,
            "",
            "not measured",
            "measuring it needs a kernel with more stages that waits with wait_group 1 and keeps one group "
            "in flight; that is a new kernel, not a substitution, so this run does not build it.",
        )
    )
    return tuple(reasons)


def tma_reasons(rows: Sequence[SizeRow], sms: int) -> tuple[Reason, ...]:
    """What the Day 76 numbers say, from the rows of one run."""
    if not rows:
        return ()
    small, large = rows[0], rows[-1]
    copies = [r.peer(PEER_COPY).rate for r in rows if any(p.name == PEER_COPY for p in r.peers)]
    best, source = (
        (max(copies) * 1e9, "the best copy rate of this run") if copies else (LEAD_COPY_BYTES_PER_S, "lead")
    )
    us = small.kernel.timing.median_ms * 1e3
    out = [
        Reason(
            "Small sizes measure the launch, not the memory",
            us,
            "us",
            "measured",
            f"at N={small.size} the kernel moves {small.work / 1e6:.2f} MB in {us:.1f} us with "
            f"{ctas(small.size)} CTAs on {sms} SMs; at {best / 1e12:.2f} TB/s ({source}) those bytes take "
            f"{floor_ms(small.work, best) * 1e3:.2f} us. The rest is launch and one tile's latency.",
        )
    ]
    if copies:
        copy = large.peer(PEER_COPY)
        out.append(
            Reason(
                "Against a plain device-to-device copy of the same bytes",
                copy.ratio,
                "x",
                "measured",
                f"at N={large.size}: kernel {large.kernel.rate:,.0f} GB/s, copy {copy.rate:,.0f} GB/s. One "
                "thread issues each 16 KiB tile load and the CTA waits for it before storing (read from the "
                "code): each CTA has one load in flight, so only the other resident CTAs hide its latency.",
            )
        )
    return tuple(out)


# ---------------------------------------------------------------------------
# On the GPU.
# ---------------------------------------------------------------------------

# A one-thread kernel that spins for a given number of nanoseconds on the
# GPU's global timer. Enqueued before each timed batch, it keeps the GPU
# busy while the host queues the batch, so the events time the GPU's work
# and not the host's launch rate (the "blocking kernel" of nvbench).
_HOLD_SOURCE = r"""
extern "C" __global__ void courseBenchHold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""
_HOLD_MAX_S = 0.05


def _cupy() -> Any:
    import cupy

    return cupy


class _Timer:
    """Times a rotation of calls with events, behind a GPU-side hold."""

    def __init__(self, repeats: int):
        cp = _cupy()
        self.cp = cp
        self.repeats = repeats
        self.hold = cp.RawKernel(_HOLD_SOURCE, "courseBenchHold")
        self.hold((1,), (1,), (_u64(0),))
        cp.cuda.get_current_stream().synchronize()

    def time(self, calls: Sequence[Callable[[], Any]]) -> Timing:
        cp = self.cp
        stream = cp.cuda.get_current_stream()
        n = len(calls)
        inner = min(n, MAX_CALLS_PER_REPEAT)
        calls[0]()  # first call: module load, CuPy's own kernel compile, handle creation
        stream.synchronize()
        # Warm-up, which also measures what one launch costs the host.
        warm = max(3, inner)
        t0 = time.perf_counter()
        for i in range(warm):
            calls[i % n]()
        host_s = (time.perf_counter() - t0) / warm
        stream.synchronize()
        hold_ns = int(min(2.0 * host_s * inner + 50e-6, _HOLD_MAX_S) * 1e9)
        events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(self.repeats)]
        index = warm
        gaps = 0
        for start, end in events:
            self.hold((1,), (1,), (_u64(hold_ns),))
            start.record(stream)
            for _ in range(inner):
                calls[index % n]()
                index += 1
            if start.done:  # the GPU began the batch before the host finished queueing it
                gaps += 1
            end.record(stream)
        events[-1][1].synchronize()
        per_call = [cp.cuda.get_elapsed_time(s, e) / inner for s, e in events]
        return Timing.from_samples(per_call, inner, n, gaps)


def _u64(value: int) -> Any:
    import numpy as np

    return np.uint64(value)


def _check_memory(need: int, what: str) -> None:
    cp = _cupy()
    cp.get_default_memory_pool().free_all_blocks()
    free, _total = cp.cuda.runtime.memGetInfo()
    if need > 0.85 * free:
        raise CourseError(
            f"{what} needs {need / 2**30:.1f} GiB of GPU memory and {free / 2**30:.1f} GiB is free; "
            "choose smaller sizes (--sizes)"
        )


def _release() -> None:
    cp = _cupy()
    cp.cuda.get_current_stream().synchronize()
    cp.get_default_memory_pool().free_all_blocks()


def _defines(lesson: Lesson, n: int) -> dict[str, int] | None:
    """No -D at the kernel's own default size, so the page shares the lesson's compile cache."""
    macro = SIZE_MACRO[lesson.id]
    default = {"day76": "kGmemWidth", "day78": "kDim"}[lesson.id]
    return None if kernel_constants(lesson.kernel_path)[default] == n else {macro: n}


def _compile_size(lesson: Lesson, n: int) -> Any:
    from .compile import compile_lesson

    return compile_lesson(lesson, defines=_defines(lesson, n))


def _compile_variant(lesson: Lesson, name: str, n: int) -> tuple[Any, float]:
    """Build a variant on this GPU through CuPy, with the lesson's own options."""
    from .compile import compile_lesson

    source = variant_source(lesson.kernel_path.read_text(encoding="utf-8"), name, lesson.kernel_path)
    compiled = compile_lesson(lesson, {SIZE_MACRO[lesson.id]: n}, source=source)
    return compiled.function, compiled.seconds


def _bits_differ(got: Any, want: Any, xp: Any) -> tuple[int, int | None]:
    """How many float32 elements differ bit for bit, and the first (flat index)."""
    bad = got.view(xp.uint32).ravel() != want.view(xp.uint32).ravel()
    count = int(xp.count_nonzero(bad))
    return count, (int(xp.flatnonzero(bad)[0]) if count else None)


def _rel_check(got: Any, ref: Any, tolerance: float, xp: Any) -> tuple[float, int, int | None]:
    """Max relative error (max(|ref|, 1) floor), failures (NaN fails), first failing flat index."""
    rel = xp.abs(got.astype(xp.float64) - ref) / xp.maximum(xp.abs(ref), 1.0)
    bad = ~(rel <= tolerance)
    failures = int(xp.count_nonzero(bad))
    finite = rel[xp.isfinite(rel)]
    worst = float(finite.max()) if finite.size else float("nan")
    return worst, failures, (int(xp.flatnonzero(bad.ravel())[0]) if failures else None)


def _fp16_inputs(rng: Any, shape: tuple[int, ...]) -> Any:
    """Random values in {-8..8}/8 as FP16: exact in FP16, never all zeros (METHOD.md)."""
    cp = _cupy()
    u = rng.random(shape, dtype=cp.float32)
    return ((cp.floor(u * 17.0) - 8.0) * 0.125).astype(cp.float16)


class _Cublas:
    """D = A B (row-major, FP16 in, FP32 out, FP32 accumulate) through cublasGemmEx.

    cuBLAS is column-major: a row-major M x N matrix is its N x M transpose,
    so D = A B is computed as D^T = B^T A^T, passing B first. These are the
    arguments CuPy's own matmul passes (cupy/_core/_routines_linalg.pyx,
    tensordot_core_v11) with the output type set to FP32.
    """

    def __init__(self) -> None:
        import numpy as np

        cp = _cupy()
        try:
            cublas = cp.cuda.cublas  # CuPy loads cupy_backends.cuda.libs.cublas on first access
        except (ImportError, AttributeError) as e:
            raise EnvironmentProblem(
                f"cuBLAS could not be loaded through CuPy ({e}); the Day 78 peer needs it"
            ) from None
        self.cublas = cublas
        self.handle = cp.cuda.device.get_cublas_handle()
        self.one = np.array(1.0, dtype=np.float32)  # host scalars (pointer mode host), kept alive here
        self.zero = np.array(0.0, dtype=np.float32)
        rt = cp.cuda.runtime
        self.f16, self.f32 = rt.CUDA_R_16F, rt.CUDA_R_32F

    def __call__(self, a: Any, b: Any, d: Any) -> None:
        c = self.cublas
        m, k = a.shape
        n = b.shape[1]
        c.gemmEx(
            self.handle,
            c.CUBLAS_OP_N,
            c.CUBLAS_OP_N,
            n,
            m,
            k,
            self.one.ctypes.data,
            b.data.ptr,
            self.f16,
            n,
            a.data.ptr,
            self.f16,
            k,
            self.zero.ctypes.data,
            d.data.ptr,
            self.f32,
            n,
            c.CUBLAS_COMPUTE_32F,
            c.CUBLAS_GEMM_DEFAULT_TENSOR_OP,
        )


def _machine_fields(machine: gate.Machine) -> dict[str, Any]:
    cp = _cupy()
    assert machine.gpu is not None  # noqa: S101 - callers hold a "runs" verdict
    versions = dict(machine.versions)
    driver = versions.get("driver") or (
        f"CUDA {versions['driver (CUDA)']}" if versions.get("driver (CUDA)") else None
    )
    return {
        "device": machine.gpu.name,
        "compute_capability": machine.gpu.cc_str,
        "sm_count": machine.gpu.sm_count,
        "l2_bytes": int(cp.cuda.Device().attributes["L2CacheSize"]),
        "driver": driver,
        "versions": versions,
    }


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _measure_day76(
    sizes: Sequence[int], repeats: int, progress: Callable[[str], Any], l2: int, sms: int
) -> dict[str, Any]:
    import numpy as np

    from . import day76

    cp = _cupy()
    lesson = day76.LESSON
    timer = _Timer(repeats)
    threads = int(kernel_constants(lesson.kernel_path)["kThreadsPerBlock"])
    stream = cp.cuda.get_current_stream()
    one = np.float32(1.0)
    rows: list[SizeRow] = []
    for n in sizes:
        compiled = _compile_size(lesson, n)
        tile_map = day76.lesson_map(_defines(lesson, n))
        work = tma_bytes(n)
        sets = rotation_buffers(work, l2)
        _check_memory(sets * work + n * n * 4, f"day76 at N={n}")
        rng = cp.random.default_rng(7600 + n)
        x = rng.random((sets, n, n), dtype=cp.float32)
        y = cp.empty_like(x)
        maps = [day76.encode(tile_map, int(x[j].data.ptr)) for j in range(sets)]
        grid = (n // tile_map.box_width, n // tile_map.box_height)
        fn = compiled.function
        nbytes = n * n * 4

        def kernel(
            j: int, fn: Any = fn, grid: tuple[int, int] = grid, maps: list[Any] = maps, y: Any = y
        ) -> None:
            fn(grid, (threads,), (maps[j], y[j]))

        def add(j: int, x: Any = x, y: Any = y) -> None:
            cp.add(x[j], one, out=y[j])

        def copy(j: int, x: Any = x, y: Any = y, nbytes: int = nbytes) -> None:
            cp.cuda.runtime.memcpyAsync(
                y[j].data.ptr, x[j].data.ptr, nbytes, cp.cuda.runtime.memcpyDeviceToDevice, stream.ptr
            )

        # Correct first: each of the three, on fresh inputs, output poisoned.
        want = x[0] + one
        for name, call, expect in ((KERNEL, kernel, want), (PEER_ADD, add, want), (PEER_COPY, copy, x[0])):
            y[0].fill(cp.nan)
            call(0)
            bad, first = _bits_differ(y[0], expect, cp)
            if bad:
                assert first is not None  # noqa: S101 - bad > 0 implies an index
                r, c = divmod(first, n)
                raise CheckFailed(
                    f"day76 N={n}, {name}: {bad} of {n * n} elements differ from the reference bit for bit; "
                    f"first at row {r}, col {c}: got {float(y[0, r, c])!r}, want {float(expect[r, c])!r}"
                )
        del want
        check = f"bit-exact on all {n * n} elements (kernel, x + 1 and copy), output poisoned with NaN first"
        timings = {
            name: timer.time([partial(f, j) for j in range(sets)])
            for name, f in ((KERNEL, kernel), (PEER_ADD, add), (PEER_COPY, copy))
        }
        k_rate = gb_per_s(work, timings[KERNEL].median_ms)
        peers = tuple(
            Measurement(
                name,
                timings[name],
                gb_per_s(work, timings[name].median_ms),
                ratio(k_rate, gb_per_s(work, timings[name].median_ms)),
            )
            for name in (PEER_ADD, PEER_COPY)
        )
        row = SizeRow(
            n,
            float(work),
            compiled.seconds,
            compiled.cache_hit,
            check,
            Measurement(KERNEL, timings[KERNEL], k_rate),
            peers,
        )
        rows.append(row)
        progress(_progress_line("day76", row, "GB/s"))
        del x, y, maps, kernel, add, copy, expect
        _release()
    best_copy = max(r.peer(PEER_COPY).rate for r in rows)
    return {
        "unit": "GB/s",
        "kernel_name": "loadTileTma (TMA tile load, +1, store)",
        "rows": tuple(rows),
        "reasons": tma_reasons(rows, sms),
        "ceilings": {COPY_CEILING: best_copy},
        "notes": (
            f"rates count N*N*4 bytes read plus N*N*4 written; inputs rotated over enough sets to be >= "
            f"{ROTATION_FACTOR}x the {l2 / 2**20:.0f} MiB L2",
            "D2D copy: cudaMemcpyAsync device to device (cupy.cuda.runtime.memcpyAsync); "
            "x + 1: cupy.add(x, float32(1), out=y), preallocated",
        ),
    }


def _occupancy(function: Any, threads: int) -> tuple[int, str, int | None, int | None]:
    """CTAs resident per SM (the driver's occupancy query, else an estimate), registers, local bytes."""
    cp = _cupy()
    regs = getattr(function, "num_regs", None)
    local = getattr(function, "local_size_bytes", None)
    try:
        per_sm = int(
            cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(function.kernel.ptr, threads, 0)
        )
        return per_sm, "queried: cuOccupancyMaxActiveBlocksPerMultiprocessor", regs, local
    except Exception:  # noqa: BLE001 - fall back to the arithmetic, labelled as such
        pass
    attrs = cp.cuda.Device().attributes
    # Hopper's per-SM limits as defaults: 2048 threads, 64K registers, 228 KiB shared memory.
    limits = [attrs.get("MaxThreadsPerMultiProcessor", 2048) // threads]
    if regs:
        limits.append(attrs.get("MaxRegistersPerMultiprocessor", 65536) // (regs * threads))
    smem = getattr(function, "shared_size_bytes", 0) or 0
    if smem:  # + 1 KiB: the driver reserves that much per CTA
        limits.append(attrs.get("MaxSharedMemoryPerMultiprocessor", 233472) // (smem + 1024))
    return max(1, min(limits)), "estimate from threads, registers and shared memory", regs, local


def _measure_day78(
    sizes: Sequence[int],
    repeats: int,
    progress: Callable[[str], Any],
    l2: int,
    sms: int,
    peak_size: int | None,
) -> dict[str, Any]:
    from . import day78

    cp = _cupy()
    lesson = day78.LESSON
    timer = _Timer(repeats)
    consts = kernel_constants(lesson.kernel_path)
    threads, tile = int(consts["kThreadsPerBlock"]), int(consts["kTileM"])
    gemm = _Cublas()
    rows: list[SizeRow] = []
    breakdown: GemmBreakdown | None = None
    variant_s = 0.0

    def checked(name: str, n: int, call: Callable[[], Any], d0: Any, ref: Any) -> str:
        d0.fill(cp.nan)
        call()
        worst, failures, first = _rel_check(d0, ref, GEMM_TOLERANCE, cp)
        if failures:
            assert first is not None  # noqa: S101
            r, c = divmod(first, n)
            raise CheckFailed(
                f"day78 N={n}, {name}: {failures} elements off by more than {GEMM_TOLERANCE:g} (relative, "
                f"max(|ref|, 1) floor); first at row {r}, col {c}: got {float(d0[r, c])!r}, "
                f"ref {float(ref[r, c])!r}"
            )
        return f"{name} max rel error {worst:.3g}"

    def rotation(n: int) -> tuple[Any, Any, Any, Any, int]:
        work = gemm_bytes(n)
        sets = rotation_buffers(work, l2)
        _check_memory(sets * work + 3 * n * n * 8, f"day78 at N={n}")
        rng = cp.random.default_rng(7800 + n)
        a = _fp16_inputs(rng, (sets, n, n))
        b = _fp16_inputs(rng, (sets, n, n))
        d = cp.empty((sets, n, n), dtype=cp.float32)
        # float64 product on the GPU: exact here (multiples of 1/64, |sum| <= N).
        ref = a[0].astype(cp.float64) @ b[0].astype(cp.float64)
        return a, b, d, ref, sets

    for n in sizes:
        compiled = _compile_size(lesson, n)
        a, b, d, ref, sets = rotation(n)
        grid = (n // tile, n // tile)
        fn = compiled.function

        def kernel(
            j: int, fn: Any = fn, grid: tuple[int, int] = grid, a: Any = a, b: Any = b, d: Any = d
        ) -> None:
            fn(grid, (threads,), (a[j], b[j], d[j]))

        def blas(j: int, a: Any = a, b: Any = b, d: Any = d) -> None:
            gemm(a[j], b[j], d[j])

        check = (
            "; ".join(
                (
                    checked(KERNEL, n, partial(kernel, 0), d[0], ref),
                    checked(PEER_CUBLAS, n, partial(blas, 0), d[0], ref),
                )
            )
            + f" (tolerance {GEMM_TOLERANCE:g} against float64 on the GPU, output poisoned with NaN first)"
        )
        del ref
        t_k = timer.time([partial(kernel, j) for j in range(sets)])
        t_c = timer.time([partial(blas, j) for j in range(sets)])
        work = gemm_flops(n)
        k_rate, c_rate = tflop_per_s(work, t_k.median_ms), tflop_per_s(work, t_c.median_ms)
        peer = Measurement(PEER_CUBLAS, t_c, c_rate, ratio(k_rate, c_rate))
        row = SizeRow(
            n,
            float(work),
            compiled.seconds,
            compiled.cache_hit,
            check,
            Measurement(KERNEL, t_k, k_rate),
            (peer,),
        )
        rows.append(row)
        progress(_progress_line("day78", row, "TFLOP/s"))
        if n == sizes[-1]:
            # The variants, at the largest size only (one compile each).
            variant_ms = {}
            for name in VARIANTS:
                vfn, seconds = _compile_variant(lesson, name, n)
                variant_s += seconds

                def run_variant(
                    j: int, vfn: Any = vfn, grid: tuple[int, int] = grid, a: Any = a, b: Any = b, d: Any = d
                ) -> None:
                    vfn(grid, (threads,), (a[j], b[j], d[j]))

                variant_ms[name] = timer.time([partial(run_variant, j) for j in range(sets)]).median_ms
                progress(f"day78 N={n} variant {name!r}: {variant_ms[name]:.4g} ms (compile {seconds:.2f} s)")
                del run_variant
            per_sm, kind, regs, local = _occupancy(fn, threads)
            breakdown = GemmBreakdown(
                n,
                t_k.median_ms,
                variant_ms["loads only"],
                variant_ms["wgmma only"],
                variant_ms["neither"],
                t_c.median_ms,
                None,
                None,
                sms,
                per_sm,
                kind,
                regs,
                local,
            )
        del a, b, d, kernel, blas
        _release()

    ceilings: dict[str, float] = {}
    peak: float | None = None
    if peak_size:
        a, b, d, ref, sets = rotation(peak_size)
        calls = [partial(gemm, a[j], b[j], d[j]) for j in range(sets)]
        note = checked(f"{PEER_CUBLAS} N={peak_size}", peak_size, calls[0], d[0], ref)
        del ref
        t_p = timer.time(calls)
        peak = tflop_per_s(gemm_flops(peak_size), t_p.median_ms)
        ceilings[CUBLAS_CEILING] = peak
        progress(f"day78 cuBLAS peak at N={peak_size}: {peak:.0f} TFLOP/s ({t_p.median_ms:.4g} ms; {note})")
        del a, b, d
        _release()
    reasons: tuple[Reason, ...] = ()
    if breakdown is not None:
        reasons = gemm_reasons(replace(breakdown, peak_tflops=peak, peak_size=peak_size if peak else None))
    return {
        "unit": "TFLOP/s",
        "kernel_name": "wgmmaGemm (64x64 tiles, FP16 in, FP32 out)",
        "rows": tuple(rows),
        "reasons": reasons,
        "ceilings": ceilings,
        "notes": (
            "rates count 2*N^3 FLOPs; inputs rotated over enough sets to be >= "
            f"{ROTATION_FACTOR}x the {l2 / 2**20:.0f} MiB L2",
            "cuBLAS: cupy.cuda.cublas.gemmEx, FP16 A and B, FP32 D, CUBLAS_COMPUTE_32F, "
            "CUBLAS_GEMM_DEFAULT_TENSOR_OP, computed as D^T = B^T A^T (column-major)",
            f"variants compiled at N={sizes[-1]} in {variant_s:.2f} s in all; their results are wrong by "
            "design and are not checked",
        ),
    }


def _progress_line(lesson_id: str, row: SizeRow, unit: str) -> str:
    t = row.kernel.timing
    cached = " cached" if row.compile_cached else ""
    peers = "; ".join(
        f"{p.name} {_rate_text(p.rate, unit)} ({p.ratio:.2f}x)" if p.ratio is not None else p.name
        for p in row.peers
    )
    gaps = f" [{t.gap_repeats} of {t.repeats} batches may include launch gaps]" if t.gap_repeats else ""
    return (
        f"{lesson_id} N={row.size}: compile {row.compile_s:.2f} s{cached}; checked; "
        f"kernel {t.median_ms:.4g} ms "
        f"(min {t.min_ms:.4g}, max {t.max_ms:.4g}) = {_rate_text(row.kernel.rate, unit)}; {peers}{gaps}"
    )


def measure(
    lesson_id: str,
    sizes: Sequence[int] | None = None,
    repeats: int = DEFAULT_REPEATS,
    progress: Callable[[str], Any] = print,
    command: str | None = None,
    peak_size: int | None = PEAK_SIZE,
) -> BenchResult:
    """Compile, check and time the lesson's kernel at each size, with its peers, on this GPU.

    Raises EnvironmentProblem when this machine cannot run the lesson, and
    CheckFailed when the kernel or a peer computes a wrong result.
    """
    lesson = get_lesson(lesson_id)
    sizes = validate_sizes(lesson_id, sizes if sizes is not None else SIZES[lesson_id])
    repeats = validate_repeats(repeats)
    machine = gate.probe()
    gate.ensure_runs(lesson, machine)
    fields = _machine_fields(machine)
    progress(
        f"{lesson_id}: timing on {fields['device']} at N = {', '.join(map(str, sizes))}; "
        f"median of {repeats} repeats, inputs rotated over >= {ROTATION_FACTOR}x the "
        f"{fields['l2_bytes'] / 2**20:.0f} MiB L2"
    )
    if lesson_id == "day76":
        body = _measure_day76(sizes, repeats, progress, fields["l2_bytes"], fields["sm_count"])
    else:
        body = _measure_day78(sizes, repeats, progress, fields["l2_bytes"], fields["sm_count"], peak_size)
    gaps = sum(m.timing.gap_repeats for r in body["rows"] for m in (r.kernel, *r.peers))
    notes = tuple(body.pop("notes"))
    if gaps:
        notes += (
            f"{gaps} timed batches began before the host had queued all their launches: those may include "
            "launch gaps (small sizes only, usually)",
        )
    return BenchResult(
        schema_version=SCHEMA_VERSION,
        lesson=lesson_id,
        recorded_at=_now(),
        command=command or f"python -m course bench {lesson_id}",
        notes=notes,
        **fields,
        **body,
    )


# ---------------------------------------------------------------------------
# The page's section.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SpeedSection:
    """What a page's "How fast is it?" cell shows: a table, the reasons and the plot."""

    lesson: str
    result: BenchResult | None
    png: bytes | None = field(repr=False)
    measured_here: bool
    message: str

    def _repr_html_(self) -> str:
        esc = escape
        color = "#1a7f37" if self.measured_here else "#1f5fa8"
        box = f"border-left:4px solid {color};padding:4px 10px;margin:4px 0"
        parts = [f"<div style='{box}'>{esc(self.message)}</div>"]
        if self.result is not None:
            rows = table_rows(self.result)
            head = "".join(f"<th>{esc(c)}</th>" for c in rows[0])
            body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
            parts.append(f"<table><tr>{head}</tr>{body}</table>")
            if self.result.reasons:
                items = "".join(
                    f"<tr><td style='text-align:left'>{esc(r.title)}</td><td>{esc(r.value_text())}</td>"
                    f"<td>{esc(r.kind)}</td><td style='text-align:left'>{esc(r.detail)}</td></tr>"
                    for r in self.result.reasons
                )
                parts.append(
                    "<p><b>Why it is slower</b></p><table><tr><th>reason</th><th>number</th><th>source</th>"
                    f"<th>detail</th></tr>{items}</table>"
                )
            if self.result.notes:
                parts.append(
                    "<ul>" + "".join(f"<li><small>{esc(n)}</small></li>" for n in self.result.notes) + "</ul>"
                )
        if self.png:
            data = base64.b64encode(self.png).decode("ascii")
            parts.append(
                f"<img alt='{esc(self.lesson)} rate against size' src='data:image/png;base64,{data}'/>"
            )
        return "<div class='course-bench'>" + "".join(parts) + "</div>"

    def __str__(self) -> str:
        return self.message + ("\n" + table(self.result) if self.result is not None else "")


def speed_section(
    lesson_id: str,
    sizes: Sequence[int] | None = None,
    repeats: int = DEFAULT_REPEATS,
    progress: Callable[[str], Any] | None = None,
    directory: Path | None = None,
    peak_size: int | None = PEAK_SIZE,
    measure_here: bool = True,
) -> SpeedSection:
    """Measure here when this GPU runs the lesson; otherwise show the recorded figures.

    ``sizes`` defaults to PAGE_SIZES (a quick run). With COURSE_REQUIRE_GPU
    set, a machine that cannot run the lesson raises EnvironmentProblem.
    ``measure_here=False`` shows the recorded figures even on a GPU that
    could measure (the page's default, until the learner asks to measure).
    """
    lesson = get_lesson(lesson_id)
    if sizes is not None:
        validate_sizes(lesson_id, sizes)
    v = gate.verdict(lesson)
    if v.runs and measure_here:
        result = measure(
            lesson_id,
            sizes if sizes is not None else PAGE_SIZES[lesson_id],
            repeats,
            progress=progress or (lambda line: print(line, flush=True)),
            command=f"course.bench.speed_section({lesson_id!r})",
            peak_size=peak_size,
        )
        message = (
            f"Measured here, just now, on {result.device} (compute capability {result.compute_capability})."
        )
        return SpeedSection(lesson_id, result, png_bytes(result), True, message)
    if gate.gpu_required() and not v.runs:
        raise EnvironmentProblem(
            f"{gate.REQUIRE_GPU_ENV} is set but this machine cannot time {lesson_id}: {v.message()}"
        )
    recorded = load(lesson_id, directory)
    why_not = (
        "Not measured yet: press the button to time it on this GPU."
        if v.runs
        else f"Not measured here: {v.reason}"
    )
    if recorded is None:
        where = (directory or bench_dir()) / f"{lesson_id}.json"
        return SpeedSection(
            lesson_id,
            None,
            None,
            False,
            f"{why_not} No recorded benchmark is in this checkout ({where}); "
            f"`python -m course bench {lesson_id}` on a Hopper GPU records one.",
        )
    png_path = (directory or bench_dir()) / f"{lesson_id}.png"
    png = png_path.read_bytes() if png_path.exists() else png_bytes(recorded)
    message = (
        f"{why_not} These figures were recorded on {recorded.device} (compute capability "
        f"{recorded.compute_capability}, driver {recorded.driver or 'unknown'}) on {recorded.recorded_at} "
        f"by `{recorded.command}`."
    )
    return SpeedSection(lesson_id, recorded, png, False, message)
