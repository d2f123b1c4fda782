"""The lessons: every package in this folder that declares a ``LESSON``.

Adding a lesson is adding files: its package here (``__init__.py`` with
``LESSON = Lesson(...)``, and ``host.py``, optionally ``bench.py`` and its
figures), its kernel, its notebook and its content. Nothing else lists the
lessons: the CLI, the page, the evidence, the benchmarks and the tests all
read ``LESSONS``.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

from ..errors import CourseError
from ..lesson import Lesson


def _discover() -> dict[str, Lesson]:
    found: list[Lesson] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg or info.name.startswith("_"):
            continue
        name = f"{__name__}.{info.name}"
        module = importlib.import_module(name)
        lesson = getattr(module, "LESSON", None)
        if not isinstance(lesson, Lesson):
            raise CourseError(f"the lesson package {name} must define LESSON = Lesson(...)")
        if lesson.id != info.name:
            raise CourseError(f"the lesson package {name} declares id {lesson.id!r}; the two must agree")
        lesson = dataclasses.replace(lesson, package=name)
        setattr(module, "LESSON", lesson)  # noqa: B010 - so the package's own modules see where they live
        found.append(lesson)
    found.sort(key=lambda lesson: (lesson.day, lesson.id))
    return {lesson.id: lesson for lesson in found}


LESSONS: dict[str, Lesson] = _discover()


def get_lesson(lesson_id: str) -> Lesson:
    try:
        return LESSONS[lesson_id]
    except KeyError:
        raise CourseError(f"no lesson named {lesson_id!r}; the lessons are: {', '.join(LESSONS)}") from None


__all__ = ["LESSONS", "Lesson", "get_lesson"]
