"""Atomic file writes: a reader sees the old file or the new one, never half.

Temp file in the same folder (so ``os.replace`` is a rename on one file
system), flush, ``os.fsync``, ``os.replace``. A failure removes the temp
file and raises a CourseError that names the target.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import CourseError


def write_atomic(path: Path, data: bytes) -> Path:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise CourseError(f"cannot write here ({e.strerror or e})", path=path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
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
