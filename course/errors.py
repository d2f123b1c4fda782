"""The course's error types.

Every error a learner or an instructor can cause (a bad quiz file, a kernel
that does not compile, a GPU that cannot run a lesson) is a ``CourseError``:
it says what must hold, what was found, where, and what to do next. The
command line prints ``str(error)`` and exits non-zero; it never shows a
traceback for one of these.
"""

from __future__ import annotations

import os
from pathlib import Path


class CourseError(Exception):
    """Base class: a problem the user can fix, with a message that says how."""

    exit_code = 2

    def __init__(self, message: str, *, path: Path | str | None = None, line: int | None = None):
        self.message = message
        self.path = Path(path) if path is not None else None
        self.line = line
        super().__init__(self._format())

    @property
    def where(self) -> str:
        """The file (and line), its name escaped where it holds anything not printable (``shown``)."""
        if self.path is None:
            return ""
        name = shown(self.path)
        return f"{name}:{self.line}" if self.line is not None else name

    def _format(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class SnippetError(CourseError):
    """A ``// snippet:`` region is malformed, or a requested one is missing."""

    def __init__(self, message: str, *, path: Path | str, line: int | None = None, region: str | None = None):
        self.region = region
        super().__init__(message, path=path, line=line)


class AnchorError(CourseError):
    """An annotation's text anchor matches no line, or more than one."""


class EnvironmentProblem(CourseError):
    """This machine cannot do what was asked (no CuPy, no driver, wrong GPU).

    Exit code 2, the convention for "cannot run here" in ``course run``.
    """


class TensorMapRuleError(CourseError):
    """A tensor-map parameter breaks one of cuTensorMapEncodeTiled's rules."""

    def __init__(self, rule: str, message: str):
        self.rule = rule
        super().__init__(f"{rule}: {message}")


class CheckFailed(CourseError):
    """A kernel ran but its result is wrong. Exit code 1 in ``course run``."""

    exit_code = 1


def shown(value: object) -> str:
    """``value`` (a path or text) for a terminal line or a report cell, non-printable characters escaped.

    A path's bytes that are not UTF-8 (which Python holds as lone surrogates,
    PEP 383) are shown as ``\\xNN``; any other lone surrogate as ``\\udNNN``;
    a newline as ``\\n``, an escape as ``\\x1b``, a bidi control as ``\\u202e``.
    """
    is_path = isinstance(value, os.PathLike)
    text = os.fsdecode(value) if isinstance(value, os.PathLike | bytes) else str(value)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch.isprintable():
            out.append(ch)
        elif is_path and 0xDC80 <= code <= 0xDCFF:  # a byte the file system name holds, not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        else:
            out.append(repr(ch)[1:-1])
    return "".join(out)
