"""Figures drawn once per kernel: ``kept``, for figure functions of their arguments alone.

Apart from ``course.picture`` so that a module that only declares a figure
function (``course.hopper.smem_budget``, imported by a page's coding check) does
not import matplotlib until the figure is drawn.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .picture import Picture


KEPT_PER_FUNCTION = 16  # pictures kept per figure function (a slider's positions, say)
_F = TypeVar("_F", bound=Callable[..., "Picture"])


def file_stamps(paths: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
    """Each file's (path, mtime in ns, size); (path, -1, -1) for one that is not there."""
    out = []
    for path in paths:
        try:
            st = path.stat()
            out.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), -1, -1))
    return tuple(out)


def kept(build: _F | None = None, *, depends_on: Callable[..., Hashable | None] | None = None) -> Any:
    """A figure function whose Picture is built and drawn once per kernel for the same arguments.

    For figures that are a function of their arguments alone (no file, no
    measurement): Run All again shows the PNG already drawn (issue 28: Day
    78's figures cost 0.4-1 s each, every time). ``depends_on`` (called
    with the same arguments) adds what else the figure is drawn from, such
    as ``file_stamps`` of the recordings it reads; when it returns None the
    figure is not kept. A kept Picture that has not been drawn yet, or that
    anything changed since it was first drawn (``stale``, or drawn again),
    is built anew, so a changed figure never comes back; unhashable
    arguments are never kept.
    """
    if build is None:
        return functools.partial(kept, depends_on=depends_on)
    made: OrderedDict[Any, Picture] = OrderedDict()

    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> Picture:
        key: Any = (args, tuple(sorted(kwargs.items())))
        if depends_on is not None:
            also = depends_on(*args, **kwargs)
            if also is None:
                return build(*args, **kwargs)
            key = (key, also)
        try:
            fig = made.get(key)
        except TypeError:
            return build(*args, **kwargs)
        if fig is None or fig.stale or fig.__dict__.get("_redrawn", False):
            fig = made[key] = build(*args, **kwargs)
            while len(made) > KEPT_PER_FUNCTION:
                made.popitem(last=False)
        made.move_to_end(key)
        return fig

    return wrapper
