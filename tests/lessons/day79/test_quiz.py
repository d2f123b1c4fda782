"""Day 79's quiz: every numeric key follows from gemm1_tma.cu's constants, every region is asked about."""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.quiz import load_quiz
from course.quiz.model import WhichLine
from course.snippets import load_snippets

LESSON = get_lesson("day79")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")
C = LESSON.constants()
HALF = 2


@pytest.fixture(scope="module")
def quiz():
    return load_quiz(LESSON.quiz_path)


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


def test_numeric_keys_follow_from_the_kernel_constants(quiz):
    # kStageBytes = kTileBytesA + kTileBytesB, each rows x kBK halves
    assert "constexpr int kStageBytes = kTileBytesA + kTileBytesB;" in SOURCE
    stage = (C["kBM"] + C["kBN"]) * C["kBK"] * HALF
    assert quiz.question("expect-bytes").answer == stage
    # mbarWait(&s.full[0], kt & 1) at kt = 5
    assert "mbarWait(&s.full[0], kt & 1);" in SOURCE
    assert quiz.question("parity-kt5").answer == 5 & 1
    # the SBO literal, stored >> 4
    assert "(uint64_t(1024 >> 4) << 32)" in SOURCE
    assert quiz.question("desc-sbo").answer == 1024 >> 4
    # one ks step: kWgmmaK halves further, in 16-byte units
    assert "swizzledDesc(&s.a[0][mi * kWgmmaM * kBK + ks * kWgmmaK])" in SOURCE
    assert quiz.question("k-step").answer == C["kWgmmaK"] * HALF >> 4
    # sizeof(SharedStorage): the tiles and one 8-byte mbarrier per stage, rounded to alignas(1024)
    members = C["kStages"] * stage + C["kStages"] * 8
    assert quiz.question("sizeof-storage").answer == _round_up(members, C["kSmemAlign"])
    assert C["kSmemBytes"] == quiz.question("sizeof-storage").answer + C["kSmemAlign"]
    # wgmma per K-tile: k16 steps x m64 slices
    assert quiz.question("wgmma-per-tile").answer == (C["kBK"] // C["kWgmmaK"]) * (C["kBM"] // C["kWgmmaM"])
    # accumulators per thread: the tile over one warpgroup
    assert quiz.question("acc-regs").answer == C["kBM"] * C["kBN"] / C["kThreadsPerBlock"]
    assert quiz.question("acc-regs").answer == (C["kBM"] // C["kWgmmaM"]) * C["kAccRegs"]


def test_the_quiz_asks_about_every_region_the_lesson_shows(quiz):
    for name in LESSON.snippets:
        assert any(
            (isinstance(q, WhichLine) and q.snippet == name) or f"snippet {name}" in q.reference
            for q in quiz.questions
        ), name


def test_line_keys_point_at_their_anchor_text(quiz):
    snippets = load_snippets(LESSON.kernel_path)
    for q in quiz.questions:
        if isinstance(q, WhichLine):
            listed = dict(snippets[q.snippet].numbered())
            assert q.lines and all(any(a in listed[n] for a in q.anchors) for n in q.lines)


def test_the_right_option_is_not_always_first(quiz):
    firsts = [q.options[0].id == q.answer for q in quiz.questions if q.type == "single"]
    assert firsts and not all(firsts)
    assert len(quiz.questions) >= 10
    assert all(q.reference.strip() and q.explanation.strip() for q in quiz.questions)
