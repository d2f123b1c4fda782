"""Day 89's quiz: every numeric key follows from the kernel's constants or the turn model, and the
options give nothing away by place or length."""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.lessons.day89 import turns
from course.quiz.checks import key_length_problems, key_position_problems
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Numeric, Quiz, SingleChoice

LESSON = get_lesson("day89")


@pytest.fixture
def quiz() -> Quiz:
    return load_quiz(LESSON.quiz_path)


def key(quiz: Quiz, qid: str):  # type: ignore[no-untyped-def]
    return quiz.question(qid).answer


def test_quiz_shape(quiz):
    assert quiz.id == quiz.lesson == "day89" and not quiz.released
    assert len(quiz.questions) >= 10
    assert {SingleChoice, MultipleSelect, Numeric} <= {type(q) for q in quiz.questions}


def test_the_options_give_the_key_away_neither_by_place_nor_by_length(quiz):
    assert key_position_problems(quiz) == []
    assert key_length_problems(quiz) == []


def test_the_barrier_count_is_the_kernels(quiz):
    assert key(quiz, "sync-threads") == LESSON.constants()["kTurnThreads"] == turns.THREADS == 2 * 128


def test_the_wait_and_pass_counts_are_the_models(quiz):
    n = 8  # the prompts' CTA
    waits0 = sum(s.op == "sync" for s in turns.program(0, n))
    passes1 = sum(s.op == "arrive" for s in turns.program(1, n))
    assert key(quiz, "waits-consumer0") == waits0 == n + 1
    assert key(quiz, "passes-consumer1") == passes1 == n
    assert turns.run(n).finished  # the program the prompts count is one that finishes


def test_the_hang_the_quiz_names_is_the_models(quiz):
    o = turns.run(8, 0, "no-last-pass")
    assert key(quiz, "no-last-pass") == "hang" and not o.finished
    assert {c for c, _, _ in o.stuck} == {1}


def test_the_register_keys_are_the_kernels(quiz):
    c = LESSON.constants()
    assert key(quiz, "launch-registers") == c["kLaunchRegs"] == (65536 // c["kThreadsPerBlock"]) // 8 * 8
    assert key(quiz, "total-registers") == 128 * (c["kProducerRegs"] + 2 * c["kConsumerRegs"])
    assert key(quiz, "total-registers") == c["kThreadsPerBlock"] * c["kLaunchRegs"]


def test_the_sixteen_barriers_are_ptxas_s(quiz):
    from course.kernel.ptxas import report

    assert key(quiz, "sixteen-barriers") == "register" and report(LESSON).barriers == 16


def test_every_numeric_question_is_tested_here(quiz):
    numeric = {q.id for q in quiz.questions if isinstance(q, Numeric)}
    assert numeric == {
        "sync-threads",
        "waits-consumer0",
        "passes-consumer1",
        "launch-registers",
        "total-registers",
    }
