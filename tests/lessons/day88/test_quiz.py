"""Day 88's quiz: every numeric key follows from the lesson's models; the options give nothing away.

tests/quiz/test_checks.py holds the shipped quizzes to the position and length rules, but it
parametrizes over the registered lessons (``course.lessons.LESSONS``), and Day 88 is registered
only once its package's ``__init__.py`` (the kernel's branch) lands. Until then the loader's one
question about the lesson, whether it exists, is answered by a stand-in here; everything else
(the schema, the keys, the rules) is the real loader's and the real checks'.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from course.hopper import wgmma as w
from course.lessons import LESSONS
from course.lessons.day88 import fragments
from course.lessons.day88 import softmax as sm
from course.quiz import loader
from course.quiz.checks import key_length_problems, key_position_problems
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, Numeric, Quiz, SingleChoice

REPO = Path(__file__).resolve().parents[3]
PATH = REPO / "content" / "quizzes" / "day88.toml"


@pytest.fixture
def quiz(monkeypatch) -> Quiz:
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    if "day88" not in LESSONS:
        real = loader.get_lesson
        monkeypatch.setattr(
            loader, "get_lesson", lambda lesson_id: None if lesson_id == "day88" else real(lesson_id)
        )
    return load_quiz(PATH)


def key(quiz: Quiz, qid: str):  # type: ignore[no-untyped-def]
    return quiz.question(qid).answer


def test_the_stand_in_answers_for_day88_alone(quiz, tmp_path):
    # Another unknown lesson is still refused by the loader, with the stand-in in place.
    other = tmp_path / "day99.toml"
    other.write_text(PATH.read_text("utf-8").replace('lesson = "day88"', 'lesson = "day99"', 1), "utf-8")
    with pytest.raises(loader.QuizError, match="no lesson named 'day99'"):
        load_quiz(other)


def test_quiz_shape(quiz):
    assert quiz.id == quiz.lesson == "day88" and not quiz.released
    assert len(quiz.questions) >= 10
    kinds = {type(q) for q in quiz.questions}
    assert {SingleChoice, MultipleSelect, Numeric} <= kinds


def test_the_options_give_the_key_away_neither_by_place_nor_by_length(quiz):
    assert key_position_problems(quiz) == []
    assert key_length_problems(quiz) == []


def test_causal_tile_counts(quiz):
    count = sm.causal_tiles(4096, 128)
    assert key(quiz, "causal-visited") == count.visited == 528 and count.total == 1024
    assert count.fraction == sm.triangle_fraction(32) == Fraction(33, 64)
    assert key(quiz, "causal-masked") == count.masked


def test_the_rate_and_the_flops_per_exponential(quiz):
    flops = sm.attention_flops(4, 16, 4096, 128)
    q = quiz.question("tflops")
    assert np.isclose(key(quiz, "tflops"), flops / 1.0e-3 / 1e12, rtol=1e-12, atol=0)
    assert isinstance(q, Numeric)
    for typed, right in (("549.76", 1.0), ("550", 1.0), ("549", 0.0), ("551", 0.0), ("0.55", 0.0)):
        assert q.fraction(q.parse(typed)) == right, typed
    exponentials = 1 * 1 * 128 * 128  # one per score, B = H = 1, S = 128
    assert key(quiz, "flops-per-exp") == sm.attention_flops(1, 1, 128, 128) // exponentials == 4 * 128


def test_the_tiles_shared_memory(quiz):
    q_tile = 128 * 128 * 2
    assert key(quiz, "smem") == q_tile + 2 * sm.stage_bytes(128, 128) == 163840
    assert key(quiz, "smem") <= 227 * 1024  # the Hopper CTA's opt-in maximum, as the explanation says


def test_the_fragment_counts(quiz):
    # Eight FP16 values of P per thread per k16 step: the A figure's a0..a7, four .f16x2 registers.
    per_step = {(t, j) for t in range(128) for j in range(w.A_REGISTER_VALUES)}
    assert len({w.ptx_a_fragment_row_col(t, j) for t, j in per_step}) == 64 * 16
    assert key(quiz, "p-halves") == w.A_REGISTER_VALUES == 2 * fragments.P_REGISTERS
    regs = fragments.pack_p(np.zeros((128, 128 // 2), dtype=np.float32))  # a 64 x 128 S tile
    assert key(quiz, "p-registers") == regs.shape[0] * regs.shape[2] == 32


def test_every_numeric_question_is_tested_here(quiz):
    numeric = {q.id for q in quiz.questions if isinstance(q, Numeric)}
    assert numeric == {
        "causal-visited", "causal-masked", "tflops", "flops-per-exp", "smem", "p-halves", "p-registers",
    }  # fmt: skip
