"""Day 78, the host side in Python: LCG inputs, launch, float64 check.

Mirrors ``main()`` of ``kernels/wgmma_gemm.cu``: the same LCG (seed
20260901, values in {-8..8}/8, A drawn first, then B), so the device
result is comparable with the standalone program's; a float64 reference;
relative error with the max(|ref|, 1) floor against the kernel's own
tolerance; the output poisoned with NaN first, so an element the kernel
never wrote fails (NaN fails every comparison, and is counted as a failure
explicitly); the first mismatch named; the C++ program's PASS line. The
benchmark times the same workload on normally distributed inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...kernel.host import Check, LaunchConfig, LessonHost, Workload, check_relative, timing_floor
from ...kernel.lcg import lcg_halves, lcg_states, normal_inputs
from . import LESSON

__all__ = ["HOST", "LCG_SEED", "GemmWorkload", "lcg_inputs", "lcg_states", "normal_inputs", "pass_line"]

if TYPE_CHECKING:
    from ...kernel.compile import Compiled

LCG_SEED = 20260901  # main()'s seed


def lcg_inputs(dim: int, seed: int = LCG_SEED) -> tuple[np.ndarray, np.ndarray]:
    """A and B (dim x dim, float16, row-major) exactly as main() draws them."""
    return lcg_halves(dim, seed)


def pass_line(dim: int, max_rel: float, tolerance: float) -> str:
    return f"wgmma GEMM {dim}x{dim}x{dim}: PASS, max rel error {max_rel:g} (tolerance {tolerance:g})"


class GemmWorkload(Workload):
    """A (M x K), B (K x N) row-major FP16, D (M x N) FP32; ``sets`` copies of each."""

    def __init__(self, compiled: Compiled, n: int, sets: int, purpose: str, tolerance: float):
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        c = LESSON.constants({LESSON.size_macro: n})
        grid = (n // int(c["kTileN"]), n // int(c["kTileM"]))
        super().__init__(compiled, n, sets, LaunchConfig(grid, (int(c["kThreadsPerBlock"]),)))
        if purpose == "lesson":
            a, b = lcg_inputs(n)
            self.a, self.b = cp.asarray(a)[None], cp.asarray(b)[None]
        else:
            self.a, self.b = normal_inputs(n, sets, 7800 + n)
        self.d = cp.empty((sets, n, n), dtype=cp.float32)
        self.tolerance = tolerance
        # Timing inputs are N(0, 1): results have size sqrt(K), so small ones are held to that scale.
        self.floor = 1.0 if purpose == "lesson" else timing_floor(n)
        self._want: Any = None

    def args(self, j: int) -> tuple[Any, ...]:
        return (self.a[j], self.b[j], self.d[j])

    def out(self, j: int) -> Any:
        return self.d[j]

    def want(self) -> Any:
        # The job of gemmCpu: be right, not bit-identical. float64 on the GPU.
        if self._want is None:
            self._want = self.a[0].astype("float64") @ self.b[0].astype("float64")
        return self._want

    def host_want(self) -> Any:
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        return cp.asnumpy(self.a[0]).astype(np.float64) @ cp.asnumpy(self.b[0]).astype(np.float64)

    def check(self, got: Any, want: Any | None = None) -> Check:
        return check_relative(got, self.want() if want is None else want, self.tolerance, self.floor)


class Day78(LessonHost):
    lesson = LESSON

    def workload(
        self, compiled: Compiled, n: int, sets: int = 1, purpose: str = "lesson", **options: Any
    ) -> GemmWorkload:
        tolerance = float(LESSON.constants()["kRelTolerance"])
        return GemmWorkload(compiled, n, sets, purpose, tolerance)

    def pass_line(self, n: int, check: Check) -> str:
        return pass_line(n, check.max_error or 0.0, check.tolerance or 0.0)

    def fail_line(self, check: Check) -> str:
        m = check.mismatch
        if m is None:
            return "no mismatch"
        # The C++ program's wording, with the row and column added.
        return (
            f"FAIL at [{m.index}] (row {m.row}, col {m.col}): gpu {m.got:f}, "
            f"ref {m.want:f}, rel {m.error:g} > {check.tolerance:g}"
        )


HOST = Day78()
