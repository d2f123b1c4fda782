"""Nothing is lost: atomic saves, SIGKILL mid-save, two saves at once, safe paths.

``course/quiz/_io.write_atomic`` must: make the temp file in the target's
folder (so the rename stays on one file system), write, flush, fsync, and
only then ``os.replace`` it over the target. The kill tests fork writers
from a server that has the course imported (``_writer.py``), kill them
with SIGKILL at random moments and at chosen points of a save, and check
after every kill that the submission on disk is whole: the previous save
or a later one, never a mix, and that the grader ignores the temp files a
killed save leaves behind.
"""

from __future__ import annotations

import os
import random
import select
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course import _atomic
from course.errors import CourseError
from course.quiz import _io
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.submission import (
    Submission,
    SubmissionError,
    submission_path,
    validate_learner_id,
    write_submission,
)

from . import _writer
from ._util import RAN, ROOT, budget, fresh_dir, seen

KEY = load_quiz(ROOT / "content" / "quizzes" / "day76.toml")
WRITER = Path(_writer.__file__)
SIZE = 256 * 1024  # bytes of response text per save: big enough that a kill lands mid-write
# Random kill times; the pause points (before fsync, before and after the rename) are
# covered deterministically below. About 40% of these land mid-save.
RANDOM_KILLS = 150
PAUSED_KILLS = 10  # per pause point


class Server:
    """The fork server, with a hard timeout on every answer."""

    def __init__(self, folder: Path):
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(folder), KEY.id, KEY.version],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self.pids: list[int] = []
        self.pending = b""  # read from the pipe, not yet returned as lines
        assert self.line() == "up"

    def line(self, timeout: float = 30.0) -> str:
        """The next line, read straight from the pipe's descriptor.

        Not readline() on a buffered stream after select(): "pid N" and a
        child's "ready" often arrive in one read, and select() then waits
        for bytes already sitting in the stream's buffer (a 30 s hang).
        """
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"the writer said nothing for {timeout} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError("the writer server exited")
            self.pending += chunk
        raw, self.pending = self.pending.split(b"\n", 1)
        text = raw.decode("utf-8", "replace").strip()
        if text.startswith("error"):
            raise AssertionError(f"a writer failed: {text}")
        return text

    def spawn(self, mode: str, tag: str, gen: int) -> tuple[int, bool]:
        """Start a writer; return its pid and whether it already said 'ready'."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"spawn {mode} {tag} {gen} {SIZE}\n".encode())
        ready = False
        while True:
            text = self.line()
            if text == "ready":
                ready = True
            elif text.startswith("pid "):
                self.pids.append(int(text.split()[1]))
                return self.pids[-1], ready

    def close(self) -> None:
        for pid in self.pids:  # a test that failed half-way may leave a writer running
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"quit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=10)
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()


@pytest.fixture
def server(tmp_path):
    srv = Server(tmp_path / "subs")
    yield srv
    srv.close()


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    # Wait until it is gone (the server reaps it) so the next check sees its last act.
    for _ in range(2000):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.001)
    raise AssertionError(f"writer {pid} survived SIGKILL")


def on_disk(folder: Path) -> tuple[str, int]:
    return _writer.consistent(submission_path(folder, KEY.id, "alice").read_bytes())


def save(folder: Path, tag: str, gen: int) -> None:
    write_submission(
        Submission(
            KEY.id,
            KEY.version,
            "alice",
            "2025-01-01T09:00:00+00:00",
            {_writer.QUESTION: _writer.payload(tag, gen, SIZE)},
            {_writer.QUESTION: gen},
        ),
        folder,
    )


def seen_kills(kills: int, mid_save: int) -> None:
    RAN["SIGKILLs"] += kills
    RAN["SIGKILLs that left a temp file"] += mid_save


def temp_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.name.endswith(".tmp"))


# ---------------------------------------------------------------------------
def test_write_atomic_is_temp_flush_fsync_rename(tmp_path, monkeypatch):
    target = tmp_path / "sub" / "alice.json"
    target.parent.mkdir()
    target.write_bytes(b"old")
    events: list[tuple[str, object]] = []
    real_mkstemp, real_fsync, real_replace = _atomic.tempfile.mkstemp, os.fsync, os.replace

    def mkstemp(*args, **kwargs):
        fd, name = real_mkstemp(*args, **kwargs)
        events.append(("mkstemp", Path(name)))
        return fd, name

    def fsync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            # After the rename, the folder is synced so the rename survives a power loss.
            events.append(("fsync-folder", None))
            return real_fsync(fd)
        # Flushed before fsync: the bytes are already in the file.
        tmp = events[0][1]
        events.append(("fsync", Path(tmp).read_bytes()))
        assert target.read_bytes() == b"old", "the target changed before the rename"
        return real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", (Path(src), Path(dst))))
        return real_replace(src, dst)

    monkeypatch.setattr(_atomic.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(_atomic.os, "fsync", fsync)
    monkeypatch.setattr(_atomic.os, "replace", replace)
    _io.write_atomic(target, b"new contents")

    assert [e[0] for e in events] == ["mkstemp", "fsync", "replace", "fsync-folder"]
    tmp = events[0][1]
    assert isinstance(tmp, Path) and tmp.parent == target.parent and tmp.name.endswith(".tmp")
    assert not tmp.name.endswith(".json"), "a temp file must not look like a submission to the grader"
    assert events[1][1] == b"new contents"
    assert events[2][1] == (tmp, target)
    assert target.read_bytes() == b"new contents" and not tmp.exists()


def test_a_failed_rename_keeps_the_old_file_and_removes_the_temp(tmp_path, monkeypatch):
    target = tmp_path / "alice.json"
    target.write_bytes(b"old")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_atomic.os, "replace", fail)
    with pytest.raises(CourseError) as caught:
        _io.write_atomic(target, b"new")
    assert str(caught.value).startswith(str(target)) and "No space left" in str(caught.value)
    assert target.read_bytes() == b"old"
    assert temp_files(tmp_path) == []


def test_sigkill_at_random_moments_never_loses_the_previous_save(tmp_path, server):
    folder = tmp_path / "subs"
    save(folder, "first", 0)
    rng = random.Random(76)  # fixed: the same kill times every run
    last, changed = 0, 0
    for kill_number in range(RANDOM_KILLS):
        pid, _ = server.spawn("loop", "loop", last + 1)
        time.sleep(rng.uniform(0.0, 0.02))
        kill(pid)
        tag, gen = on_disk(folder)  # raises on a torn or mixed file
        assert gen >= last, f"kill {kill_number}: the file went back from generation {last} to {gen}"
        changed += gen > last
        last = gen
    # Some kills landed after a save completed, and the file followed; some
    # landed mid-save and left a temp file.
    strays = len(temp_files(folder))
    seen_kills(RANDOM_KILLS, strays)
    assert changed > 0 and strays > 0, (changed, strays)
    report = grade_submissions(KEY, folder)
    assert [r.learner for r in report.results] == ["alice"]
    assert_only_temps_skipped(report, folder)
    assert report.results[0].items[KEY.questions.index(KEY.question(_writer.QUESTION))].attempts == last


@pytest.mark.parametrize("point", ["before-fsync", "before-replace", "after-replace"])
def test_sigkill_at_each_step_of_a_save(tmp_path, server, point):
    folder = tmp_path / "subs"
    save(folder, "first", 0)
    for n in range(1, PAUSED_KILLS + 1):
        pid, ready = server.spawn(point, point, n)
        if not ready:
            assert server.line() == "ready"
        kill(pid)
        seen_kills(1, int(point != "after-replace"))
        tag, gen = on_disk(folder)
        if point == "after-replace":
            assert (tag, gen) == (point, n), "a completed rename was lost"
        else:
            # Killed before the rename: the previous save, whole.
            assert (tag, gen) == ("first", 0)
    strays = temp_files(folder)
    if point != "after-replace":
        assert len(strays) == PAUSED_KILLS, "each killed save leaves its temp file"
    # The grader never reads them: one learner graded, and each temp file listed as skipped, with why.
    report = grade_submissions(KEY, folder)
    assert [r.learner for r in report.results] == ["alice"]
    assert_only_temps_skipped(report, folder)


def assert_only_temps_skipped(report, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """What the grader skipped is exactly the temp files of killed saves, each with its reason."""
    assert {s.path for s in report.skipped} == set(temp_files(folder))
    assert all("temporary file" in s.reason for s in report.skipped), report.skipped


def test_two_saves_at_once_leave_one_whole_file(tmp_path, server):
    folder = tmp_path / "subs"
    save(folder, "first", 0)
    target = submission_path(folder, KEY.id, "alice")
    stop = threading.Event()
    reads: list[tuple[str, int]] = []
    problems: list[str] = []

    def reader() -> None:  # a grader reading while the learners save
        while not stop.is_set():
            try:
                reads.append(_writer.consistent(target.read_bytes()))
            except Exception as e:  # record, the test fails below
                problems.append(f"{type(e).__name__}: {e}")

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        rounds = 40
        for n in range(1, rounds + 1):
            a, _ = server.spawn("once", "A", n)
            b, _ = server.spawn("once", "B", n)
            for pid in (a, b):
                for _ in range(10000):
                    try:
                        os.kill(pid, 0)
                    except ProcessLookupError:
                        break
                    time.sleep(0.001)
                else:
                    raise AssertionError(f"writer {pid} did not finish")
            tag, gen = on_disk(folder)
            assert gen == n and tag in ("A", "B")
    finally:
        stop.set()
        thread.join(timeout=10)
    assert problems == [], problems[:3]
    assert len(reads) > rounds
    assert temp_files(folder) == [], "a finished save left a temp file"


# ---------------------------------------------------------------------------
# Learner ids: nothing can make a path outside the submissions folder.
HOSTILE_IDS = (
    "../alice",
    "..",
    ".",
    "/etc/passwd",
    "alice/../../x",
    "alice\\..\\x",
    "alice\x00.json",
    "alice\n",
    "\u2024\u2024/x",
    "\uff0e\uff0e/x",
    "\u2025",
    "a" * 65,
    "a" * 4096,
    "",
    " alice",
    "alice ",
    "~root",
    "$HOME",
    "C:\\x",
    "\u202ealice",
    "ａlice",
    "alice.json/..",
)


@budget("learner_id")
@given(
    st.sampled_from(HOSTILE_IDS)
    | st.text(alphabet=st.sampled_from("aZ09._@-/\\\x00\n \u2024\uff0e\u3002\u202e~:"), max_size=70)
    | st.text(max_size=70)
    | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,70}", fullmatch=True)
)
def test_a_learner_id_names_a_file_inside_the_folder_or_is_refused(scratch, learner: str):
    seen("learner_id")
    folder = fresh_dir(scratch)
    try:
        check_learner_id(folder, learner)
    finally:
        shutil.rmtree(folder)


def check_learner_id(folder: Path, learner: str) -> None:
    try:
        validate_learner_id(learner)
    except SubmissionError as e:
        assert repr(learner)[:40] in str(e) or len(learner) > 40
        with pytest.raises(SubmissionError):
            submission_path(folder, KEY.id, learner)
        return
    assert 1 <= len(learner) <= 64 and learner.isascii() and learner.isprintable()
    assert not learner.startswith(".") and not set(learner) & set("/\\\x00\n ")
    path = submission_path(folder, KEY.id, learner)
    assert path.parent.resolve() == (folder / KEY.id).resolve() and path.name == f"{learner}.json"
    written = write_submission(
        Submission(KEY.id, KEY.version, learner, "2025-01-01T00:00:00Z", {}, {}), folder
    )
    assert written == path and sorted(p.relative_to(folder) for p in folder.rglob("*")) == [
        Path(KEY.id),
        Path(KEY.id) / f"{learner}.json",
    ]


def test_the_quiz_page_refuses_a_bad_learner_id_before_anyone_answers(tmp_path):
    from course.quiz import show_quiz

    for learner in HOSTILE_IDS:
        with pytest.raises(CourseError):
            show_quiz("day76", learner_id=learner, submissions_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
