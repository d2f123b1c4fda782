"""``python -m course record``: run lessons on this GPU and write evidence.

Only a real run writes evidence: on a machine that cannot run a lesson,
nothing is written and the exit status is 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import evidence, gate
from ..host import run_lesson
from ..lessons import LESSONS, get_lesson


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record", help="run lessons on this GPU and write evidence/<lesson>.json")
    p.add_argument(
        "lessons",
        nargs="*",
        metavar="LESSON",
        help=f"lessons to record (default: all of {', '.join(LESSONS)})",
    )
    p.add_argument(
        "--out", type=Path, default=None, help="folder for the evidence files (default: evidence/)"
    )
    p.add_argument("--note", action="append", default=[], help="a note to keep with the evidence")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    machine = gate.probe()
    status = 0
    lessons = [get_lesson(lesson_id) for lesson_id in args.lessons or LESSONS]  # unknown names refused first
    for lesson in lessons:
        v = gate.verdict(lesson, machine)
        if not v.runs:
            print(f"{lesson.id}: not recorded. {v.message()}")
            status = max(status, 2)
            continue
        result = run_lesson(lesson, progress=lambda line: print(line, flush=True))
        path = (args.out / f"{lesson.id}.json") if args.out else None
        ev = evidence.record(
            lesson,
            machine,
            result.lines,
            result.passed,
            command=f"python -m course run {lesson.id}",
            timings=result.seconds,
            notes=[f"compile: {result.compile_summary}", *args.note],
            path=path,
        )
        print(f"{lesson.id}: evidence written ({ev.summary()})")
        if not result.passed:
            status = max(status, 1)
        for experiment in lesson.host().experiments:
            # A "what breaks" run: recorded so a page without a GPU shows what really happens.
            outcome = run_lesson(lesson, progress=lambda line: print(line, flush=True), **experiment.options)
            where = lesson.experiment_evidence_path(experiment.name)
            ev = evidence.record(
                lesson,
                machine,
                outcome.lines,
                outcome.passed,
                command=f"page.run(experiment={experiment.name!r}) ({lesson.id})",
                timings=outcome.seconds,
                notes=[f"experiment: {experiment.says}", *args.note],
                path=(args.out / where.name) if args.out else where,
            )
            as_promised = outcome.passed == experiment.expect_pass
            print(
                f"{lesson.id}, experiment {experiment.name}: evidence written; outcome as the page says: {as_promised}"
            )
            if not as_promised:
                status = max(status, 1)
    return status
