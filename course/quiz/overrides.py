"""Regrades: a CSV (learner,question,score,reason) or TOML (``[[override]]``) file of changed scores.

Read and checked whole before any score changes (``course.quiz.grade``
applies them last, each with its reason): an unknown learner or question, a
score outside 0 to the question's points, or two overrides of one score are
refused with the file and line.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from .._files import read_regular
from .._toml import TomlSyntaxError, loads
from ..errors import CourseError
from .model import Quiz, fmt_points

__all__ = ["Override", "load_overrides"]


@dataclass(frozen=True)
class Override:
    learner: str
    question: str
    score: float
    reason: str
    where: str  # file:line or file, override #n, for messages


def load_overrides(path: Path | str, quiz: Quiz) -> list[Override]:
    """Read regrades from CSV (learner,question,score,reason) or TOML ([[override]])."""
    path = Path(path)
    try:
        text = read_regular(path, "the overrides file").decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CourseError(f"the overrides file must be UTF-8 text ({e.reason})", path=path) from None
    raw: list[tuple[str, dict[str, object]]] = []
    if path.suffix.lower() == ".toml":
        try:
            data = loads(text)
        except TomlSyntaxError as e:
            raise CourseError(
                f"the overrides file is not valid TOML: {e.detail}", path=path, line=e.line
            ) from None
        except RecursionError:
            raise CourseError("the overrides file nests arrays or tables too deeply", path=path) from None
        extra = [k for k in data if k != "override"]
        if extra or not isinstance(data.get("override"), list):
            raise CourseError("an overrides TOML file holds only [[override]] tables", path=path)
        for number, table in enumerate(data["override"], start=1):
            if not isinstance(table, dict):
                raise CourseError(f"override #{number} must be a table", path=path)
            raw.append((f"{path}, override #{number}", table))
    elif path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        if reader.fieldnames is None or sorted(reader.fieldnames) != [
            "learner",
            "question",
            "reason",
            "score",
        ]:
            raise CourseError(
                "an overrides CSV needs exactly the header learner,question,score,reason "
                f"(got {reader.fieldnames})",
                path=path,
                line=1,
            )
        for row in reader:
            raw.append((f"{path}:{reader.line_num}", dict(row)))
    else:
        raise CourseError("an overrides file must end in .csv or .toml", path=path)
    found: dict[tuple[str, str], Override] = {}
    for where, table in raw:
        extra = sorted(set(table) - {"learner", "question", "score", "reason"})
        if extra:
            raise CourseError(
                f"{where}: unknown field {extra[0]!r} (allowed: learner, question, score, reason)"
            )
        texts: dict[str, str] = {}
        for name in ("learner", "question", "reason"):
            value = table.get(name)
            if not isinstance(value, str) or not value.strip():
                raise CourseError(f"{where}: {name} must be non-empty text (got {value!r})")
            texts[name] = value.strip()
        learner, qid, reason, score = texts["learner"], texts["question"], texts["reason"], table.get("score")
        try:
            question = quiz.question(qid)
        except CourseError as e:
            raise CourseError(f"{where}: {e.message}") from None
        value = _number(score)
        if value is None or not 0 <= value <= question.points:
            raise CourseError(
                f"{where}: score must be a number from 0 to {fmt_points(question.points)} (got {score!r})"
            )
        if (learner, qid) in found:
            raise CourseError(
                f"{where}: a second override for {learner!r} / {qid!r} "
                f"(the first is at {found[learner, qid].where})"
            )
        found[learner, qid] = Override(learner, qid, value, reason, where)
    return list(found.values())


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None
