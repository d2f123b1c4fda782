"""One checked-call helper for cuda-python's driver and NVRTC bindings.

cuda-python returns ``(status, *values)`` from every call instead of
raising. ``checked`` turns a failed status into a CourseError that names
the call and the status, and unwraps the values; every driver or NVRTC
call in the course goes through it (the pattern of cuda.core's
``handle_return``).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from ..errors import CourseError
from .gate import missing


def _bindings(name: str, label: str) -> ModuleType:
    try:
        return importlib.import_module(f"cuda.bindings.{name}")
    except ImportError as e:
        raise missing(e, f"cuda-python's {label} bindings are needed here") from None


def driver() -> ModuleType:
    """``cuda.bindings.driver``, or a CourseError saying how to get it."""
    return _bindings("driver", "driver API")


def nvrtc() -> ModuleType:
    """``cuda.bindings.nvrtc``, or a CourseError saying how to get it."""
    return _bindings("nvrtc", "NVRTC")


def checked(result: Any, what: str) -> Any:
    """The values of a cuda-python call's ``(status, *values)``; CourseError unless it succeeded.

    One value comes back bare, several as a list, none as None.
    """
    status, *values = result if isinstance(result, tuple) else (result,)
    if int(status) != 0:  # CUDA_SUCCESS and NVRTC_SUCCESS are both 0
        name = getattr(status, "name", str(status))
        raise CourseError(f"{what} failed: {name}")
    if not values:
        return None
    return values[0] if len(values) == 1 else values
