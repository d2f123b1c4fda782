"""Writing a file so that a reader sees the old version or the new, never a mix.

The bytes go to a temporary file in the same folder (same file system),
which is flushed and fsync'd, then renamed over the target: ``os.replace``
is atomic on POSIX and Windows. A crash at any point leaves the previous
file intact; a stray ``.<name>.*.tmp`` may remain, and readers ignore it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
