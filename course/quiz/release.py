"""Release a learner copy of a quiz: the same questions, no key material.

``release_quiz`` loads the instructor's key file, drops every key field
(``answer``, ``answers``, ``accept``, ``anchors``, ``explanation``), marks
the copy ``released = true`` and writes it as TOML. It then reads the
written file back and refuses to leave it in place if it does not load as
a learner copy with the key file's version. Graded pages use this copy;
only the grader holds the key.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..errors import CourseError
from ._io import write_text_atomic
from .loader import load_quiz, parse_quiz
from .model import Quiz, QuizError

_HEADER = (
    "# Learner copy of quiz {id!r}, written by `python -m course quiz release`.\n"
    "# It carries no answers and no explanations; the instructor's key file grades it.\n"
    "# Do not edit: the submissions made with it must match the key's version\n"
    "# ({version}).\n\n"
)


def _string(value: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes; TOML
    # also forbids a raw DEL (U+007F), which JSON leaves alone.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write a non-finite number to TOML (got {value!r})")
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            rows = ",\n".join(f"  {_value(v)}" for v in value)
            return f"[\n{rows},\n]"
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _key(name: str) -> str:
    return name if name.replace("_", "").replace("-", "").isalnum() and name.isascii() else _string(name)


def dumps_quiz(quiz: Quiz, *, include_key: bool = False) -> str:
    """The quiz as TOML text; without ``include_key`` it is a learner copy."""
    lines = ["[quiz]"]
    meta = quiz.view()["quiz"]
    if not include_key:
        meta["released"] = True
    lines += [f"{_key(k)} = {_value(v)}" for k, v in meta.items()]
    for question in quiz.questions:
        fields = question.view()
        if include_key:
            fields.update(question.key())
        lines += ["", "[[questions]]"]
        lines += [f"{_key(k)} = {_value(v)}" for k, v in fields.items()]
    return "\n".join(lines) + "\n"


def release_quiz(key_path: Path | str, out_path: Path | str) -> Quiz:
    """Write the learner copy of the key file at ``key_path`` to ``out_path``."""
    key_path, out_path = Path(key_path), Path(out_path)
    quiz = load_quiz(key_path)
    if quiz.released:
        raise CourseError(
            "this file is already a learner copy (released = true); release from the instructor's key file",
            path=key_path,
        )
    if out_path.exists() and out_path.resolve() == key_path.resolve():
        raise CourseError(
            "the learner copy must not overwrite the key file; choose another -o path", path=out_path
        )
    learner = quiz.learner_copy()
    text = _HEADER.format(id=quiz.id, version=quiz.version) + dumps_quiz(learner)
    # Check before writing: the text must load as a learner copy of the same version.
    try:
        check = parse_quiz(text, out_path)
    except QuizError as e:
        raise CourseError(f"internal error: the learner copy does not load ({e})", path=out_path) from None
    if not check.released or check.version != quiz.version:
        raise CourseError("internal error: the learner copy's version differs from the key's", path=out_path)
    write_text_atomic(out_path, text)
    return check
