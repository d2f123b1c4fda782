"""What ``python -m course progress`` says of a lesson's quiz: answered, right, left.

A saved answer is scored again against the current key, so a changed key is
reflected. The quiz's entry in ``course.content.CONTENT_KINDS`` names this module.
"""

from __future__ import annotations

from typing import Any

from ..content import left_text
from ..errors import CourseError
from ..lesson import Lesson
from .loader import load_quiz
from .model import Code, Question


def _right(question: Question, state: dict[str, Any]) -> bool:
    """Whether a saved answer earns full marks now (a code answer: its last run passed)."""
    if state.get("type") != question.type:
        return False
    if isinstance(question, Code):
        return state.get("checked") is True and state.get("fraction") == 1.0
    try:
        return question.fraction(state.get("response")) >= 1.0
    except CourseError:  # a response that no longer fits the question
        return False


def summary(lesson: Lesson, saved: dict[str, Any]) -> dict[str, Any]:
    try:
        quiz = load_quiz(lesson.quiz_path)
    except CourseError as e:
        return {"error": str(e)}
    states = {q.id: s for q in quiz.questions if isinstance(s := saved.get(q.id), dict)}
    right = [q.id for q in quiz.questions if q.id in states and _right(q, states[q.id])]
    return {
        "total": len(quiz.questions),
        "answered": len(states),
        "right": len(right),
        "left": [q.id for q in quiz.questions if q.id not in right],
    }


def lines(quiz: dict[str, Any]) -> list[str]:
    if "error" in quiz:
        return [f"  quiz        cannot be read: {quiz['error']}"]
    done = " (done)" if quiz["right"] == quiz["total"] else left_text(quiz["left"])
    return [
        f"  quiz        {quiz['right']} of {quiz['total']} answered right ({quiz['answered']} answered){done}"
    ]
