"""What ``python -m course progress`` says of a lesson's coding exercises: passed, and which are left.

The coding kind's entry in ``course.content.CONTENT_KINDS`` names this module.
"""

from __future__ import annotations

from typing import Any

from ..content import left_text
from ..errors import CourseError
from ..lesson import Lesson
from .coding import exercise_ids


def summary(lesson: Lesson, saved: dict[str, Any]) -> dict[str, Any]:
    try:
        ids = exercise_ids(lesson)
    except CourseError as e:
        return {"error": str(e)}
    passed = [i for i in ids if isinstance(saved.get(i), dict) and saved[i].get("passed") is True]
    return {"total": len(ids), "passed": len(passed), "left": [i for i in ids if i not in passed]}


def lines(coding: dict[str, Any]) -> list[str]:
    if "error" in coding:
        return [f"  coding      cannot be read: {coding['error']}"]
    if coding["total"] == 0:
        return ["  coding      none on this page"]
    done = " (done)" if coding["passed"] == coding["total"] else left_text(coding["left"])
    return [f"  coding      {coding['passed']} of {coding['total']} passed{done}"]
