"""Snippet regions: ``// snippet: NAME`` ... ``// end snippet`` in a kernel.

A lesson page shows named regions of its kernel with the file's real line
numbers, and quizzes and annotations point into them by text. This module
parses the regions once into ``Snippet`` objects and refuses a malformed
file (unclosed, nested, duplicated or empty region, or a stray end marker)
with an error that names the file, the line and the region.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import AnchorError, SnippetError

_OPEN = re.compile(r"^\s*//\s*snippet:\s*(?P<name>.*?)\s*$")
_CLOSE = re.compile(r"^\s*//\s*end snippet\s*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Snippet:
    """One region: its body lines (markers excluded) with file line numbers."""

    name: str
    path: Path
    open_line: int  # line of "// snippet: NAME"
    close_line: int  # line of "// end snippet"
    lines: tuple[str, ...]

    @property
    def start(self) -> int:
        """File line number of the first body line."""
        return self.open_line + 1

    @property
    def end(self) -> int:
        """File line number of the last body line."""
        return self.close_line - 1

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def numbered(self) -> list[tuple[int, str]]:
        return [(self.start + i, line) for i, line in enumerate(self.lines)]

    def find(self, anchor: str) -> int:
        """The file line number of the one body line containing ``anchor``.

        An anchor matches a line that contains it; an anchor that begins
        with a space matches from the start of the line, so indentation
        tells apart two identical statements at different depths
        (``"    __syncthreads();"`` is not ``"        __syncthreads();"``).
        Raises AnchorError when the anchor matches no line or several: an
        edit to the kernel must never silently move a note or a quiz key.
        """
        if not anchor.strip():
            raise AnchorError(f"an anchor must be non-empty text (got {anchor!r})", path=self.path)
        hits = [n for n, line in self.numbered() if _matches(anchor, line)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise AnchorError(
                f"anchor {anchor!r} matches no line of snippet {self.name!r} "
                f"(lines {self.start}-{self.end}); quote text that appears in the region",
                path=self.path,
                line=self.open_line,
            )
        raise AnchorError(
            f"anchor {anchor!r} matches {len(hits)} lines of snippet {self.name!r} "
            f"(lines {', '.join(map(str, hits))}); quote more of the line so it matches one",
            path=self.path,
            line=hits[0],
        )


def _matches(anchor: str, line: str) -> bool:
    if anchor[:1].isspace():
        return line.startswith(anchor)
    return anchor in line


def parse_snippets(text: str, path: Path | str = "<string>") -> dict[str, Snippet]:
    """Parse every region of ``text``; ``path`` is used in error messages."""
    path = Path(path)
    found: dict[str, Snippet] = {}
    current: tuple[str, int] | None = None  # (name, open line)
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _OPEN.match(line)
        if opened:
            name = opened.group("name")
            if current is not None:
                raise SnippetError(
                    f"snippet {name!r} opens inside snippet {current[0]!r} (opened at line {current[1]}); "
                    "regions cannot nest: close the first with '// end snippet'",
                    path=path,
                    line=number,
                    region=name,
                )
            if not _NAME.match(name):
                raise SnippetError(
                    f"a snippet name must be letters, digits, '-', '_' or '.' (got {name!r})",
                    path=path,
                    line=number,
                    region=name,
                )
            if name in found:
                raise SnippetError(
                    f"snippet {name!r} is defined twice (first at line {found[name].open_line})",
                    path=path,
                    line=number,
                    region=name,
                )
            current, body = (name, number), []
        elif _CLOSE.match(line):
            if current is None:
                raise SnippetError("'// end snippet' with no open region", path=path, line=number)
            name, open_line = current
            if not any(b.strip() for b in body):
                raise SnippetError(f"snippet {name!r} is empty", path=path, line=open_line, region=name)
            found[name] = Snippet(name, path, open_line, number, tuple(body))
            current = None
        elif current is not None:
            body.append(line)
    if current is not None:
        raise SnippetError(
            f"snippet {current[0]!r} is never closed; add '// end snippet'",
            path=path,
            line=current[1],
            region=current[0],
        )
    return found


def load_snippets(path: Path | str) -> dict[str, Snippet]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SnippetError(f"cannot read the kernel source ({e.strerror})", path=path) from None
    except UnicodeDecodeError as e:
        raise SnippetError(
            f"the kernel source is not UTF-8 text ({e.reason} at byte {e.start})", path=path
        ) from None
    return parse_snippets(text, path)


def get_snippet(path: Path | str, name: str) -> Snippet:
    snippets = load_snippets(path)
    try:
        return snippets[name]
    except KeyError:
        known = ", ".join(sorted(snippets)) or "none"
        raise SnippetError(
            f"no snippet named {name!r} (this file has: {known})", path=path, region=name
        ) from None
