"""``python -m course quiz`` (course/cli/quiz.py): exit codes and messages."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.cli import main
from course.quiz.loader import load_quiz
from course.quiz.submission import Submission, write_submission

from ._data import SAMPLE_QUIZ

REPO = Path(__file__).resolve().parents[2]


def run(*argv: str) -> int:
    return main(["quiz", *argv])


def test_validate_ok(sample_quiz, capsys):
    assert run("validate", str(sample_quiz)) == 0
    out = capsys.readouterr().out
    assert f"ok: {sample_quiz}: quiz 'day76' (key), 5 questions, 6 points" in out


def test_validate_reports_every_bad_file_and_exits_1(sample_quiz, write_quiz, capsys):
    bad = write_quiz(SAMPLE_QUIZ.replace("rtol = 0", "rtoll = 0"), "bad.toml")
    missing = sample_quiz.parent / "missing.toml"
    assert run("validate", str(sample_quiz), str(bad), str(missing)) == 1
    captured = capsys.readouterr()
    assert "ok: " in captured.out
    assert f"error: {bad}:" in captured.err and "field 'rtoll'" in captured.err
    assert f"error: {missing}: cannot read the quiz file" in captured.err
    assert "2 of 3 quiz files have problems" in captured.err
    assert "Traceback" not in captured.err


def test_validate_in_a_fresh_process_never_shows_a_traceback(write_quiz, course_root):
    bad = write_quiz("[quiz]\nid = \n", "bad.toml")
    env = {**os.environ, "COURSE_ROOT": str(course_root)}
    proc = subprocess.run(
        [sys.executable, "-m", "course", "quiz", "validate", str(bad)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 1
    assert f"{bad}:2: not valid TOML" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_shipped_quizzes_validate(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    files = [str(REPO / "content" / "quizzes" / f"{d}.toml") for d in ("day76", "day78")]
    assert run("validate", *files) == 0
    assert capsys.readouterr().out.count("ok: ") == 2


def test_validate_warns_when_the_option_order_gives_the_key_away(write_quiz, capsys):
    block = SAMPLE_QUIZ[SAMPLE_QUIZ.index("[[questions]]") : SAMPLE_QUIZ.index('[[questions]]\nid = "m1"')]
    block = block.replace('answer = "b"', 'answer = "a"')
    text = SAMPLE_QUIZ + "".join(block.replace('id = "s1"', f'id = "s{n}"') for n in (2, 3))
    path = write_quiz(text.replace('answer = "b"', 'answer = "a"'), "keyfirst.toml")
    assert run("validate", str(path)) == 0  # a warning, not an error
    err = capsys.readouterr().err
    assert f"warning: {path}: quiz 'day76': the right option is option 1 in 3 of 3" in err


def test_release_then_validate_the_learner_copy(sample_quiz, tmp_path, capsys):
    out = tmp_path / "learner.toml"
    assert run("release", str(sample_quiz), "-o", str(out)) == 0
    assert "no key material" in capsys.readouterr().out
    assert run("validate", str(out)) == 0
    assert "(learner copy)" in capsys.readouterr().out


def test_release_errors_exit_2_with_a_message(sample_quiz, tmp_path, capsys):
    out = tmp_path / "learner.toml"
    run("release", str(sample_quiz), "-o", str(out))
    capsys.readouterr()
    assert run("release", str(out), "-o", str(tmp_path / "again.toml")) == 2
    assert "already a learner copy" in capsys.readouterr().err


def _submissions(sample_quiz: Path, folder: Path) -> None:
    quiz = load_quiz(sample_quiz)
    for learner, s1 in (("alice", "b"), ("bob", "a")):
        write_submission(
            Submission(quiz.id, quiz.version, learner, "2025-01-01T00:00:00+00:00", {"s1": s1}, {}), folder
        )
    (folder / "day76" / "junk.json").write_text("{}")


def test_grade_writes_reports_and_the_canvas_column(sample_quiz, tmp_path, capsys):
    subs, out = tmp_path / "subs", tmp_path / "out"
    _submissions(sample_quiz, subs)
    book = tmp_path / "book.csv"
    book.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Day 76 quiz (1)\n"
        "Points Possible,,,,,\nAlice,1,s1,alice,A,\n"
    )
    code = run(
        "grade",
        str(sample_quiz),
        str(subs),
        "-o",
        str(out),
        "--canvas",
        str(book),
        "--canvas-column",
        "Day 76 quiz (1)",
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "graded 2 learners" in captured.out
    assert "junk.json: missing field" in captured.err
    assert "not in the gradebook (by 'SIS Login ID'): bob" in captured.err
    for name in ("long.csv", "wide.csv", "items.csv", "items.json", "skipped.csv", "canvas.csv"):
        assert (out / name).is_file(), name
    rows = list(csv.reader((out / "canvas.csv").read_text(encoding="utf-8").splitlines()))
    assert rows[1][-1] == "6" and rows[2][-1] == "1"


def test_grade_usage_errors_exit_2_without_traceback(sample_quiz, tmp_path, capsys):
    assert run("grade", str(sample_quiz), str(tmp_path / "none"), "-o", str(tmp_path / "o")) == 2
    assert "does not exist" in capsys.readouterr().err
    assert run("grade", str(sample_quiz), str(tmp_path), "-o", str(tmp_path / "o"), "--canvas", "x.csv") == 2
    assert "--canvas and --canvas-column go together" in capsys.readouterr().err


def test_quiz_needs_an_action(capsys):
    with pytest.raises(SystemExit) as info:
        run()
    assert info.value.code == 2
    assert "ACTION" in capsys.readouterr().err


def test_grade_refuses_reports_inside_the_submissions_folder(sample_quiz, tmp_path, capsys):
    subs = tmp_path / "subs"
    _submissions(sample_quiz, subs)
    assert run("grade", str(sample_quiz), str(subs), "-o", str(subs / "out")) == 2
    assert "outside the submissions folder" in capsys.readouterr().err
    assert not (subs / "out").exists()
