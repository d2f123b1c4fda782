"""Atomic file writes: a reader sees the old file or the new one, never half.

One file (``write_atomic``): temp file in the same folder (so ``os.replace``
is a rename on one file system), flush, ``os.fsync``, ``os.replace``. A
failure removes the temp file and raises a CourseError that names the target.

A set of files (``write_files_atomic``, the grader's reports): every file
is written to a temp folder first, and only when all of them are whole are
they moved into place, so a failure while writing (a full disk, a name the
file system refuses) leaves every old report as it was.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .._atomic import PRIVATE_FILE, PRIVATE_FOLDER, _fsync_folder, atomic_write_bytes, private_folder
from .._files import shown
from ..errors import CourseError


def write_atomic(path: Path, data: bytes) -> Path:
    path = Path(path)
    try:
        atomic_write_bytes(path, data)
    except OSError as e:
        raise CourseError(f"cannot write this file ({e.strerror or e})", path=path) from None
    return path


def write_private(path: Path, data: bytes) -> Path:
    """``write_atomic`` for what only its owner may read: the file 0600, its folder 0700."""
    path = Path(path)
    try:
        private_folder(path.parent)
        atomic_write_bytes(path, data, PRIVATE_FILE)
    except OSError as e:
        raise CourseError(f"cannot write this file ({e.strerror or e})", path=path) from None
    return path


def encoded(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (which UTF-8 cannot hold) is written as its escape, ``\\ud800``."""
    return text.encode("utf-8", "backslashreplace")


def write_text_atomic(path: Path, text: str) -> Path:
    return write_atomic(path, encoded(text))


def csv_bytes(rows: Iterable[Sequence[object]]) -> bytes:
    """Rows through the csv module (quoting as needed), as UTF-8."""
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows(rows)
    return encoded(buffer.getvalue())


def write_csv_atomic(path: Path, rows: Iterable[Sequence[object]]) -> Path:
    """Rows through the csv module (quoting as needed), written atomically."""
    return write_atomic(path, csv_bytes(rows))


def _write_new(path: Path, data: bytes) -> None:
    with open(path, "xb") as f:
        os.fchmod(f.fileno(), PRIVATE_FILE)  # reports name learners and their scores: the instructor's alone
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_files_atomic(folder: Path | str, files: Mapping[str, bytes]) -> dict[str, Path]:
    """Write ``files`` (name -> bytes) into ``folder``: afterwards all of them are new, or all are as before.

    The files are written whole into a temp folder first. A folder that does
    not exist yet is that temp folder, renamed into place (beside it, so one
    file system): it appears with every file in it, or not at all. In a folder
    that exists (which may hold other files, left as they are), the temp
    folder is made inside it, and the files are renamed over the old ones only
    once all are written; should a rename fail, the ones already moved are put
    back from the old files, which were kept aside by hard links.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CourseError("the output must be a folder; this is a file", path=folder)
    try:
        fresh = not folder.exists()
        if fresh:
            parent = folder.absolute().parent
            parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{folder.name}.", suffix=".tmp"))
        else:
            tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".reports.", suffix=".tmp"))
    except OSError as e:
        raise CourseError(f"cannot write the reports here ({e.strerror or e})", path=folder) from None
    try:
        try:
            for name, data in files.items():
                _write_new(tmp / name, data)
            _fsync_folder(tmp)
        except OSError as e:
            where = shown(e.filename) if e.filename else shown(tmp)
            raise CourseError(
                f"cannot write the reports ({e.strerror or e}, at {where}); none was changed: "
                "those there before are as they were",
                path=folder,
            ) from None
        if fresh:
            try:
                os.chmod(tmp, PRIVATE_FOLDER)  # grades are the instructor's alone (mkdtemp's 0700, said)
                os.rename(tmp, folder)
            except OSError as e:
                raise CourseError(
                    f"cannot move the reports into place ({e.strerror or e}); nothing was written there",
                    path=folder,
                ) from None
            _fsync_folder(folder.absolute().parent)
        else:
            _replace_all(tmp, folder, list(files))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {name: folder / name for name in files}


def _replace_all(tmp: Path, folder: Path, names: list[str]) -> None:
    """Rename ``tmp/<name>`` over ``folder/<name>`` for every name; on a failure, put every old file back."""
    kept: dict[str, Path | None] = {}  # name -> the old file, kept aside (None: there was none)
    try:
        for name in names:
            target = folder / name
            old = tmp / f".old.{name}"
            try:
                os.link(target, old)
            except FileNotFoundError:
                kept[name] = None
                continue
            except OSError:  # a file system without hard links: a copy instead
                if not target.exists():
                    kept[name] = None
                    continue
                shutil.copy2(target, old)
            kept[name] = old
        moved: list[str] = []
        try:
            for name in names:
                os.replace(tmp / name, folder / name)
                moved.append(name)
        except OSError:
            for name in moved:
                old_file = kept[name]
                if old_file is None:
                    (folder / name).unlink(missing_ok=True)
                else:
                    os.replace(old_file, folder / name)
            raise
    except OSError as e:
        raise CourseError(
            f"cannot move the reports into place ({e.strerror or e}); the reports there before are as they were",
            path=folder,
        ) from None
    _fsync_folder(folder)
