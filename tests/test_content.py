"""The one list of content kinds: each kind's folder, loader and report come from its entry.

A new exercise type is one module (its loader and its progress report) and
one entry in ``course.content.CONTENT_KINDS``: the lesson's path for it, the
learner's progress file and ``python -m course progress`` follow.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import types

import pytest

from course import _paths, content
from course.cli import main
from course.content import CONTENT_KINDS, ContentKind
from course.errors import CourseError
from course.exercises import progress
from course.lessons import LESSONS


@pytest.mark.parametrize("kind", CONTENT_KINDS, ids=lambda kind: kind.name)
def test_each_kind_names_a_loader_and_a_report_that_exist(kind):
    loader = pkgutil.resolve_name(kind.loader)
    assert callable(loader)
    report = importlib.import_module(kind.report)
    assert callable(report.summary) and callable(report.lines)
    have = [lesson for lesson in LESSONS.values() if lesson.content_path(kind.name).is_file()]
    assert have, f"no lesson has content/{kind.folder}/"
    assert all(lesson.content_path(kind.name).parent == _paths.content_dir() / kind.folder for lesson in have)


def test_the_lesson_paths_and_the_progress_kinds_read_the_list():
    lesson = next(iter(LESSONS.values()))
    assert (
        lesson.quiz_path
        == lesson.content_path("quiz")
        == _paths.content_dir() / "quizzes" / f"{lesson.id}.toml"
    )
    assert lesson.exercise_path == _paths.content_dir() / "exercises" / f"{lesson.id}.toml"
    assert content.progress_kinds() == ("quiz", "annotation", "coding")
    with pytest.raises(
        CourseError, match="no content kind 'sketch'; the kinds are: quiz, annotation, coding"
    ):
        lesson.content_path("sketch")


def test_a_new_exercise_kind_is_one_module_and_one_list_entry(workspace, monkeypatch, capsys):
    module = types.ModuleType("sketch_kind")  # the one module: its loader and its report
    module.load_sketch = lambda path: {"path": path}  # type: ignore[attr-defined]
    module.summary = lambda lesson, saved: {"drawn": sorted(saved)}  # type: ignore[attr-defined]
    module.lines = lambda s: [f"  sketch      {len(s['drawn'])} drawn"]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sketch_kind", module)
    entry = ContentKind("sketch", "sketches", "sketch_kind:load_sketch", "sketch_kind")  # the one entry
    monkeypatch.setattr(content, "CONTENT_KINDS", (*CONTENT_KINDS, entry))

    lesson = next(iter(LESSONS.values()))
    assert lesson.content_path("sketch") == _paths.content_dir() / "sketches" / f"{lesson.id}.toml"
    progress.record(lesson.id, "sketch", "tile", {"lines": 3}, learner="tester")
    assert progress.restore(lesson.id, "sketch", "tile", learner="tester")["lines"] == 3
    assert set(progress.lesson_progress(lesson.id, learner="tester")) == {
        "quiz",
        "annotation",
        "coding",
        "sketch",
    }

    assert main(["progress", "--learner", "tester", "--lesson", lesson.id]) == 0
    assert "  sketch      1 drawn" in capsys.readouterr().out.splitlines()
    assert main(["progress", "--learner", "tester", "--lesson", lesson.id, "--json"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert page["sketch"] == {"drawn": ["tile"]} and page["quiz"]["total"] > 0

    monkeypatch.setattr(content, "CONTENT_KINDS", CONTENT_KINDS)  # without its entry, the kind is refused
    with pytest.raises(CourseError, match="kind must be one of quiz, annotation, coding"):
        progress.record(lesson.id, "sketch", "tile", {}, learner="tester")
