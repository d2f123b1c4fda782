"""``python -m course timeline LESSON``: the producer/consumer timeline a kernel records itself.

On a GPU that runs the lesson: build its kernel with ``-DCOURSE_TIMELINE``,
record one launch at size N (default 4096) after warm-up launches, check
the result, write ``<lesson>.json`` and ``<lesson>.png`` (default folder
``evidence/<model>/timeline/``) and print the summary.

``--recorded`` reads the timeline recorded in ``evidence/<model>/timeline/`` instead
(no GPU needed) and prints its summary; with ``--out`` it writes that
recording's JSON and a freshly drawn PNG there.

``--trace FILE`` also writes the timeline (recorded here, or with
``--recorded`` the one in evidence/<model>/timeline/) as Chrome Trace Event JSON,
which Perfetto (ui.perfetto.dev) and chrome://tracing open: a track per CTA
and warpgroup, named by its role.

Exit status, as ``course run``: 0 when the timeline was recorded (or read),
1 when the instrumented kernel computed a wrong result (nothing written),
2 when this machine cannot run the lesson, the lesson's kernel has no
timeline stamps, or nothing is recorded (after saying why).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import timeline as tl
from ..errors import CheckFailed, CourseError
from ..kernel import gate
from ..lessons import LESSONS, get_lesson


def instrumented_lessons() -> list[str]:
    """The lessons whose kernel carries the timeline block (``course.timeline.instrumented``)."""
    return [lesson_id for lesson_id, lesson in LESSONS.items() if tl.instrumented(lesson)]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "timeline",
        help="record what each warpgroup of a lesson's kernel does over time; write <lesson>.json and .png",
    )
    stamped = instrumented_lessons()
    p.add_argument(
        "lesson",
        choices=stamped,
        metavar="LESSON",
        help=f"the lesson whose kernel to record: one whose kernel carries the stamps ({', '.join(stamped)})",
    )
    p.add_argument(
        "--n",
        type=int,
        default=None,
        help=f"matrix size to record at (default: {tl.DEFAULT_N})",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for <lesson>.json and <lesson>.png (default: evidence/<model>/timeline/; with --recorded: none)",
    )
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the timeline as Chrome Trace Event JSON to FILE (open it in ui.perfetto.dev or chrome://tracing)",
    )
    p.add_argument(
        "--recorded",
        action="store_true",
        help="draw the timeline recorded in evidence/<model>/timeline/ instead of recording (no GPU needed)",
    )
    p.set_defaults(func=run)


def _show_recorded(lesson_id: str) -> tl.Timeline | None:
    recorded = tl.load(lesson_id, roles=get_lesson(lesson_id).warpgroup_roles)
    if recorded is not None:
        p = recorded.provenance
        origin = f" on {p.device}, {p.recorded_at[:10]}, by: {p.command}" if p else ""
        print(f"The recorded timeline of {lesson_id} (N = {recorded.n}{origin}):")
        print(tl.summarize(recorded).text())
    return recorded


def run(args: argparse.Namespace) -> int:
    lesson = get_lesson(args.lesson)
    if not tl.instrumented(lesson):
        print(
            f"{lesson.id}: {lesson.kernel_file} carries no timeline stamps (no COURSE_TIMELINE block). "
            f"The lessons that record one: {', '.join(instrumented_lessons()) or 'none'}."
        )
        return 2
    if args.recorded:
        if args.n is not None:
            raise CourseError("--n goes with recording; --recorded shows the size that was recorded")
        recorded = _show_recorded(lesson.id)
        if recorded is None:
            print(
                f"No recorded timeline of {lesson.id} is in this checkout "
                f"({tl.store.timeline_dir() / (lesson.id + '.json')}); `python -m course timeline {lesson.id}` on a "
                "Hopper GPU records one."
            )
            return 2
        if args.trace is not None:
            print(
                f"{lesson.id}: wrote the trace {tl.write_trace(recorded, args.trace)} (Perfetto, chrome://tracing)"
            )
        if args.out is not None:
            json_path, png_path = tl.write(recorded, args.out)
            print(f"{lesson.id}: wrote {json_path} and {png_path}")
        else:
            print(
                f"The recorded picture: {tl.store.timeline_dir() / (lesson.id + '.png')} (--out DIR draws it again)"
            )
        return 0
    n = tl.DEFAULT_N if args.n is None else tl.check_size(lesson, args.n)  # before the GPU: no GPU needed
    v = gate.verdict(lesson)
    if not v.runs:
        print(f"Cannot record {lesson.id} here. {v.message()}")
        try:
            _show_recorded(lesson.id)
        except CourseError as e:
            print(f"(the recorded timeline cannot be read: {e})")
        return 2
    command = f"python -m course timeline {lesson.id}" + (f" --n {n}" if args.n is not None else "")
    try:
        timeline = tl.record(lesson, n, progress=lambda line: print(line, flush=True), command=command)
    except CheckFailed as e:
        print(f"{lesson.id}: wrong result with the stamps compiled in, nothing written. {e}")
        return 1
    json_path, png_path = tl.write(timeline, args.out)
    print(tl.summarize(timeline).text())
    print(f"{lesson.id}: wrote {json_path} and {png_path}", flush=True)
    if args.trace is not None:
        print(
            f"{lesson.id}: wrote the trace {tl.write_trace(timeline, args.trace)} (Perfetto, chrome://tracing)"
        )
    return 0
