"""Typed quiz questions, and how each one scores a response.

A quiz is parsed once (``loader.py``) into the frozen objects here; nothing
downstream passes dicts around. Scoring is a pure function of (question,
response): the page's Check button and the instructor's grader call the same
``Question.fraction``, so practice feedback and the gradebook cannot drift.

Key material (the answer, the accepted texts, the anchors, the explanation)
is ``None`` in a learner copy (``Quiz.learner_copy``, or a file written by
``release``); everything else is what the learner sees, and ``Quiz.version``
hashes exactly that, so a key file and its released copy share one version.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, cast

from ..errors import CourseError

# The type names a quiz file uses, in the order the README documents them.
QUESTION_TYPES = ("single", "multiple", "numeric", "text", "line", "code")

# Partial credit for multiple-select questions, named as PrairieLearn's
# pl-checkbox names them (S: selected options, C: correct options, O: all):
#   off          1 if S == C else 0
#   net-correct  max(0, (|S & C| - |S - C|) / |C|)
#   coverage     (|S & C| / |C|) * (|S & C| / |S|)   (0 when nothing is selected)
#   each-answer  share of options judged right: (|O| - |S ^ C|) / |O|
PARTIAL_RULES = ("off", "net-correct", "coverage", "each-answer")

# How a short-text answer's white space is normalised before comparing.
SPACE_RULES = ("collapse", "remove", "exact")

# One rule for what a learner may type in every numeric box (README, "Numeric:
# what a learner may type"): a decimal number (16384, -2.5, 1.6384e4, 16_384),
# or a whole number in hexadecimal, binary or octal (0x4000, 0b1000, 0o40000;
# any case; `_` between digits), as Python writes its literals. The typed text
# becomes a number before scoring, so a refusal only ever says what was typed
# and what may be typed: never the number it would have been, which may be the answer.
_PREFIXED = re.compile(r"[+-]?0[xXbBoO]\w*")
NUMBER_FORMS = "12, 2.5e3, 0x1f, 0b101 or 0o17"  # examples that are no shipped answer


def parse_number(text: str) -> int | float:
    """A typed answer as a number: an int when written as one, else a finite float.

    ResponseError (its message quotes only ``text``) when it is none of the forms above.
    """
    typed = text.strip()
    refusal = f"{brief(text)} is not a number; type one such as {NUMBER_FORMS} (no unit, no commas)"
    if _PREFIXED.fullmatch(typed):
        try:
            return int(typed, 0)
        except ValueError:
            raise ResponseError(refusal) from None
    try:
        return int(typed, 10)
    except ValueError:
        pass
    try:
        number = float(typed)
    except ValueError:
        raise ResponseError(refusal) from None
    if not math.isfinite(number):
        raise ResponseError(f"{brief(text)} is not a finite number; type one such as {NUMBER_FORMS}")
    return number


# A response as the widgets produce it and a submission stores it.
Response = str | int | float | list[str] | None


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a quiz file, located as precisely as possible."""

    path: Path
    line: int | None
    message: str
    question: str | None = None
    field: str | None = None

    def format(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        what = []
        if self.question is not None:
            what.append(f"question {self.question!r}")
        if self.field is not None:
            what.append(f"field {self.field!r}")
        prefix = f"{', '.join(what)}: " if what else ""
        return f"{where}: {prefix}{self.message}"


class QuizError(CourseError):
    """A quiz file is malformed; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]):
        if not problems:
            raise ValueError("QuizError needs at least one problem")
        self.problems = tuple(problems)
        first = self.problems[0]
        self.question = first.question
        self.field = first.field
        super().__init__(first.message, path=first.path, line=first.line)

    def _format(self) -> str:
        return "\n".join(p.format() for p in self.problems)


class ResponseError(CourseError):
    """A response does not fit its question (wrong type, unknown option)."""


class KeyMissing(CourseError):
    """Scoring was asked of a learner copy, which carries no key."""


# A value from a submission is shown in a message at most this long (its
# repr): a 5 MB response once went whole into the terminal and skipped.csv.
BRIEF_LIMIT = 60


def brief(value: object, limit: int = BRIEF_LIMIT) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters with the full size said."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters as written"
    return f"{text[:limit]}... (cut: {size})"


def fmt_points(x: float) -> str:
    """A score or point value as text: at most 4 decimals, no trailing zeros."""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


# Fractions a learner reads at a glance (a partly right multiple-select earns thirds, quarters ...).
_VULGAR = {
    (1, 2): "\u00bd", (1, 3): "\u2153", (2, 3): "\u2154", (1, 4): "\u00bc", (3, 4): "\u00be",
    (1, 5): "\u2155", (2, 5): "\u2156", (3, 5): "\u2157", (4, 5): "\u2158", (1, 6): "\u2159",
    (5, 6): "\u215a", (1, 8): "\u215b", (3, 8): "\u215c", (5, 8): "\u215d", (7, 8): "\u215e",
}  # fmt: skip


def readable_points(x: float) -> str:
    """A score for a learner to read: ``1⅓`` rather than ``1.3333``, else at most two decimals.

    ``fmt_points`` stays the form of files (CSV, the gradebook): exact to four decimals.
    """
    if x >= 0:
        exact = Fraction(x).limit_denominator(12)
        whole, part = divmod(exact.numerator, exact.denominator)
        glyph = _VULGAR.get((part, exact.denominator))
        if glyph is not None and abs(float(exact) - x) < 1e-9:
            return f"{whole}{glyph}" if whole else glyph
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


@dataclass(frozen=True)
class Option:
    id: str  # stable, short: what a submission stores
    text: str  # what the learner reads


@dataclass(frozen=True)
class Question:
    """Fields every question has. ``explanation`` is None in a learner copy."""

    id: str
    prompt: str
    points: float
    reference: str  # PTX ISA section, CUDA guide section, or the snippet
    explanation: str | None

    type: ClassVar[str] = ""
    # Fields a learner copy drops (TOML names); the loader refuses them there.
    KEY_FIELDS: ClassVar[tuple[str, ...]] = ("explanation",)
    # Attributes a learner copy sets to None (KEY_FIELDS plus derived ones).
    KEY_ATTRS: ClassVar[tuple[str, ...]] = ("explanation",)

    @property
    def has_key(self) -> bool:
        return self.explanation is not None

    def fraction(self, response: Response) -> float:
        """The share of the points this response earns, 0.0 to 1.0."""
        self.check_response(response)
        if response is None:
            return 0.0
        if not self.has_key:
            raise KeyMissing(
                f"question {self.id!r} comes from a learner copy with no key; grade with the key file"
            )
        return self._fraction(response)

    def score(self, response: Response) -> float:
        return self.points * self.fraction(response)

    def check_response(self, response: Response) -> None:
        """Raise ResponseError unless ``response`` has this question's shape."""
        if response is not None:
            self._check(response)

    def learner_copy(self) -> Question:
        cleared: dict[str, Any] = {f.name: None for f in fields(self) if f.name in self.KEY_ATTRS}
        return replace(self, **cleared)

    def view(self) -> dict[str, Any]:
        """What the learner sees, as the TOML fields a released copy holds."""
        return {
            "id": self.id,
            "type": self.type,
            "points": self.points,
            "prompt": self.prompt,
            "reference": self.reference,
        }

    def key(self) -> dict[str, Any]:
        """The key material, as TOML fields (empty in a learner copy)."""
        return {} if self.explanation is None else {"explanation": self.explanation}

    def _check(self, response: Response) -> None:
        raise NotImplementedError

    def _fraction(self, response: Response) -> float:
        raise NotImplementedError


def _option_ids(options: tuple[Option, ...]) -> list[str]:
    return [o.id for o in options]


def option_order(
    options: tuple[Option, ...], quiz_id: str, question_id: str, learner_id: str | None
) -> tuple[Option, ...]:
    """The options in the order one learner is shown them: shuffled, the same every time.

    The authored order tends to give the key away (it came first in 12 of
    13 single-choice questions). Each option is ranked by a SHA-256 of
    (quiz, question, learner, option id): stable across runs, machines and
    Python versions, so the page shows a learner the same order on every
    visit, and different for each learner and question. Responses and
    grading use option ids, never positions, so Check, Submit and the
    grader agree whatever the order. Without a learner id, all share one
    (still shuffled) order.
    """
    seed = f"{quiz_id}\0{question_id}\0{learner_id or ''}\0"
    return tuple(sorted(options, key=lambda o: hashlib.sha256((seed + o.id).encode("utf-8")).digest()))


@dataclass(frozen=True)
class SingleChoice(Question):
    options: tuple[Option, ...]
    answer: str | None  # an option id

    type: ClassVar[str] = "single"
    KEY_FIELDS: ClassVar[tuple[str, ...]] = ("answer", "explanation")

    KEY_ATTRS: ClassVar[tuple[str, ...]] = ("answer", "explanation")

    def view(self) -> dict[str, Any]:
        return {**super().view(), "options": [{"id": o.id, "text": o.text} for o in self.options]}

    def key(self) -> dict[str, Any]:
        return {} if self.answer is None else {"answer": self.answer, **super().key()}

    def _check(self, response: Response) -> None:
        if not isinstance(response, str) or response not in _option_ids(self.options):
            raise ResponseError(
                f"question {self.id!r}: a response must be one option id of "
                f"{', '.join(_option_ids(self.options))} (got {brief(response)})"
            )

    def _fraction(self, response: Response) -> float:
        return 1.0 if response == self.answer else 0.0


@dataclass(frozen=True)
class MultipleSelect(Question):
    options: tuple[Option, ...]
    partial: str  # one of PARTIAL_RULES
    answers: frozenset[str] | None  # the correct option ids

    type: ClassVar[str] = "multiple"
    KEY_FIELDS: ClassVar[tuple[str, ...]] = ("answers", "explanation")

    KEY_ATTRS: ClassVar[tuple[str, ...]] = ("answers", "explanation")

    def view(self) -> dict[str, Any]:
        return {
            **super().view(),
            "partial": self.partial,
            "options": [{"id": o.id, "text": o.text} for o in self.options],
        }

    def key(self) -> dict[str, Any]:
        if self.answers is None:
            return {}
        ordered = [i for i in _option_ids(self.options) if i in self.answers]
        return {"answers": ordered, **super().key()}

    def _check(self, response: Response) -> None:
        ids = _option_ids(self.options)
        if (
            not isinstance(response, list)
            or not all(isinstance(r, str) and r in ids for r in response)
            or len(set(response)) != len(response)
        ):
            raise ResponseError(
                f"question {self.id!r}: a response must be a list of distinct option ids of "
                f"{', '.join(ids)} (got {brief(response)})"
            )

    def _fraction(self, response: Response) -> float:
        chosen, correct = set(cast(list[str], response)), cast(frozenset[str], self.answers)
        hits, wrong = len(chosen & correct), len(chosen - correct)
        if self.partial == "off":
            return 1.0 if chosen == correct else 0.0
        if self.partial == "net-correct":
            return max(0.0, (hits - wrong) / len(correct))
        if self.partial == "coverage":
            return (hits / len(correct)) * (hits / len(chosen)) if chosen else 0.0
        # each-answer
        return (len(self.options) - len(chosen ^ correct)) / len(self.options)


@dataclass(frozen=True)
class Numeric(Question):
    rtol: float  # relative tolerance, as numpy.isclose uses it
    atol: float  # absolute tolerance
    unit: str  # shown after the input box; "" for none
    answer: float | None

    type: ClassVar[str] = "numeric"
    KEY_FIELDS: ClassVar[tuple[str, ...]] = ("answer", "explanation")

    KEY_ATTRS: ClassVar[tuple[str, ...]] = ("answer", "explanation")

    def view(self) -> dict[str, Any]:
        return {**super().view(), "rtol": self.rtol, "atol": self.atol, "unit": self.unit}

    def key(self) -> dict[str, Any]:
        return {} if self.answer is None else {"answer": self.answer, **super().key()}

    def parse(self, text: str) -> int | float:
        """A typed answer as a number, by the one rule of every numeric box (``parse_number``)."""
        return parse_number(text)

    def _check(self, response: Response) -> None:
        if isinstance(response, bool) or not isinstance(response, int | float):
            raise ResponseError(f"question {self.id!r}: a response must be a number (got {brief(response)})")

    def _fraction(self, response: Response) -> float:
        answer = cast(float, self.answer)
        try:
            value = float(cast(float, response))
        except OverflowError:  # JSON allows any integer; one past float's range is no closer than inf
            return 0.0
        if not math.isfinite(value):
            return 0.0
        return 1.0 if abs(value - answer) <= self.atol + self.rtol * abs(answer) else 0.0


@dataclass(frozen=True)
class ShortText(Question):
    case_sensitive: bool
    spaces: str  # one of SPACE_RULES
    accept: tuple[str, ...] | None  # accepted answers, as written in the key

    type: ClassVar[str] = "text"
    KEY_FIELDS: ClassVar[tuple[str, ...]] = ("accept", "explanation")

    KEY_ATTRS: ClassVar[tuple[str, ...]] = ("accept", "explanation")

    def view(self) -> dict[str, Any]:
        return {**super().view(), "case_sensitive": self.case_sensitive, "spaces": self.spaces}

    def key(self) -> dict[str, Any]:
        return {} if self.accept is None else {"accept": list(self.accept), **super().key()}

    def normalize(self, text: str) -> str:
        """The form two answers are compared in (Unicode NFC, spaces, case)."""
        text = unicodedata.normalize("NFC", text)
        if self.spaces == "collapse":
            text = " ".join(text.split())
        elif self.spaces == "remove":
            text = "".join(text.split())
        return text if self.case_sensitive else text.casefold()

    def _check(self, response: Response) -> None:
        if not isinstance(response, str):
            raise ResponseError(f"question {self.id!r}: a response must be text (got {brief(response)})")

    def _fraction(self, response: Response) -> float:
        given = self.normalize(cast(str, response))
        return 1.0 if any(given == self.normalize(a) for a in cast(tuple[str, ...], self.accept)) else 0.0


@dataclass(frozen=True)
class WhichLine(Question):
    """Pick the line of a kernel snippet. The key is text, resolved at load.

    ``listing`` is the snippet's numbered body lines as the kernel has them
    now; ``anchors`` (key) are text that must match exactly one line each,
    through ``course.snippets.Snippet.find``; ``lines`` are those resolved
    file line numbers, any of which is a right answer.
    """

    lesson: str
    snippet: str
    listing: tuple[tuple[int, str], ...]
    anchors: tuple[str, ...] | None
    lines: frozenset[int] | None

    type: ClassVar[str] = "line"
    KEY_FIELDS: ClassVar[tuple[str, ...]] = ("anchors", "explanation")

    KEY_ATTRS: ClassVar[tuple[str, ...]] = ("anchors", "lines", "explanation")

    def view(self) -> dict[str, Any]:
        return {**super().view(), "lesson": self.lesson, "snippet": self.snippet}

    def key(self) -> dict[str, Any]:
        return {} if self.anchors is None else {"anchors": list(self.anchors), **super().key()}

    def _check(self, response: Response) -> None:
        numbers = [n for n, _ in self.listing]
        if isinstance(response, bool) or not isinstance(response, int) or response not in numbers:
            raise ResponseError(
                f"question {self.id!r}: a response must be a line number of snippet {self.snippet!r} "
                f"({numbers[0]}-{numbers[-1]}) (got {brief(response)})"
            )

    def _fraction(self, response: Response) -> float:
        return 1.0 if response in cast(frozenset[int], self.lines) else 0.0


# A code response is at most this many bytes (UTF-8): the piece of a coding exercise.
MAX_CODE_BYTES = 8192


class CodeScoredByRunning(CourseError):
    """A code question's score comes from running the code (``course.exercises.coding_check``), not from its text."""


@dataclass(frozen=True)
class Code(Question):
    """Write the piece of a coding exercise (``content/coding/<lesson>.toml``).

    The response is the piece's text. It is scored by running it, with the
    exercise's checks, in a child process (``course.quiz.grade`` with a code
    runner; ``course.exercises.coding_check.check_piece``): never by comparing text, so
    ``fraction`` refuses, naming the way it is scored.
    """

    lesson: str
    exercise: str

    type: ClassVar[str] = "code"

    def view(self) -> dict[str, Any]:
        return {**super().view(), "lesson": self.lesson, "exercise": self.exercise}

    def _check(self, response: Response) -> None:
        if not isinstance(response, str):
            raise ResponseError(
                f"question {self.id!r}: a response must be the code as text (got {brief(response)})"
            )
        size = len(response.encode("utf-8", "surrogatepass"))
        if size > MAX_CODE_BYTES:
            raise ResponseError(f"question {self.id!r}: the code is {size} bytes; at most {MAX_CODE_BYTES}")
        if "\x00" in response:
            raise ResponseError(f"question {self.id!r}: the code contains a NUL character")

    def _fraction(self, response: Response) -> float:
        raise CodeScoredByRunning(
            f"question {self.id!r} is scored by running the code: "
            "`python -m course quiz grade` runs it, or the page's coding exercise checks it"
        )


QUESTION_CLASSES: Mapping[str, type[Question]] = {
    cls.type: cls for cls in (SingleChoice, MultipleSelect, Numeric, ShortText, WhichLine, Code)
}


@dataclass(frozen=True)
class Quiz:
    id: str
    title: str
    lesson: str
    questions: tuple[Question, ...]
    released: bool  # True for a learner copy: no key anywhere
    path: Path | None = None

    @property
    def has_key(self) -> bool:
        return not self.released

    @property
    def max_points(self) -> float:
        return sum(q.points for q in self.questions)

    def question(self, question_id: str) -> Question:
        for q in self.questions:
            if q.id == question_id:
                return q
        raise CourseError(
            f"quiz {self.id!r} has no question {question_id!r} "
            f"(it has: {', '.join(q.id for q in self.questions)})"
        )

    def learner_copy(self) -> Quiz:
        """The same quiz with every key field dropped."""
        return replace(self, questions=tuple(q.learner_copy() for q in self.questions), released=True)

    def view(self) -> dict[str, Any]:
        """The learner-visible content, as a released TOML file holds it."""
        return {
            "quiz": {"id": self.id, "title": self.title, "lesson": self.lesson},
            "questions": [q.view() for q in self.questions],
        }

    @cached_property
    def version(self) -> str:
        """sha256 of what the learner sees: the view plus each line listing.

        The same for a key file and its released copy; it changes with any
        edit a learner could notice (a prompt, an option, points, a kernel
        edit that moves a listed line), so a submission made against one
        version is never scored against another.
        """
        listings = {q.id: [list(x) for x in q.listing] for q in self.questions if isinstance(q, WhichLine)}
        blob = json.dumps(
            {"view": self.view(), "listings": listings},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()
