"""Annotations: notes attached to kernel lines by a text anchor.

Kept as data beside the lesson (``content/annotations/<lesson>.toml``), not
as line numbers in the notebook, so an edit to the kernel moves each note
with its line, and a note whose anchor no longer matches exactly one line
of its snippet is an error that names the file and the note.

    [[note]]
    snippet = "issue-tma"
    anchor = "cuda::ptx::cp_async_bulk_tensor("
    text = "One thread asks the engine for the whole 16 KiB tile."
    cite = "PTX ISA, cp.async.bulk.tensor"
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._data import header_lines, key_line
from .._toml import read_toml
from ..errors import AnchorError, CourseError
from ..lesson import Lesson
from ..snippets import load_snippets

_FIELDS = {"snippet", "anchor", "text", "cite"}


@dataclass(frozen=True)
class Note:
    snippet: str
    anchor: str
    text: str
    cite: str
    line: int  # resolved file line number


def load_notes(lesson: Lesson, path: Path | None = None) -> dict[str, list[Note]]:
    """Every note of a lesson, resolved to file lines, grouped by snippet."""
    path = path or lesson.annotations_path
    raw_text, data = read_toml(path, "the annotations")
    unknown_top = set(data) - {"note"}
    if unknown_top:
        raise CourseError(
            f"unknown top-level key(s) {sorted(unknown_top)}; only [[note]] tables belong here", path=path
        )
    headers = header_lines(raw_text, "[[note]]")
    snippets = load_snippets(lesson.kernel_path)
    out: dict[str, list[Note]] = {name: [] for name in snippets}
    raw_notes = data.get("note", [])
    if not isinstance(raw_notes, list):
        raise CourseError(
            f"'note' must be [[note]] tables (got {type(raw_notes).__name__})",
            path=path,
            line=key_line(raw_text, "note"),
        )
    for i, item in enumerate(raw_notes):
        where = headers[i] if i < len(headers) else None
        if not isinstance(item, dict):
            raise CourseError(f"note {i + 1} must be a table", path=path, line=where)
        unknown = set(item) - _FIELDS
        if unknown:
            raise CourseError(f"note {i + 1}: unknown field(s) {sorted(unknown)}", path=path, line=where)
        for key in _FIELDS:
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise CourseError(
                    f"note {i + 1}: field {key!r} must be non-empty text", path=path, line=where
                )
        name = item["snippet"]
        if name not in snippets:
            raise CourseError(
                f"note {i + 1}: snippet {name!r} is not in {lesson.kernel_file} "
                f"(it has: {', '.join(snippets)})",
                path=path,
                line=where,
            )
        try:
            line = snippets[name].find(item["anchor"])
        except AnchorError as e:
            raise AnchorError(f"note {i + 1}: {e.message}", path=path, line=where) from None
        out[name].append(Note(name, item["anchor"], item["text"], item["cite"], line))
    for notes in out.values():
        notes.sort(key=lambda n: n.line)
    return out
