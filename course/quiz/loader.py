"""Read a quiz TOML file into a validated ``Quiz``.

Every problem is reported with the file, a line and, inside a question, the
question id and the field. TOML parsers keep no positions for values, so a
schema problem is placed by counting ``[[questions]]`` headers in the text
(the N-th header starts the N-th question) and, inside that block, by the
line where the field is assigned; a TOML syntax error carries its own
position. All problems found are reported together, one per question at
most (a question stops at its first problem).

"Which line" questions name a lesson, a snippet region and anchor text; the
anchors are resolved through ``course.snippets`` here, at load time, so an
edit to a kernel that makes an anchor ambiguous or missing is a load error,
never a silently wrong key.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._files import read_regular
from .._toml import TomlSyntaxError, loads
from ..errors import CourseError
from ..lessons import get_lesson
from ..snippets import Snippet, load_snippets
from ._markup import plain, reference_problems
from .model import (
    PARTIAL_RULES,
    QUESTION_CLASSES,
    QUESTION_TYPES,
    SPACE_RULES,
    Code,
    MultipleSelect,
    Numeric,
    Option,
    Problem,
    Question,
    Quiz,
    QuizError,
    ShortText,
    SingleChoice,
    WhichLine,
    brief,
)

_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")  # \Z: `$` would accept a final newline
_ID_RULE = "1-64 characters: lower-case letters, digits, '-' or '_', starting with a letter or digit"
_HEADER = re.compile(r"^\s*\[\[\s*questions\s*\]\]\s*(#.*)?$")
_QUIZ_HEADER = re.compile(r"^\s*\[\s*quiz\s*\]\s*(#.*)?$")
_TABLE = re.compile(r"^\s*\[")

_QUIZ_FIELDS = ("id", "title", "lesson", "released")
_COMMON = ("id", "type", "prompt", "points", "reference")
# Learner-visible fields per type, beyond _COMMON; key fields are Question.KEY_FIELDS.
_VISIBLE: dict[str, tuple[str, ...]] = {
    "single": ("options",),
    "multiple": ("options", "partial"),
    "numeric": ("rtol", "atol", "unit"),
    "text": ("case_sensitive", "spaces"),
    "line": ("lesson", "snippet"),
    "code": ("lesson", "exercise"),
}

# Numeric defaults: exact up to float formatting. An author who wants a
# tolerance says so (PrairieLearn's own default is rtol 1e-2, atol 1e-8).
DEFAULT_RTOL = 1e-9
DEFAULT_ATOL = 0.0


class _Stop(Exception):
    """Internal: the current question (or table) has a problem; move on."""

    def __init__(self, field: str | None, message: str):
        self.field = field
        self.message = message


@dataclass
class _Locator:
    """Finds lines in the quiz text for error messages."""

    lines: list[str]
    quiz_header: int | None = None
    headers: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, text: str) -> _Locator:
        loc = cls(text.splitlines())
        for number, line in enumerate(loc.lines, start=1):
            if _HEADER.match(line):
                loc.headers.append(number)
            elif loc.quiz_header is None and _QUIZ_HEADER.match(line):
                loc.quiz_header = number
        return loc

    def question_line(self, index: int, name: str | None) -> int | None:
        if index >= len(self.headers):
            return None
        start = self.headers[index]
        if name is None:
            return start
        end = self.headers[index + 1] if index + 1 < len(self.headers) else len(self.lines) + 1
        found = self._assignment(start, end, name)
        return found if found is not None else start

    def quiz_line(self, name: str | None) -> int | None:
        if self.quiz_header is None:
            return None
        if name is not None:
            found = self._assignment(self.quiz_header, len(self.lines) + 1, name)
            if found is not None:
                return found
        return self.quiz_header

    def top_level(self, name: str) -> int | None:
        """The line of a top-level ``name = ...`` or ``[name]`` / ``[[name]]`` header."""
        pattern = re.compile(rf"^\s*(?:\[+\s*{re.escape(name)}\b|{re.escape(name)}\s*=)")
        for number, line in enumerate(self.lines, start=1):
            if pattern.match(line):
                return number
        return None

    def _assignment(self, start: int, end: int, name: str) -> int | None:
        pattern = re.compile(rf"""^\s*(?:{re.escape(name)}|"{re.escape(name)}"|'{re.escape(name)}')\s*=""")
        for number in range(start + 1, end):
            line = self.lines[number - 1]
            if _TABLE.match(line):
                return None  # a new table starts: the field is not in this block
            if pattern.match(line):
                return number
        return None


def _describe(value: object) -> str:
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "text",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)
    shown = repr(value)
    return f"{kind} {shown[:60] + '...' if len(shown) > 60 else shown}"


# Fields the format once had, with what to do instead.
_RETIRED = {
    "integer_forms": "every numeric question now reads 0x.., 0b.. and 0o.. as well as decimal: delete the line",
}


def _unknown(table: dict[str, Any], allowed: tuple[str, ...], what: str) -> None:
    for name in table:
        if name not in allowed:
            hint = difflib.get_close_matches(name, allowed, n=1)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            if name in _RETIRED:
                suggestion = f"; {_RETIRED[name]}"
            raise _Stop(name, f"unknown field {name!r} in {what} (allowed: {', '.join(allowed)}){suggestion}")


class _Fields:
    """Typed reads from one TOML table; a bad value raises _Stop."""

    def __init__(self, table: dict[str, Any]):
        self.table = table

    def text(self, name: str, *, default: str | None = None, allow_empty: bool = False) -> str:
        value = self.table.get(name, default)
        if value is None:
            raise _Stop(name, f"{name} is required (text)")
        if not isinstance(value, str):
            raise _Stop(name, f"{name} must be text (got {_describe(value)})")
        if not allow_empty and not value.strip():
            raise _Stop(name, f"{name} must be non-empty text")
        return value

    def ident(self, name: str) -> str:
        value = self.text(name)
        if not _ID.match(value):
            raise _Stop(name, f"{name} must be {_ID_RULE} (got {value!r})")
        return value

    def number(self, name: str, *, default: float | None = None, positive: bool = False) -> float:
        value = self.table.get(name, default)
        if value is None:
            raise _Stop(name, f"{name} is required (a number)")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Stop(name, f"{name} must be a number (got {_describe(value)})")
        if not math.isfinite(value):
            raise _Stop(name, f"{name} must be a finite number (got {value!r})")
        if positive and value <= 0:
            raise _Stop(name, f"{name} must be greater than 0 (got {value!r})")
        if not positive and value < 0:
            raise _Stop(name, f"{name} must be 0 or more (got {value!r})")
        return float(value)

    def flag(self, name: str, *, default: bool) -> bool:
        value = self.table.get(name, default)
        if not isinstance(value, bool):
            raise _Stop(name, f"{name} must be true or false (got {_describe(value)})")
        return value

    def choice(self, name: str, allowed: tuple[str, ...], *, default: str | None = None) -> str:
        value = self.text(name, default=default)
        if value not in allowed:
            raise _Stop(name, f"{name} must be one of {', '.join(allowed)} (got {value!r})")
        return value

    def text_list(self, name: str) -> list[str]:
        value = self.table.get(name)
        if value is None:
            raise _Stop(name, f"{name} is required (an array of text)")
        if not isinstance(value, list) or not value:
            raise _Stop(name, f"{name} must be a non-empty array of text (got {_describe(value)})")
        for item in value:
            if not isinstance(item, str) or not item.strip():
                raise _Stop(name, f"every entry of {name} must be non-empty text (got {_describe(item)})")
        if len(set(value)) != len(value):
            twice = next(v for v in value if value.count(v) > 1)
            raise _Stop(name, f"{name} lists {twice!r} twice")
        return value


def _options(f: _Fields) -> tuple[Option, ...]:
    raw = f.table.get("options")
    if not isinstance(raw, list) or len(raw) < 2:
        raise _Stop("options", f"options must be an array of at least 2 tables (got {_describe(raw)})")
    options: list[Option] = []
    for number, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            raise _Stop(
                "options",
                f"option {number} must be a table {{ id = ..., text = ... }} (got {_describe(item)})",
            )
        extra = sorted(set(item) - {"id", "text"})
        if extra:
            raise _Stop("options", f"option {number} has unknown field {extra[0]!r} (allowed: id, text)")
        sub = _Fields(item)
        try:
            option = Option(sub.ident("id"), sub.text("text"))
        except _Stop as e:
            raise _Stop("options", f"option {number}: {e.message}") from None
        if option.id in (o.id for o in options):
            raise _Stop("options", f"option id {option.id!r} appears twice")
        shown = " ".join(plain(option.text).split())
        twin = next((o for o in options if " ".join(plain(o.text).split()) == shown), None)
        if twin is not None:
            raise _Stop(
                "options",
                f"options {twin.id!r} and {option.id!r} read the same ({brief(shown)}); a learner could not tell them apart",
            )
        options.append(option)
    return tuple(options)


@dataclass
class _Context:
    lesson: str
    released: bool
    snippets: dict[Path, dict[str, Snippet]] = field(default_factory=dict)

    def snippet(self, lesson_id: str, name: str) -> Snippet:
        try:
            lesson = get_lesson(lesson_id)
        except CourseError as e:
            raise _Stop("lesson", e.message) from None
        if name not in lesson.snippets:
            raise _Stop(
                "snippet",
                f"snippet must be one the {lesson.id} page shows "
                f"({', '.join(lesson.snippets)}) (got {name!r})",
            )
        try:
            path = lesson.kernel_path
            if path not in self.snippets:
                self.snippets[path] = load_snippets(path)
        except CourseError as e:
            raise _Stop("snippet", f"cannot read the snippets of {lesson.id}: {e}") from None
        found = self.snippets[path].get(name)
        if found is None:
            raise _Stop(
                "snippet",
                f"{path} has no snippet {name!r} (it has: "
                f"{', '.join(sorted(self.snippets[path])) or 'none'})",
            )
        return found


def _common(f: _Fields) -> dict[str, Any]:
    common: dict[str, Any] = {
        "id": f.ident("id"),
        "prompt": f.text("prompt"),
        "points": f.number("points", positive=True),
    }
    reference = f.text("reference")
    problems = reference_problems(reference)
    if problems:
        raise _Stop("reference", problems[0])
    return {**common, "reference": reference}


def _single(f: _Fields, ctx: _Context, explanation: str | None) -> Question:
    options = _options(f)
    answer = None
    if not ctx.released:
        answer = f.text("answer")
        if answer not in (o.id for o in options):
            raise _Stop(
                "answer",
                f"answer must be one of the option ids {', '.join(o.id for o in options)} (got {answer!r})",
            )
    return SingleChoice(**_common(f), explanation=explanation, options=options, answer=answer)


def _multiple(f: _Fields, ctx: _Context, explanation: str | None) -> Question:
    options = _options(f)
    partial = f.choice("partial", PARTIAL_RULES, default="net-correct")
    answers = None
    if not ctx.released:
        listed = f.text_list("answers")
        ids = [o.id for o in options]
        for a in listed:
            if a not in ids:
                raise _Stop(
                    "answers", f"every entry of answers must be an option id of {', '.join(ids)} (got {a!r})"
                )
        answers = frozenset(listed)
    return MultipleSelect(
        **_common(f), explanation=explanation, options=options, partial=partial, answers=answers
    )


def _numeric(f: _Fields, ctx: _Context, explanation: str | None) -> Question:
    rtol = f.number("rtol", default=DEFAULT_RTOL)
    atol = f.number("atol", default=DEFAULT_ATOL)
    unit = f.text("unit", default="", allow_empty=True)
    answer = None
    if not ctx.released:
        value = f.table.get("answer")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise _Stop("answer", f"answer must be a finite number (got {_describe(value)})")
        answer = float(value)
    return Numeric(
        **_common(f),
        explanation=explanation,
        rtol=rtol,
        atol=atol,
        unit=unit,
        answer=answer,
    )


def _text(f: _Fields, ctx: _Context, explanation: str | None) -> Question:
    case_sensitive = f.flag("case_sensitive", default=False)
    spaces = f.choice("spaces", SPACE_RULES, default="collapse")
    question = ShortText(
        **_common(f), explanation=explanation, case_sensitive=case_sensitive, spaces=spaces, accept=None
    )
    if ctx.released:
        return question
    accept = f.text_list("accept")
    seen: dict[str, str] = {}
    for a in accept:
        norm = question.normalize(a)
        if not norm:
            raise _Stop("accept", f"accepted answer {a!r} is empty once normalised")
        if norm in seen:
            raise _Stop(
                "accept",
                f"accepted answers {seen[norm]!r} and {a!r} are the same once normalised "
                f"(case_sensitive = {str(case_sensitive).lower()}, spaces = {spaces!r})",
            )
        seen[norm] = a
    return replace(question, accept=tuple(accept))


def _line(f: _Fields, ctx: _Context, explanation: str | None) -> Question:
    lesson = f.text("lesson", default=ctx.lesson)
    name = f.text("snippet")
    snippet = ctx.snippet(lesson, name)
    anchors: tuple[str, ...] | None = None
    lines: frozenset[int] | None = None
    if not ctx.released:
        anchors = tuple(f.text_list("anchors"))
        found: dict[int, str] = {}
        for anchor in anchors:
            try:
                number = snippet.find(anchor)
            except CourseError as e:
                raise _Stop("anchors", f"{e}") from None
            if number in found:
                raise _Stop("anchors", f"anchors {found[number]!r} and {anchor!r} both match line {number}")
            found[number] = anchor
        lines = frozenset(found)
    return WhichLine(
        **_common(f),
        explanation=explanation,
        lesson=lesson,
        snippet=name,
        listing=tuple(snippet.numbered()),
        anchors=anchors,
        lines=lines,
    )


def _code(f: _Fields, ctx: _Context, explanation: str | None) -> Question:
    # only for a code question
    from ..exercises.coding import get_exercise

    lesson_id = f.text("lesson", default=ctx.lesson)
    name = f.text("exercise")
    try:
        get_exercise(get_lesson(lesson_id), name)
    except CourseError as e:
        raise _Stop("exercise", e.message if e.path is None else str(e)) from None
    return Code(**_common(f), explanation=explanation, lesson=lesson_id, exercise=name)


_BUILDERS: dict[str, Callable[[_Fields, _Context, str | None], Question]] = {
    "single": _single,
    "multiple": _multiple,
    "numeric": _numeric,
    "text": _text,
    "line": _line,
    "code": _code,
}


def _question(table: object, ctx: _Context) -> Question:
    if not isinstance(table, dict):
        raise _Stop(None, f"each entry of questions must be a table (got {_describe(table)})")
    f = _Fields(table)
    kind = f.choice("type", QUESTION_TYPES)
    cls = QUESTION_CLASSES[kind]
    allowed = _COMMON + _VISIBLE[kind] + cls.KEY_FIELDS
    _unknown(table, allowed, f"a {kind!r} question")
    explanation = None
    if ctx.released:
        for name in cls.KEY_FIELDS:
            if name in table:
                raise _Stop(
                    name,
                    f"a released learner copy must not carry key field {name!r}; "
                    "release it again from the key file",
                )
    else:
        explanation = f.text("explanation")
    return _BUILDERS[kind](f, ctx, explanation)


def _question_id(table: object) -> str | None:
    if isinstance(table, dict) and isinstance(table.get("id"), str):
        return table["id"]
    return None


def parse_quiz(text: str, path: Path | str = "<string>") -> Quiz:
    """Parse quiz TOML ``text``; ``path`` names it in error messages."""
    path = Path(path)
    try:
        data = loads(text)
    except TomlSyntaxError as e:
        raise QuizError([Problem(path, e.line, f"not valid TOML: {e.detail}")]) from None
    except RecursionError:
        # The TOML parser recurses once per nesting level; a hostile file must be a refusal.
        raise QuizError(
            [Problem(path, None, "not valid TOML here: arrays or tables nest too deeply")]
        ) from None
    loc = _Locator.of(text)
    problems: list[Problem] = []

    def quiz_problem(stop: _Stop) -> None:
        problems.append(Problem(path, loc.quiz_line(stop.field), stop.message, field=stop.field))

    quiz_id, title, lesson, released = "", "", "", False
    try:
        _unknown(data, ("quiz", "questions"), "the file (top level)")
    except _Stop as stop:
        line = loc.top_level(stop.field) if stop.field else None
        raise QuizError([Problem(path, line, stop.message, field=stop.field)]) from None
    try:
        table = data.get("quiz")
        if not isinstance(table, dict):
            raise _Stop(None, "the file must start with a [quiz] table (id, title, lesson)")
        _unknown(table, _QUIZ_FIELDS, "[quiz]")
        qf = _Fields(table)
        quiz_id, title = qf.ident("id"), qf.text("title")
        lesson = qf.text("lesson")
        try:
            get_lesson(lesson)
        except CourseError as e:
            raise _Stop("lesson", e.message) from None
        released = qf.flag("released", default=False)
    except _Stop as stop:
        quiz_problem(stop)
        raise QuizError(problems) from None

    raw = data.get("questions")
    if not isinstance(raw, list) or not raw:
        problems.append(Problem(path, None, "a quiz needs at least one [[questions]] table"))
        raise QuizError(problems)
    # Lines are trusted only when every question has its own header.
    located = len(loc.headers) == len(raw)
    ctx = _Context(lesson=lesson, released=released)
    questions: list[Question] = []
    first_seen: dict[str, int] = {}
    for index, table in enumerate(raw):
        qid = _question_id(table)
        try:
            question = _question(table, ctx)
        except _Stop as stop:
            line = loc.question_line(index, stop.field) if located else None
            name = qid or f"#{index + 1}"
            problems.append(Problem(path, line, stop.message, question=name, field=stop.field))
            continue
        if question.id in first_seen:
            line = loc.question_line(index, "id") if located else None
            earlier = first_seen[question.id]
            at = loc.question_line(earlier, None) if located else None
            problems.append(
                Problem(
                    path,
                    line,
                    f"id {question.id!r} is used twice (first by question #{earlier + 1}"
                    f"{f' at line {at}' if at else ''}); ids must be unique and stable",
                    question=question.id,
                    field="id",
                )
            )
            continue
        first_seen[question.id] = index
        questions.append(question)
    if problems:
        raise QuizError(problems)
    return Quiz(
        id=quiz_id, title=title, lesson=lesson, questions=tuple(questions), released=released, path=path
    )


def load_quiz(path: Path | str) -> Quiz:
    """Read and validate the quiz file at ``path``; raises QuizError."""
    path = Path(path)
    try:
        raw = read_regular(path, "the quiz file")
    except CourseError as e:
        raise QuizError([Problem(path, None, e.message)]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        detail = f"the quiz file must be UTF-8 text ({e.reason} at byte {e.start})"
        raise QuizError([Problem(path, line, detail)]) from None
    return parse_quiz(text, path)
