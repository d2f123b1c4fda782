"""The one reader of named files and the one way a name is shown (course/_files.py).

A FIFO would block ``open`` until someone writes to it, and ``/dev/zero``
would be read until memory runs out: each is refused at once, with what it
is. The timing bound below is a hang detector (60 s for what takes
microseconds), never a measurement.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from course._files import read_regular, shown
from course.errors import CourseError

fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")


def _read_within(path: Path, **kwargs) -> bytes | CourseError:  # type: ignore[no-untyped-def]
    """read_regular in a thread; fail (instead of hanging the suite) if it blocks."""
    result: list[bytes | CourseError] = []

    def work() -> None:
        try:
            result.append(read_regular(path, "the file", **kwargs))
        except CourseError as e:
            result.append(e)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(60)
    if thread.is_alive():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # let the stuck open return
        thread.join(60)
        raise AssertionError("reading blocked on the file")
    return result[0]


@fifo_only
def test_a_fifo_is_refused_at_once_and_never_waited_on(tmp_path):
    fifo = tmp_path / "piece.cu"
    os.mkfifo(fifo)
    error = _read_within(fifo)
    assert isinstance(error, CourseError)
    assert "not a regular file but a named pipe (FIFO)" in str(error) and str(fifo) in str(error)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_is_refused_before_a_byte_is_read():
    error = _read_within(Path("/dev/zero"))
    assert isinstance(error, CourseError) and "a character device" in str(error)


def test_a_regular_file_is_read_and_a_larger_one_refused(tmp_path):
    small = tmp_path / "a.json"
    small.write_bytes(b"x" * 100)
    assert read_regular(small, "the file", limit=100) == b"x" * 100
    with pytest.raises(CourseError, match=r"larger than 99 bytes \(100 bytes\)"):
        read_regular(small, "the file", limit=99)


def test_a_link_is_followed_unless_the_caller_follows_none(tmp_path):
    target = tmp_path / "real.cu"
    target.write_text("kernel", encoding="utf-8")
    link = tmp_path / "link.cu"
    link.symlink_to(target)
    assert read_regular(link, "the file") == b"kernel"  # a learner's own link to their own file
    with pytest.raises(CourseError, match="symbolic link"):
        read_regular(link, "the file", follow_links=False)  # the grader follows none


def test_a_missing_file_says_so():
    with pytest.raises(CourseError, match=r"cannot read the file \(No such file"):
        read_regular(Path("/no/such/file"), "the file")


@pytest.mark.parametrize(
    ("value", "seen"),
    [
        ("plain name.json", "plain name.json"),
        ("x\nfake line", "x\\nfake line"),
        ("\x1b[2Jclear", "\\x1b[2Jclear"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("lone\ud800", "lone\\ud800"),
        (Path(os.fsdecode(b"caf\xe9.json")), "caf\\xe9.json"),
        ("café ok", "café ok"),
    ],
)
def test_names_are_shown_with_every_unprintable_character_escaped(value, seen):
    assert shown(value) == seen


def test_an_error_names_its_file_escaped():
    error = CourseError("bad", path="x\ny.json", line=3)
    assert str(error) == "x\\ny.json:3: bad"
