"""Reading a TOML data file (annotations, exercises) into a dict, or a located refusal."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import CourseError


def read_toml(path: Path, what: str, error: type[CourseError] = CourseError) -> tuple[str, dict[str, Any]]:
    """The file's text and its parsed table; ``what`` names the file in messages ("the annotations")."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise error(f"cannot read {what} ({e.strerror})", path=path) from None
    except UnicodeDecodeError as e:
        line = e.object[: e.start].count(b"\n") + 1
        raise error(f"{what} must be UTF-8 text ({e.reason})", path=path, line=line) from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"not valid TOML: {e}", path=path) from None
    except RecursionError:
        # tomllib recurses once per nesting level; a hostile file must be a refusal.
        raise error("not valid TOML here: arrays or tables nest too deeply", path=path) from None
