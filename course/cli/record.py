"""``python -m course record``: run lessons on this GPU and write evidence.

Only a real run writes evidence: on a machine that cannot run a lesson,
nothing is written and the exit status is 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import evidence, gate
from ..lessons import LESSONS, get_lesson


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record", help="run lessons on this GPU and write evidence/<lesson>.json")
    p.add_argument("lessons", nargs="*", choices=sorted(LESSONS) + [[]], help="lessons (default: all)")
    p.add_argument(
        "--out", type=Path, default=None, help="folder for the evidence files (default: evidence/)"
    )
    p.add_argument("--note", action="append", default=[], help="a note to keep with the evidence")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import day76, day78

    modules = {"day76": day76, "day78": day78}
    machine = gate.probe()
    status = 0
    for lesson_id in args.lessons or list(LESSONS):
        lesson = get_lesson(lesson_id)
        v = gate.verdict(lesson, machine)
        if not v.runs:
            print(f"{lesson.id}: not recorded. {v.message()}")
            status = max(status, 2)
            continue
        result = modules[lesson_id].run(progress=lambda line: print(line, flush=True))
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
    return status
