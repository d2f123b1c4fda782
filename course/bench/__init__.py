"""How fast is it? The lessons' kernels timed on this GPU, beside their peers.

The pieces, one concern per module:

- ``arith``: work per call, rates, ratios, rotation counts (pure, CPU-tested);
- ``result``: ``BenchResult`` and its JSON, read back with located errors;
- ``timing``: the one CUDA-event timer, kernel and peers interleaved, launched one by one and,
  when asked, also captured in CUDA graphs;
- ``peers``: cuBLAS (gemmEx) and a device-to-device copy;
- ``spec``: what a lesson declares (``course/lessons/<id>/bench.py``);
- ``engine``: correct first, then timed, size by size;
- ``report``: the table, the plot and the page's section.

What each lesson measures against what, and why, is in its own package.
"""

from .arith import DEFAULT_REPEATS, MIN_REPEATS, validate_repeats
from .engine import measure, spec_of
from .report import SpeedSection, plot, png_bytes, speed_section, table, write
from .result import BenchResult, Measurement, Reason, SizeRow, Timing, bench_dir, load
from .spec import KERNEL, BenchSpec, Extras, Peer

__all__ = [
    "DEFAULT_REPEATS",
    "KERNEL",
    "MIN_REPEATS",
    "BenchResult",
    "BenchSpec",
    "Extras",
    "Measurement",
    "Peer",
    "Reason",
    "SizeRow",
    "SpeedSection",
    "Timing",
    "bench_dir",
    "load",
    "measure",
    "plot",
    "png_bytes",
    "spec_of",
    "speed_section",
    "table",
    "validate_repeats",
    "write",
]
