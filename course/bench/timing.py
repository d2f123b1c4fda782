"""The one timer: CUDA events around batches of calls, behind a GPU-side hold.

- Warm-up first (the first call loads modules, creates handles).
- Each timed batch is ``calls_per_repeat`` launches, each on the next
  buffer set of a rotation (so no call finds its inputs in L2).
- Before each batch a one-thread kernel spins on the GPU's global timer for
  a little longer than the host needs to queue the batch, so the events
  time the GPU's work and not the host's launch rate (the "blocking kernel"
  of nvbench). Batches where the GPU started before the host finished
  queueing are counted (``gap_repeats``).
- Several things timed together (a kernel and its peers) are interleaved
  batch by batch, so clock and power drift during a run favours none of
  them (cuBLAS alone moved from 725 to 762 TFLOP/s between the start and
  the end of one run on the H200).
- ``graphs=True`` times every rotation a second way, interleaved with the
  first: its batches captured once into CUDA graphs (CuPy's stream capture,
  ``cupy.cuda.Stream.begin_capture`` / ``end_capture``, on a side stream) and
  replayed, as frameworks run small GEMMs. Launched one by one, each call
  pays the launch path's gap on the GPU between kernels; inside a graph the
  launches are prepared once. Below about 20 us a call, the graph numbers
  are the ones that say what the kernel costs. A rotation that cannot be
  captured (a library call that synchronises, say) is timed one by one only,
  and ``Timer.graph_failures`` says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .result import Timing

MAX_CALLS_PER_REPEAT = 32  # launches per timed batch, for the small sizes
GRAPHS = " (CUDA graphs)"  # how a rotation timed inside CUDA graphs is named beside the one timed one by one


def in_graphs(name: str) -> str:
    """The key under which ``samples_together(..., graphs=True)`` returns ``name`` timed in CUDA graphs."""
    return name + GRAPHS


_HOLD_MAX_S = 0.05

# A one-thread kernel that spins for a given number of nanoseconds on the
# GPU's global timer.
_HOLD_SOURCE = r"""
extern "C" __global__ void courseBenchHold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


def _u64(value: int) -> Any:
    # heavy: numpy, when the arrays are made
    import numpy as np

    return np.uint64(value)


@dataclass(frozen=True)
class Samples:
    """Every timed batch of one rotation, in order: milliseconds per call."""

    per_call_ms: tuple[float, ...]
    calls_per_repeat: int
    buffers: int
    gaps: int = 0

    def timing(self) -> Timing:
        return Timing.from_samples(self.per_call_ms, self.calls_per_repeat, self.buffers, self.gaps)


@dataclass
class _Plan:
    """One rotation's state while batches of several rotations interleave."""

    calls: Sequence[Callable[[], Any]]
    inner: int  # calls per timed batch
    hold_ns: int  # the GPU-side hold before each batch
    next_call: int = 0
    gaps: int = 0
    events: list[tuple[Any, Any]] = field(default_factory=list)
    graphs: dict[int, Any] | None = None  # CUDA graph per first call of a batch; None: launched one by one

    def queue(self, stream: Any) -> None:
        """One batch: ``inner`` calls launched one by one, or the graph that captured them."""
        if self.graphs is not None:
            self.graphs[self.next_call % len(self.calls)].launch(stream)
            self.next_call += self.inner
            return
        for _ in range(self.inner):
            self.calls[self.next_call % len(self.calls)]()
            self.next_call += 1


class Timer:
    """Times rotations of calls with events, each batch behind a GPU-side hold."""

    def __init__(self, repeats: int):
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        self.cp = cp
        self.repeats = repeats
        self.hold = cp.RawKernel(_HOLD_SOURCE, "courseBenchHold")
        self.hold((1,), (1,), (_u64(0),))
        cp.cuda.get_current_stream().synchronize()
        self.graph_failures: dict[str, str] = {}  # rotation -> why it could not be captured
        self._side: Any = None  # the stream graphs are captured on (never run on)

    def time(self, calls: Sequence[Callable[[], Any]]) -> Timing:
        """One rotation of calls (``calls[j]`` works on buffer set j)."""
        return self.time_together({"": calls})[""]

    def time_together(self, rotations: Mapping[str, Sequence[Callable[[], Any]]]) -> dict[str, Timing]:
        """Several rotations, their batches interleaved repeat by repeat."""
        return {name: s.timing() for name, s in self.samples_together(rotations).items()}

    def _capture(self, calls: Sequence[Callable[[], Any]], first: int, inner: int) -> Any:
        """A CUDA graph of ``inner`` calls from ``calls[first]`` on, captured on a side stream
        (each call runs on CuPy's current stream, which is the side stream while it captures)."""
        cp = self.cp
        if self._side is None:
            self._side = cp.cuda.Stream(non_blocking=True)
        side = self._side
        with side:
            calls[first]()  # once on the side stream, uncaptured: a library's per-stream setup happens here
            side.synchronize()
            side.begin_capture()
            try:
                for i in range(inner):
                    calls[(first + i) % len(calls)]()
            finally:
                graph = side.end_capture()  # ends the capture even when a call failed
        return graph

    def _graph_plan(self, name: str, plan: _Plan, stream: Any) -> _Plan | None:
        """``plan``'s batches captured, one graph per first call a repeat will use, each replayed
        once (upload); None, with the reason in ``graph_failures``, when a call cannot be captured."""
        n = len(plan.calls)
        firsts = sorted({(plan.next_call + r * plan.inner) % n for r in range(self.repeats)})
        try:
            graphs = {f: self._capture(plan.calls, f, plan.inner) for f in firsts}
            t0 = time.perf_counter()
            for g in graphs.values():
                g.launch(stream)
            host_s = (time.perf_counter() - t0) / len(graphs)
            stream.synchronize()
        except Exception as e:  # a library call that synchronises or allocates: timed one by one only
            self.graph_failures[name] = f"{type(e).__name__}: {e}"
            stream.synchronize()
            return None
        hold_ns = int(min(2.0 * host_s + 50e-6, _HOLD_MAX_S) * 1e9)
        return _Plan(plan.calls, plan.inner, hold_ns, next_call=plan.next_call, graphs=graphs)

    def samples_together(
        self, rotations: Mapping[str, Sequence[Callable[[], Any]]], graphs: bool = False
    ) -> dict[str, Samples]:
        """As ``time_together``, keeping every repeat's per-call time in order: repeat r of
        each rotation ran beside repeat r of the others, so their ratios pair neighbours.

        ``graphs``: each rotation is also timed in CUDA graphs, under ``in_graphs(name)``, its
        batches interleaved with all the others (a rotation that cannot be captured is left out
        of those, with the reason in ``graph_failures``)."""
        cp = self.cp
        stream = cp.cuda.get_current_stream()
        plans: dict[str, _Plan] = {}
        for name, calls in rotations.items():
            n = len(calls)
            inner = min(n, MAX_CALLS_PER_REPEAT)
            calls[0]()  # first call: module load, CuPy's own kernel compile, handle creation
            stream.synchronize()
            warm = max(3, inner)
            t0 = time.perf_counter()
            for i in range(warm):
                calls[i % n]()
            host_s = (time.perf_counter() - t0) / warm  # what one launch costs the host
            stream.synchronize()
            hold_ns = int(min(2.0 * host_s * inner + 50e-6, _HOLD_MAX_S) * 1e9)
            plans[name] = _Plan(calls, inner, hold_ns, next_call=warm)
        if graphs:
            for name, plan in list(plans.items()):
                graphed = self._graph_plan(name, plan, stream)
                if graphed is not None:
                    plans[in_graphs(name)] = graphed
        for _ in range(self.repeats):
            for plan in plans.values():
                start, end = cp.cuda.Event(), cp.cuda.Event()
                self.hold((1,), (1,), (_u64(plan.hold_ns),))
                start.record(stream)
                plan.queue(stream)
                if start.done:  # the GPU began the batch before the host finished queueing it
                    plan.gaps += 1
                end.record(stream)
                plan.events.append((start, end))
        stream.synchronize()
        out = {}
        for name, plan in plans.items():
            per_call = tuple(cp.cuda.get_elapsed_time(s, e) / plan.inner for s, e in plan.events)
            out[name] = Samples(per_call, plan.inner, len(plan.calls), plan.gaps)
        return out
