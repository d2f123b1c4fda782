"""Reading a file someone named, and showing a name: the ground under every reader of such a file.

``read_regular`` is the one way the course reads a file a learner or an
instructor can name (a submission, an exercise file, ``--file``, a progress
file, ``course try FILE``, a quiz, a data file): only a regular file is read,
never more than a bound, and opening it never waits. A named pipe (FIFO)
would block ``open`` until someone writes to it, and ``/dev/zero`` would be
read until memory runs out; both are refused with a message that says what
the file is.

``shown`` (defined in ``course.errors``, which names files with it) writes a name for a terminal line or a report cell: printable
characters as they are, everything else (control characters, escape
sequences, newlines, bidi controls, bytes that are not UTF-8) escaped as
Python's ``repr`` writes them, so a file name can never print a fake line or
move the cursor.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import CourseError, shown  # shown lives with the errors, which name files with it

__all__ = ["DEFAULT_LIMIT", "MAX_KERNEL_BYTES", "file_kind", "read_regular", "shown", "size_text"]

# The course's own data files are kilobytes; a file far larger is not one of them.
DEFAULT_LIMIT = 16 * 1024 * 1024
# A kernel source is tens of kilobytes; a file far larger is not one.
MAX_KERNEL_BYTES = 4 * 1024 * 1024

_FILE_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symbolic link"),
)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (for 'not a regular file' messages)."""
    return next((name for test, name in _FILE_KINDS if test(mode)), "something else")


def size_text(limit: int) -> str:
    """1048576 -> '1 MiB'; 1536 -> '1536 bytes'."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit >= size and limit % size == 0:
            return f"{limit // size} {unit}"
    return f"{limit} bytes"


def read_regular(
    path: Path | str,
    what: str,
    *,
    limit: int = DEFAULT_LIMIT,
    follow_links: bool = True,
    error: type[CourseError] = CourseError,
) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes; else ``error``.

    O_NONBLOCK makes opening a FIFO return at once instead of waiting for a
    writer, and ``fstat`` on the open descriptor then refuses it (no race with
    a swap between a check and the open); a device is refused the same way,
    before a byte is read. ``follow_links=False`` (the grader) refuses a
    symbolic link too (O_NOFOLLOW). The read stops at ``limit + 1`` bytes
    whatever the size said, so a file that grows while it is read is refused too.
    """
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow_links and (e.errno == errno.ELOOP or path.is_symlink()):
            raise error(f"{what} is a symbolic link; links are not followed here", path=path) from None
        raise error(f"cannot read {what} ({e.strerror or e})", path=path) from None
    chunks: list[bytes] = []
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"{what} is not a regular file but {file_kind(info.st_mode)}; it was not read", path=path
            )
        if info.st_size > limit:
            raise error(f"{what} is larger than {size_text(limit)} ({info.st_size} bytes)", path=path)
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as e:
        raise error(f"cannot read {what} ({e.strerror or e})", path=path) from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > limit:  # it grew while being read
        raise error(f"{what} is larger than {size_text(limit)}", path=path)
    return raw
