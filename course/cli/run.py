"""``python -m course run LESSON``: run a lesson's kernel and check it.

Exit status: 0 when the kernel ran and its check passed, 1 when the check
failed, 2 when this machine cannot run it (after saying why).
"""

from __future__ import annotations

import argparse

from ..kernel import evidence, gate
from ..kernel.host import run_lesson
from ..lessons import LESSONS, get_lesson


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="compile, run and check one lesson's kernel on this GPU")
    p.add_argument("lesson", choices=sorted(LESSONS), help="the lesson to run")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    lesson = get_lesson(args.lesson)
    v = gate.verdict(lesson)
    if not v.runs:
        print(f"Cannot run {lesson.id} here. {v.message()}")
        if v.tier == "wrong-gpu":
            # when this subcommand runs: python -m course starts without it
            from ..kernel.compile import compile_offline

            print(f"Compile check: {compile_offline(lesson).summary()}.")
        ev = evidence.load(lesson)
        if ev is not None:
            print(ev)
        else:
            print(f"Not recorded yet: no run of {lesson.id} on a real GPU is in this checkout.")
        return 2
    result = run_lesson(lesson, progress=lambda line: print(line, flush=True))
    return 0 if result.passed else 1
