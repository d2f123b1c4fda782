"""Run and check: the one contract between the shared machinery and a lesson.

A lesson's host side (``course/lessons/<id>/host.py``) is a ``LessonHost``:
it knows how to fill one size of its problem on the GPU (a ``Workload``:
inputs, output, the launch, what the output should be) and how its C++
program words a pass or a failure. Everything else is here, once:

- ``run_lesson``: gate, banner, compile, poison the output, launch and
  synchronise, check, the PASS line: what ``python -m course run``, the
  page's ``page.run()`` and ``python -m course record`` all call;
- ``Check`` and ``Mismatch``: the one result of comparing a kernel's output
  with what it should be (bit for bit, or relative error with a floor);
  the benchmarks check every kernel and peer with the same functions;
- ``RunResult``: what a run returns, the same type for every lesson.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import CourseError
from . import compile as compiler
from . import gate, nvtx

if TYPE_CHECKING:
    from ..lesson import Lesson
    from .compile import Compiled

__all__ = [
    "Check",
    "Case",
    "LaunchConfig",
    "LessonHost",
    "Mismatch",
    "RunResult",
    "Workload",
    "check_bits",
    "check_relative",
    "timing_floor",
    "timing_floor_note",
    "host_of",
    "run_lesson",
]


# ---------------------------------------------------------------------------
# Checks: numpy or CuPy arrays alike (``xp`` is the array module).
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Mismatch:
    """The first wrong element, in row-major order."""

    index: int
    row: int
    col: int
    got: float
    want: float
    error: float | None = None  # the relative error, for a tolerance check


@dataclass(frozen=True)
class Check:
    kind: Literal["bits", "relative"]
    failures: int  # elements that fail (NaN and Inf always fail a relative check)
    total: int
    max_error: float | None  # largest finite relative error (relative checks)
    tolerance: float | None
    mismatch: Mismatch | None
    floor: float = 1.0  # relative checks: max(|ref|, floor) is the denominator

    @property
    def passed(self) -> bool:
        return self.failures == 0

    def describe(self) -> str:
        """What was verified, in words (kept with benchmark evidence)."""
        if not self.passed:  # (a check stopped at unwritten elements has no max error)
            return f"{self.failures} of {self.total} elements wrong"
        if self.kind == "bits":
            return f"bit-exact on all {self.total} elements"
        return (
            f"max rel error {self.max_error:.3g} (tolerance {self.tolerance:g}, "
            f"max(|ref|, {self.floor:g}) floor)"
        )


def _xp(array: Any) -> Any:
    """The array module an array belongs to (numpy, or CuPy for device arrays)."""
    module = type(array).__module__.split(".")[0]
    if module == "cupy":
        # heavy: cupy, when a GPU path runs
        import cupy

        return cupy
    return np


def _mismatch(got: Any, want: Any, flat: int, error: float | None) -> Mismatch:
    width = got.shape[-1]
    return Mismatch(
        flat, flat // width, flat % width, float(got.ravel()[flat]), float(want.ravel()[flat]), error
    )


def check_bits(got: Any, want: Any) -> Check:
    """Float32 arrays that must agree bit for bit (a copy, an exact add)."""
    if got.shape != want.shape:
        raise CourseError(f"shapes must match (got {got.shape}, want {want.shape})")
    xp = _xp(got)
    bad = got.view(xp.uint32).ravel() != want.view(xp.uint32).ravel()
    failures = int(xp.count_nonzero(bad))
    first = _mismatch(got, want, int(xp.flatnonzero(bad)[0]), None) if failures else None
    return Check("bits", failures, int(got.size), None, None, first)


def timing_floor(k: int) -> float:
    """The floor ``check_relative`` uses for timing inputs drawn from N(0, 1): a dot product of K
    such terms has the size sqrt(K), so a result near zero is held to that scale."""
    return float(k) ** 0.5


def timing_floor_note(sizes: tuple[int, ...]) -> str:
    """The benchmark note that says which floor the check before timing used, from ``timing_floor``."""
    examples = ", ".join(f"{timing_floor(n):.4g} at N = {n}" for n in sizes)
    return (
        "checked against a float64 product on the GPU before timing: relative error "
        f"|got - ref| / max(|ref|, sqrt(K)) ({examples}), against the kernel's own tolerance"
    )


def check_relative(got: Any, ref: Any, tolerance: float, floor: float = 1.0) -> Check:
    """Relative error |got - ref| / max(|ref|, floor) against ``tolerance``; NaN or Inf always fails.

    ``floor`` is the scale below which an error counts as absolute: 1 for the
    lessons' exact {-8..8}/8 inputs; sqrt(K) for N(0, 1) inputs, whose dot
    products of K terms have that size, so a result near zero is held to
    the accumulation error of its K terms, not to its own tiny magnitude.
    """
    if got.shape != ref.shape:
        raise CourseError(f"shapes must match (got {got.shape}, want {ref.shape})")
    xp = _xp(got)
    rel = xp.abs(got.astype(xp.float64) - ref) / xp.maximum(xp.abs(ref), floor)
    bad = ~(rel <= tolerance)  # NaN compares false, so it lands in bad
    failures = int(xp.count_nonzero(bad))
    finite = rel[xp.isfinite(rel)]
    worst = float(finite.max()) if finite.size else float("nan")
    first = None
    if failures:
        flat = int(xp.flatnonzero(bad.ravel())[0])
        first = _mismatch(got, ref, flat, float(rel.ravel()[flat]))
    return Check("relative", failures, int(got.size), worst, tolerance, first, floor)


# ---------------------------------------------------------------------------
# The contract.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_mem: int = 0  # dynamic shared memory, bytes
    # Programmatic dependent launch (``Compiled.enqueue_dependent``): the benchmarks' launches may
    # overlap the previous kernel's tail. Only for a kernel that waits on griddepcontrol first.
    dependent: bool = False


def dependent_launch(constants: Mapping[str, int | float], rounds: float) -> bool:
    """Whether a workload launches its kernel dependent (programmatic dependent launch,
    ``LaunchConfig.dependent``): where the kernel waits on griddepcontrol first (its ``kDependentLaunch``)
    and its persistent grid walks its units in at most one round. There the launch and the setup the
    overlap hides are a large share of a call: on an H100, 1.04x to 1.16x in CUDA graphs from 256^3 to
    1024^3 with Day 86's picks, 1.20x to 1.30x one by one with Day 87's builds at 512^3 and 1024^3. Past one
    round they are a small share, and Day 87's promoting build ran 0.94x launched dependent at 4096^3, its
    1024 units in 7.8 rounds (evidence/gemm_dev/notes_pdl39.md, session 22)."""
    return bool(constants.get("kDependentLaunch", 0)) and rounds <= 1.0


class Workload(ABC):
    """One size of a lesson's problem on the GPU, in ``sets`` copies to rotate over.

    ``out(j)`` is set j's output, ``want()`` what set 0's output must be.
    """

    def __init__(self, compiled: Compiled, n: int, sets: int, config: LaunchConfig):
        self.compiled = compiled
        self.n = n
        self.sets = sets
        self.config = config

    @abstractmethod
    def args(self, j: int) -> tuple[Any, ...]:
        """The kernel's arguments for set j."""

    @abstractmethod
    def out(self, j: int) -> Any:
        """Set j's output array (on the GPU)."""

    @abstractmethod
    def want(self) -> Any:
        """What set 0's output must be (on the GPU)."""

    @abstractmethod
    def check(self, got: Any, want: Any | None = None) -> Check:
        """``got`` against ``want`` (default ``self.want()``), the lesson's way."""

    def launch(self, j: int, compiled: Compiled | None = None, dependent: bool | None = None) -> None:
        """Enqueue the kernel on set j (no synchronisation: the benchmarks' call).

        ``compiled``: another build of the same file with the same launch contract (a variant
        timed beside the kernel on the same buffers); default the workload's own. ``dependent``:
        programmatic dependent launch or not; default the config's (False launches a kernel that
        could overlap its predecessor the plain way, to time what the overlap buys)."""
        self.enqueue(self.args(j), compiled, dependent)

    def enqueue(
        self, args: tuple[Any, ...], compiled: Compiled | None = None, dependent: bool | None = None
    ) -> None:
        """Enqueue the kernel on ``args`` (``launch``'s, or a variant's: another promotion interval), the
        config's way: CuPy's launch, or a programmatic dependent launch."""
        c = self.config
        kernel = compiled or self.compiled
        if c.dependent if dependent is None else dependent:
            kernel.enqueue_dependent(c.grid, c.block, args, c.shared_mem)
            return
        kernel.allow_shared(c.shared_mem)
        kernel.function(c.grid, c.block, args, shared_mem=c.shared_mem)

    def poison(self, j: int) -> None:
        """Fill set j's output with NaN, so an element the kernel never writes fails the check.

        Copied from the host (no CuPy kernel: a cold kernel cache would compile one)."""
        out = self.out(j)
        out.set(np.full(out.shape, np.nan, dtype=out.dtype))

    def host_want(self) -> Any:
        """What set 0's output must be, as a host array (a lesson overrides it to avoid GPU kernels)."""
        # heavy: cupy, when a GPU path runs
        import cupy

        return cupy.asnumpy(self.want())

    def host_check(self) -> Check:
        """The lesson run's check, on the host: set 0's output copied back and compared there.

        A lesson run checks on the CPU so that a page's first run compiles no CuPy
        elementwise kernels (seconds with an empty kernel cache); the benchmarks
        check on the GPU (``check``), where the sizes are large.
        """
        # heavy: cupy, when a GPU path runs
        import cupy

        return self.check(cupy.asnumpy(self.out(0)), self.host_want())


@dataclass(frozen=True)
class Case:
    """A named run of the lesson's own kernel (``page.run(case=...)``): options for the workload
    and the outcome the page promises. A suggested *experiment* is the other kind: an edit to the
    kernel's source (``course.tryout.suggestions``, ``page.try_mine(experiment=...)``)."""

    name: str
    options: dict[str, Any]
    expect_pass: bool
    says: str  # what the page tells the learner will happen


class LessonHost(ABC):
    """A lesson's host side. Subclasses live in the lesson's own package."""

    lesson: Lesson
    #: keyword options ``run_lesson`` accepts for this lesson's cases (e.g. ``grid``)
    run_options: tuple[str, ...] = ()
    #: the named cases its page runs (``page.run(case=...)``); recorded by ``course record``
    cases: tuple[Case, ...] = ()

    def case(self, name: str) -> Case:
        for c in self.cases:
            if c.name == name:
                return c
        names = ", ".join(c.name for c in self.cases) or "none"
        raise CourseError(f"{self.lesson.id} has no case {name!r} (its cases: {names})")

    @abstractmethod
    def workload(
        self, compiled: Compiled, n: int, sets: int = 1, purpose: str = "lesson", **options: Any
    ) -> Workload:
        """The problem at size ``n``. ``purpose`` is "lesson" (the C++ program's own inputs) or
        "bench" (random inputs for timing: METHOD.md, tensor-core power depends on the bits)."""

    @abstractmethod
    def pass_line(self, n: int, check: Check) -> str:
        """The C++ program's PASS line."""

    @abstractmethod
    def fail_line(self, check: Check) -> str:
        """The C++ program's wording of the first mismatch."""


@dataclass
class RunResult:
    lesson_id: str
    passed: bool
    lines: list[str]
    check: Check
    compile_summary: str
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def mismatch(self) -> Mismatch | None:
        return self.check.mismatch

    def __str__(self) -> str:
        return "\n".join(self.lines)


def host_of(lesson: Lesson) -> LessonHost:
    """The lesson's host side: inputs, launch, check, its PASS line (its package's ``host.HOST``,
    which discovery, ``course.lessons``, checked is a ``LessonHost`` of this lesson)."""
    host: LessonHost = lesson.module("host").HOST
    return host


def run_lesson(
    lesson: Lesson,
    compiled: Compiled | None = None,
    progress: Callable[[str], Any] = print,
    **options: Any,
) -> RunResult:
    """Compile, launch and check, as the lesson's C++ program does.

    ``options`` are the lesson's experiments (``LessonHost.run_options``).
    Raises EnvironmentProblem when this machine cannot run the lesson,
    CompileError or LaunchError when the kernel does not build or launch.
    """
    host = host_of(lesson)
    unknown = set(options) - set(host.run_options)
    if unknown:
        allowed = ", ".join(host.run_options) or "none"
        raise CourseError(f"{lesson.id} has no run option(s) {sorted(unknown)} (its options: {allowed})")
    machine = gate.probe()
    gate.ensure_runs(lesson, machine)

    if machine.gpu is None:  # ensure_runs guarantees a GPU; this keeps the type checker honest
        raise CourseError("no GPU")
    progress(machine.gpu.banner)
    if compiled is None:
        progress(f"compiling {lesson.kernel_file} for {lesson.arch} with NVRTC ...")
        compiled = compiler.compile_lesson(lesson, defines=lesson.run_defines)
    progress(compiled.summary())
    timings = {"compile": compiled.seconds}

    t0 = time.perf_counter()
    n = lesson.size
    work = host.workload(compiled, n, 1, "lesson", **options)
    if (
        getattr(work, "compiled", compiled) is not compiled
    ):  # an option that needs another build (the host compiled it)
        compiled = work.compiled
        progress(compiled.summary())
    work.poison(0)
    c = work.config
    with nvtx.range(f"{lesson.id} run: {lesson.kernel_name} N={n}"):
        compiled.launch(c.grid, c.block, work.args(0), shared_mem=c.shared_mem)
    check = work.host_check()
    timings["run"] = time.perf_counter() - t0

    line = host.pass_line(n, check) if check.passed else host.fail_line(check)
    progress(line)
    return RunResult(lesson.id, check.passed, [machine.gpu.banner, line], check, compiled.summary(), timings)
