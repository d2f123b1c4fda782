"""``python -m course try LESSON [FILE]``: run your version of a lesson's kernel, safely.

The file (default: your copy in the workspace, made on first use; or a
suggested experiment with ``--experiment``) is compiled, run and checked in
a separate process with a time limit (``course.tryout.sandbox``): a fault or a
hang ends that process only.

Exit status: 0 it ran and passed the lesson's check; 1 it compiled but
failed the check, faulted, hung or was refused; 2 this machine cannot run
it (it was compile-checked without a GPU, and the output says so); 3 it
does not compile (the message names your file and line).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..lessons import LESSONS, get_lesson
from ..tryout.sandbox import DEFAULT_TIMEOUT_S
from ..tryout.suggestions import load_suggestions


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds (got {text!r})") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds (got {text!r})")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "try",
        help="compile, run and check your version of a lesson's kernel in a separate process",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("lesson", choices=sorted(LESSONS), help="the lesson whose kernel it is")
    p.add_argument(
        "file",
        nargs="?",
        type=Path,
        default=None,
        help="your kernel file (default: your copy in the workspace, made on first use)",
    )
    p.add_argument("--experiment", metavar="NAME", help="run one of the page's suggested experiments instead")
    p.add_argument("--list", action="store_true", help="list the lesson's suggested experiments and exit")
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"stop a run that has not finished after S seconds (default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument("--diff", action="store_true", help="print what differs from the lesson's kernel")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # when this subcommand runs: python -m course starts without it
    from ..tryout.trial import try_kernel

    lesson = get_lesson(args.lesson)
    if args.list:
        for s in load_suggestions(lesson):
            print(f"{s.name}: {s.title} (expected: {s.expect_text})")
        return 0
    if args.file is not None and args.experiment is not None:
        print("error: give a FILE or --experiment, not both")
        return 2
    print(f"{lesson.id}: trying your version of {lesson.kernel_file} ...", flush=True)
    tried = try_kernel(
        lesson, args.file, experiment=args.experiment, timeout_s=args.timeout, original="recorded"
    )
    print(tried)
    if args.diff:
        print(tried.copy.diff() or "(no changes)")
    return tried.exit_code
