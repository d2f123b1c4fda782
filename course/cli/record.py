"""``python -m course record``: run lessons on this GPU and write evidence.

For each lesson: its own run, its host's named cases (``page.run(case=...)``, in this
process: they fail a check, nothing worse), and the suggested experiments
its ``content/experiments/<lesson>.toml`` marks ``record = true``. Those are
edits of the kernel that may fault or hang, so they run as a learner's copy
does, in a separate process with a time limit (``course.tryout.sandbox``); the
evidence keeps the outcome and what the run printed, and the page shows it
(``page.evidence(name)``) where it cannot run the experiment itself.

Only a real run writes evidence: on a machine that cannot run a lesson,
nothing is written.

Exit status: 0 when every run came out as its page says (the evidence is
written either way); 1 when one did not (a lesson's check failed, or an
case or experiment did not break as the page says it does); 2 when this machine cannot run a
lesson (after saying why; nothing is written for it).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..kernel import evidence, gate
from ..kernel.host import Case, host_of, run_lesson
from ..lessons import LESSONS, get_lesson

if TYPE_CHECKING:
    from ..kernel.gate import Machine
    from ..lesson import Lesson


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record", help="run lessons on this GPU and write evidence/<gpu model>/<lesson>.json")
    p.add_argument(
        "lessons",
        nargs="*",
        metavar="LESSON",
        help=f"lessons to record (default: all of {', '.join(LESSONS)})",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the evidence files (default: evidence/<this GPU's model>/)",
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
        # The lesson's own run, then each named case (recorded so a page without
        # a GPU shows what really happens): (file, command, options, outcome the page promises, note).
        # Written into the folder of this GPU's model (evidence.path_of).
        key = evidence.device_key(machine.gpu.name) if machine.gpu else None
        runs: list[tuple[Path, str, dict[str, Any], bool, Case | None]] = [
            (evidence.path_of(lesson, key=key), f"python -m course run {lesson.id}", {}, True, None)
        ]
        for e in host_of(lesson).cases:
            command = f"page.run(case={e.name!r}) ({lesson.id})"
            runs.append((evidence.path_of(lesson, e.name, key), command, e.options, e.expect_pass, e))
        for where, command, options, expect_pass, case in runs:
            result = run_lesson(lesson, progress=lambda line: print(line, flush=True), **options)
            note = f"case: {case.says}" if case else f"compile: {result.compile_summary}"
            ev = evidence.record(
                lesson,
                machine,
                result.lines,
                result.passed,
                command=command,
                timings=result.seconds,
                notes=[note, *args.note],
                path=(args.out / where.name) if args.out else where,
            )
            as_promised = result.passed == expect_pass
            if case is None:
                print(f"{lesson.id}: evidence written ({ev.summary()})")
            else:
                print(
                    f"{lesson.id}, case {case.name}: evidence written; outcome as the page says: {as_promised}"
                )
            if not as_promised:
                status = max(status, 1)
        status = max(status, record_suggested(lesson, machine, args.out, args.note))
    return status


def record_suggested(lesson: Lesson, machine: Machine, out: Path | None, extra_notes: list[str]) -> int:
    """Run the lesson's suggested experiments marked ``record = true`` in the sandbox; write their
    evidence. 1 when one did not do what its page promises, else 0."""
    # when this subcommand runs: python -m course starts without it
    from ..tryout.sandbox import DEFAULT_TIMEOUT_S, run_variant
    from ..tryout.suggestions import load_suggestions

    status = 0
    original = lesson.kernel_path.read_text(encoding="utf-8")
    for s in (s for s in load_suggestions(lesson) if s.record):
        with tempfile.TemporaryDirectory(prefix=f"course-record-{lesson.id}-") as folder:
            path = Path(folder) / lesson.kernel_file
            path.write_text(s.source(original), encoding="utf-8")
            result = run_variant(lesson, path, DEFAULT_TIMEOUT_S)
        where = evidence.path_of(
            lesson, s.name, evidence.device_key(machine.gpu.name) if machine.gpu else None
        )
        lines = [*result.output, f"{result.outcome}: {result.headline}"]
        if result.error_name:
            lines.append(f"CUDA error: {result.error_name}")
        evidence.record(
            lesson,
            machine,
            lines,
            result.passed,
            command=f"page.try_mine(experiment={s.name!r}) ({lesson.id})",
            timings={"run": result.seconds},
            notes=[f"experiment: {s.title}", f"the page expects: {s.expect_text}", *extra_notes],
            path=(out / where.name) if out else where,
            outcome=result.outcome,
        )
        as_promised = s.confirms(result.outcome)
        print(
            f"{lesson.id}, suggested experiment {s.name}: {result.outcome}; evidence written; "
            f"outcome as the page says: {as_promised}"
        )
        if not as_promised:
            status = 1
    return status
