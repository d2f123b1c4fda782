"""Inside the kernel: a producer/consumer timeline that the kernel records itself.

Most cloud GPUs give no profiler counters, and timing variants of a kernel
with parts removed says how long each part takes, not when. So the kernels
that teach a pipeline carry their own stamps: built with
``-DCOURSE_TIMELINE``, one elected thread per warpgroup writes an event at
each ``COURSE_TL(kind, stage)`` line (a producer waiting for a free stage,
issuing its loads; a consumer waiting for data, issuing wgmma, waiting for
it, releasing a stage; a barrier; the epilogue). Built without the macro,
those lines are ``((void)0)`` and the cubin is the same, byte for byte
(``tests/timeline/test_kernels.py``). The recipe is the one Triton's Proton,
TVM's and FlashInfer's in-kernel profilers share: a buffer, fixed slots,
one writer per slot, no atomics, a compile-time switch.

This module is the host side, for any lesson whose kernel carries the
block (``instrumented(lesson)``); it knows no lesson by name:

- ``record``: compile with the macro, point the kernel's ``courseTimeline``
  at a zeroed buffer (``RawModule.get_global``: the kernel's signature is
  unchanged), run the lesson's workload once (after warm-up launches that
  record nothing), check its result, read the buffer back;
- ``decode``: the buffer into typed ``Row``s of ``Event``s, refusing a
  truncated or corrupt buffer with a ``TimelineError`` that says what is
  wrong and where;
- ``intervals``, ``summarize``: each event begins an activity that lasts
  until the warpgroup's next event; time per activity per role, and how
  much of the consumer's wgmma time the producer spent loading;
- ``figure``: one row per warpgroup of the recorded CTAs, coloured by
  activity, stages labelled, time in microseconds;
- ``write`` / ``load``: ``evidence/<model>/timeline/<lesson>.json`` (the raw
  events, with provenance) and ``.png``;
- ``to_trace`` / ``write_trace``: the same rows as Chrome Trace Event JSON,
  which Perfetto and chrome://tracing open (a process per CTA, a thread per
  warpgroup named by its role, an event per activity with its stage).

The buffer (8-byte words), as the kernel's block lays it out:

- ``[0, head)``: ``ctas * warpgroups`` slots of ``2 * capacity`` words, one
  per warpgroup of the recorded CTAs (linear CTA ids ``0..ctas-1``); an
  event is ``[%globaltimer, clock64 low 32 bits << 32 | stage << 8 | kind]``;
  a slot that fills up keeps overwriting its last place, so the last event
  kept is the latest one (its end);
- ``[head, head + 8)``: magic ``"COURSETL"``, layout version, ``ctas``,
  ``warpgroups``, ``capacity``, the CTAs the kernel ran;
- ``[head + 8, head + 8 + ctas * warpgroups)``: per slot, who recorded it:
  ``1 << 32 | smid << 8 | warpgroup`` (0: nobody);
- then ``[start, end]`` (``%globaltimer``) of every warpgroup of every CTA
  that the kernel elected a recorder in: the whole kernel's span.

Two clocks, on purpose. ``%globaltimer`` is in nanoseconds and the same
clock on every SM, so rows from different SMs line up; but it may tick
coarsely (``globaltimer_resolution`` measures it; public reports range from
32 ns to 1 us). ``clock64`` counts the SM's own cycles: fine-grained, but
each SM's counter starts elsewhere. The timeline places each event at its
row's ``%globaltimer`` anchor plus its ``clock64`` distance, converted to
nanoseconds at one rate for all rows (every SM runs the same clock; the
rate is the median of the rows' least-squares slopes). A row whose
``%globaltimer`` strays from that line by more than twice the timer's
observed step (+ 100 ns) keeps raw ``%globaltimer``. ``Timeline.clock``
says which rows used which.
"""

from __future__ import annotations

from .decode import _role, build, decode, decode_raw, validate_row
from .draw import figure, png_bytes
from .gpu import (
    Overhead,
    TimerResolution,
    check_size,
    compile_instrumented,
    globaltimer_resolution,
    measure_overhead,
    record,
    set_buffer,
)
from .model import (
    ACTIVITIES,
    BLOCK_BEGIN,
    BLOCK_END,
    DEFAULT_N,
    DEFINE,
    KINDS,
    LAYOUT_VERSION,
    MAGIC,
    NOT_RECORDED,
    SCHEMA_VERSION,
    SYMBOL,
    ClockFit,
    Event,
    KernelSpan,
    Kind,
    Layout,
    RawRow,
    Row,
    Timeline,
    TimelineError,
    instrumented,
    kind_named,
)
from .section import TimelineSection, section_of, timeline_rendering_key, timeline_section
from .store import from_dict, load, timeline_dir, to_dict, to_json, write
from .summary import ActivityTime, Interval, Overlap, Summary, intervals, row_intervals, summarize
from .trace import TRACE_FIELDS, to_trace, write_trace

__all__ = [
    "ACTIVITIES",
    "ActivityTime",
    "BLOCK_BEGIN",
    "BLOCK_END",
    "ClockFit",
    "DEFAULT_N",
    "DEFINE",
    "Event",
    "Interval",
    "KINDS",
    "KernelSpan",
    "Kind",
    "LAYOUT_VERSION",
    "Layout",
    "MAGIC",
    "NOT_RECORDED",
    "Overhead",
    "Overlap",
    "RawRow",
    "Row",
    "SCHEMA_VERSION",
    "SYMBOL",
    "Summary",
    "Timeline",
    "TimelineError",
    "TimelineSection",
    "TimerResolution",
    "TRACE_FIELDS",
    "_role",
    "build",
    "check_size",
    "compile_instrumented",
    "decode",
    "decode_raw",
    "figure",
    "from_dict",
    "globaltimer_resolution",
    "instrumented",
    "intervals",
    "kind_named",
    "load",
    "measure_overhead",
    "png_bytes",
    "timeline_rendering_key",
    "record",
    "row_intervals",
    "section_of",
    "set_buffer",
    "summarize",
    "timeline_dir",
    "timeline_section",
    "to_dict",
    "to_json",
    "to_trace",
    "validate_row",
    "write",
    "write_trace",
]
