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
import importlib
import json
from typing import Any

from .. import content
from ..exercises import progress
from ..lesson import Lesson
from ..lessons import LESSONS, get_lesson


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


def page_progress(lesson: Lesson, learner: str | None) -> dict[str, Any]:
    """The lesson's line of the report: for each kind of content, what its report module says."""
    saved = progress.lesson_progress(lesson.id, learner=learner)
    page: dict[str, Any] = {"lesson": lesson.id, "title": lesson.title}
    for kind in content.CONTENT_KINDS:
        page[kind.name] = importlib.import_module(kind.report).summary(lesson, saved[kind.name])
    return page


def _text(page: dict[str, Any]) -> list[str]:
    lines = [f"{page['lesson']}  {page['title']}"]
    for kind in content.CONTENT_KINDS:
        lines += importlib.import_module(kind.report).lines(page[kind.name])
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
