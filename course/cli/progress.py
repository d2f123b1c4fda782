"""``python -m course progress``: per page, what is done and what is left; reset one page.

    python -m course progress [--learner ID] [--lesson LESSON] [--json]
    python -m course progress --reset LESSON [--learner ID]

Reads the learner's progress file (``<workspace>/progress/<learner>.json``,
written by the pages: ``course.exercises.progress``) and, for each lesson page in
order, says how many quiz questions are answered right, whether the
annotation exercise was checked and how it scored, and how many coding
exercises passed, naming what is left. A quiz answer is scored again against
the current key, so a changed key is reflected. ``--reset`` forgets one
page's progress (asks nothing): what it removes is first written to a
backup file, whose path is printed.

Exit status: 0; 2 for a bad learner id or lesson (one message, no traceback).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..errors import CourseError
from ..exercises import progress
from ..exercises.annotation import PROGRESS_ITEM
from ..exercises.coding import exercise_ids
from ..lesson import Lesson
from ..lessons import LESSONS, get_lesson
from ..quiz.loader import load_quiz
from ..quiz.model import Code, Question


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "progress",
        help="what is done and what is left on each page; reset one page",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--learner",
        metavar="ID",
        help="whose progress (default: $COURSE_LEARNER, else $JUPYTERHUB_USER, else your login name, else 'default')",
    )
    p.add_argument("--lesson", metavar="LESSON", help="one page only")
    p.add_argument("--reset", metavar="LESSON", help="forget this page's progress (a backup is kept)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=_run)


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


def _quiz(lesson: Lesson, saved: dict[str, Any]) -> dict[str, Any]:
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


def _annotation(lesson: Lesson, saved: dict[str, Any]) -> dict[str, Any] | None:
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


def _coding(lesson: Lesson, saved: dict[str, Any]) -> dict[str, Any]:
    try:
        ids = exercise_ids(lesson)
    except CourseError as e:
        return {"error": str(e)}
    passed = [i for i in ids if isinstance(saved.get(i), dict) and saved[i].get("passed") is True]
    return {"total": len(ids), "passed": len(passed), "left": [i for i in ids if i not in passed]}


def page_progress(lesson: Lesson, learner: str | None) -> dict[str, Any]:
    saved = progress.lesson_progress(lesson.id, learner=learner)
    return {
        "lesson": lesson.id,
        "title": lesson.title,
        "quiz": _quiz(lesson, saved["quiz"]),
        "annotation": _annotation(lesson, saved["annotation"]),
        "coding": _coding(lesson, saved["coding"]),
    }


def _left(ids: list[str], shown: int = 6) -> str:
    if not ids:
        return ""
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"; left: {', '.join(ids[:shown])}{more}"


def _text(page: dict[str, Any]) -> list[str]:
    lines = [f"{page['lesson']}  {page['title']}"]
    quiz = page["quiz"]
    if "error" in quiz:
        lines.append(f"  quiz        cannot be read: {quiz['error']}")
    else:
        done = " (done)" if quiz["right"] == quiz["total"] else _left(quiz["left"])
        lines.append(
            f"  quiz        {quiz['right']} of {quiz['total']} answered right "
            f"({quiz['answered']} answered){done}"
        )
    note = page["annotation"]
    if note is None:
        lines.append("  annotation  none on this page")
    elif not note["checked"]:
        lines.append("  annotation  not checked yet; left: mark the lines and Check")
    else:
        how = f"{note['score']} of {note['total']} roles right"
        rest = " (done: full marks)" if note["full_marks"] else "; left: full marks"
        lines.append(f"  annotation  checked, {how}{rest}")
    coding = page["coding"]
    if "error" in coding:
        lines.append(f"  coding      cannot be read: {coding['error']}")
    elif coding["total"] == 0:
        lines.append("  coding      none on this page")
    else:
        done = " (done)" if coding["passed"] == coding["total"] else _left(coding["left"])
        lines.append(f"  coding      {coding['passed']} of {coding['total']} passed{done}")
    return lines


def _run(args: argparse.Namespace) -> int:
    learner = progress.learner_id(args.learner)  # a bad id is refused before anything is read
    path = progress.progress_path(learner)
    if args.reset is not None:
        if args.reset not in LESSONS and args.reset not in progress.saved_lessons(learner=learner):
            get_lesson(args.reset)  # the registry's message: no lesson named ..., the lessons are ...
        backup = progress.reset(args.reset, learner=learner)
        if args.json:
            print(
                json.dumps(
                    {"learner": learner, "reset": args.reset, "backup": str(backup) if backup else None}
                )
            )
        elif backup is None:
            print(f"Nothing saved for {args.reset} (learner {learner}): nothing to reset.")
        else:
            print(f"Reset {args.reset} for learner {learner}. What it held is kept in {backup}.")
        return 0
    lessons = [get_lesson(args.lesson)] if args.lesson is not None else list(LESSONS.values())
    pages = [page_progress(lesson, learner) for lesson in lessons]
    if args.json:
        print(json.dumps({"learner": learner, "path": str(path), "pages": pages}, indent=1))
        return 0
    print(f"Progress of learner {learner} ({path}{'' if path.exists() else ', nothing saved yet'})")
    for page in pages:
        print()
        print("\n".join(_text(page)))
    print()
    print(
        f"Reset one page: python -m course progress --reset LESSON{'' if args.learner is None else f' --learner {learner}'}"
    )
    return 0
