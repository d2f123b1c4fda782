"""Progress that lasts: save, restore, reset, a corrupt file, two writers, a kill mid-save.

Every test has its own workspace (``COURSE_WORKSPACE``), so nothing one
test saves is restored in another, or in the notebooks nbval runs.
"""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest
from hardening._writer import payload

from course.errors import CourseError
from course.exercises import progress
from course.exercises.annotation import NONE, exercise_widget
from course.quiz import show_quiz
from course.quiz.model import MultipleSelect, Numeric, ShortText, SingleChoice, WhichLine

# A workspace of its own, learner "default" (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("workspace")


# ---------------------------------------------------------------------------
# The file
# ---------------------------------------------------------------------------
def test_record_then_restore_round_trips_and_adds_the_time(workspace):
    state = {"response": ["a", "c"], "attempts": 2, "fraction": 0.5, "score": 1.0}
    progress.record("day76", "quiz", "phase-complete", state)
    back = progress.restore("day76", "quiz", "phase-complete")
    assert back is not None and back.pop("saved_at").endswith("+00:00")
    assert back == state
    assert progress.restore("day76", "quiz", "other") is None
    assert progress.restore("day78", "quiz", "phase-complete") is None
    path = workspace / "progress" / "default.json"
    assert progress.progress_path() == path
    data = json.loads(path.read_text("utf-8"))
    assert data["format"] == progress.FORMAT and data["learner"] == "default"
    assert set(data["lessons"]["day76"]) == {"quiz"}


def test_a_save_replaces_one_item_and_keeps_every_other(workspace):
    progress.record("day76", "quiz", "a", {"attempts": 1})
    progress.record("day76", "coding", "b", {"passed": False, "attempts": 1})
    progress.record("day78", "annotation", "exercise", {"attempts": 1})
    progress.record("day76", "quiz", "a", {"attempts": 2})
    saved = progress.lesson_progress("day76")
    assert {k: {i: s["attempts"] for i, s in v.items()} for k, v in saved.items()} == {
        "quiz": {"a": 2},
        "annotation": {},
        "coding": {"b": 1},
    }
    assert progress.lesson_progress("day78")["annotation"]["exercise"]["attempts"] == 1
    assert progress.saved_lessons() == ("day76", "day78")


def test_the_learner_is_the_id_given_else_the_environment_else_default(workspace, monkeypatch):
    progress.record("day76", "quiz", "q", {"who": "default"})
    progress.record("day76", "quiz", "q", {"who": "alice"}, learner="alice")
    monkeypatch.setenv("COURSE_LEARNER", "bob")
    progress.record("day76", "quiz", "q", {"who": "bob"})
    assert progress.progress_path() == workspace / "progress" / "bob.json"
    assert progress.restore("day76", "quiz", "q")["who"] == "bob"  # type: ignore[index]
    assert progress.restore("day76", "quiz", "q", learner="alice")["who"] == "alice"  # type: ignore[index]
    assert progress.restore("day76", "quiz", "q", learner="default")["who"] == "default"  # type: ignore[index]
    assert sorted(p.name for p in (workspace / "progress").glob("*.json")) == [
        "alice.json",
        "bob.json",
        "default.json",
    ]


@pytest.mark.parametrize("bad", ["../alice", "..", "/etc/passwd", "a/b", ".hidden", "", "a" * 65, "al ice"])
def test_a_learner_id_that_is_not_a_plain_file_name_is_refused(workspace, monkeypatch, bad):
    with pytest.raises(CourseError, match="learner id"):
        progress.record("day76", "quiz", "q", {}, learner=bad)
    with pytest.raises(CourseError, match="learner id"):
        progress.progress_path(bad)
    if bad:  # an empty COURSE_LEARNER means unset: the default learner
        monkeypatch.setenv("COURSE_LEARNER", bad)
        with pytest.raises(CourseError, match="learner id"):
            progress.restore("day76", "quiz", "q")
    assert not workspace.exists() or list(workspace.rglob("*.json")) == []


@pytest.mark.parametrize(
    "args",
    [("../x", "quiz", "q"), ("day76", "essay", "q"), ("day76", "quiz", ""), ("day76", "quiz", "a/b")],
)
def test_bad_lesson_kind_or_item_ids_are_refused(args):
    with pytest.raises(CourseError):
        progress.record(*args, {})
    with pytest.raises(CourseError):
        progress.restore(*args)


def test_a_state_json_cannot_hold_is_refused_and_the_file_is_untouched(workspace):
    progress.record("day76", "quiz", "q", {"attempts": 1})
    before = progress.progress_path().read_bytes()
    for bad in ({"x": float("nan")}, {"x": object()}):
        with pytest.raises(CourseError, match="cannot be saved as JSON"):
            progress.record("day76", "quiz", "q", bad)
    assert progress.progress_path().read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe garbage",
        b"",
        b"[1, 2]",
        b'{"format": "something-else/1", "lessons": {}}',
        b'{"format": "hopper-course/progress/1", "lessons": {"day76": {"quiz": {"q": 3}}}}',
        b'{"format": "hopper-course/progress/1", "lessons": {"day76": {"essay": {}}}}',
        b'{"format": "hopper-course/progress/1", "lessons": {"day76": {"quiz": {"q": {"x": NaN}}}}}',
        b'{"format": "hopper-course/progress/1", "lessons": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    ],
)
def test_a_corrupt_file_is_moved_aside_with_a_message_and_progress_starts_empty(workspace, capsys, content):
    path = progress.progress_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert progress.restore("day76", "quiz", "q") is None
    err = capsys.readouterr().err
    (aside,) = path.parent.glob("default.corrupt-*.json")
    assert aside.read_bytes() == content, "the unreadable file must be kept, byte for byte"
    assert str(path) in err and str(aside) in err and "nothing was deleted" in err
    assert not path.exists()
    # Saving works again, from empty.
    progress.record("day76", "quiz", "q", {"attempts": 1})
    assert progress.restore("day76", "quiz", "q")["attempts"] == 1  # type: ignore[index]
    progress.progress_path().write_bytes(content)
    progress.record("day76", "quiz", "r", {"attempts": 1})  # a save over a corrupt file: moved aside too
    assert len(list(path.parent.glob("default.corrupt-*.json"))) == 2
    assert set(progress.lesson_progress("day76")["quiz"]) == {"r"}


def test_reset_forgets_one_page_keeps_the_others_and_backs_up_what_it_removed(workspace):
    progress.record("day76", "quiz", "a", {"attempts": 1})
    progress.record("day76", "coding", "c", {"passed": True})
    progress.record("day78", "quiz", "b", {"attempts": 3})
    removed = progress.lesson_progress("day76")
    backup = progress.reset("day76")
    assert backup is not None and backup.parent == workspace / "progress" / "backups"
    kept = json.loads(backup.read_text("utf-8"))
    assert kept["format"] == progress.FORMAT and list(kept["lessons"]) == ["day76"]
    assert {k: v for k, v in kept["lessons"]["day76"].items()} == {k: v for k, v in removed.items() if v}
    assert progress.lesson_progress("day76") == {"quiz": {}, "annotation": {}, "coding": {}}
    assert progress.restore("day78", "quiz", "b")["attempts"] == 3  # type: ignore[index]
    assert progress.reset("day76") is None  # nothing left to reset: no empty backup
    assert progress.reset("day80") is None
    # A second reset of the same page in the same second never overwrites the first backup.
    progress.record("day76", "quiz", "a", {"attempts": 9})
    again = progress.reset("day76")
    assert again is not None and again != backup and backup.exists()


def test_reset_with_nothing_saved_makes_no_files(workspace):
    assert progress.reset("day76") is None
    assert not workspace.exists()


def test_restore_with_nothing_saved_makes_no_files(workspace):
    assert progress.restore("day76", "quiz", "q") is None
    assert progress.lesson_progress("day76") == {"quiz": {}, "annotation": {}, "coding": {}}
    assert not workspace.exists()


# ---------------------------------------------------------------------------
# Two writers at once, and a kill in the middle of a save
# ---------------------------------------------------------------------------
def test_two_threads_saving_at_once_lose_no_update(workspace):
    rounds = 40
    errors: list[BaseException] = []

    def saver(name: str) -> None:
        try:
            for n in range(rounds):
                progress.record("day76", "quiz", f"{name}-{n}", {"attempts": n})
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=saver, args=(name,)) for name in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    saved = progress.lesson_progress("day76")["quiz"]
    assert len(saved) == 3 * rounds, f"{3 * rounds - len(saved)} updates were lost"


def _forked(body) -> int:  # type: ignore[no-untyped-def]
    pid = os.fork()
    if pid == 0:  # the child: run, then leave without pytest's exit handlers
        code = 0
        try:
            body()
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    return pid


def test_two_processes_saving_at_once_lose_no_update(workspace):
    rounds = 30

    def saver(name: str):  # type: ignore[no-untyped-def]
        return lambda: [
            progress.record("day78", "coding", f"{name}-{n}", {"passed": True}) for n in range(rounds)
        ]

    pids = [_forked(saver(name)) for name in ("a", "b", "c", "d")]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    assert len(progress.lesson_progress("day78")["coding"]) == 4 * rounds


def test_while_a_save_holds_the_lock_no_other_process_takes_it(workspace):
    """The lock is a real one on this OS (filelock; the course had none where ``fcntl`` is missing):
    while one process is inside a save's lock, another process's try for it fails, and once the save
    is done it succeeds. No clock decides it: the child tries once, without waiting."""
    from filelock import FileLock, Timeout

    progress.record("day76", "quiz", "first", {"attempts": 1})
    path = progress.progress_path()
    lock = path.with_name(path.name + ".lock")

    def child_takes_it() -> bool:
        read_end, write_end = os.pipe()

        def body() -> None:
            try:
                with FileLock(lock, timeout=0):
                    os.write(write_end, b"y")
            except Timeout:
                os.write(write_end, b"n")

        pid = _forked(body)
        os.close(write_end)
        try:
            answer = os.read(read_end, 1)
        finally:
            os.waitpid(pid, 0)
            os.close(read_end)
        assert answer in (b"y", b"n"), answer
        return answer == b"y"

    with progress._locked(path) as writable:
        assert writable
        assert not child_takes_it(), "another process took the lock while a save held it"
    assert child_takes_it(), "the lock was not released after the save"


SIZE = 256 * 1024  # bytes of text per save: big enough that a kill lands mid-write
KILLS = 40


def _consistent(path: Path) -> int:
    """The generation of a whole progress file; AssertionError for a torn or mixed one."""
    data = json.loads(path.read_bytes())
    assert data["format"] == progress.FORMAT
    state = data["lessons"]["day76"]["quiz"]["ptx-name"]
    gen = state["attempts"]
    assert state["text"] == payload("kill", gen, SIZE), "the text mixes two saves"
    assert data["lessons"]["day78"]["quiz"]["other"] == {"attempts": 1, "saved_at": ANY}
    return int(gen)


class _Any:
    def __eq__(self, other: object) -> bool:
        return True


ANY = _Any()


def _gone(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _saver(start: int, pause_at: int | None, report: int) -> None:
    """In a forked child: save generation after generation, writing one byte to ``report`` after each.

    With ``pause_at`` = k, save number k (from 0) stops after its temp file is
    written whole and before the rename, says so (``p``) and waits to be
    killed there: a kill in the middle of a save, at a known step, not by luck.
    """
    real_replace = os.replace
    done = 0

    def replace(src, dst):  # type: ignore[no-untyped-def]
        if done == pause_at and str(src).endswith(".tmp"):
            os.write(report, b"p")
            time.sleep(3600)  # killed here
        real_replace(src, dst)

    os.replace = replace  # this child's own os module: _atomic renames through it
    gen = start
    while True:
        progress.record("day76", "quiz", "ptx-name", {"text": payload("kill", gen, SIZE), "attempts": gen})
        done += 1
        os.write(report, b"s")
        gen += 1


def _wait_for(report: int, saves: int, paused: bool) -> int:
    """Read the child's reports until it has finished ``saves`` saves (and, if ``paused``, paused); the count."""
    seen = b""
    while seen.count(b"s") < saves or (paused and b"p" not in seen):
        chunk = os.read(report, 64)
        assert chunk, f"the saver ended on its own after {seen!r}"
        seen += chunk
    return seen.count(b"s")


def test_a_kill_at_random_moments_of_a_save_leaves_the_old_or_the_new_file_whole(workspace):
    """Each kill comes after a counted number of finished saves, some of them in the middle of the next.

    The child says when each save is done (and, for a mid-save kill, when it
    has written its temp file and not yet renamed it), so what the kill hit is
    known, whatever the machine's load: no sleep decides it.
    """
    progress.record("day78", "quiz", "other", {"attempts": 1})  # another page's progress: never lost
    progress.record("day76", "quiz", "ptx-name", {"text": payload("kill", 0, SIZE), "attempts": 0})
    path = progress.progress_path()
    folder = path.parent
    rng = random.Random(85)  # the same kills every run
    last = 0
    mid_saves = 0
    for number in range(KILLS):
        saves = rng.randint(0, 2)
        mid_save = rng.random() < 0.5
        read_end, write_end = os.pipe()
        before = {p.name for p in folder.iterdir()}
        pause_at = saves if mid_save else None
        pid = _forked(lambda s=last + 1, p=pause_at, w=write_end: _saver(s, p, w))
        os.close(write_end)
        try:
            finished = _wait_for(read_end, saves, mid_save)
        finally:
            _gone(pid)
            os.close(read_end)
        left = [p for p in folder.iterdir() if p.name.endswith(".tmp") and p.name not in before]
        if mid_save:
            assert left, f"kill {number}: killed before its rename, the save must leave its temp file"
            mid_saves += 1
        gen = _consistent(path)  # raises on a torn or mixed file
        # Every finished save is in the file. Paused before its rename, the save the kill cut off is
        # not: the file is exactly the last finished one. Otherwise the child may have finished more
        # saves between its last report read here and the kill.
        assert gen >= last + finished, f"kill {number}: {finished} saves finished, the file is at {gen}"
        if mid_save:
            assert gen == last + saves, f"kill {number}: the cut-off save reached the file"
        last = gen
    assert mid_saves > 0 and last > 0, (mid_saves, last)
    assert not list(folder.glob("*.corrupt-*")), "a killed save made the next read think the file was corrupt"
    # A later save still works, and the lock a killed saver held was released with it.
    progress.record(
        "day76", "quiz", "ptx-name", {"text": payload("kill", last + 1, SIZE), "attempts": last + 1}
    )
    assert _consistent(path) == last + 1


# ---------------------------------------------------------------------------
# The quiz page
# ---------------------------------------------------------------------------
def _answer(panel) -> None:  # type: ignore[no-untyped-def]
    """Give every question a response of its type (right or wrong does not matter here)."""
    for qp in panel.panels.values():
        q = qp.question
        if isinstance(q, SingleChoice):
            qp.set_response(q.options[-1].id)
        elif isinstance(q, MultipleSelect):
            qp.set_response([q.options[0].id, q.options[-1].id])
        elif isinstance(q, WhichLine):
            qp.set_response(q.listing[1][0])
        elif isinstance(q, Numeric):
            qp.text.value = "0x10"  # as typed: restored as 0x10, scored as 16
        elif isinstance(q, ShortText):
            qp.text.value = "some text"


def _seen(panel):  # type: ignore[no-untyped-def]
    return {qid: (qp.response(), qp.attempts) for qid, qp in panel.panels.items()}


def test_checked_answers_come_back_in_a_fresh_quiz(tmp_path):
    first = show_quiz("day76", learner_id="alice", submissions_dir=tmp_path / "subs")
    _answer(first)
    feedback = {}
    for qid, qp in first.panels.items():
        for _ in range(2 if qid == "one-thread" else 1):
            qp.check_button.click()
        feedback[qid] = qp.feedback.value
    before = _seen(first)
    assert before["one-thread"][1] == 2

    again = show_quiz("day76", learner_id="alice", submissions_dir=tmp_path / "subs")
    assert _seen(again) == before
    for qid, qp in again.panels.items():
        assert qp.feedback.value == feedback[qid], "the last feedback is shown again"
        assert "Restored" not in qp.feedback.value  # said once, for the whole quiz
    assert "Restored 18 of 18 answers" in again.restored.value
    assert again.restored.value.count("last saved") == 1
    assert "So far:" in again.total.value
    # A number keeps the form it was typed in.
    assert again.panels["expect-bytes"].text.value == first.panels["expect-bytes"].text.value
    # The text/plain output nbval compares does not change.
    assert repr(again) == repr(first)
    # Checking again counts on from the restored attempts.
    again.panels["one-thread"].check_button.click()
    assert progress.restore("day76", "quiz", "one-thread", learner="alice")["attempts"] == 3  # type: ignore[index]
    # Another learner, and the restore switch, see nothing.
    other = show_quiz("day76", learner_id="bob", submissions_dir=tmp_path / "subs")
    assert all(r is None and a == 0 for r, a in _seen(other).values())
    off = show_quiz("day76", learner_id="alice", submissions_dir=tmp_path / "subs", restore=False)
    assert all(qp.feedback.value == "" for qp in off.panels.values())


def test_submitted_answers_come_back_in_graded_mode_without_a_verdict(tmp_path):
    from course.lessons import get_lesson
    from course.quiz.release import release_quiz

    released = tmp_path / "day76-learner.toml"
    release_quiz(get_lesson("day76").quiz_path, released)
    first = show_quiz(released, mode="graded", learner_id="carol", submissions_dir=tmp_path / "subs")
    _answer(first)
    assert first.submit() is not None
    again = show_quiz(released, mode="graded", learner_id="carol", submissions_dir=tmp_path / "subs")
    assert _seen(again) == _seen(first)
    assert all(a == 1 for _, a in _seen(again).values())
    assert "Restored 18 of 18 answers" in again.restored.value
    for qp in again.panels.values():
        assert "quiz-result" not in qp.feedback.value
    saved = progress.lesson_progress("day76", learner="carol")["quiz"]
    assert all(s["checked"] is False and s["fraction"] is None for s in saved.values())


def test_a_question_that_changed_since_the_save_is_skipped_not_a_crash(tmp_path):
    first = show_quiz("day76", submissions_dir=tmp_path / "subs")
    _answer(first)
    for qp in first.panels.values():
        qp.check_button.click()
    path = progress.progress_path()
    data = json.loads(path.read_text("utf-8"))
    quiz = data["lessons"]["day76"]["quiz"]
    quiz["gone-question"] = quiz.pop("coords-order")  # a question removed from the quiz
    quiz["one-thread"]["response"] = "no-such-option"  # an option id no longer there
    quiz["phase-complete"]["response"] = ["a", "no-such-option"]
    quiz["line-issue"]["response"] = 99999  # a line no longer in the listing
    quiz["ptx-name"]["type"] = "numeric"  # the question changed type
    quiz["expect-bytes"]["text"] = "not a number"
    quiz["per-thread"]["attempts"] = "many"
    path.write_text(json.dumps(data), "utf-8")
    again = show_quiz("day76", submissions_dir=tmp_path / "subs")
    skipped = {
        "coords-order",
        "one-thread",
        "phase-complete",
        "line-issue",
        "ptx-name",
        "expect-bytes",
        "per-thread",
    }
    for qid, qp in again.panels.items():
        if qid in skipped:
            assert qp.response() is None and qp.attempts == 0 and qp.feedback.value == "", qid
        else:
            assert qp.response() == first.panels[qid].response(), qid
    assert f"Restored {18 - len(skipped)} of 18 answers" in again.restored.value


def test_a_workspace_that_cannot_be_written_never_stops_a_check(tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    monkeypatch.setenv("COURSE_WORKSPACE", str(blocker))
    panel = show_quiz("day76", submissions_dir=tmp_path / "subs")
    qp = panel.panels["one-thread"]
    qp.set_response(qp.question.options[0].id)
    qp.check_button.click()
    assert "quiz-result" in qp.feedback.value and "Your progress was not saved" in qp.feedback.value
    assert qp.attempts == 1


# ---------------------------------------------------------------------------
# The annotation exercise
# ---------------------------------------------------------------------------
def test_marks_come_back_in_a_fresh_exercise_widget():
    first = exercise_widget("day78")
    items = first.exercise.items
    keyed = [i for i in items if i.role != NONE]
    for item in keyed[:5]:
        first.dropdowns[item.line].value = item.role
    wrong = keyed[5]
    first.dropdowns[wrong.line].value = next(
        r.id for r in first.exercise.roles if r.id not in (NONE, wrong.role)
    )
    first.check_button.click()
    first.check_button.click()
    marks = first.marks()
    assert len(marks) == 6

    again = exercise_widget("day78")
    assert again.marks() == marks and again.attempts == 2
    assert "Restored 6 marks from your progress" in again.result.value
    assert first.result.value in again.result.value, "the last result is shown again"
    saved = progress.restore("day78", "annotation", "exercise")
    assert saved is not None and saved["score"] == 5 and saved["full_marks"] is False
    assert exercise_widget("day78", restore=False).marks() == {}
    assert exercise_widget("day78", learner_id="someone-else").marks() == {}


def test_a_mark_follows_its_line_when_lines_move_and_is_dropped_when_its_line_is_gone():
    first = exercise_widget("day78")
    keyed = [i for i in first.exercise.items if i.role != NONE]
    for item in keyed[:3]:
        first.dropdowns[item.line].value = item.role
    first.check_button.click()
    path = progress.progress_path()
    data = json.loads(path.read_text("utf-8"))
    saved = data["lessons"]["day78"]["annotation"]["exercise"]["marks"]
    saved[0]["line"] += 7  # the kernel gained lines above it: the text is found again
    saved[1]["text"] = "a line that is no longer in the kernel();"
    saved[2]["role"] = "a-role-that-was-removed"
    saved.append({"region": "no-such-region", "line": 1, "text": "x", "role": keyed[0].role})
    saved.append("not a mark")
    path.write_text(json.dumps(data), "utf-8")
    again = exercise_widget("day78")
    assert again.marks() == {keyed[0].line: keyed[0].role}
    assert "Restored 1 mark from your progress" in again.result.value
    assert "4 no longer fit the kernel's lines" in again.result.value


def test_the_default_learner_is_the_one_the_page_submits_as(monkeypatch):
    """One identity: the page's quiz submits as it, and progress is kept (and printed) under it."""
    from course.page import default_learner_id

    monkeypatch.delenv(progress.LEARNER_ENV, raising=False)
    monkeypatch.setenv("LOGNAME", "bob")
    assert progress.learner_id() == default_learner_id() == "bob"
    monkeypatch.setenv("JUPYTERHUB_USER", "hub-ann")
    assert progress.learner_id() == default_learner_id() == "hub-ann"
    monkeypatch.setenv(progress.LEARNER_ENV, "cy")
    assert progress.learner_id() == default_learner_id() == "cy"
    monkeypatch.setenv(progress.LEARNER_ENV, "../etc")
    with pytest.raises(CourseError):
        progress.learner_id()


# ---------------------------------------------------------------------------
# Values JSON reads but cannot write back (issue 24)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "words"), [("1e999", "a number too large"), ('"lone \\ud800"', "a lone surrogate")]
)
def test_a_value_json_cannot_write_back_is_set_aside_and_later_saves_work(workspace, capsys, value, words):
    progress.record("day76", "quiz", "kept", {"response": "a", "attempts": 1})
    path = progress.progress_path()
    data = json.loads(path.read_text(encoding="utf-8"))
    data["lessons"]["day76"]["quiz"]["bad"] = {"response": "PLACEHOLDER", "attempts": 1}
    original = json.dumps(data).replace('"PLACEHOLDER"', value)
    path.write_text(original, encoding="ascii")
    capsys.readouterr()

    progress.record("day78", "coding", "core-offset", {"passed": True})  # no longer refused

    err = capsys.readouterr().err
    assert words in err and "day76 quiz 'bad'" in err and "nothing was deleted" in err
    saved = progress.lesson_progress("day76")["quiz"]
    assert set(saved) == {"kept"}, "the value that cannot be written back is left out, the rest kept"
    assert progress.restore("day78", "coding", "core-offset")["passed"] is True
    (aside,) = path.parent.glob("default.corrupt-*.json")
    assert aside.read_text(encoding="ascii") == original, "the file as it was is kept"


def test_a_new_state_with_a_lone_surrogate_is_refused_and_the_file_is_unchanged(workspace):
    progress.record("day76", "quiz", "kept", {"response": "a"})
    before = progress.progress_path().read_bytes()
    with pytest.raises(CourseError, match="cannot be saved as JSON"):
        progress.record("day76", "quiz", "bad", {"response": "\ud800"})
    assert progress.progress_path().read_bytes() == before
