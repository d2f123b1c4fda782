"""Day 83's quiz: every numeric key follows from gemm5_cluster.cu's constants."""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.lessons.day83 import traffic as t
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Numeric, SingleChoice, WhichLine

LESSON = get_lesson("day83")
QUIZ = load_quiz(LESSON.quiz_path)
C = LESSON.constants()
HALF = 2


def key(qid: str):
    return QUIZ.question(qid).answer


def test_b_box_bytes():
    assert key("b-box-bytes") == C["kBK"] * C["kBoxBRows"] * HALF == t.pair_traffic().b_box_step5


def test_expect_bytes():
    assert key("expect-bytes") == (C["kBM"] + C["kBN"]) * C["kBK"] * HALF == t.pair_traffic().stage_bytes


def test_pair_ratio():
    p = t.pair_traffic()
    assert key("pair-ratio") == "two-thirds" and p.step5_total * 3 == p.step4_total * 2


def test_cta_mask():
    cluster = C["kClusterM"] * C["kClusterN"]
    assert key("cta-mask") == (1 << cluster) - 1


def test_empty_arrivals():
    assert key("empty-arrivals") == C["kConsumers"] * C["kClusterM"] * C["kClusterN"]
    assert "mbarInit(&s.empty[i], kConsumers * kClusterSize);" in LESSON.kernel_path.read_text(
        encoding="utf-8"
    )


def test_cluster_tiles():
    c = LESSON.constants({"GEMM_DIM": 4096})
    assert key("cluster-tiles") == (4096 // c["kBM"] // c["kClusterM"]) * (4096 // c["kBN"])


def test_release_cluster_story_is_the_kernels():
    source = LESSON.kernel_path.read_text(encoding="utf-8")
    assert "MEMBAR.ALL.GPU" in source and "mbarrier.arrive.shared::cluster.b64 _, [remote];" in source
    assert key("release-cluster") == "membar"


def test_every_numeric_question_is_tested_here():
    numeric = {q.id for q in QUIZ.questions if isinstance(q, Numeric)}
    assert numeric == {"b-box-bytes", "expect-bytes", "cta-mask", "empty-arrivals", "cluster-tiles"}


def test_quiz_shape():
    assert QUIZ.id == QUIZ.lesson == "day83" and not QUIZ.released
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
