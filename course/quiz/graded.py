"""Graded quizzes: learners get the released copy only; the key stays with the instructor.

A practice quiz keeps its key in the course's files on purpose (its Check
buttons need it, and a learner who reads the key reads the explanations
too). A graded quiz is different: the course's files carry only its
released copy, ``content/quizzes/graded/<id>.toml`` (``quiz release``
writes it: no answer, no explanation), and the key lives in the
instructor's own folder outside the course, ``~/hopper-course-keys/<id>.toml``
(``KEYS_FOLDER``; a private repository of the instructor's, never the
course's), which the learner image and the pulled repository never hold.
``quiz grade ~/hopper-course-keys/<id>.toml collected/ -o grades/<id>``
grades with it.

``key_leaks(tree)`` finds any key of a graded quiz in a tree (a checkout,
an unpacked wheel, a learner's pulled copy): a file in a ``graded/`` folder
that is not a released copy, or any quiz file elsewhere that is the key of
a quiz released there (same id, not released). ``quiz validate`` refuses a
key in ``graded/``, and the wheel's build (setup.py) refuses to ship one.
"""

from __future__ import annotations

from pathlib import Path

from .. import _paths
from .loader import load_quiz
from .model import QuizError

__all__ = ["GRADED", "KEYS_FOLDER", "graded_folder", "graded_path", "key_leaks", "misplaced_key"]

GRADED = "graded"  # content/quizzes/graded/: the released copies of graded quizzes, nothing else
KEYS_FOLDER = "~/hopper-course-keys"  # where the instructor keeps the keys of graded quizzes


def graded_folder() -> Path:
    return _paths.content_dir() / "quizzes" / GRADED


def graded_path(quiz_id: str) -> Path | None:
    """The released copy of graded quiz ``quiz_id`` in the course's files, or None."""
    path = graded_folder() / f"{quiz_id}.toml"
    return path if path.is_file() else None


def misplaced_key(path: Path, released: bool) -> str | None:
    """Why a quiz file at ``path`` must not be there: a key in a ``graded/`` folder; else None."""
    if Path(path).parent.name == GRADED and not released:
        return (
            f"this is a key (answers and explanations) in a {GRADED}/ folder, which ships to every "
            f"learner (the package and the pulled pages): keep a graded quiz's key in {KEYS_FOLDER}/ "
            f"and put here only its released copy (quiz release KEY.toml -o {Path(path).name})"
        )
    return None


def key_leaks(tree: Path) -> list[str]:
    """Every key of a graded quiz found in ``tree``, one line each (empty: none is there)."""
    tree = Path(tree)
    leaks = []
    graded: set[str] = set()
    quizzes = []
    for path in sorted(tree.rglob("*.toml")):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            quiz = load_quiz(path)
        except QuizError:
            if path.parent.name == GRADED:
                leaks.append(f"{path}: in a {GRADED}/ folder but not a quiz that loads; it may hold a key")
            continue
        quizzes.append((path, quiz))
        if path.parent.name == GRADED:
            why = misplaced_key(path, quiz.released)
            if why is not None:
                leaks.append(f"{path}: {why}")
            graded.add(quiz.id)
    for path, quiz in quizzes:
        if quiz.id in graded and not quiz.released and path.parent.name != GRADED:
            leaks.append(
                f"{path}: the key of graded quiz {quiz.id!r}, which learners may get only as released"
            )
    return leaks
