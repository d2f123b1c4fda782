"""The short paragraphs a page shows (``Message``), and a learner's CourseError as its
message instead of a traceback (an IPython custom exception handler)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._html import escape, pre
from ..errors import CourseError

__all__ = ["Message", "show_refusal"]


def _display(obj: Any) -> None:
    try:
        # IPython: only in a Jupyter kernel
        from IPython.display import display

        display(obj)
    except ImportError:
        print(obj)


@dataclass(frozen=True)
class Message:
    """A short paragraph in the page: info, ok, warning or error."""

    kind: str
    text: str
    detail: str = ""
    error: CourseError | None = field(default=None, compare=False, repr=False)

    _COLORS = {"info": "#1f5fa8", "ok": "#1a7f37", "warning": "#9a6700", "error": "#cf222e"}

    def _repr_html_(self) -> str:
        color = self._COLORS.get(self.kind, "#333")
        detail = pre(self.detail) if self.detail else ""
        return (
            f"<div style='border-left:4px solid {color};padding:4px 10px;margin:4px 0'>"
            f"{escape(self.text)}{detail}</div>"
        )

    def __str__(self) -> str:
        return self.text + (f"\n{self.detail}" if self.detail else "")

    def __repr__(self) -> str:
        return f"[{self.kind}] {self}"


def show_refusal(fn: Callable[[], Any]) -> Message:
    """Run ``fn``; show a CourseError as the refusal it is (for "what breaks" cells).

    Returns the message shown (so a cell's value is the message, never an
    exception's repr); the error itself is on ``message.error``.
    """
    try:
        fn()
    except CourseError as e:
        return Message("warning", f"Refused: {e.message}", error=e)
    return Message("ok", "Accepted: no rule is broken.")


def _course_error_handler(
    shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None
) -> list[str]:
    # IPython custom exception handler: a CourseError in a learner's cell is
    # shown as its message (file:line, what must hold, what to do), not as a
    # traceback through the course's internals. The cell still fails, so
    # nbval and "Run All" stop there as they should. IPython discards the
    # returned list, so the handler shows it itself, as an error output.
    stb = [f"{etype.__name__}: {value}"]
    shell._showtraceback(etype, value, stb)
    return stb


def _install_error_handler() -> None:
    try:
        # IPython: only in a Jupyter kernel
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        shell.set_custom_exc((CourseError,), _course_error_handler)
