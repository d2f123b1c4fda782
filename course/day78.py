"""Day 78, the host side in Python: LCG inputs, launch, float64 check.

Mirrors ``main()`` of ``kernels/wgmma_gemm.cu``: the same LCG (seed
20260901, values in {-8..8}/8, A drawn first, then B), so the device
result is comparable with the standalone program's; a float64 reference;
relative error with the max(|ref|, 1) floor against the kernel's own
tolerance; the output poisoned with NaN first, so an element the kernel
never wrote fails (NaN fails every comparison, and is counted as a failure
explicitly); the first mismatch named; the C++ program's PASS line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import gate
from .compile import Compiled, compile_lesson
from .constants import kernel_constants
from .errors import CourseError
from .lessons import get_lesson

LESSON = get_lesson("day78")

LCG_SEED = 20260901
_LCG_A = 1664525
_LCG_C = 1013904223


def lcg_states(count: int, seed: int = LCG_SEED) -> np.ndarray:
    """The first ``count`` states of ``state = state * 1664525 + 1013904223``.

    Vectorised: after n steps, state = a^n * s0 + c * (a^(n-1) + ... + 1),
    all modulo 2^32. numpy's uint64 products wrap modulo 2^64, and 2^32
    divides 2^64, so masking the wrapped values gives the exact uint32
    sequence the C++ loop produces.
    """
    if count < 0:
        raise CourseError(f"count must be >= 0 (got {count})")
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(count, _LCG_A, dtype=np.uint64))  # a^1 .. a^n
        geometric = np.cumsum(np.concatenate(([np.uint64(1)], powers[:-1]))) if count else powers
        states = powers * np.uint64(seed) + np.uint64(_LCG_C) * geometric
    return (states & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def lcg_inputs(dim: int, seed: int = LCG_SEED) -> tuple[np.ndarray, np.ndarray]:
    """A and B (dim x dim, float16, row-major) exactly as main() draws them."""
    elems = dim * dim
    states = lcg_states(2 * elems, seed)
    values = ((states >> np.uint32(24)).astype(np.int32) % 17 - 8).astype(np.float32) / np.float32(8.0)
    halves = values.astype(np.float16)
    return halves[:elems].reshape(dim, dim), halves[elems:].reshape(dim, dim)


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Plain float64 product, the job of gemmCpu: be right, not bit-identical."""
    return a.astype(np.float64) @ b.astype(np.float64)


@dataclass(frozen=True)
class Mismatch:
    index: int
    row: int
    col: int
    got: float
    ref: float
    rel: float
    tolerance: float

    def line(self) -> str:
        # The C++ program's wording, with the row and column added.
        return (
            f"FAIL at [{self.index}] (row {self.row}, col {self.col}): gpu {self.got:f}, "
            f"ref {self.ref:f}, rel {self.rel:g} > {self.tolerance:g}"
        )


@dataclass(frozen=True)
class Check:
    max_rel: float
    mismatch: Mismatch | None
    failures: int

    @property
    def passed(self) -> bool:
        return self.mismatch is None


def check(got: np.ndarray, ref: np.ndarray, tolerance: float) -> Check:
    """Relative error |got - ref| / max(|ref|, 1); NaN or Inf always fails."""
    got64 = got.astype(np.float64)
    rel = np.abs(got64 - ref) / np.maximum(np.abs(ref), 1.0)
    bad = ~(rel <= tolerance)  # NaN compares false, so it lands in bad
    finite = rel[np.isfinite(rel)]
    worst = float(finite.max()) if finite.size else float("nan")
    if not bad.any():
        return Check(worst, None, 0)
    i = int(np.flatnonzero(bad.ravel())[0])
    n = got.shape[-1]
    m = Mismatch(
        i, i // n, i % n, float(got.ravel()[i]), float(ref.ravel()[i]), float(rel.ravel()[i]), tolerance
    )
    return Check(worst, m, int(bad.sum()))


def pass_line(dim: int, max_rel: float, tolerance: float) -> str:
    return f"wgmma GEMM {dim}x{dim}x{dim}: PASS, max rel error {max_rel:g} (tolerance {tolerance:g})"


@dataclass
class RunResult:
    lesson_id: str
    passed: bool
    lines: list[str]
    mismatch: Mismatch | None
    max_rel: float
    compile_summary: str
    seconds: dict[str, float] = field(default_factory=dict)


def run(
    compiled: Compiled | None = None,
    defines: dict[str, int] | None = None,
    progress: Callable[[str], Any] = print,
) -> RunResult:
    """Compile, launch and check, as ``./wgmma_gemm`` does."""
    machine = gate.probe()
    gate.ensure_runs(LESSON, machine)
    import cupy as cp

    assert machine.gpu is not None  # noqa: S101 - ensure_runs guarantees it
    gpu_line = machine.gpu.banner
    progress(gpu_line)
    if compiled is None:
        progress(f"compiling {LESSON.kernel_file} for {LESSON.arch} with NVRTC ...")
        compiled = compile_lesson(LESSON, defines=defines)
    progress(compiled.summary())
    c = kernel_constants(LESSON.kernel_path, defines)
    dim, tile_m, tile_n = int(c["kDim"]), int(c["kTileM"]), int(c["kTileN"])
    tolerance = float(c["kRelTolerance"])
    timings = {"compile": compiled.seconds}

    t0 = time.perf_counter()
    a, b = lcg_inputs(dim)
    d_a, d_b = cp.asarray(a), cp.asarray(b)
    d_d = cp.full((dim, dim), cp.nan, dtype=cp.float32)  # poison: unwritten fails
    compiled.launch((dim // tile_n, dim // tile_m), (int(c["kThreadsPerBlock"]),), (d_a, d_b, d_d))
    got = cp.asnumpy(d_d)
    timings["run"] = time.perf_counter() - t0

    result = check(got, reference(a, b), tolerance)
    line = result.mismatch.line() if result.mismatch else pass_line(dim, result.max_rel, tolerance)
    progress(line)
    return RunResult(
        LESSON.id,
        result.passed,
        [gpu_line, line],
        result.mismatch,
        result.max_rel,
        compiled.summary(),
        timings,
    )
