"""Day 87's quiz: every numeric key follows from gemm8_fp8.cu's constants, the e4m3 format and the models."""

from __future__ import annotations

import numpy as np

from course.hopper import fp8
from course.lessons import get_lesson
from course.lessons.day87 import models
from course.quiz.loader import load_quiz
from course.quiz.model import Numeric

LESSON = get_lesson("day87")
QUIZ = load_quiz(LESSON.quiz_path)
C = LESSON.constants()


def key(qid: str):  # type: ignore[no-untyped-def]
    return QUIZ.question(qid).answer


def test_the_formats_extremes():
    assert key("e4m3-max") == fp8.E4M3_MAX == C["kE4m3Max"] == np.nanmax(fp8.e4m3_table())
    table = fp8.e4m3_table()
    assert key("e4m3-min") == fp8.E4M3_MIN_SUBNORMAL == table[(table > 0) & np.isfinite(table)].min()


def test_the_rounding_of_03():
    assert key("round-03") == float(fp8.round_to_e4m3(np.float32(0.3)))
    assert key("round-03") == float(fp8.decode(fp8.e4m3_bits(np.array([0.3], dtype=np.float32)))[0])


def test_the_scale_for_an_amax_of_35():
    assert key("scale-amax") == fp8.scale_for(3.5)
    q = fp8.quantize(np.array([[3.5, -1.0, 0.25]], dtype=np.float32))
    assert q.scale == key("scale-amax") and fp8.decode(q.bits)[0, 0] == 448.0


def test_bytes_per_instruction_and_elements_per_k_tile():
    assert key("k-bytes") == C["kWgmmaK"] * 1  # one byte an element
    assert key("k-tile") == C["kBK"] == 128
    assert C["kBK"] // C["kWgmmaK"] == 4  # four wgmmas per stage, as FP16's 64 / 16


def test_chains_per_tile_at_k_16384():
    k_tiles = -(-16384 // models.K_TILE)
    chains = models.promotions(k_tiles, 4)
    assert key("chains") == len(chains) and sum(chains) == k_tiles
    assert len(models.promotions(k_tiles, 0)) == 1


def test_every_numeric_question_is_tested_here():
    numeric = {q.id for q in QUIZ.questions if isinstance(q, Numeric)}
    assert numeric == {"e4m3-max", "e4m3-min", "round-03", "scale-amax", "k-bytes", "k-tile", "chains"}


def test_quiz_shape():
    assert QUIZ.id == QUIZ.lesson == "day87" and not QUIZ.released
    assert len(QUIZ.questions) >= 10
