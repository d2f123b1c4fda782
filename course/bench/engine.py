"""Measuring on the GPU: correct first, then timed beside the peers.

For every lesson with a ``BenchSpec``, at each size:

1. compile the kernel for that size (``-D<size macro>=N``; no define at the
   lesson's own size, so the page shares the lesson's compile cache);
2. build the lesson's workload with random inputs, in enough buffer sets to
   rotate past L2 (``rotation_buffers``), after checking the GPU has the
   memory;
3. check the kernel and every peer on set 0 with the lesson's own check,
   output poisoned first; a wrong result is ``CheckFailed`` and nothing is
   timed;
4. time the kernel and the peers together, their batches interleaved
   (``Timer.samples_together``); rates and the kernel's ratio to each peer.
   A spec with ``graphs=True`` has every batch timed a second way in the
   same interleaving, captured in a CUDA graph and replayed; those samples
   reach its ``finish`` (``RunContext.graph_samples``) to record.

Then the spec's ``finish`` (variants, a peak, the reasons) runs with the
same timer. Method: ``.library/device/METHOD.md`` of the course's workplace
and ``benchmarks/NOTES.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import CheckFailed, CourseError
from ..kernel import compile as compiler
from ..kernel import gate
from ..kernel.host import host_of
from ..kernel.provenance import Provenance
from .arith import (
    DEFAULT_REPEATS,
    ROTATION_FACTOR,
    rate,
    rate_text,
    ratio,
    rotation_buffers,
    validate_repeats,
)
from .result import SCHEMA_VERSION, BenchResult, Measurement, SizeRow
from .spec import KERNEL, BenchSpec, Extras, Peer, bench_spec
from .timing import Samples, Timer

if TYPE_CHECKING:
    from ..kernel.compile import Compiled
    from ..kernel.host import Check, Workload
    from ..lesson import Lesson


def spec_of(lesson: Lesson) -> BenchSpec:
    """The lesson's ``BenchSpec``; a lesson without one is refused, saying where one would be declared
    (``python -m course bench --help`` lists the lessons that have one)."""
    spec = bench_spec(lesson)
    if spec is None:
        where = f"{lesson.package}.bench" if lesson.package else "its package's bench.py"
        raise CourseError(
            f"no benchmark for lesson {lesson.id!r}: {where} would declare SPEC = BenchSpec(...) "
            "(python -m course bench --help lists the lessons that have one)"
        )
    return spec


def size_defines(lesson: Lesson, n: int) -> dict[str, int] | None:
    """The lesson run's own defines at its own size (so the page shares the run's compile cache)."""
    if not lesson.size_macro:  # the size is a run-time argument: one build serves every size
        return None
    if n == lesson.size:
        return lesson.run_defines
    return None if lesson.default_size == n else {lesson.size_macro: n}


def _check_memory(need: int, what: str) -> None:
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    cp.get_default_memory_pool().free_all_blocks()
    free, _total = cp.cuda.runtime.memGetInfo()
    if need > 0.85 * free:
        raise CourseError(
            f"{what} needs {need / 2**30:.1f} GiB of GPU memory and {free / 2**30:.1f} GiB is free; "
            "choose smaller sizes (--sizes)"
        )


def release() -> None:
    """Give the GPU memory of the last size back before the next one."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    cp.cuda.get_current_stream().synchronize()
    cp.get_default_memory_pool().free_all_blocks()


def mismatch_text(what: str, check: Check) -> str:
    m = check.mismatch
    first = "" if m is None else f"; first at row {m.row}, col {m.col}: got {m.got!r}, want {m.want!r}"
    return f"{what}: {check.failures} of {check.total} elements wrong ({check.kind} check){first}"


@dataclass
class RunContext:
    """What a spec's ``finish`` gets (``course.bench.spec.Context``, which this satisfies):
    the lesson, the timer, the run's numbers so far."""

    lesson: Lesson
    spec: BenchSpec
    timer: Timer
    l2_bytes: int
    sms: int
    progress: Callable[[str], Any]
    sizes: tuple[int, ...]
    rows: list[SizeRow] = field(default_factory=list)
    peers: Sequence[Peer] = ()
    graph_samples: dict[int, dict[str, Samples]] = field(default_factory=dict)  # spec.graphs: per size

    def compile(self, n: int, source: str | None = None, defines: dict[str, int] | None = None) -> Compiled:
        """The kernel at size N (or ``source``, a variant of it; or with extra ``defines``)."""

        if defines is None and self.spec.build is not None:  # the build the lesson picks for this size
            defines = self.spec.build(n, self.sms) or None
        if source is None and not defines:
            return compiler.compile_lesson(self.lesson, defines=size_defines(self.lesson, n))
        size = {self.lesson.size_macro: n} if self.lesson.size_macro else {}
        return compiler.compile_lesson(self.lesson, defines={**size, **(defines or {})}, source=source)

    def workload(self, n: int, compiled: Compiled | None = None, kernel: bool = True) -> Workload:
        """The lesson's workload at size N with random inputs, in enough sets to rotate past L2.

        ``kernel=False``: buffers for the peers alone (nothing compiled; the workload cannot launch).
        """
        set_bytes = self.spec.set_bytes(n)
        sets = rotation_buffers(set_bytes, self.l2_bytes)
        _check_memory(sets * set_bytes + 3 * n * n * 8, f"{self.lesson.id} at N={n}")
        if kernel and compiled is None:
            compiled = self.compile(n)
        return host_of(self.lesson).workload(compiled, n, sets, "bench")  # type: ignore[arg-type]

    def time_calls(self, work: Workload, call: Callable[[int], None]) -> float:
        """Median milliseconds of ``call(j)`` over the workload's rotation."""
        return self.timer.time([partial(call, j) for j in range(work.sets)]).median_ms

    def verify(self, n: int, work: Workload, calls: dict[str, tuple[Callable[[int], None], Any]]) -> str:
        """Run each call on set 0 (output poisoned first) and check it; CheckFailed names the first wrong one."""
        said = []
        for name, (call, want) in calls.items():
            work.poison(0)
            call(0)
            check = work.check(work.out(0), want)
            if not check.passed:
                raise CheckFailed(mismatch_text(f"{self.lesson.id} N={n}, {name}", check))
            said.append(f"{name} {check.describe()}")
        return "; ".join(said) + ", output poisoned first"

    def rate(self, n: int, ms: float) -> float:
        return rate(self.spec.unit, self.spec.work(n), ms)


def occupancy(
    compiled: Compiled, threads: int, shared_mem: int = 0
) -> tuple[int, str, int | None, int | None]:
    """CTAs resident per SM (the driver's occupancy query, else an estimate), registers, local bytes."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    function = compiled.function
    regs = getattr(function, "num_regs", None)
    local = getattr(function, "local_size_bytes", None)
    try:
        per_sm = int(
            cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(function.kernel.ptr, threads, shared_mem)
        )
        return per_sm, "queried: cuOccupancyMaxActiveBlocksPerMultiprocessor", regs, local
    except Exception:  # fall back to the arithmetic, labelled as such
        pass
    attrs = cp.cuda.Device().attributes
    # Hopper's per-SM limits as defaults: 2048 threads, 64K registers, 228 KiB shared memory.
    limits = [attrs.get("MaxThreadsPerMultiProcessor", 2048) // threads]
    if regs:
        limits.append(attrs.get("MaxRegistersPerMultiprocessor", 65536) // (regs * threads))
    smem = (getattr(function, "shared_size_bytes", 0) or 0) + shared_mem
    if smem:  # + 1 KiB: the driver reserves that much per CTA
        limits.append(attrs.get("MaxSharedMemoryPerMultiprocessor", 233472) // (smem + 1024))
    return max(1, min(limits)), "estimate from threads, registers and shared memory", regs, local


def _progress_line(lesson_id: str, row: SizeRow, unit: str) -> str:
    t = row.kernel.timing
    cached = " cached" if row.compile_cached else ""
    peers = "; ".join(
        f"{p.name} {rate_text(p.rate, unit)} ({p.ratio:.2f}x)" if p.ratio is not None else p.name
        for p in row.peers
    )
    gaps = f" [{t.gap_repeats} of {t.repeats} batches may include launch gaps]" if t.gap_repeats else ""
    return (
        f"{lesson_id} N={row.size}: compile {row.compile_s:.2f} s{cached}; checked; "
        f"kernel {t.median_ms:.4g} ms "
        f"(min {t.min_ms:.4g}, max {t.max_ms:.4g}) = {rate_text(row.kernel.rate, unit)}; {peers}{gaps}"
    )


DEPENDENT_NOTE = (
    "where its persistent grid walks its units in one round, the kernel is launched with programmatic "
    "dependent launch (cuLaunchKernelEx with the programmatic-stream-serialization attribute; its "
    "griddepcontrol.wait holds every global access until the kernel before it has finished), so its launch "
    "and setup overlap the previous call's tail, one by one and in CUDA graphs; a grid of more rounds is "
    "launched plain, and the libraries launch themselves as they always do"
)


def measure(
    lesson: Lesson,
    sizes: Sequence[int] | None = None,
    repeats: int = DEFAULT_REPEATS,
    progress: Callable[[str], Any] = print,
    command: str | None = None,
) -> BenchResult:
    """Compile, check and time the lesson's kernel at each size, with its peers, on this GPU.

    Raises EnvironmentProblem when this machine cannot run the lesson, and
    CheckFailed when the kernel or a peer computes a wrong result.
    """
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    spec = spec_of(lesson)
    sizes = spec.validate_sizes(lesson.id, sizes if sizes is not None else spec.sizes)
    repeats = validate_repeats(repeats)
    machine = gate.probe()
    gate.ensure_runs(lesson, machine)
    provenance = Provenance.of(machine, command or f"python -m course bench {lesson.id}")
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    progress(
        f"{lesson.id}: timing on {provenance.device} at N = {', '.join(map(str, sizes))}; "
        f"median of {repeats} repeats, inputs rotated over >= {ROTATION_FACTOR}x the "
        f"{l2 / 2**20:.0f} MiB L2, kernel and peers interleaved"
    )
    ctx = RunContext(lesson, spec, Timer(repeats), l2, provenance.sm_count, progress, sizes)
    declared = tuple(spec.peers())
    ctx.peers = tuple(p for p in declared if not p.unavailable)
    absent = tuple(
        f"{p.name}: not measured on this machine: {p.unavailable}" for p in declared if p.unavailable
    )
    for line in absent:
        progress(f"{lesson.id}: {line}")
    dependent = False
    for n in sizes:
        compiled = ctx.compile(n)
        work = ctx.workload(n, compiled)
        dependent = dependent or work.config.dependent
        calls: dict[str, tuple[Callable[[int], None], Any]] = {KERNEL: (work.launch, None)}
        for peer in ctx.peers:
            calls[peer.name] = (partial(peer.call, work), peer.want(work) if peer.want else None)
        check = ctx.verify(n, work, calls)
        samples = ctx.timer.samples_together(
            {name: [partial(call, j) for j in range(work.sets)] for name, (call, _) in calls.items()},
            graphs=spec.graphs,
        )
        timings = {name: samples[name].timing() for name in calls}
        if spec.graphs:
            ctx.graph_samples[n] = {k: v for k, v in samples.items() if k not in calls}
        k_rate = ctx.rate(n, timings[KERNEL].median_ms)
        peers = tuple(
            Measurement(
                p.name,
                timings[p.name],
                ctx.rate(n, timings[p.name].median_ms),
                ratio(k_rate, ctx.rate(n, timings[p.name].median_ms)),
            )
            for p in ctx.peers
        )
        row = SizeRow(
            n,
            float(spec.work(n)),
            compiled.seconds,
            compiled.cache_hit,
            check,
            Measurement(KERNEL, timings[KERNEL], k_rate),
            peers,
        )
        ctx.rows.append(row)
        progress(_progress_line(lesson.id, row, spec.unit))
        del work, calls
        release()
    extras = spec.finish(ctx) if spec.finish else Extras()
    graph_failures = tuple(
        f"{name}: not timed in CUDA graphs ({why})" for name, why in ctx.timer.graph_failures.items()
    )
    notes = (
        spec.notes
        + (
            f"inputs rotated over enough buffer sets to be >= {ROTATION_FACTOR}x the {l2 / 2**20:.0f} MiB L2; "
            "kernel and peers timed in interleaved batches",
        )
        + extras.notes
        + ((DEPENDENT_NOTE,) if dependent else ())
        + absent
        + graph_failures
    )
    gaps = sum(m.timing.gap_repeats for r in ctx.rows for m in (r.kernel, *r.peers))
    if gaps:
        notes += (
            f"{gaps} timed batches began before the host had queued all their launches: those may include "
            "launch gaps (small sizes only, usually)",
        )
    return BenchResult(
        lesson=lesson.id,
        provenance=provenance,
        l2_bytes=l2,
        unit=spec.unit,
        kernel_name=spec.kernel_label,
        rows=tuple(ctx.rows),
        reasons=extras.reasons,
        ceilings=dict(extras.ceilings),
        notes=notes,
        schema_version=SCHEMA_VERSION,
    )
