"""``python -m course progress``: per page what is done and left, --lesson, --json, --reset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.cli import main
from course.exercises import progress
from course.exercises.annotation import NONE, exercise_widget
from course.exercises.coding import exercise_ids
from course.lessons import LESSONS, get_lesson
from course.quiz.loader import load_quiz
from course.quiz.model import SingleChoice

# A workspace of its own, learner "default" (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("workspace")


def run(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(["progress", *args])
    out, err = capsys.readouterr()
    return code, out, err


def pages(out: str) -> dict[str, list[str]]:
    """The text output cut into pages: lesson id -> its lines."""
    found: dict[str, list[str]] = {}
    for block in out.split("\n\n"):
        first = block.strip().splitlines()[0] if block.strip() else ""
        lesson = first.split(" ", 1)[0]
        if lesson in LESSONS:
            found[lesson] = block.strip().splitlines()
    return found


def save_right_single_choices(lesson_id: str, learner: str | None = None) -> list[str]:
    """Save a right answer to every single-choice question of the lesson; return their ids."""
    quiz = load_quiz(get_lesson(lesson_id).quiz_path)
    done = []
    for q in quiz.questions:
        if isinstance(q, SingleChoice):
            right = next(o.id for o in q.options if q.fraction(o.id) == 1.0)
            progress.record(
                lesson_id, "quiz", q.id, {"type": q.type, "response": right, "attempts": 1}, learner=learner
            )
            done.append(q.id)
    return done


def test_nothing_saved_lists_every_page_in_order_with_everything_left(capsys, workspace):
    code, out, err = run(capsys)
    assert code == 0 and err == ""
    assert "nothing saved yet" in out
    assert list(pages(out)) == list(LESSONS)
    for lesson_id, lines in pages(out).items():
        total = len(load_quiz(get_lesson(lesson_id).quiz_path).questions)
        assert f"quiz        0 of {total} answered right (0 answered); left:" in lines[1]
        coding = len(exercise_ids(get_lesson(lesson_id)))
        assert lines[3] == (
            f"  coding      0 of {coding} passed; left: {', '.join(exercise_ids(get_lesson(lesson_id)))}"
            if coding
            else "  coding      none on this page"
        )
    assert not workspace.exists(), "reading progress wrote nothing"


def test_each_page_says_what_is_done_and_what_is_left(capsys):
    right = save_right_single_choices("day76")
    quiz = load_quiz(get_lesson("day76").quiz_path)
    # A wrong answer counts as answered, not right.
    numeric = next(q for q in quiz.questions if q.type == "numeric")
    progress.record("day76", "quiz", numeric.id, {"type": "numeric", "response": -12345.0, "attempts": 4})
    ids = exercise_ids(get_lesson("day76"))
    for exercise in ids:
        progress.record("day76", "coding", exercise, {"passed": True, "attempts": 2, "check": "cpu"})
    # Day 78's annotation exercise, checked with every keyed line right.
    widget = exercise_widget("day78")
    for item in widget.exercise.items:
        if item.role != NONE:
            widget.dropdowns[item.line].value = item.role
    widget.check_button.click()

    code, out, _ = run(capsys)
    assert code == 0
    day76 = pages(out)["day76"]
    assert day76[1].startswith(
        f"  quiz        {len(right)} of {len(quiz.questions)} answered right ({len(right) + 1} answered); left: "
    )
    left = day76[1].split("left: ", 1)[1]
    assert numeric.id in left and not any(f"{qid}," in left or left.endswith(qid) for qid in right)
    assert day76[2] == "  annotation  none on this page"
    assert day76[3] == f"  coding      {len(ids)} of {len(ids)} passed (done)"
    day78 = pages(out)["day78"]
    total = sum(i.role != NONE for i in widget.exercise.items)
    assert day78[2] == f"  annotation  checked, {total} of {total} roles right (done: full marks)"
    assert pages(out)["day79"][1].startswith("  quiz        0 of ")

    # --json says the same, with every id left.
    code, out, _ = run(capsys, "--json", "--lesson", "day76")
    data = json.loads(out)
    assert code == 0 and data["learner"] == "default" and [p["lesson"] for p in data["pages"]] == ["day76"]
    page = data["pages"][0]
    assert page["quiz"]["right"] == len(right) and page["quiz"]["answered"] == len(right) + 1
    assert set(page["quiz"]["left"]) == {q.id for q in quiz.questions} - set(right)
    assert page["coding"] == {"total": len(ids), "passed": len(ids), "left": []}


def test_one_lesson_and_one_learner(capsys, monkeypatch):
    save_right_single_choices("day78", learner="alice")
    code, out, _ = run(capsys, "--lesson", "day78")
    assert code == 0 and list(pages(out)) == ["day78"] and " 0 of " in pages(out)["day78"][1]
    code, out, _ = run(capsys, "--lesson", "day78", "--learner", "alice")
    assert "Progress of learner alice" in out and " 0 of " not in pages(out)["day78"][1]
    monkeypatch.setenv("COURSE_LEARNER", "alice")
    code, out, _ = run(capsys, "--lesson", "day78")
    assert "Progress of learner alice" in out


def test_reset_one_page_prints_the_backup_and_keeps_the_other_pages(capsys, workspace):
    save_right_single_choices("day76")
    save_right_single_choices("day78")
    before = progress.lesson_progress("day76")
    code, out, err = run(capsys, "--reset", "day76")
    assert code == 0 and err == ""
    backup = Path(out.strip().rsplit(" ", 1)[1].rstrip("."))
    assert out.startswith("Reset day76 for learner default.") and backup.is_file()
    assert json.loads(backup.read_text("utf-8"))["lessons"]["day76"]["quiz"] == before["quiz"]
    assert progress.lesson_progress("day76")["quiz"] == {}
    assert progress.lesson_progress("day78")["quiz"] != {}
    code, out, _ = run(capsys, "--reset", "day76")
    assert code == 0 and out.startswith("Nothing saved for day76")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--learner", "../x"), "learner id"),
        (("--lesson", "day99"), "no lesson named 'day99'"),
        (("--reset", "day99"), "no lesson named 'day99'"),
    ],
)
def test_a_bad_learner_or_lesson_is_one_message_and_exit_2(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_a_corrupt_progress_file_is_reported_and_moved_aside_not_a_crash(capsys, workspace):
    path = progress.progress_path()
    path.parent.mkdir(parents=True)
    path.write_text("{torn", "utf-8")
    code, out, err = run(capsys, "--lesson", "day76")
    assert code == 0 and "could not be read" in err and "nothing was deleted" in err
    assert list(path.parent.glob("default.corrupt-*.json"))


def test_the_command_runs_in_a_fresh_process(workspace):
    import os

    env = {**os.environ, "COURSE_WORKSPACE": str(workspace)}
    r = subprocess.run(
        [sys.executable, "-m", "course", "progress", "--lesson", "day76"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[2].startswith("day76  ")


# ---- issue 24: a progress file that is not a file, a workspace that cannot be written ----


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_as_the_progress_file_is_moved_aside_not_waited_on(bounded_course, workspace):
    path = workspace / "progress" / "default.json"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    r = bounded_course("progress", "--lesson", "day76", workspace=workspace, env={"LOGNAME": "default"})
    assert r.returncode == 0, r.stderr
    assert "not a regular file but a named pipe" in r.stderr and "nothing was deleted" in r.stderr
    assert not path.exists() and list(path.parent.glob("default.corrupt-*.json"))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_progress_file_that_leads_to_dev_zero_is_moved_aside_not_read(bounded_course, workspace):
    path = workspace / "progress" / "default.json"
    path.parent.mkdir(parents=True)
    path.symlink_to("/dev/zero")
    r = bounded_course("progress", "--lesson", "day76", workspace=workspace, env={"LOGNAME": "default"})
    assert r.returncode == 0, r.stderr
    assert "a character device" in r.stderr and not path.is_symlink()


def test_a_read_only_workspace_can_still_be_read(capsys, workspace, unwritable):
    done = save_right_single_choices("day76")
    unwritable(workspace)
    code, out, err = run(capsys, "--lesson", "day76")
    assert code == 0, err
    assert f"quiz        {len(done)} of " in pages(out)["day76"][1]
    code, _, err = run(capsys, "--reset", "day76")  # a write: refused with a message
    assert code == 2 and err.startswith("error: ") and "Read-only file system" in err


def test_a_workspace_that_is_a_file_is_a_message(capsys, workspace):
    workspace.write_text("not a folder", encoding="utf-8")
    code, _, err = run(capsys, "--lesson", "day76")
    assert code == 2 and "the workspace must be a folder, and this is a file" in err
