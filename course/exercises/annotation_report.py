"""What ``python -m course progress`` says of a lesson's annotation exercise: checked, and its score.

The annotation kind's entry in ``course.content.CONTENT_KINDS`` names this module.
"""

from __future__ import annotations

from typing import Any

from ..lesson import Lesson
from .annotation import PROGRESS_ITEM


def summary(lesson: Lesson, saved: dict[str, Any]) -> dict[str, Any] | None:
    if not lesson.exercise_path.is_file():
        return None
    state = saved.get(PROGRESS_ITEM)
    if not isinstance(state, dict):
        return {"checked": False}
    return {
        "checked": True,
        "score": state.get("score"),
        "total": state.get("total"),
        "full_marks": state.get("full_marks") is True,
        "attempts": state.get("attempts"),
        "saved_at": state.get("saved_at"),
    }


def lines(note: dict[str, Any] | None) -> list[str]:
    if note is None:
        return ["  annotation  none on this page"]
    if not note["checked"]:
        return ["  annotation  not checked yet; left: mark the lines and Check"]
    how = f"{note['score']} of {note['total']} roles right"
    rest = " (done: full marks)" if note["full_marks"] else "; left: full marks"
    return [f"  annotation  checked, {how}{rest}"]
