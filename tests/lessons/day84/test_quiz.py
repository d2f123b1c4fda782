"""Day 84's quiz: every numeric key follows from gemm6_epilogue.cu's constants."""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Numeric, SingleChoice, WhichLine

LESSON = get_lesson("day84")
QUIZ = load_quiz(LESSON.quiz_path)
C = LESSON.constants()
HALF = 2
BARRIER = 8  # bytes of one mbarrier (uint64_t)
CEILING = 227 * 1024  # static_assert(kSmemBytes <= 227 * 1024, ...)


def key(qid: str):
    return QUIZ.question(qid).answer


def smem_bytes(staging_boxes: int, stages: int) -> int:
    """kSmemBytes for the SharedStorage struct with the given staging boxes and stages."""
    struct = (
        stages * (C["kBM"] + C["kBN"]) * C["kBK"] * HALF
        + C["kConsumers"] * staging_boxes * C["kBoxDRows"] * C["kBoxDCols"] * HALF
        + 2 * stages * BARRIER
    )
    align = C["kSmemAlign"]
    return -(-struct // align) * align + align


def test_smem_bytes():
    assert key("smem-bytes") == smem_bytes(C["kStagingBoxes"], C["kStages"]) == C["kSmemBytes"] <= CEILING
    assert f"{CEILING}" in QUIZ.question("smem-bytes").explanation


def test_whole_slice():
    whole = C["kBN"] // C["kBoxDCols"]
    assert key("whole-slice") == smem_bytes(whole, C["kStages"]) > CEILING
    # the trade the header mentions fits: the whole slice with 3 stages
    assert smem_bytes(whole, 3) <= CEILING


def test_passes():
    assert key("passes") == C["kBN"] // (C["kBoxDCols"] * C["kStagingBoxes"])


def test_boxes_per_cta():
    assert key("boxes-per-cta") == C["kConsumers"] * C["kBN"] // C["kBoxDCols"]


def test_every_numeric_question_is_tested_here():
    numeric = {q.id for q in QUIZ.questions if isinstance(q, Numeric)}
    assert numeric == {"smem-bytes", "whole-slice", "passes", "boxes-per-cta"}


def test_quiz_shape():
    assert QUIZ.id == QUIZ.lesson == "day84" and not QUIZ.released
    assert len(QUIZ.questions) >= 10
    assert all(q.reference.strip() and q.explanation and q.explanation.strip() for q in QUIZ.questions)
    assert {Numeric, SingleChoice, MultipleSelect, WhichLine} <= {type(q) for q in QUIZ.questions}


def test_the_right_option_is_not_always_first():
    firsts = [q.answer == q.options[0].id for q in QUIZ.questions if isinstance(q, SingleChoice)]
    assert firsts and not all(firsts)


@pytest.mark.parametrize("name", LESSON.snippets)
def test_every_snippet_region_is_covered_by_a_question(name):
    covering = [
        q.id
        for q in QUIZ.questions
        if (isinstance(q, WhichLine) and q.snippet == name) or f"snippet {name}" in q.reference
    ]
    assert covering, f"no question covers snippet {name!r}"
