"""A second, plain implementation of "is this submission valid, and what does it score".

Written from the documented rules (course/quiz/submission.py's docstring,
PARTIAL_RULES and SPACE_RULES in course/quiz/model.py, content/quizzes/
README.md), sharing no code with the grader beyond reading the key's
fields. The grader must agree with it on every file: graded with these
scores, or skipped.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import Any

from course.quiz.model import MultipleSelect, Numeric, Question, Quiz, ShortText, SingleChoice, WhichLine

FORMAT = "hopper-course/quiz-submission/1"
FIELDS = {"format", "quiz", "quiz_version", "learner", "submitted_at", "responses", "attempts"}
LEARNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


class Invalid(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Invalid("duplicate key")
    return dict(pairs)


def _constant(name: str) -> Any:
    raise Invalid(name)


def parse(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw, object_pairs_hook=_pairs, parse_constant=_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise Invalid(f"json: {e}") from None
    if not isinstance(data, dict) or set(data) != FIELDS:
        raise Invalid("fields")
    if data["format"] != FORMAT:
        raise Invalid("format")
    for name in ("quiz", "quiz_version", "submitted_at"):
        if not isinstance(data[name], str) or not data[name]:
            raise Invalid(name)
    if not isinstance(data["learner"], str) or not LEARNER.fullmatch(data["learner"]):
        raise Invalid("learner")
    try:
        if stamp(data["submitted_at"]).tzinfo is None:
            raise Invalid("naive time")
    except ValueError:
        raise Invalid("time") from None
    if not isinstance(data["responses"], dict) or not isinstance(data["attempts"], dict):
        raise Invalid("maps")
    for count in data["attempts"].values():
        if type(count) is not int or count < 0:
            raise Invalid("attempts")
    return data


def stamp(text: str) -> datetime:
    """ISO 8601; "Z" is UTC (written out: Python 3.10's fromisoformat does not know it)."""
    return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)


def fits(data: dict[str, Any], quiz: Quiz) -> None:
    if data["quiz"] != quiz.id or data["quiz_version"] != quiz.version:
        raise Invalid("other quiz")
    ids = {q.id for q in quiz.questions}
    if not set(data["responses"]) <= ids or not set(data["attempts"]) <= ids:
        raise Invalid("unknown question")
    for q in quiz.questions:
        r = data["responses"].get(q.id)
        if r is not None and not _shape_ok(q, r):
            raise Invalid(f"shape of {q.id}")


def placed(path: Path, data: dict[str, Any], quiz: Quiz) -> bool:
    """A submission counts only at ``.../<quiz id>/<its learner>.json`` (the documented place rule)."""
    return path.parent.name == quiz.id and path.name == data["learner"] + ".json"


def _shape_ok(q: Question, r: Any) -> bool:
    if isinstance(q, SingleChoice):
        return type(r) is str and r in [o.id for o in q.options]
    if isinstance(q, MultipleSelect):
        ids = [o.id for o in q.options]
        return type(r) is list and all(type(x) is str and x in ids for x in r) and len(set(r)) == len(r)
    if isinstance(q, Numeric):
        return type(r) in (int, float)
    if isinstance(q, ShortText):
        return type(r) is str
    if isinstance(q, WhichLine):
        return type(r) is int and r in [n for n, _ in q.listing]
    raise AssertionError(q)


def _norm(q: ShortText, text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    if q.spaces == "collapse":
        text = " ".join(text.split())
    elif q.spaces == "remove":
        text = "".join(text.split())
    return text if q.case_sensitive else text.casefold()


def fraction(q: Question, r: Any) -> float:
    if r is None:
        return 0.0
    if isinstance(q, SingleChoice):
        return float(r == q.answer)
    if isinstance(q, MultipleSelect):
        s, c, o = set(r), set(q.answers or ()), {x.id for x in q.options}
        if q.partial == "off":
            return float(s == c)
        if q.partial == "net-correct":
            return max(0.0, (len(s & c) - len(s - c)) / len(c))
        if q.partial == "coverage":
            return (len(s & c) / len(c)) * (len(s & c) / len(s)) if s else 0.0
        return (len(o) - len(s ^ c)) / len(o)
    if isinstance(q, Numeric):
        assert q.answer is not None
        try:
            value = float(r)
        except OverflowError:  # an integer beyond any float is no closer than infinity
            return 0.0
        if not math.isfinite(value):
            return 0.0
        return float(abs(value - q.answer) <= q.atol + q.rtol * abs(q.answer))
    if isinstance(q, ShortText):
        return float(any(_norm(q, r) == _norm(q, a) for a in q.accept or ()))
    if isinstance(q, WhichLine):
        return float(r in (q.lines or ()))
    raise AssertionError(q)


def scores(data: dict[str, Any], quiz: Quiz) -> list[float]:
    return [q.points * fraction(q, data["responses"].get(q.id)) for q in quiz.questions]
