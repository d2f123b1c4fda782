"""The timeline: gpu (see course.timeline)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..bench import timing
from ..bench.arith import MIN_REPEATS
from ..bench.engine import RunContext, mismatch_text, release, spec_of
from ..bench.spec import bench_spec
from ..errors import CheckFailed, CourseError
from ..kernel import compile as compiler
from ..kernel import gate, nvtx
from ..kernel.compile import LaunchError
from ..kernel.host import host_of
from ..kernel.provenance import Provenance
from .decode import decode
from .model import DEFAULT_N, DEFINE, SYMBOL, Layout, Timeline, TimelineError

if TYPE_CHECKING:
    from ..kernel.compile import Compiled
    from ..kernel.host import Workload
    from ..lesson import Lesson


# ---------------------------------------------------------------------------
# On the GPU.
# ---------------------------------------------------------------------------
def compile_instrumented(
    lesson: Lesson, n: int, source: str | None = None, defines: Mapping[str, int] | None = None
) -> Compiled:
    """The lesson's kernel at size N, with the stamps compiled in (and ``defines``: another build of it)."""

    size = {lesson.size_macro: n} if lesson.size_macro else {}  # none: the size is a run-time argument
    return compiler.compile_lesson(lesson, defines={**(defines or {}), **size, DEFINE: 1}, source=source)


def set_buffer(compiled: Compiled, address: int) -> None:
    """Point the module's courseTimeline at ``address`` (0: record nothing)."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    try:
        symbol = compiled.module.get_global(SYMBOL)
    except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as e:
        raise TimelineError(
            f"the compiled {compiled.lesson.kernel_file} has no {SYMBOL} ({e}): it was not built with "
            f"-D{DEFINE}, or its timeline block is missing",
            path=compiled.lesson.kernel_path,
        ) from None
    value = np.array([address], dtype=np.uint64)
    symbol.copy_from_host(value.ctypes.data, value.nbytes)


_HOLD_NS = 200_000  # GPU-side hold before a timed launch, so the events time the GPU's work


def _timed_launch(work: Workload, j: int = 0) -> float:
    """One launch between CUDA events, behind a GPU-side hold; milliseconds."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    timer = timing.Timer(MIN_REPEATS)
    stream = cp.cuda.get_current_stream()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    c = work.config
    try:
        timer.hold((1,), (1,), (np.uint64(_HOLD_NS),))
        start.record(stream)
        work.launch(j)
        end.record(stream)
        end.synchronize()
    except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as e:
        raise LaunchError(work.compiled, c.grid, c.block, c.shared_mem, str(e)) from None
    return float(cp.cuda.get_elapsed_time(start, end))


def check_size(lesson: Lesson, n: object) -> int:
    """``n`` if the lesson's kernel can be recorded at that size; a CourseError that says the sizes otherwise.

    Needs no GPU, so a wrong ``--n`` is refused before the machine is asked what it can run.
    """
    spec = bench_spec(lesson)
    if spec is not None:
        spec.validate_sizes(lesson.id, [n])  # type: ignore[list-item]
    elif isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise CourseError(f"the size to record {lesson.id} at must be a whole number 1 or more (got {n!r})")
    return int(n)  # type: ignore[call-overload]


def record(
    lesson: Lesson,
    n: int = DEFAULT_N,
    progress: Callable[[str], Any] = print,
    command: str | None = None,
    warmup: int = 2,
    defines: Mapping[str, int] | None = None,
    **options: Any,
) -> Timeline:
    """Record the lesson's timeline on this GPU at size N: compile, warm up, one recorded launch, check.

    ``defines`` records another build of the lesson's kernel, and ``options`` go to its host's
    ``workload`` (a development run's: the command line records the lesson's own build).

    Raises EnvironmentProblem when this machine cannot run the lesson,
    CheckFailed when the instrumented kernel computes a wrong result, and
    TimelineError when the kernel has no stamps or the buffer is not valid.
    """
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    layout = Layout.of(lesson)
    check_size(lesson, n)
    machine = gate.probe()
    gate.ensure_runs(lesson, machine)
    provenance = Provenance.of(machine, command or f"python -m course timeline {lesson.id} --n {n}")
    progress(f"{lesson.id}: compiling {lesson.kernel_file} with -D{DEFINE} at N = {n} ...")
    compiled = compile_instrumented(lesson, n, defines=defines)
    progress(compiled.summary())
    work = host_of(lesson).workload(compiled, n, 1, "bench", **options)
    c = work.config
    grid_ctas = math.prod(c.grid)
    buf = cp.zeros(layout.words(grid_ctas), dtype=cp.uint64)
    try:
        set_buffer(compiled, 0)  # the warm-up launches record nothing
        with nvtx.range(f"{lesson.id} timeline: {warmup} warm-up launches"):
            for _ in range(warmup):
                _timed_launch(work)
        set_buffer(compiled, int(buf.data.ptr))
        work.poison(0)
        buf.fill(0)
        with nvtx.range(f"{lesson.id} timeline: the recorded launch, N={n}"):
            launch_ms = _timed_launch(work)
        check = work.check(work.out(0))
        if not check.passed:
            raise CheckFailed(mismatch_text(f"{lesson.id} N={n}, built with -D{DEFINE}", check))
        words = cp.asnumpy(buf)
    finally:
        set_buffer(compiled, 0)
    progress(
        f"{lesson.id}: recorded one launch of {grid_ctas} CTAs ({launch_ms * 1e3:,.1f} µs by CUDA events); checked"
    )
    return decode(words, layout, c.grid, lesson.id, n, c.block, provenance, launch_ms, lesson.warpgroup_roles)


@dataclass(frozen=True)
class TimerResolution:
    """%globaltimer read in a tight loop by one thread."""

    reads: int
    changes: int  # reads that returned a new value
    min_step_ns: int  # smallest nonzero difference between consecutive reads
    mean_step_ns: float
    elapsed_ns: int
    cycles: int  # clock64 over the same loop

    @property
    def ghz(self) -> float:
        return self.cycles / self.elapsed_ns if self.elapsed_ns else float("nan")


_PROBE_SOURCE = r"""
extern "C" __global__ void courseTimerProbe(unsigned long long* out, int reads) {
    unsigned long long first, prev, now, minStep = ~0ull, changes = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(first));
    const long long c0 = clock64();
    prev = first;
    for (int i = 0; i < reads; ++i) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now != prev) {
            minStep = now - prev < minStep ? now - prev : minStep;
            ++changes;
            prev = now;
        }
    }
    const long long c1 = clock64();
    out[0] = minStep;
    out[1] = changes;
    out[2] = prev - first;
    out[3] = static_cast<unsigned long long>(c1 - c0);
}
"""


def globaltimer_resolution(reads: int = 1 << 20) -> TimerResolution:
    """Measure %globaltimer's step on this GPU: the smallest nonzero difference between consecutive reads."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    kernel = cp.RawKernel(_PROBE_SOURCE, "courseTimerProbe")
    out = cp.zeros(4, dtype=cp.uint64)
    kernel((1,), (1,), (out, np.int32(reads)))
    o = [int(v) for v in cp.asnumpy(out)]
    changes = o[1]
    return TimerResolution(
        reads, changes, o[0] if changes else 0, o[2] / changes if changes else float("nan"), o[2], o[3]
    )


@dataclass(frozen=True)
class Overhead:
    plain_ms: float
    timeline_ms: float  # the instrumented kernel, recording
    repeats: int

    @property
    def ratio(self) -> float:
        return self.timeline_ms / self.plain_ms


def measure_overhead(
    lesson: Lesson,
    n: int = DEFAULT_N,
    repeats: int = 20,
    extra: Mapping[str, Compiled] | None = None,
    progress: Callable[[str], Any] = print,
) -> tuple[Overhead, dict[str, float]]:
    """The kernel with and without the stamps (recording), checked, then timed interleaved.

    Inputs rotate over enough buffer sets to miss L2, as in ``course bench``.
    ``extra`` are other builds of the same kernel (variants) timed in the
    same interleaved batches, unchecked; their medians come back by name.
    """
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    spec = spec_of(lesson)
    machine = gate.probe()
    gate.ensure_runs(lesson, machine)
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    sms = machine.gpu.sm_count if machine.gpu else 0
    ctx = RunContext(lesson, spec, timing.Timer(repeats), l2, sms, progress, (n,))
    plain = ctx.compile(n, defines={})
    stamped = compile_instrumented(lesson, n)
    work = ctx.workload(n, plain)
    layout = Layout.of(lesson)
    buf = cp.zeros(layout.words(math.prod(work.config.grid)), dtype=cp.uint64)
    c = work.config

    def launcher(compiled: Compiled) -> Callable[[int], None]:
        compiled.allow_shared(c.shared_mem)

        def call(j: int) -> None:
            compiled.function(c.grid, c.block, work.args(j), shared_mem=c.shared_mem)

        return call

    calls = {"plain": launcher(plain), "timeline": launcher(stamped)}
    try:
        set_buffer(stamped, int(buf.data.ptr))
        ctx.verify(n, work, {name: (call, None) for name, call in calls.items()})
        for name, compiled in (extra or {}).items():
            calls[name] = launcher(compiled)
        with nvtx.range(f"{lesson.id} timeline overhead: {', '.join(calls)} at N={n}"):
            timings = ctx.timer.time_together(
                {k: [functools.partial(f, j) for j in range(work.sets)] for k, f in calls.items()}
            )
    finally:
        set_buffer(stamped, 0)
        release()
    overhead = Overhead(timings["plain"].median_ms, timings["timeline"].median_ms, repeats)
    return overhead, {k: t.median_ms for k, t in timings.items()}
