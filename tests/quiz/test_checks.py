"""Content checks on a quiz key (course/quiz/checks.py): where the right option sits."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.quiz.checks import key_position_problems
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Option, Quiz, SingleChoice

REPO = Path(__file__).resolve().parents[2]
OPTIONS = tuple(Option(i, f"Option {i}") for i in "abcd")


def single(qid: str, answer: str) -> SingleChoice:
    return SingleChoice(qid, "p", 1.0, "r", "e", OPTIONS, answer)


def multiple(qid: str, answers: str) -> MultipleSelect:
    return MultipleSelect(qid, "p", 1.0, "r", "e", OPTIONS, "off", frozenset(answers))


def quiz(*questions) -> Quiz:
    return Quiz("q", "t", "day76", tuple(questions), released=False)


def test_a_quiz_whose_right_option_is_always_first_is_flagged():
    (problem,) = key_position_problems(quiz(single("s1", "a"), single("s2", "a"), single("s3", "a")))
    assert "option 1" in problem and "3 of 3 single-choice" in problem and "s1, s2, s3" in problem


def test_a_quiz_whose_key_mostly_sits_at_one_place_is_flagged():
    flagged = quiz(*(single(f"s{i}", "c") for i in range(5)), single("s5", "a"), single("s6", "b"))
    (problem,) = key_position_problems(flagged)
    assert "option 3 in 5 of 7" in problem


def test_multiple_select_answers_listed_first_everywhere_are_flagged():
    (problem,) = key_position_problems(quiz(multiple("m1", "ab"), multiple("m2", "a")))
    assert "multiple-select" in problem and "m1, m2" in problem
    assert key_position_problems(quiz(multiple("m1", "ab"), multiple("m2", "bd"))) == []


def test_a_spread_key_is_not_flagged():
    assert key_position_problems(quiz(single("s1", "a"), single("s2", "c"), single("s3", "d"))) == []
    assert key_position_problems(quiz(single("s1", "a"), single("s2", "a"))) == []  # too few to tell


@pytest.mark.parametrize("lesson_id", ["day76", "day78"])
def test_the_shipped_quizzes_do_not_give_the_key_away_by_position(lesson_id, monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    assert key_position_problems(load_quiz(REPO / "content" / "quizzes" / f"{lesson_id}.toml")) == []
