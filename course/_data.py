"""Reading the course's data files with located refusals.

One reader for text (``read_text``, over ``_files.read_regular``), one
for JSON (evidence, benchmarks), typed field access that names the field
and the file, and the line helpers the TOML readers use to locate a table (``[[note]]``, ``[[item]]``) for a schema error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._files import DEFAULT_LIMIT, read_regular
from .errors import CourseError


def read_text(
    path: Path, what: str, error: type[CourseError] = CourseError, *, limit: int = DEFAULT_LIMIT
) -> str:
    """The file's UTF-8 text, or ``error`` naming the file (and the line of a bad byte).

    Read through ``_files.read_regular``: a FIFO, a device or a file over
    ``limit`` bytes is refused with a message, never waited on or read whole.
    """
    raw = read_regular(path, what, limit=limit, error=error)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise error(f"{what} must be UTF-8 text ({e.reason})", path=path, line=line) from None


def read_json(path: Path, what: str, error: type[CourseError] = CourseError) -> Any:
    """Parsed JSON, or ``error`` with the line of the syntax error."""
    text = read_text(path, what, error)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{what} is not valid JSON: {e.msg}", path=path, line=e.lineno) from None
    except RecursionError:
        raise error(f"{what} is not valid JSON here: arrays or objects nest too deeply", path=path) from None


def get(data: Any, name: str, kind: type | tuple[type, ...], path: Path | None, where: str) -> Any:
    """``data[name]``, which must be of ``kind`` (``float`` accepts ints; ``int`` refuses bools)."""
    if not isinstance(data, Mapping):
        raise CourseError(f"{where} must be a JSON object (got {type(data).__name__})", path=path)
    if name not in data:
        raise CourseError(f"{where}: field {name!r} is missing", path=path)
    value = data[name]
    if kind is float:
        kind = (int, float)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float))):
        expected = getattr(kind, "__name__", "number" if kind == (int, float) else str(kind))
        raise CourseError(
            f"{where}: field {name!r} must be {expected} (got {type(value).__name__})", path=path
        )
    return value


def optional(data: Any, name: str, kind: type | tuple[type, ...], path: Path | None, where: str) -> Any:
    """``get`` for a field that may be missing or null (None then)."""
    if isinstance(data, Mapping) and data.get(name) is None:
        return None
    return get(data, name, kind, path, where)


def text_map(data: Any, name: str, path: Path | None, where: str) -> dict[str, str | None]:
    """A JSON object of text (or null) values, such as the recorded versions."""
    value = get(data, name, dict, path, where)
    for key, item in value.items():
        if item is not None and not isinstance(item, str):
            raise CourseError(
                f"{where}: {name} {key!r} must be text or null (got {type(item).__name__})", path=path
            )
    return dict(value)


def text_list(data: Any, name: str, path: Path | None, where: str) -> list[str]:
    items = get(data, name, list, path, where)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise CourseError(
                f"{where}: field {name!r} must hold text lines (item {i} is {type(item).__name__})", path=path
            )
    return list(items)


def header_lines(text: str, header: str) -> list[int]:
    """Line numbers of every ``header`` line (``[[note]]``), to locate the N-th table."""
    return [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == header]


def key_line(text: str, key: str) -> int | None:
    """The line of ``key = ...`` or ``[key]``: where a wrong-shaped top-level value is."""
    pattern = re.compile(rf"^\s*(?:\[\s*{re.escape(key)}\s*\]|{re.escape(key)}\s*=)")
    return next((n for n, line in enumerate(text.splitlines(), 1) if pattern.match(line)), None)
