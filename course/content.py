"""The kinds of content a learner answers, in one list: where each lives, what loads it, what is kept.

Each kind is one entry of ``CONTENT_KINDS``: its name (the kind in the
learner's progress file, ``course.exercises.progress``), its folder under
``content/`` (one ``<lesson>.toml`` per lesson that has it), its loader,
and the module that says, for ``python -m course progress``, what a
learner has done of it (``summary(lesson, saved)``, a JSON-able dict or
None where the lesson has none, and ``lines(summary)``, its lines of the
text report). The loader and the report module are named, not imported:
this list sits at the ground, below the rooms that implement them
(``pkgutil.resolve_name`` and ``importlib`` find them when asked).

A new exercise type is one module (its loader and report) and one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CourseError

__all__ = ["CONTENT_KINDS", "ContentKind", "content_kind", "left_text", "progress_kinds"]


@dataclass(frozen=True)
class ContentKind:
    name: str  # the progress kind and the key in `course progress --json`
    folder: str  # content/<folder>/<lesson>.toml
    loader: str  # "module:function" (pkgutil.resolve_name) that reads one such file
    report: str  # the module with summary(lesson, saved) and lines(summary)


CONTENT_KINDS: tuple[ContentKind, ...] = (
    ContentKind("quiz", "quizzes", "course.quiz.loader:load_quiz", "course.quiz.progress_report"),
    ContentKind(
        "annotation",
        "exercises",
        "course.exercises.annotation:load_exercise",
        "course.exercises.annotation_report",
    ),
    ContentKind("coding", "coding", "course.exercises.coding:load_coding", "course.exercises.coding_report"),
)


def content_kind(name: str) -> ContentKind:
    """The kind called ``name``; a CourseError naming the kinds there are."""
    for kind in CONTENT_KINDS:
        if kind.name == name:
            return kind
    raise CourseError(f"no content kind {name!r}; the kinds are: {', '.join(progress_kinds())}")


def progress_kinds() -> tuple[str, ...]:
    """The kinds a learner's progress file holds, in order."""
    return tuple(kind.name for kind in CONTENT_KINDS)


def left_text(ids: list[str], shown: int = 6) -> str:
    """A report line's tail naming what is left: "; left: a, b and 3 more" (empty when nothing is)."""
    if not ids:
        return ""
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"; left: {', '.join(ids[:shown])}{more}"
