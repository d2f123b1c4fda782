"""``python -m course bench``: time lesson kernels beside their peers on this GPU.

Writes ``<lesson>.json`` and ``<lesson>.png`` per lesson (default folder
``evidence/bench/``) and prints a table. Exit status: 0 when every lesson
was measured, 1 when a kernel or a peer computed a wrong result (nothing is
timed or written for that lesson), 2 when this machine cannot run a lesson
(after saying why) or the arguments are wrong.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import bench, gate
from ..errors import CheckFailed
from ..lessons import get_lesson


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="time lesson kernels against their peers on this GPU; write <lesson>.json and .png",
    )
    p.add_argument(
        "lessons",
        nargs="*",
        choices=sorted(bench.SIZES) + [[]],
        metavar="LESSON",
        help=f"lessons to time: {', '.join(sorted(bench.SIZES))} (default: all)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for <lesson>.json and <lesson>.png (default: evidence/bench/)",
    )
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=None,
        metavar="N",
        help="matrix sizes, multiples of 64 (default: day76 "
        + " ".join(map(str, bench.SIZES["day76"]))
        + "; day78 "
        + " ".join(map(str, bench.SIZES["day78"]))
        + ")",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=bench.DEFAULT_REPEATS,
        help=f"timed repeats per measurement, at least {bench.MIN_REPEATS} (default: {bench.DEFAULT_REPEATS})",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    lesson_ids = list(args.lessons) or sorted(bench.SIZES)
    # Argument errors first, before any GPU work: CourseError, exit 2.
    bench.validate_repeats(args.repeats)
    for lesson_id in lesson_ids:
        if args.sizes is not None:
            bench.validate_sizes(lesson_id, args.sizes)
    machine = gate.probe()
    status = 0
    for lesson_id in lesson_ids:
        lesson = get_lesson(lesson_id)
        v = gate.verdict(lesson, machine)
        if not v.runs:
            print(f"{lesson_id}: not timed, nothing written. {v.message()}")
            status = max(status, 2)
            continue
        command = "python -m course bench " + lesson_id
        if args.sizes is not None:
            command += " --sizes " + " ".join(map(str, args.sizes))
        if args.repeats != bench.DEFAULT_REPEATS:
            command += f" --repeats {args.repeats}"
        try:
            result = bench.measure(
                lesson_id,
                args.sizes,
                args.repeats,
                progress=lambda line: print(line, flush=True),
                command=command,
            )
        except CheckFailed as e:
            print(f"{lesson_id}: wrong result, nothing timed or written. {e}")
            status = max(status, 1)
            continue
        json_path, png_path = bench.write(result, args.out)
        print(bench.table(result))
        print(f"{lesson_id}: wrote {json_path} and {png_path}", flush=True)
    return status
