"""Reading TOML (quizzes, annotations, exercises, overrides), with located refusals.

Python 3.11 and newer parse with the standard library's ``tomllib``; 3.10
parses with ``tomli``, the same parser published on PyPI (pyproject.toml
installs it there). Their errors say where they are in two ways:
``tomllib`` up to 3.13 only at the end of its message ("Invalid statement
(at line 3, column 1)"), ``tomli`` 2.1+ (and ``tomllib`` from 3.14) also
as ``lineno`` and ``colno``. ``loads`` turns either into one
``TomlSyntaxError`` with the same message, line and column, so a refusal
reads the same on every Python the course supports.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from ._data import read_text
from .errors import CourseError

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# The position at the end of a tomllib/tomli message: a line and column, or
# the end of the document (a problem with the file as a whole, no line).
_POSITION = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


class TomlSyntaxError(ValueError):
    """Text that is not valid TOML: the parser's words, and where.

    ``line`` and ``column`` are None for a problem at the end of the
    document (``at_end``), which concerns the file as a whole.
    """

    def __init__(self, message: str, line: int | None, column: int | None, *, at_end: bool = False):
        self.message = message
        self.line = line
        self.column = column
        self.at_end = at_end
        super().__init__(self.detail)

    @property
    def detail(self) -> str:
        """The message with its column; the line goes in the refusal's place (``path:line``)."""
        if self.line is not None:
            return f"{self.message} (column {self.column})"
        return f"{self.message} (at end of document)" if self.at_end else self.message


def _located(e: ValueError) -> TomlSyntaxError:
    text = str(e)
    lineno, colno, msg = (getattr(e, name, None) for name in ("lineno", "colno", "msg"))
    doc, pos = getattr(e, "doc", None), getattr(e, "pos", None)
    if (
        isinstance(msg, str)
        and isinstance(lineno, int)
        and isinstance(colno, int)
        and isinstance(doc, str)
        and isinstance(pos, int)
    ):
        # tomli 2.1+, tomllib 3.14+: the fields themselves.
        if pos >= len(doc):
            return TomlSyntaxError(msg, None, None, at_end=True)
        return TomlSyntaxError(msg, lineno, colno)
    # tomllib 3.11 to 3.13: only the message says where.
    m = _POSITION.search(text)
    if m is None:
        return TomlSyntaxError(text, None, None)
    message = text[: m.start()]
    if m.group(1) is None:
        return TomlSyntaxError(message, None, None, at_end=True)
    return TomlSyntaxError(message, int(m.group(1)), int(m.group(2)))


def loads(text: str) -> dict[str, Any]:
    """Parse TOML text; invalid TOML raises ``TomlSyntaxError``.

    A document nested deeper than the parser can follow raises
    ``RecursionError`` (the callers refuse it as a whole-file problem).
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _located(e) from None


def read_toml(path: Path, what: str, error: type[CourseError] = CourseError) -> tuple[str, dict[str, Any]]:
    """The file's text and its parsed table; ``what`` names the file in messages ("the annotations")."""
    text = read_text(path, what, error)
    try:
        return text, loads(text)
    except TomlSyntaxError as e:
        raise error(f"not valid TOML: {e.detail}", path=path, line=e.line) from None
    except RecursionError:
        # The parser recurses once per nesting level; a hostile file must be a refusal.
        raise error("not valid TOML here: arrays or tables nest too deeply", path=path) from None
