"""Day 90's quiz: every numeric key follows from the kernel's constants or the overlap model, and
the options give nothing away by place or length."""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.lessons.day89 import turns
from course.lessons.day90 import overlap
from course.quiz.checks import key_length_problems, key_position_problems
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Numeric, Quiz, SingleChoice

LESSON = get_lesson("day90")
N = 8  # the prompts' CTA


@pytest.fixture
def quiz() -> Quiz:
    return load_quiz(LESSON.quiz_path)


def key(quiz: Quiz, qid: str):  # type: ignore[no-untyped-def]
    return quiz.question(qid).answer


def test_quiz_shape(quiz):
    assert quiz.id == quiz.lesson == "day90" and not quiz.released
    assert len(quiz.questions) >= 10
    assert {SingleChoice, MultipleSelect, Numeric} <= {type(q) for q in quiz.questions}


def test_the_options_give_the_key_away_neither_by_place_nor_by_length(quiz):
    assert key_position_problems(quiz) == []
    assert key_length_problems(quiz) == []


def test_the_overlap_counts_are_the_models(quiz):
    played = overlap.play(overlap.program(N))
    assert key(quiz, "overlapped-softmaxes") == len(played.overlapped) == N - 1
    waits = sum(op.kind == "wait" for op in overlap.program(N))
    assert key(quiz, "wait-count") == waits == sum(op.kind == "wait" for op in overlap.program(N, "day89"))


def test_the_register_keys_are_the_kernels(quiz):
    for qid, d in (("live-d128", 128), ("live-d256", 256)):
        c = LESSON.constants({"ATTN_HEAD_DIM": d})
        regs = overlap.Registers.of(d)
        want = c["kSAccRegs"] + c["kSAccRegs"] // 2 + c["kOAccRegs"]
        assert key(quiz, qid) == want == overlap.play(overlap.program(N), regs).most_registers


def test_the_turn_count_is_day_89s(quiz):
    assert key(quiz, "turn-waits") == sum(s.op == "sync" for s in turns.program(0, N)) == N + 1
    source = LESSON.kernel_path.read_text("utf-8")
    assert source.count("turnWait(cons);") == 3  # first S, each step, the last P V


def test_the_hazards_the_quiz_names_are_the_models(quiz):
    assert key(quiz, "pv-first") == "serialize"  # test_compile: the pv-first build has C7514
    assert all("reads S(" in h for h in overlap.play(overlap.program(N, "pv-first")).hazards)
    assert key(quiz, "rescale-early") == "serial"
    assert all("rescale(" in h for h in overlap.play(overlap.program(N, "rescale-early")).hazards)
    assert set(quiz.question("touch-under-pv").answers or ()) == {"s", "stats"}
    assert overlap.play(overlap.program(N, "rescale-early")).hazards


def test_every_numeric_question_is_tested_here(quiz):
    numeric = {q.id for q in quiz.questions if isinstance(q, Numeric)}
    assert numeric == {"overlapped-softmaxes", "wait-count", "live-d128", "live-d256", "turn-waits"}
