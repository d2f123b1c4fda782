"""Which files a kernel may ``#include``: those its lesson's own kernel includes, and no other.

    foreign_include(source, lesson_source)   # None, or (line, "the directive") the lesson does not make

A learner's version of a kernel (``course try``, a coding exercise's Check,
``quiz grade``) is compiled by NVRTC, which opens any file an ``#include``
names: ``#include "/etc/passwd"`` or ``#include "/dev/stdin"`` would put
that file into the kernel's text, and the compile log quotes it. So before
anything compiles such a source, every include directive in it is compared
with the lesson's kernel's own: one the lesson's kernel does not make, or
one spelled through a macro (``#include NAME``), is refused with its line.

The scan sees the text as the compiler's first phases do, and errs towards
refusing: line endings are normalised (CR LF and a lone CR both end a line
for NVRTC and g++), the trigraphs ``??=`` and ``??/`` are read as ``#``
and ``\\``, backslash-newline splices are joined, the digraph ``%:`` is a
``#``, and comments between the ``#``, the directive's name and its
argument are skipped. A directive is looked for everywhere, in comments
and strings too: a comment that merely mentions ``#include <x>`` the lesson
does not use is refused as well (the message says which line to change).
"""

from __future__ import annotations

import re

__all__ = ["DIRECTIVES", "foreign_include", "includes", "normalise_newlines"]

DIRECTIVES = ("include_next", "include", "import", "embed")
_COMMENT = r"(?:[ \t\f\v]|/\*.*?\*/)*"
_DIRECTIVE = re.compile(rf"(?:#|%:){_COMMENT}({'|'.join(DIRECTIVES)})\b([^\n]*)", re.S)
_SPLICE = re.compile(r"\\[ \t\f\v]*\n")


def normalise_newlines(text: str) -> str:
    """CR LF and a lone CR as LF: each is a line's end to the compilers."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _compiler_text(text: str) -> str:
    text = normalise_newlines(text).replace("??=", "#").replace("??/", "\\")
    return _SPLICE.sub("", text)


def _argument(rest: str) -> str:
    """A directive's argument as written, its comments and spaces dropped."""
    rest = re.sub(r"/\*.*?\*/", " ", rest)
    rest = rest.split("//", 1)[0]
    return " ".join(rest.split())


def includes(source: str) -> list[tuple[int, str]]:
    """(line, "include <x>") for each include-like directive in ``source`` (lines of the joined text)."""
    text = _compiler_text(source)
    return [
        (text.count("\n", 0, m.start()) + 1, f"{m.group(1)} {_argument(m.group(2))}".strip())
        for m in _DIRECTIVE.finditer(text)
    ]


def foreign_include(source: str, lesson_source: str) -> tuple[int, str] | None:
    """The first include directive of ``source`` that ``lesson_source`` does not make, or None."""
    allowed = {directive for _, directive in includes(lesson_source)}
    for line, directive in includes(source):
        if directive not in allowed:
            return line, directive
    return None
