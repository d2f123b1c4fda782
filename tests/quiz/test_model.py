"""Scoring rules and the learner copy (course/quiz/model.py)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course.quiz.loader import load_quiz
from course.quiz.model import (
    NUMBER_FORMS,
    PARTIAL_RULES,
    KeyMissing,
    MultipleSelect,
    Numeric,
    Option,
    Quiz,
    ResponseError,
    ShortText,
    SingleChoice,
    WhichLine,
    fmt_points,
)

REPO = Path(__file__).resolve().parents[2]
OPTIONS = tuple(Option(i, i.upper()) for i in "abcd")


def single(**kw) -> SingleChoice:
    base = dict(
        id="s", prompt="p", points=1.0, reference="r", explanation="e", options=OPTIONS[:3], answer="b"
    )
    return SingleChoice(**{**base, **kw})


def multiple(partial: str, **kw) -> MultipleSelect:
    base = dict(
        id="m",
        prompt="p",
        points=2.0,
        reference="r",
        explanation="e",
        options=OPTIONS,
        partial=partial,
        answers=frozenset({"a", "b"}),
    )
    return MultipleSelect(**{**base, **kw})


def numeric(**kw) -> Numeric:
    base = dict(
        id="n",
        prompt="p",
        points=1.0,
        reference="r",
        explanation="e",
        rtol=0.0,
        atol=0.0,
        unit="",
        answer=16384.0,
    )
    return Numeric(**{**base, **kw})


def text(**kw) -> ShortText:
    base = dict(
        id="t",
        prompt="p",
        points=1.0,
        reference="r",
        explanation="e",
        case_sensitive=False,
        spaces="collapse",
        accept=("cp.async.bulk.tensor",),
    )
    return ShortText(**{**base, **kw})


def line(**kw) -> WhichLine:
    base = dict(
        id="l",
        prompt="p",
        points=1.0,
        reference="r",
        explanation="e",
        lesson="day76",
        snippet="x",
        listing=((10, "a"), (11, "b"), (12, "c")),
        anchors=("b",),
        lines=frozenset({11}),
    )
    return WhichLine(**{**base, **kw})


def test_single_choice_scores_the_answer_only():
    q = single()
    assert q.score("b") == 1.0
    assert q.score("a") == 0.0
    assert q.score(None) == 0.0


def test_single_choice_refuses_an_unknown_option():
    with pytest.raises(ResponseError, match="one option id of a, b, c"):
        single().fraction("z")


# Correct {a, b} of options {a, b, c, d}; the expected fraction per PrairieLearn's rule.
@pytest.mark.parametrize(
    ("rule", "chosen", "expected"),
    [
        ("off", ["a", "b"], 1.0),
        ("off", ["a"], 0.0),
        ("off", ["a", "b", "c"], 0.0),
        ("net-correct", ["a"], 0.5),
        ("net-correct", ["a", "c"], 0.0),
        ("net-correct", ["a", "b", "c"], 0.5),
        ("net-correct", ["c", "d"], 0.0),
        ("coverage", ["a"], 0.5),
        ("coverage", ["a", "c"], 0.25),
        ("coverage", ["a", "b", "c"], 2 / 3),
        ("coverage", [], 0.0),
        ("each-answer", ["a"], 0.75),
        ("each-answer", ["a", "c"], 0.5),
        ("each-answer", [], 0.5),
        ("each-answer", ["a", "b"], 1.0),
    ],
)
def test_multiple_select_partial_credit_rules(rule, chosen, expected):
    q = multiple(rule)
    assert math.isclose(q.fraction(chosen), expected)
    assert math.isclose(q.score(chosen), 2.0 * expected)


def test_multiple_select_order_of_choices_does_not_matter():
    q = multiple("coverage")
    assert q.fraction(["b", "a"]) == q.fraction(["a", "b"]) == 1.0


@pytest.mark.parametrize("bad", ["a", ["a", "a"], ["z"], [1], {"a": True}])
def test_multiple_select_refuses_malformed_responses(bad):
    with pytest.raises(ResponseError):
        multiple("off").fraction(bad)


@given(
    rule=st.sampled_from(PARTIAL_RULES),
    chosen=st.lists(st.sampled_from("abcd"), unique=True),
    correct=st.sets(st.sampled_from("abcd"), min_size=1),
)
def test_multiple_select_fraction_is_within_0_and_1_and_full_only_when_exact(rule, chosen, correct):
    q = multiple(rule, answers=frozenset(correct))
    f = q.fraction(chosen)
    assert 0.0 <= f <= 1.0
    assert (f == 1.0) == (set(chosen) == correct)


def test_numeric_tolerance_is_atol_plus_rtol_times_answer():
    q = numeric(answer=100.0, rtol=0.01, atol=0.5)  # accepts |x - 100| <= 1.5
    assert q.fraction(101.5) == 1.0
    assert q.fraction(98.5) == 1.0
    assert q.fraction(101.6) == 0.0
    assert q.fraction(100) == 1.0  # an int response


def test_numeric_exact_key_accepts_only_the_value():
    q = numeric()
    assert q.fraction(16384) == 1.0
    assert q.fraction(16384.000001) == 0.0


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_numeric_non_finite_responses_score_zero(value):
    assert numeric(atol=1e300).fraction(value) == 0.0


@pytest.mark.parametrize("bad", [True, "16384", [16384]])
def test_numeric_refuses_non_numbers(bad):
    with pytest.raises(ResponseError, match="must be a number"):
        numeric().fraction(bad)


def test_text_normalises_case_and_spaces_by_default():
    q = text()
    assert q.fraction("  CP.Async.Bulk.Tensor ") == 1.0
    assert q.fraction("cp.async .bulk.tensor") == 0.0  # collapse keeps one space


def test_text_spaces_remove_and_exact():
    assert text(spaces="remove").fraction("cp. async. bulk. tensor") == 1.0
    assert text(spaces="exact").fraction("cp.async.bulk.tensor ") == 0.0
    assert text(spaces="exact").fraction("cp.async.bulk.tensor") == 1.0


def test_text_case_sensitive():
    q = text(case_sensitive=True, accept=("Hopper",))
    assert q.fraction("Hopper") == 1.0
    assert q.fraction("hopper") == 0.0


def test_text_compares_unicode_normal_forms():
    q = text(accept=("caf\u00e9",))
    assert q.fraction("cafe\u0301") == 1.0


def test_line_question_accepts_a_key_line_only():
    q = line()
    assert q.fraction(11) == 1.0
    assert q.fraction(10) == 0.0


@pytest.mark.parametrize("bad", [9, 13, "11", True, 11.0])
def test_line_question_refuses_lines_outside_the_listing(bad):
    with pytest.raises(ResponseError, match="line number of snippet"):
        line().fraction(bad)


def test_learner_copy_drops_every_key_attribute():
    for q in (single(), multiple("off"), numeric(), text(), line()):
        copy = q.learner_copy()
        assert not copy.has_key
        for name in q.KEY_ATTRS:
            assert getattr(copy, name) is None, (q.type, name)
        assert copy.key() == {}
        assert copy.view() == q.view()


def test_scoring_a_learner_copy_raises_key_missing():
    with pytest.raises(KeyMissing, match="no key"):
        single().learner_copy().fraction("b")


def test_an_unanswered_learner_copy_question_scores_zero_without_a_key():
    assert single().learner_copy().fraction(None) == 0.0


def _quiz(*questions) -> Quiz:
    return Quiz(
        id="q", title="T", lesson="day76", questions=tuple(questions), released=False, path=Path("q.toml")
    )


def test_version_is_shared_by_key_and_learner_copy_and_ignores_the_key():
    quiz = _quiz(single(), line())
    assert quiz.version == quiz.learner_copy().version
    assert quiz.version == _quiz(single(answer="a", explanation="other"), line()).version
    assert quiz.version.startswith("sha256:")


def test_version_changes_with_what_the_learner_sees():
    quiz = _quiz(single(), line())
    assert _quiz(single(prompt="changed"), line()).version != quiz.version
    assert _quiz(single(points=2.0), line()).version != quiz.version
    moved = line(listing=((11, "a"), (12, "b"), (13, "c")), lines=frozenset({12}))
    assert _quiz(single(), moved).version != quiz.version


def test_quiz_max_points_and_question_lookup():
    quiz = _quiz(single(), multiple("off"))
    assert quiz.max_points == 3.0
    assert quiz.question("m").type == "multiple"
    with pytest.raises(Exception, match="no question 'zz'"):
        quiz.question("zz")


def test_question_replace_keeps_frozen_semantics():
    q = single()
    with pytest.raises(AttributeError):
        q.answer = "a"  # type: ignore[misc]
    assert replace(q, answer="a").score("a") == 1.0


@pytest.mark.parametrize(
    ("value", "text"), [(1.0, "1"), (0.5, "0.5"), (2 / 3, "0.6667"), (0.0, "0"), (1e-9, "0")]
)
def test_fmt_points(value, text):
    assert fmt_points(value) == text


# ---- typed numbers: one rule for every numeric question (issue 22, item 16) ------


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("16384", 16384),
        ("1.6384e4", 16384.0),
        ("-3", -3),
        ("16_384", 16384),
        (" 8 ", 8),
        ("010", 10),
        ("0x8", 8),
        ("0X8", 8),
        ("0x3_FFFF", 0x3FFFF),
        ("-0x10", -16),
        ("0b1000", 8),
        ("0B11", 3),
        ("0o17", 15),
    ],
)
def test_every_numeric_question_reads_decimal_hex_binary_and_octal(typed, value):
    parsed = numeric(answer=float(value)).parse(typed)
    assert parsed == value and type(parsed) is type(value)
    assert numeric(answer=float(value)).fraction(parsed) == 1.0


@pytest.mark.parametrize("typed", ["0xZZ", "0b102", "16,384", "3 bytes", "0x", "__1", "three"])
def test_numeric_parse_refuses_what_is_not_a_number(typed):
    with pytest.raises(ResponseError, match="is not a number"):
        numeric().parse(typed)
    with pytest.raises(ResponseError, match="not a finite number"):
        numeric().parse("inf")


def _shipped_numeric() -> list[tuple[str, Numeric]]:
    found = []
    for path in sorted((REPO / "content" / "quizzes").glob("*.toml")):
        quiz = load_quiz(path)
        found += [(f"{quiz.id}/{q.id}", q) for q in quiz.questions if isinstance(q, Numeric)]
    return found


def test_a_refusal_never_states_a_number_beyond_what_was_typed(monkeypatch):
    """Day 83's question 5 once refused `0b11` with "(that one is 3)": the answer."""
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    shipped = _shipped_numeric()
    assert len(shipped) >= 40
    for name, q in shipped:
        answer = fmt_points(cast_float(q.answer))
        for typed in (f"{answer} {q.unit or 'things'}", f"{answer},0", f"0b{answer}2", "0xZZ", "nan"):
            with pytest.raises(ResponseError) as caught:
                q.parse(typed)
            said = caught.value.message.replace(repr(typed), "").replace(NUMBER_FORMS, "")
            assert not any(ch.isdigit() for ch in said), (name, typed, said)


def test_day83_reads_the_mask_typed_in_binary(monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    q = load_quiz(REPO / "content" / "quizzes" / "day83.toml").question("cta-mask")
    assert isinstance(q, Numeric) and q.fraction(q.parse("0b11")) == 1.0 and q.fraction(q.parse("0x3")) == 1.0


def cast_float(value: float | None) -> float:
    assert value is not None
    return value
