"""Atomic file writes: a reader sees the old file or the new one, never half.

Temp file in the same folder (so ``os.replace`` is a rename on one file
system), flush, ``os.fsync``, ``os.replace``. A failure removes the temp
file and raises a CourseError that names the target.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from .._atomic import atomic_write_bytes
from ..errors import CourseError


def write_atomic(path: Path, data: bytes) -> Path:
    path = Path(path)
    try:
        atomic_write_bytes(path, data)
    except OSError as e:
        raise CourseError(f"cannot write this file ({e.strerror or e})", path=path) from None
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    return write_atomic(path, text.encode("utf-8"))


def write_csv_atomic(path: Path, rows: Iterable[Sequence[object]]) -> Path:
    """Rows through the csv module (quoting as needed), written atomically."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerows(rows)
    return write_text_atomic(path, buffer.getvalue())
