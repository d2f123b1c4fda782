"""``python -m course quiz``: validate, release and grade quizzes.

    python -m course quiz validate FILE...
    python -m course quiz release KEY.toml -o LEARNER.toml
    python -m course quiz grade KEY.toml SUBMISSIONS_DIR -o OUTDIR
        [--overrides FILE.csv|FILE.toml] [--budget SECONDS] [--jobs N] [--one-off] [--progress]
        [--unconfined]
        [--canvas GRADEBOOK.csv --canvas-column "Day 76 quiz (1234)"
         [--canvas-match "SIS Login ID"] [--canvas-out PATH] [--names MAP.csv]]
    python -m course quiz collect QUIZ_ID... --hub-url URL -o COLLECTED_DIR
        [--users A,B | --group G] [--exclude C] [--from-servers] ... (course.cli.quiz_collect)

Problems the user can fix are printed as messages with file and line,
never a traceback.

``grade`` probes the sandbox first (``course._confine.require_sandbox``):
where none works it says why and how to get one, runs no code answer (each
scores 0, "not-run", flagged) and grades the other questions;
``--unconfined`` runs them anyway, said on stderr and in every learner's
flags, every code answer's note and ``UNCONFINED.txt`` beside the reports.

Exit status: 0 when the files are valid (validate), the learner copy is
written (release), the grades are written (grade) or every learner's
submission was saved (collect); 1 when validate finds a problem in a file
or collect could not read some learner's file (each is a line saying why);
3 when collect read every source but some learner's work is missing; 2 for
input that cannot be used (a file that does not load, a bad option), with
one message naming it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from .. import _confine
from .._files import shown
from ..errors import CourseError
from ..quiz._io import write_atomic
from ..quiz.canvas import fill_gradebook, rows_text
from ..quiz.checks import key_length_problems, key_position_problems, markup_problems
from ..quiz.grade import UNCONFINED_FLAG, grade_submissions, quiz_folder, write_reports
from ..quiz.graded import misplaced_key
from ..quiz.loader import load_quiz
from ..quiz.model import Code, QuizError, fmt_points
from ..quiz.names import read_names
from ..quiz.parallel import default_jobs, find_gpus
from ..quiz.release import release_quiz
from .quiz_collect import register_collect

UNCONFINED_REPORT = "UNCONFINED.txt"  # written with the reports when --unconfined ran a learner's code


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "quiz",
        help="validate, release and grade quizzes",
        description="Validate, release and grade the TOML quizzes.",
    )
    sub = parser.add_subparsers(dest="quiz_command", metavar="ACTION")
    sub.required = True

    validate = sub.add_parser("validate", help="check quiz files; exit 1 on any problem")
    validate.add_argument("files", nargs="+", type=Path, metavar="FILE")
    validate.set_defaults(func=_validate)

    release = sub.add_parser("release", help="write a learner copy with no key material")
    release.add_argument("key", type=Path, metavar="QUIZ.toml")
    release.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.toml")
    release.set_defaults(func=_release)

    grade = sub.add_parser("grade", help="score a folder of submissions against the key")
    grade.add_argument("key", type=Path, metavar="KEY.toml")
    grade.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR")
    grade.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR")
    grade.add_argument(
        "--overrides",
        type=Path,
        metavar="FILE",
        help="regrades: CSV learner,question,score,reason or TOML [[override]] tables",
    )
    grade.add_argument("--canvas", type=Path, metavar="GRADEBOOK.csv", help="a Canvas gradebook export")
    grade.add_argument(
        "--canvas-column", metavar="COLUMN", help='the assignment column, e.g. "Day 76 quiz (1234)"'
    )
    grade.add_argument(
        "--canvas-match",
        default="SIS Login ID",
        metavar="COLUMN",
        help="the gradebook column holding the learner ids (default: SIS Login ID)",
    )
    grade.add_argument(
        "--canvas-out",
        type=Path,
        metavar="PATH",
        help="where the filled gradebook goes (default: OUTDIR/canvas.csv)",
    )
    grade.add_argument(
        "--names",
        type=Path,
        metavar="MAP.csv",
        help="a CSV table hub_user,login: the gradebook login of each JupyterHub user "
        "(content/quizzes/README.md); a user without a row is matched by their hub name",
    )
    grade.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="time for running all code answers; once spent, the rest score 0 and are flagged "
        "(default: three run limits per distinct answer and a minute, at most 4 hours)",
    )
    grade.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="code answers run at a time, each slot with its own child (on the GPU a worker that runs one "
        "answer after another) shown one GPU, spread over every visible GPU (CUDA_VISIBLE_DEVICES, "
        "else nvidia-smi -L); a hang holds one slot for its time limit "
        f"(default: the cores this process may use, {default_jobs()} here)",
    )
    grade.add_argument(
        "--one-off",
        action="store_true",
        help="run each code answer's GPU check in a new child of its own, as a learner's Check does, "
        "instead of in a worker that runs one answer after another (slower: a CUDA context per answer)",
    )
    grade.add_argument(
        "--progress",
        action="store_true",
        help="show a progress bar of the code answers on stderr even when it is not a terminal",
    )
    grade.add_argument(
        "--unconfined",
        action="store_true",
        help="run code answers even where no sandbox (bubblewrap) works: learners' code then runs with "
        "your rights; said in every report (default: such answers are not run, score 0 and are flagged)",
    )
    grade.set_defaults(func=_grade)

    register_collect(sub)


def _validate(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.files:
        try:
            quiz = load_quiz(path)
        except QuizError as e:
            failed += 1
            print(f"error: {e}", file=sys.stderr)
            continue
        misplaced = misplaced_key(path, quiz.released)
        if misplaced is not None:
            failed += 1
            print(f"error: {shown(path)}: {misplaced}", file=sys.stderr)
            continue
        kind = "learner copy" if quiz.released else "key"
        print(
            f"ok: {shown(path)}: quiz {quiz.id!r} ({kind}), {len(quiz.questions)} questions, "
            f"{fmt_points(quiz.max_points)} points, version {quiz.version[:19]}"
        )
        for problem in key_position_problems(quiz) + key_length_problems(quiz) + markup_problems(quiz):
            print(f"warning: {shown(path)}: {problem}", file=sys.stderr)
    if failed:
        print(f"{failed} of {len(args.files)} quiz files have problems", file=sys.stderr)
        return 1
    return 0


def _release(args: argparse.Namespace) -> int:
    learner = release_quiz(args.key, args.output)
    print(
        f"wrote {args.output}: learner copy of quiz {learner.id!r}, no key material, "
        f"version {learner.version[:19]}"
    )
    return 0


def _grade(args: argparse.Namespace) -> int:
    if (args.canvas is None) != (args.canvas_column is None):
        raise CourseError("--canvas and --canvas-column go together: give both or neither")
    if args.names is not None and args.canvas is None:
        raise CourseError("--names maps hub users to gradebook logins: give it with --canvas")
    logins = read_names(args.names) if args.names is not None else None  # read before any grading
    if args.output.resolve().is_relative_to(args.submissions.resolve()):
        raise CourseError(
            f"write the reports outside the submissions folder (got -o {shown(args.output)} inside "
            f"{shown(args.submissions)}); the grader reads every file under it"
        )
    key = load_quiz(args.key)
    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        raise CourseError(f"--jobs must be at least 1 (got {jobs})")
    gpus = None
    if any(isinstance(q, Code) for q in key.questions):
        gpus = find_gpus()
        print(f"grading code: {jobs} answers at a time; {gpus.describe()}", file=sys.stderr)
    run_code = None
    if gpus is not None:
        # heavy: the sandbox and the compilers, only for a quiz with code questions (as grade_submissions does)
        from ..quiz.code_runner import CodeRunner

        _confine.become_reaper()  # what a learner's daemon leaves when its keeper is killed comes here
        run_code = CodeRunner(workers=not args.one_off, unconfined=args.unconfined)
        try:
            print(f"grading code {run_code.sandbox()}", file=sys.stderr)
        except _confine.NoSandbox as e:
            print(
                f"not running code answers: {e.message}. Each scores 0 (not-run) and is flagged; the other "
                "questions are graded. Or grade with --unconfined to run them without a sandbox.",
                file=sys.stderr,
            )
    # A bar of the code answers on stderr: on a terminal, or when asked (tqdm's disable=None: off otherwise).
    with tqdm(
        desc="code answers", unit="answer", file=sys.stderr, disable=None if not args.progress else False
    ) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            report = grade_submissions(
                key,
                args.submissions,
                overrides=args.overrides,
                budget_s=args.budget,
                progress=progress,
                jobs=jobs,
                gpus=gpus,
                run_code=run_code,
            )
        finally:
            if run_code is not None:
                run_code.close()  # its GPU workers end here
                _confine.become_reaper(False)  # what is left is killed; this process adopts no more
    # The filled gradebook is made before anything is written; in the report folder (the default),
    # it is written with the reports, so all of them are new or all as they were.
    export, canvas = None, b""
    if args.canvas is not None:
        out = args.canvas_out or args.output / "canvas.csv"
        export, canvas = fill_gradebook(
            report, args.canvas, args.canvas_column, out, match_column=args.canvas_match, names=logins
        )
    beside = export is not None and export.path.parent.resolve() == args.output.resolve()
    also = {export.path.name: canvas} if export is not None and beside else {}
    unconfined = [r.learner for r in report.results if UNCONFINED_FLAG in r.flags]
    if unconfined:  # --unconfined ran someone's code: a file of its own beside the reports says so
        also[UNCONFINED_REPORT] = (
            f"{UNCONFINED_FLAG}.\nNo sandbox worked on this machine, and quiz grade was given --unconfined.\n"
            f"Learners whose code ran that way: {', '.join(unconfined)}\n"
        ).encode()
    written = write_reports(report, args.output, also=also)
    if export is not None and not beside:
        write_atomic(export.path, canvas)
    names = ", ".join(p.name for p in written.values())
    print(
        f"graded {len(report.results)} learners of quiz {key.id!r} from {shown(quiz_folder(args.submissions, key))}; "
        f"wrote {names} to {shown(args.output)}"
    )
    if unconfined:
        print(
            f"WARNING: {UNCONFINED_FLAG} (each such learner is in flagged.csv and {UNCONFINED_REPORT})",
            file=sys.stderr,
        )
    for skipped in report.skipped:
        print(f"skipped {shown(skipped.path)}: {skipped.reason}", file=sys.stderr)
    if report.skipped:
        print(f"{len(report.skipped)} files skipped (listed in {shown(written['skipped'])})", file=sys.stderr)
    for flag in report.flagged:
        graded = "" if flag in report.misplaced else " (graded)"
        print(f"flagged {shown(flag.path)}{graded}: {flag.reason}", file=sys.stderr)
    if report.flagged:
        print(
            f"{len(report.flagged)} submissions flagged for a look, {len(report.misplaced)} of them not graded "
            f"(listed in {shown(written['flagged'])})",
            file=sys.stderr,
        )
    if export is not None:
        print(
            f"wrote {shown(export.path)}: column {args.canvas_column!r} filled for {export.filled} students"
        )
        for login, rows in export.duplicates:
            print(
                f"warning: {rows_text(rows)} of {shown(args.canvas)} share {args.canvas_match!r} {login!r}; "
                "none of them was filled: fix the gradebook, or enter that score by hand",
                file=sys.stderr,
            )
        if export.not_in_gradebook:
            print(
                f"not in the gradebook (by {args.canvas_match!r}): {', '.join(export.not_in_gradebook)}",
                file=sys.stderr,
            )
    return 0
