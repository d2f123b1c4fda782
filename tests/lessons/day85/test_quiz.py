"""Day 85's quiz: every numeric key follows from the kernels' constants or the datasheet constant."""

from __future__ import annotations

import pytest

from course.bench.climb import DATASHEET_PEAK_TFLOPS, recorded_climb
from course.bench.result import load
from course.lessons import LESSONS, get_lesson
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Numeric, SingleChoice, WhichLine

LESSON = get_lesson("day85")
QUIZ = load_quiz(LESSON.quiz_path)
H200_SMS = 132  # the recordings' sm_count, checked below
FLOPS_PER_CLOCK_PER_SM = 4096  # dense FP16 tensor-core FLOPs per clock per Hopper SM (H100 whitepaper)


def key(qid: str):
    return QUIZ.question(qid).answer


def test_tiles_at_1024_from_step_3s_constants():
    c = get_lesson("day81").constants({"GEMM_DIM": 1024})
    tiles = (c["kDim"] // c["kBM"]) * (c["kDim"] // c["kBN"])
    assert key("tiles-1024") == tiles < H200_SMS
    # the explanation's comparison: step 2's 128 x 128 tiles at the same size
    s2 = get_lesson("day80").constants({"GEMM_DIM": 1024})
    step2 = (s2["kDim"] // s2["kBM"]) * (s2["kDim"] // s2["kBN"])
    assert f"{step2} CTAs" in QUIZ.question("tiles-1024").explanation
    # and the finished kernel has as few tiles there: 128 x 256 to the end of the ladder
    c6 = get_lesson("day85").constants({"GEMM_DIM": 1024})
    assert (c6["kBM"], c6["kBN"]) == (c["kBM"], c["kBN"])


def test_peak_clock_from_the_datasheet_constant():
    q = QUIZ.question("peak-clock")
    mhz = DATASHEET_PEAK_TFLOPS * 1e12 / (H200_SMS * FLOPS_PER_CLOCK_PER_SM) / 1e6
    assert abs(q.answer - mhz) <= q.rtol * abs(q.answer)
    assert f"{DATASHEET_PEAK_TFLOPS}" in q.prompt


def test_the_recordings_are_from_a_132_sm_gpu():
    for lesson_id in ("day79", "day84"):
        result = load(lesson_id)
        assert result is not None and result.sm_count == H200_SMS


def test_every_numeric_question_is_tested_here():
    numeric = {q.id for q in QUIZ.questions if isinstance(q, Numeric)}
    assert numeric == {"tiles-1024", "peak-clock"}


def test_quiz_shape():
    assert QUIZ.id == QUIZ.lesson == "day85" and not QUIZ.released
    assert len(QUIZ.questions) >= 8
    assert all(q.reference.strip() and q.explanation and q.explanation.strip() for q in QUIZ.questions)
    assert {Numeric, SingleChoice, MultipleSelect, WhichLine} <= {type(q) for q in QUIZ.questions}


def test_the_right_option_is_not_always_first():
    firsts = [q.answer == q.options[0].id for q in QUIZ.questions if isinstance(q, SingleChoice)]
    assert firsts and not all(firsts)


def test_no_question_quotes_a_recorded_rate():
    # the recordings can be redone; a key that quotes one would go stale
    rates = {
        f"{m.rate:,.0f} TFLOP/s"
        for row in recorded_climb(LESSON, LESSONS.values())
        for at in row.result.rows
        for m in (at.kernel, *at.peers)
    }
    assert rates
    for q in QUIZ.questions:
        text = " ".join([q.prompt, q.explanation or "", *(o.text for o in getattr(q, "options", ()))])
        assert not [r for r in rates if r in text], q.id


@pytest.mark.parametrize("name", LESSON.snippets)
def test_every_snippet_region_is_covered_by_a_question(name):
    covering = [
        q.id
        for q in QUIZ.questions
        if (isinstance(q, WhichLine) and q.snippet == name) or f"snippet {name}" in q.reference
    ]
    assert covering, f"no question covers snippet {name!r}"
