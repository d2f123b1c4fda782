"""The hub_user,login table (course/quiz/names.py) and its use in the gradebook."""

from __future__ import annotations

import csv
import re

import pytest

from course.errors import CourseError
from course.quiz.canvas import fill_gradebook
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.names import read_names
from course.quiz.submission import Submission, write_submission


def test_read_names_skips_comments_and_blank_lines(tmp_path):
    table = tmp_path / "names.csv"
    table.write_text("# from the LMS export\nhub_user,login\n\nab12,alice.b\n cd34 , carl.d \n")
    assert read_names(table) == {"ab12": "alice.b", "cd34": "carl.d"}


@pytest.mark.parametrize(
    "text, message, line",
    [
        ("user,login\nab12,a\n", "must start with the header hub_user,login", 1),
        ("hub_user,login\nab12\n", "a row holds a hub user and a login", 2),
        ("hub_user,login\nab12,a\nab12,b\n", "hub user 'ab12' has two rows (lines 2 and 3)", 3),
        ("hub_user,login\nab12,a\ncd34,a\n", "login 'a' is given to two hub users (lines 2 and 3)", 3),
    ],
)
def test_a_bad_table_names_the_line(tmp_path, text, message, line):
    table = tmp_path / "names.csv"
    table.write_text(text)
    with pytest.raises(CourseError, match=re.escape(message)) as info:
        read_names(table)
    assert info.value.line == line


def test_the_gradebook_matches_hub_users_through_the_table(sample_quiz, tmp_path):
    quiz = load_quiz(sample_quiz)
    for learner in ("ab12", "bob"):
        sub = Submission(quiz.id, quiz.version, learner, "2025-01-01T00:00:00+00:00", {"s1": "b"}, {})
        write_submission(sub, tmp_path / "subs")
    report = grade_submissions(quiz, tmp_path / "subs")
    book = tmp_path / "book.csv"
    book.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Q (1)\nAlice,1,s1,alice.b,A,\nBob,2,s2,bob,A,\n"
    )
    export, data = fill_gradebook(report, book, "Q (1)", tmp_path / "out.csv", names={"ab12": "alice.b"})
    rows = list(csv.reader(data.decode().splitlines()))
    assert (rows[1][-1], rows[2][-1]) == ("1", "1")
    assert export.filled == 2 and export.not_in_gradebook == ()


def test_grade_takes_the_table_only_with_a_gradebook(sample_quiz, tmp_path, capsys):
    from course.cli import main

    table = tmp_path / "names.csv"
    table.write_text("hub_user,login\nab12,alice.b\n")
    (tmp_path / "subs").mkdir()
    args = ["quiz", "grade", str(sample_quiz), str(tmp_path / "subs"), "-o", str(tmp_path / "out")]
    assert main([*args, "--names", str(table)]) == 2
    assert "--names maps hub users to gradebook logins: give it with --canvas" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
