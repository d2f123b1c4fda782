"""Day 81's quiz: every numeric key follows from gemm3_two_consumers.cu's constants.

Also the page's arithmetic claims: the register swap is zero-sum against the
launch cap, each consumer thread holds as many accumulators as Day 80's, and
the bigger tile brings more math per byte.
"""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.quiz import load_quiz
from course.quiz.model import WhichLine

LESSON = get_lesson("day81")
SOURCE = LESSON.kernel_path.read_text(encoding="utf-8")
C = LESSON.constants()
PREVIOUS = get_lesson("day80").constants()
HALF = 2
REGISTER_FILE = 65536  # 32-bit registers per SM on compute capability 9.0, the static_assert's 65536


@pytest.fixture(scope="module")
def quiz():
    return load_quiz(LESSON.quiz_path)


def launch_cap(threads: int) -> int:
    """Registers per thread under __launch_bounds__(threads, 1): the file shared evenly, in steps of 8."""
    return REGISTER_FILE // threads // 8 * 8


def test_numeric_keys_follow_from_the_kernel_constants(quiz):
    assert "constexpr int kStageBytes = kTileBytesA + kTileBytesB;" in SOURCE
    assert quiz.question("stage-bytes").answer == (C["kBM"] + C["kBN"]) * C["kBK"] * HALF
    mma_m = C["kBM"] // (C["kWgmmaM"] * C["kConsumers"])
    assert quiz.question("acc-per-thread").answer == mma_m * C["kAccRegs"]
    assert quiz.question("acc-per-thread").answer == C["kWgmmaM"] * C["kWgmmaN"] * mma_m / 128
    assert "(cons * kMmaM + mi) * kWgmmaM" in SOURCE
    assert quiz.question("consumer-row").answer == (1 * mma_m + 0) * C["kWgmmaM"]
    assert "mbarInit(&s.empty[i], kConsumers);" in SOURCE
    assert quiz.question("empty-count").answer == C["kConsumers"]
    assert "__launch_bounds__(kThreadsPerBlock, 1)" in SOURCE
    assert quiz.question("launch-cap").answer == launch_cap(C["kThreadsPerBlock"])
    pool = 128 * (C["kProducerRegs"] + C["kConsumers"] * C["kConsumerRegs"])
    assert quiz.question("pool").answer == pool
    assert quiz.question("b-box").answer == C["kBoxBRows"] == C["kBN"]


def test_the_register_swap_is_zero_sum_against_the_launch_cap():
    cap = launch_cap(C["kThreadsPerBlock"])
    given_back = 128 * (cap - C["kProducerRegs"])
    taken = C["kConsumers"] * 128 * (C["kConsumerRegs"] - cap)
    assert given_back == taken
    assert 128 * (C["kProducerRegs"] + C["kConsumers"] * C["kConsumerRegs"]) == C["kThreadsPerBlock"] * cap
    assert C["kProducerRegs"] <= cap <= C["kConsumerRegs"]  # .dec from at least, .inc from at most the cap


def test_each_consumer_thread_holds_as_many_accumulators_as_day_80s():
    mine = C["kBM"] // (C["kWgmmaM"] * C["kConsumers"]) * C["kAccRegs"]
    before = PREVIOUS["kBM"] // (PREVIOUS["kWgmmaM"] * PREVIOUS["kConsumers"]) * PREVIOUS["kAccRegs"]
    assert mine == before


def test_the_bigger_tile_brings_more_math_per_byte():
    def flops_per_byte(c):
        return 2 * c["kBM"] * c["kBN"] * c["kBK"] / ((c["kBM"] + c["kBN"]) * c["kBK"] * HALF)

    assert flops_per_byte(C) / flops_per_byte(PREVIOUS) == pytest.approx(4 / 3)


def test_the_quiz_asks_about_every_region_the_lesson_shows(quiz):
    for name in LESSON.snippets:
        assert any(
            (isinstance(q, WhichLine) and q.snippet == name) or f"snippet {name}" in q.reference
            for q in quiz.questions
        ), name


def test_the_right_option_is_not_always_first(quiz):
    firsts = [q.options[0].id == q.answer for q in quiz.questions if q.type == "single"]
    assert firsts and not any(firsts)
    assert len(quiz.questions) >= 10
    assert all(q.reference.strip() and q.explanation.strip() for q in quiz.questions)
