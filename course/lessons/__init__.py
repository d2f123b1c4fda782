"""The lessons: every package in this folder that declares a ``LESSON``.

Adding a lesson is adding files: its package here (``__init__.py`` with
``LESSON = Lesson(...)``, and ``host.py``, optionally ``bench.py`` and its
figures), its kernel, its notebook and its content. Nothing else lists the
lessons: the CLI, the page, the evidence, the benchmarks and the tests all
read ``LESSONS``.

Discovery checks each package's plug-ins as pluggy checks a hook's
implementation: ``host.py`` must define ``HOST``, a ``LessonHost`` of this
lesson, and a ``bench.py``, where there is one, ``SPEC``, a ``BenchSpec``.
A package that breaks either is refused on import, naming its file, so no
later command finds out halfway through a run. The rooms below this one
(the toolchain, the benchmarks, the timeline) read the plug-ins of the
``Lesson`` they are handed (``course.kernel.host.host_of``,
``course.bench.spec.bench_spec``) and never look a lesson up by id.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pkgutil
from collections.abc import Iterable
from pathlib import Path

from ..bench.spec import BenchSpec
from ..errors import CourseError
from ..kernel.host import LessonHost
from ..lesson import Lesson


def _plug_in(lesson: Lesson, name: str, attribute: str, kind: type, what: str) -> Path | None:
    """The file of the lesson's module ``name`` after checking it defines ``attribute``, a ``kind``
    of this lesson; None when the package has no such module."""
    spec = importlib.util.find_spec(f"{lesson.package}.{name}")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin)
    value = getattr(importlib.import_module(spec.name), attribute, None)
    if not isinstance(value, kind):
        got = "nothing" if value is None else type(value).__name__
        raise CourseError(
            f"lesson {lesson.id}: {name}.py must define {attribute}, {what} (found {got})", path=path
        )
    owner = getattr(value, "lesson", lesson)
    if isinstance(owner, Lesson) and owner.id != lesson.id:
        raise CourseError(
            f"lesson {lesson.id}: {name}.py defines {attribute} for lesson {owner.id}, not for {lesson.id} "
            f"(build it from this package's LESSON: {attribute} = ...(LESSON))",
            path=path,
        )
    return path


def _discover(paths: Iterable[str] | None = None) -> dict[str, Lesson]:
    """Every lesson package in ``paths`` (this package's folder), its plug-ins checked."""
    found: list[Lesson] = []
    for info in pkgutil.iter_modules(__path__ if paths is None else list(paths)):
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
        if _plug_in(lesson, "host", "HOST", LessonHost, f"a LessonHost of {lesson.id}") is None:
            raise CourseError(
                f"lesson {lesson.id}: the package must have host.py defining HOST, a LessonHost of "
                f"{lesson.id} (a ladder step: HOST = TmaGemmHost(LESSON))",
                path=Path(module.__file__ or name).parent / "host.py",
            )
        _plug_in(lesson, "bench", "SPEC", BenchSpec, "a BenchSpec")
        found.append(lesson)
    found.sort(key=lambda lesson: (lesson.day, lesson.id))
    return {lesson.id: lesson for lesson in found}


def get_lesson(lesson_id: str) -> Lesson:
    try:
        return LESSONS[lesson_id]
    except KeyError:
        raise CourseError(f"no lesson named {lesson_id!r}; the lessons are: {', '.join(LESSONS)}") from None


LESSONS: dict[str, Lesson] = _discover()


__all__ = ["LESSONS", "Lesson", "get_lesson"]
