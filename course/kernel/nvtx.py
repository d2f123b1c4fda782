"""NVTX ranges around the course's GPU work, so Nsight Systems shows it by lesson.

``with nvtx.range(f"{lesson.id} run: {lesson.kernel_name} N={n}"):`` pushes a range on
the NVTX stack that ``nsys profile`` records on the CPU thread's timeline,
above the CUDA API calls and kernels it encloses (NVTX, the NVIDIA Tools
Extension: nvtxRangePushA / nvtxRangePop). The ranges come from CuPy's own
binding (``cupy.cuda.nvtx``, shipped in every CuPy wheel); without a tool
attached, NVTX calls return at once. Without CuPy, or where its NVTX
library is missing (``cupy.cuda.nvtx.available`` is False), a range is a
no-op: never an import error, never a GPU needed.

The ranges enclose a lesson's action (a run, a recorded timeline, a
benchmark of one lesson), not each launch inside a timing loop: Nsight
Systems names every kernel launch itself, and a push and pop per timed
launch would add host work to what is being timed.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Iterator
from typing import Any


@functools.cache
def _backend() -> Any:
    """CuPy's NVTX module, or None without CuPy or without its NVTX library."""
    try:
        module = importlib.import_module("cupy.cuda.nvtx")
    except Exception:  # no CuPy (ImportError), or a CuPy that cannot load its CUDA libraries
        return None
    return module if getattr(module, "available", False) else None


@contextlib.contextmanager
def range(name: str) -> Iterator[None]:  # NVTX's own word (it shadows the builtin in this module only)
    """An NVTX range named ``name`` around the block (a no-op without CuPy's NVTX)."""
    nvtx = _backend()
    if nvtx is None:
        yield
        return
    nvtx.RangePush(name)
    try:
        yield
    finally:
        nvtx.RangePop()
