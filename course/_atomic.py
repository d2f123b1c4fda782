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

# mkstemp creates 0600 files; a submission or a report must stay readable
# by an instructor who grades as another user, like any file the user saves.
FILE_MODE = 0o644


# What only its owner may read: a learner's submission, the instructor's collected files and grades.
PRIVATE_FILE, PRIVATE_FOLDER = 0o600, 0o700


def private_folder(path: Path) -> Path:
    """Make ``path`` 0700, and every missing folder above it 0700 too: only its owner lists or enters them."""
    path = Path(path)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)
        os.chmod(folder, PRIVATE_FOLDER)  # mkdir's mode passes through the umask
    os.chmod(path, PRIVATE_FOLDER)
    return path


def atomic_write_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    # The rename itself survives a power loss only once the folder is synced
    # (POSIX); a killed process needs no such step. Not every platform or
    # file system allows opening a folder for this: then it is skipped.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
