"""Day 82's quiz: every numeric key follows from gemm4_persistent.cu's constants.

If the kernel's tile, group height, stage count or layout changes, the keys
must change with it; these tests recompute each from ``Lesson.constants``
(and the page's tile-order model, itself tied to the kernel) and fail on
any disagreement.
"""

from __future__ import annotations

import math

import pytest

from course.lessons import get_lesson
from course.lessons.day82 import figures as f
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Numeric, SingleChoice, WhichLine

LESSON = get_lesson("day82")
QUIZ = load_quiz(LESSON.quiz_path)
C = LESSON.constants()
HALF = 2
BARRIER = 8  # bytes of one mbarrier (uint64_t)


def key(qid: str):
    q = QUIZ.question(qid)
    return q.answer


def tiles(n: int) -> int:
    c = LESSON.constants({"GEMM_DIM": n})
    return (n // c["kBM"]) * (n // c["kBN"])


def test_num_tiles_4096():
    assert key("num-tiles-4096") == tiles(4096) == f.tile_grid(4096).num_tiles


def test_busiest_cta():
    assert key("busiest-cta") == math.ceil(tiles(4096) / f.H200_SMS) == f.walk(4096, 1).turns


def test_third_turn():
    assert key("third-turn") == 5 + 2 * f.H200_SMS
    assert f.walk(4096).cta_path(5)[2] == f.tile_coords(int(key("third-turn")), f.tile_grid(4096))


def test_first_wave_rows():
    fp = f.footprint(f.walk(8192, 1))
    assert key("first-wave-rows") == fp.tile_rows == C["kGroupM"]
    explanation = QUIZ.question("first-wave-rows").explanation
    assert f"{fp.a_rows} rows of A" in explanation and f"{fp.b_rows} rows of B" in explanation


def test_row_order_b():
    rows = f.footprint(f.walk(8192, 0))
    grouped = f.footprint(f.walk(8192, 1))
    assert key("row-order-b") == f"b{rows.b_rows}" and rows.b_rows == 8192
    explanation = QUIZ.question("row-order-b").explanation
    assert f"{rows.a_rows} rows of A" in explanation
    assert f"{grouped.a_rows} rows of A and {grouped.b_rows} of B" in explanation


def test_smem_bytes():
    stages, bm, bn, bk, align = C["kStages"], C["kBM"], C["kBN"], C["kBK"], C["kSmemAlign"]
    struct_bytes = stages * bm * bk * HALF + stages * bn * bk * HALF + 2 * stages * BARRIER
    rounded = -(-struct_bytes // align) * align  # alignas(1024)
    assert key("smem-bytes") == rounded + align == C["kSmemBytes"]


def test_missing_release_counts_the_consumers():
    assert C["kConsumers"] == 2 and "kConsumers = 2 arrivals" in QUIZ.question("missing-release").explanation


# --- the quiz as a whole ------------------------------------------------------------------------
def test_every_numeric_question_is_tested_here():
    numeric = {q.id for q in QUIZ.questions if isinstance(q, Numeric)}
    tested = {"num-tiles-4096", "busiest-cta", "third-turn", "first-wave-rows", "smem-bytes"}
    assert numeric == tested


def test_quiz_shape():
    assert QUIZ.id == QUIZ.lesson == "day82" and not QUIZ.released
    assert len(QUIZ.questions) >= 10
    assert all(q.reference.strip() and q.explanation and q.explanation.strip() for q in QUIZ.questions)
    kinds = {type(q) for q in QUIZ.questions}
    assert {Numeric, SingleChoice, MultipleSelect, WhichLine} <= kinds


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
