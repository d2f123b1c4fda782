"""Content checks on a quiz key (course/quiz/checks.py): where the right option sits, how long it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.lessons import LESSONS
from course.quiz.checks import key_length_problems, key_position_problems
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


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_the_shipped_quizzes_do_not_give_the_key_away_by_position(lesson_id, monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    assert key_position_problems(load_quiz(REPO / "content" / "quizzes" / f"{lesson_id}.toml")) == []


# ---- length: the key must be neither mostly the longest option (issue 22, item 9) nor mostly the shortest (issue 35) ----


def sized(qid: str, answer: str, lengths: dict[str, int]) -> SingleChoice:
    options = tuple(Option(i, "x" * n) for i, n in lengths.items())
    return SingleChoice(qid, "p", 1.0, "r", "e", options, answer)


def test_a_quiz_whose_key_is_mostly_the_longest_option_is_flagged():
    long_key = {"a": 10, "b": 40, "c": 12}
    flagged = quiz(sized("s1", "b", long_key), sized("s2", "b", long_key), sized("s3", "c", long_key))
    (problem,) = key_length_problems(flagged)
    assert "the longest in 2 of 3 single-choice questions (s1, s2)" in problem
    # One in three is allowed: by chance alone the key is the longest about one time in four.
    assert (
        key_length_problems(
            quiz(sized("s1", "b", long_key), *(sized(f"t{i}", "c", long_key) for i in range(2)))
        )
        == []
    )
    # A tie with the longest counts as the longest; code spans count without their backticks.
    tie = SingleChoice("s", "p", 1.0, "r", "e", (Option("a", "`abcd`"), Option("b", "wxyz")), "a")
    assert key_length_problems(quiz(tie, tie, sized("s3", "c", long_key))) != []


def test_a_quiz_whose_key_is_mostly_the_shortest_option_is_flagged():
    # The mirror tell (issue 35, item 5): the plain short key among long, qualified decoys.
    short_key = {"a": 10, "b": 40, "c": 42}
    flagged = quiz(sized("s1", "a", short_key), sized("s2", "a", short_key), sized("s3", "b", short_key))
    (problem,) = key_length_problems(flagged)
    assert "the shortest in 2 of 3 single-choice questions (s1, s2)" in problem
    assert "longest" not in problem
    # One in three is allowed at that end too.
    assert (
        key_length_problems(
            quiz(sized("s1", "a", short_key), *(sized(f"t{i}", "b", short_key) for i in range(2)))
        )
        == []
    )
    # A tie with the shortest counts as the shortest (Day 86's "N = 1030" against "M is odd" once).
    tie = SingleChoice(
        "s", "p", 1.0, "r", "e", (Option("a", "`ab`"), Option("b", "xy"), Option("c", "x" * 9)), "a"
    )
    assert key_length_problems(quiz(tie, tie, sized("s3", "b", short_key))) != []


def test_both_ends_are_held_at_once():
    # Two of six at each end passes; a third at either end fails, and only that end is named.
    lengths = {"a": 10, "b": 20, "c": 30}
    keys = ["a", "a", "c", "c", "b", "b"]
    assert key_length_problems(quiz(*(sized(f"q{i}", k, lengths) for i, k in enumerate(keys)))) == []
    for extra, end in (("a", "shortest"), ("c", "longest")):
        got = key_length_problems(
            quiz(*(sized(f"q{i}", k, lengths) for i, k in enumerate([*keys, extra, extra])))
        )
        assert len(got) == 1 and f"the {end} in 4 of 8" in got[0], got


def test_multiple_select_whose_right_options_are_all_the_longest_is_flagged():
    def m(qid: str, right: int, wrong: int) -> MultipleSelect:
        options = (Option("r1", "r" * right), Option("r2", "r" * (right + 5)), Option("w1", "w" * wrong))
        return MultipleSelect(qid, "p", 1.0, "r", "e", options, "off", frozenset({"r1", "r2"}))

    (problem,) = key_length_problems(quiz(m("m1", 30, 10), m("m2", 30, 20), m("m3", 30, 40)))
    assert "2 of 3 multiple-select questions (m1, m2)" in problem
    assert key_length_problems(quiz(m("m1", 30, 35), m("m2", 30, 40), m("m3", 30, 10))) == []
    # One question alone is not a habit (a page has one or two of them).
    assert key_length_problems(quiz(m("m1", 30, 10), m("m2", 30, 40))) == []


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_the_shipped_quizzes_do_not_give_the_key_away_by_length(lesson_id, monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    assert key_length_problems(load_quiz(REPO / "content" / "quizzes" / f"{lesson_id}.toml")) == []


# ---- listings out of sight while answering (issue 22) ------------------------------


def test_day78s_listings_come_after_the_questions_their_comments_answer(monkeypatch):
    # A which-line question shows its region, comments included, above itself; the descriptor's
    # comment says "bits 13..0", "128 bytes here", "1024 bytes here" (the seed's comment, kept).
    # So the which-line questions come last (failed before: the listing sat above question 6,
    # right under the descriptor questions, and the pipeline's above question 14).
    from course.quiz.model import WhichLine

    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    quiz = load_quiz(REPO / "content" / "quizzes" / "day78.toml")
    descriptor = next(q for q in quiz.questions if isinstance(q, WhichLine) and q.snippet == "descriptor")
    shown = "\n".join(line for _, line in descriptor.listing)
    assert all(said in shown for said in ("bits 13..0", "128 bytes here", "1024 bytes here"))
    kinds = [isinstance(q, WhichLine) for q in quiz.questions]
    assert kinds == sorted(kinds), [q.id for q in quiz.questions]  # every which-line after every other


def test_markdown_emphasis_in_quiz_text_is_flagged_and_code_is_not():
    from course.quiz.checks import markup_problems

    starred = SingleChoice("s", "Each warpgroup may *issue* its wgmmas", 1.0, "r", "e", OPTIONS, "a")
    (problem,) = markup_problems(quiz(starred))
    assert "'*issue*'" in problem and "prompt" in problem
    bold = SingleChoice("b", "p", 1.0, "r", "a __strong__ word", OPTIONS, "a")
    assert len(markup_problems(quiz(bold))) == 1
    fine = SingleChoice(
        "f", "`*ptr` and `a * b`, 2 * N, `__syncthreads()`, kBM*kBN*2, x_y_z", 1.0, "r", "e", OPTIONS, "a"
    )
    assert markup_problems(quiz(fine)) == []


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_the_shipped_quizzes_show_no_markdown_marks(lesson_id, monkeypatch):
    from course.quiz.checks import markup_problems

    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    assert markup_problems(load_quiz(REPO / "content" / "quizzes" / f"{lesson_id}.toml")) == []
