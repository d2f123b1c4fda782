"""``python -m course coding``: the coding exercises: list them, check your piece, validate the files.

    python -m course coding list [LESSON]
    python -m course coding check LESSON EXERCISE [--file FILE] [--timeout S]
    python -m course coding validate [FILE ...]      (default: every content/coding/*.toml)

``check`` checks the piece between the markers of your file (default: your
file in the workspace, ``<workspace>/<lesson>/coding/<exercise>.cu``, made
from the starter on first use) every way this machine can: on a GPU that
runs the lesson, with the lesson's own check in a separate process; else on
the CPU against the course's model. It says which check ran.

Exit status of ``check``: 0 passed; 1 it ran and was wrong (a wrong result,
a fault, a hang, refused by the GPU), or it was refused before compiling
(code that could leave its function, named by its line in the file); 2
nothing here could check it; 3 it does not compile. ``validate``: 0 every file is valid; 1 a file has a problem (named
with its file and line).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .._data import read_text
from ..errors import CourseError
from ..lessons import LESSONS, get_lesson
from ..tryout.sandbox import DEFAULT_TIMEOUT_S
from ..tryout.workspace import MAX_KERNEL_BYTES
from .try_ import _seconds

EXIT = {"passed": 0, "compile-error": 3, "not-checked": 2}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "coding",
        help="coding exercises: list, check your piece, validate the exercise files",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="coding_command", metavar="ACTION")
    actions.required = True
    ls = actions.add_parser("list", help="the coding exercises, per lesson")
    ls.add_argument("lesson", nargs="?", choices=sorted(LESSONS))
    ls.set_defaults(func=_list)
    check = actions.add_parser("check", help="check your piece of an exercise")
    check.add_argument("lesson", choices=sorted(LESSONS))
    check.add_argument("exercise")
    check.add_argument("--file", type=Path, help="a file holding the exercise's markers (default: yours)")
    check.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="S")
    check.set_defaults(func=_check)
    validate = actions.add_parser("validate", help="check exercise files; exit 1 on any problem")
    validate.add_argument("files", nargs="*", type=Path, metavar="FILE")
    validate.set_defaults(func=_validate)


def _list(args: argparse.Namespace) -> int:
    # when this subcommand runs: python -m course starts without it
    from ..exercises.coding import load_coding

    for lesson_id in [args.lesson] if args.lesson else list(LESSONS):
        for ex in load_coding(get_lesson(lesson_id)):
            where = "GPU, or CPU model" if ex.cpu is not None else "GPU only"
            print(f"{lesson_id} {ex.id}: {ex.title} (checked on: {where})")
    return 0


def _check(args: argparse.Namespace) -> int:
    # when this subcommand runs: python -m course starts without it
    from ..exercises.coding import get_exercise, learner_file, piece_of
    from ..exercises.coding_check import check_piece
    from ..exercises.coding_piece import PieceRefused

    lesson = get_lesson(args.lesson)
    ex = get_exercise(lesson, args.exercise)
    if args.file is not None:
        # The one reader of named files: a FIFO or a device is refused, never waited on or read whole.
        text = read_text(args.file, "the file to check", limit=MAX_KERNEL_BYTES)
        piece, file = piece_of(text, ex, args.file), args.file
    else:
        mine = learner_file(lesson, ex)
        if mine.created:
            print(f"made your file from the starter: {mine.path}")
        piece = mine.piece()
        text, file = mine.text(), mine.path
    print(f"{lesson.id} {ex.id}: checking ...", flush=True)
    try:
        result = check_piece(lesson, ex, piece, timeout_s=args.timeout)
    except PieceRefused as e:  # nothing was compiled: like a wrong answer, with the line in the file
        begin = next(i for i, ln in enumerate(text.splitlines()) if ln.strip() == ex.markers()[0])
        where = re.sub(
            r"^your code, line (\d+)", lambda m: f"{file}:{begin + 1 + int(m.group(1))}", e.message
        )
        print(f"refused: {where}")
        return 1
    print(result)
    return EXIT.get(result.outcome, 1)


def _validate(args: argparse.Namespace) -> int:
    # when this subcommand runs: python -m course starts without it
    from ..exercises.coding import coding_path, load_coding

    files = list(args.files)
    if not files:
        files = [coding_path(lesson) for lesson in LESSONS.values() if coding_path(lesson).exists()]
    failed = 0
    for path in files:
        lesson_id = path.stem
        try:
            lesson = get_lesson(lesson_id)
            found = load_coding(lesson, path)
        except CourseError as e:
            failed += 1
            print(f"error: {e}", file=sys.stderr)
            continue
        print(f"ok: {path}: {len(found)} exercise(s): {', '.join(e.id for e in found)}")
    if failed:
        print(f"{failed} of {len(files)} exercise files have problems", file=sys.stderr)
        return 1
    return 0
