"""Release a learner copy of a quiz: the same questions, no key material.

``release_quiz`` loads the instructor's key file, drops every key field
(``answer``, ``answers``, ``accept``, ``anchors``, ``explanation``), marks
the copy ``released = true`` and writes it as TOML. It then reads the
written file back and refuses to leave it in place if it does not load as
a learner copy with the key file's version. Graded pages use this copy;
only the grader holds the key.
"""

from __future__ import annotations

from pathlib import Path

import tomli_w

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


def dumps_quiz(quiz: Quiz, *, include_key: bool = False) -> str:
    """The quiz as TOML text (tomli-w, the tomli project's writer); without ``include_key`` a learner copy."""
    meta = quiz.view()["quiz"]
    if not include_key:
        meta["released"] = True
    questions = []
    for question in quiz.questions:
        fields = question.view()
        if include_key:
            fields.update(question.key())
        questions.append(fields)
    return tomli_w.dumps({"quiz": meta, "questions": questions})


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
