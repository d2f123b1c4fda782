"""Time grading a class's code answers: one code question, distinct answers, serial and side by side.

    python benchmarks/code_grade_bench.py [--answers 300] [--jobs N | --jobs-per-gpu N]
        [--gpus all | --gpus 1,all] [--serial-sample 40] [--out FILE.json] [--keep]

Writes a one-question quiz (Day 78's coding exercise, ``core-offset``) and
``--answers`` submissions into a temporary folder, each a distinct text: 60%
right (the exercise's reference rewritten: other names, comments, a local
variable), 25% a wrong result and 10% a fault (the exercise's own wrong
pieces, rewritten the same way), 5% an endless loop; learner names are
shuffled, so the loops fall anywhere in the run. Then it grades them as
``python -m course quiz grade`` does (``grade_submissions``, the default
``CodeRunner``, its default time limits):

- serially (``jobs=1``) on a sample of ``--serial-sample`` answers that keeps
  the mix (0: no serial run; the whole set takes minutes);
- side by side (``--jobs``, default: the usable cores) over the first GPU and
  over every visible GPU (``--gpus``: a comma list of counts, or ``all``),

each starting from the same compile caches (one throwaway piece graded
first: CuPy's own kernels compiled), so no run reuses another's compiles
of the answers. It
prints each run's wall time, answers per second and its ratio to the serial
rate, and checks that every answer's score and outcome is the same in every
run (exit 1 if not). The target (issue 25): 300 answers on one H200 in at
most 60 s. ``COURSE_REQUIRE_GPU=1`` makes a machine whose GPU cannot run the
lesson an error, and any answer checked elsewhere than on the GPU a failure.
Without a GPU the CPU check (g++) grades: the numbers then say so.
Generating the files is not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course.errors import CourseError  # noqa: E402
from course.exercises.coding import get_exercise  # noqa: E402
from course.kernel import gate  # noqa: E402
from course.lessons import get_lesson  # noqa: E402
from course.quiz.code_runner import CodeRunner  # noqa: E402
from course.quiz.grade import GradeReport, grade_submissions  # noqa: E402
from course.quiz.loader import load_quiz  # noqa: E402
from course.quiz.parallel import Gpus, default_jobs, find_gpus  # noqa: E402
from course.quiz.submission import Submission, write_submission  # noqa: E402

LESSON, EXERCISE = "day78", "core-offset"
MIX = (("right", 0.60), ("wrong result", 0.25), ("faulting", 0.10), ("endless loop", 0.05))
TARGET_ANSWERS, TARGET_S = 300, 60.0
SERIAL_SAMPLE = 40  # the serial measurement: 40 answers, 64.7 s on the H200 machine
NAMES = ("offset", "off", "idx", "elem", "pos", "where", "at", "slot")


def _expression(piece: str) -> str:
    text = piece.strip()
    if not (text.startswith("return ") and text.endswith(";") and text.count(";") == 1):
        raise SystemExit(f"{LESSON}/{EXERCISE}: the benchmark rewrites one 'return X;' line (got {piece!r})")
    return text[len("return ") : -1]


def _rewrites(piece: str, kind: str, start: int):
    """Endless distinct texts that do what ``piece`` does: other names, comments, a local variable."""
    expr = _expression(piece)
    n = start
    while True:
        name = f"{NAMES[n % len(NAMES)]}{n}"
        yield (
            f"return {expr};  // answer {n}",
            f"const int {name} = {expr};\nreturn {name};",
            f"// {kind}, answer {n}\nreturn ({expr});",
            f"int {name} = 0;\n{name} += {expr};\nreturn {name};",
        )[n % 4]
        n += 1


def _loops(start: int):
    """Loops that never end, on the GPU as on the CPU: each pass reads a ``static volatile`` (global memory).

    A ``volatile`` local is not enough: NVRTC keeps it in a register and the
    loop is gone from the PTX (the 2026-12-03 run graded such loops as wrong
    results, not hangs); a function-scope static lives in global memory, and
    every read of it stays an ``ld.volatile.global`` (checked in
    tests/bench/test_code_grade_bench.py).
    """
    n = start
    while True:
        name = f"{NAMES[n % len(NAMES)]}{n}"
        yield f"static volatile int {name} = 1;\nwhile ({name}) {{}}\nreturn 0;"
        n += 1


def counts(answers: int) -> dict[str, int]:
    """How many answers of each kind: the mix, rounded, the loops taking what is left."""
    made = {kind: round(answers * share) for kind, share in MIX[:-1]}
    made[MIX[-1][0]] = answers - sum(made.values())
    return made


def _sources() -> dict[str, list[str]]:
    """The exercise's own pieces by kind: its reference, its wrong results, its faults."""
    lesson = get_lesson(LESSON)
    exercise = get_exercise(lesson, EXERCISE)
    return {
        "right": [exercise.reference(lesson.kernel_path.read_text("utf-8"))],
        "wrong result": [w.code for w in exercise.wrong if w.expect == "failed-check"],
        "faulting": [w.code for w in exercise.wrong if w.expect == "fault"],
    }


def pieces(answers: int) -> list[tuple[str, str]]:
    """``answers`` distinct (kind, piece) pairs in the mix, from the exercise's own reference and wrong pieces."""
    sources = _sources()
    made: list[tuple[str, str]] = []
    for kind, count in counts(answers).items():
        if kind == "endless loop":
            made += [(kind, p) for p, _ in zip(_loops(len(made)), range(count), strict=False)]
            continue
        makers = [_rewrites(s, kind, len(made) + i * answers) for i, s in enumerate(sources[kind])]
        made += [(kind, next(makers[i % len(makers)])) for i in range(count)]
    if len({p for _, p in made}) != len(made):
        raise SystemExit("the benchmark's answers must be distinct texts")
    return made


def generate(folder: Path, answers: int, seed: int) -> tuple[Path, dict[str, str]]:
    """The key and the submissions; returns the key's path and each learner's kind of answer."""
    key_path = folder / "key.toml"
    key_path.write_text(
        f'[quiz]\nid = "gradebench"\ntitle = "Grading benchmark"\nlesson = "{LESSON}"\n\n'
        f'[[questions]]\nid = "code"\ntype = "code"\nprompt = "Write coreOffset."\npoints = 1\n'
        f'reference = "PTX ISA, Canonical Layouts"\nexercise = "{EXERCISE}"\nexplanation = "Cores along K first."\n',
        encoding="utf-8",
    )
    key = load_quiz(key_path)
    made = pieces(answers)
    random.Random(seed).shuffle(made)
    kinds = {}
    for n, (kind, piece) in enumerate(made):
        learner = f"learner{n:04d}"
        kinds[learner] = kind
        write_submission(
            Submission(key.id, key.version, learner, "2026-12-01T10:00:00+00:00", {"code": piece}, {}),
            folder / "submissions",
        )
    return key_path, kinds


def sample(kinds: dict[str, str], size: int) -> set[str]:
    """``size`` learners keeping the mix: the first of each kind in name order."""
    want = counts(size)
    chosen: set[str] = set()
    for learner in sorted(kinds):
        if want.get(kinds[learner], 0) > 0:
            want[kinds[learner]] -= 1
            chosen.add(learner)
    return chosen


WARM = "warm"  # the caches after one throwaway piece: CuPy's own kernels compiled, as on a machine the course ran on


def warm_up(key_path: Path, scratch: Path, gpus: Gpus) -> None:
    """Grade one throwaway piece (no run's answer) into the ``WARM`` caches that every timed run starts from."""
    key = load_quiz(key_path)
    folder = scratch / "warm-up"
    piece = f"// warm-up\n{_sources()['right'][0]}"
    write_submission(
        Submission(key.id, key.version, "warmup", "2026-12-01T10:00:00+00:00", {"code": piece}, {}), folder
    )
    _point_caches(scratch / WARM)
    grade_submissions(key, folder, jobs=1, gpus=gpus.first(1) if gpus.devices else gpus)


def _point_caches(caches: Path) -> None:
    os.environ["CUPY_CACHE_DIR"] = str(caches / "cupy")
    os.environ["COURSE_CACHE_DIR"] = str(caches / "nvrtc")


def timed(
    key_path: Path, folder: Path, scratch: Path, jobs: int, gpus: Gpus, *, workers: bool = True
) -> tuple[GradeReport, float, int]:
    """One grading run on a copy of the warm caches: no run reuses another's compiles of the answers.

    ``workers`` False: a one-off sandbox child per piece (the grader before its workers). Returns
    the report, the seconds (the workers' ends included) and how many worker processes started."""
    caches = Path(tempfile.mkdtemp(prefix="caches-", dir=scratch))
    shutil.copytree(scratch / WARM, caches, dirs_exist_ok=True)
    _point_caches(caches)
    start = time.perf_counter()
    with CodeRunner(workers=workers) as runner:
        report = grade_submissions(load_quiz(key_path), folder, run_code=runner, jobs=jobs, gpus=gpus)
    return report, time.perf_counter() - start, runner.workers_started


def outcomes(report: GradeReport) -> dict[str, tuple[float, str, str]]:
    return {r.learner: (r.items[0].score, r.items[0].outcome, r.items[0].note) for r in report.results}


def by_kind(report: GradeReport, kinds: dict[str, str]) -> dict[str, Counter[str]]:
    """The outcomes of each kind of answer."""
    seen: dict[str, Counter[str]] = {}
    for learner, (_, outcome, _) in outcomes(report).items():
        seen.setdefault(kinds[learner], Counter())[outcome] += 1
    return seen


def gpu_choices(spec: str, visible: Gpus) -> list[Gpus]:
    chosen = []
    for part in spec.split(","):
        part = part.strip()
        if part == "all":
            chosen.append(visible)
        elif part.isdigit():
            chosen.append(visible.first(int(part)))
        else:
            raise SystemExit(f"--gpus takes counts and 'all', comma-separated, e.g. 1,all (got {part!r})")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--answers", type=int, default=TARGET_ANSWERS, help="distinct code answers (default 300)"
    )
    jobs = parser.add_mutually_exclusive_group()
    jobs.add_argument(
        "--jobs", type=int, help=f"answers run at a time (default: the usable cores, {default_jobs()})"
    )
    jobs.add_argument("--jobs-per-gpu", type=int, help="answers run at a time per GPU of the run")
    parser.add_argument(
        "--gpus", default="all", help="GPU counts to run on, comma-separated: 1, 2, all (default all)"
    )
    parser.add_argument(
        "--serial-sample",
        type=int,
        help=f"answers graded serially (0: none; default {SERIAL_SAMPLE} or all, if fewer)",
    )
    parser.add_argument(
        "--serial-one-off",
        action="store_true",
        help="grade the serial sample with a one-off sandbox child per answer (the grader before its workers)",
    )
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--out", type=Path, help="also write the numbers as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    args = parser.parse_args(argv)
    if args.serial_sample is None:
        args.serial_sample = min(SERIAL_SAMPLE, args.answers)
    if args.answers < 1 or not 0 <= args.serial_sample <= args.answers:
        raise SystemExit("--answers must be at least 1 and --serial-sample between 0 and --answers")
    lesson = get_lesson(LESSON)
    verdict = gate.verdict(lesson)
    if gate.gpu_required() and not verdict.runs:
        print(f"cannot run here, and {gate.REQUIRE_GPU_ENV}=1: {verdict.message()}", file=sys.stderr)
        return 2
    if not all(part.strip() == "all" or part.strip().isdigit() for part in args.gpus.split(",")):
        raise SystemExit(f"--gpus takes counts and 'all', comma-separated, e.g. 1,all (got {args.gpus!r})")
    visible = find_gpus()
    try:
        runs = gpu_choices(args.gpus, visible) if verdict.runs else [Gpus((), "no GPU runs the lesson here")]
    except CourseError as e:
        raise SystemExit(f"--gpus {args.gpus}: {e.message}") from None
    folder = Path(tempfile.mkdtemp(prefix="code_grade_bench_"))
    results: dict[str, object] = {
        "answers": args.answers,
        "mix": counts(args.answers),
        "check": "gpu" if verdict.runs else "cpu",
        "gpu": gpu.name if verdict.runs and (gpu := gate.probe().gpu) is not None else None,
        "visible": list(visible.devices),
        "cores": default_jobs(),
        "python": platform.python_version(),
        "runs": [],
    }
    problems: list[str] = []
    try:
        key_path, kinds = generate(folder, args.answers, args.seed)
        subs = folder / "submissions"
        (folder / WARM).mkdir()
        warm_up(key_path, folder, runs[0])
        print(
            f"{args.answers} distinct answers to {LESSON}/{EXERCISE}: "
            + ", ".join(f"{n} {kind}" for kind, n in counts(args.answers).items())
            + f"; checked on the {'GPU (' + str(results['gpu']) + ')' if verdict.runs else 'CPU (g++): no GPU runs it here'}"
            + f"; {default_jobs()} usable cores; {visible.describe()}"
        )
        reference: dict[str, tuple[float, str, str]] = {}
        serial_rate = None
        if args.serial_sample:
            chosen = sample(kinds, args.serial_sample)
            part = folder / "serial"
            for learner in chosen:
                src = subs / "gradebench" / f"{learner}.json"
                (part / "gradebench").mkdir(parents=True, exist_ok=True)
                shutil.copy(src, part / "gradebench" / src.name)
            report, seconds, _ = timed(
                key_path,
                part,
                folder,
                1,
                runs[0].first(1) if runs[0].devices else runs[0],
                workers=not args.serial_one_off,
            )
            reference = outcomes(report)
            serial_rate = len(chosen) / seconds
            how = "a one-off child per answer" if args.serial_one_off else "one worker"
            print(
                f"serial (jobs 1, {how}), a sample of {len(chosen)}: {seconds:.1f} s, {serial_rate:.2f} answers/s "
                f"(all {args.answers}: about {args.answers / serial_rate:.0f} s)"
            )
            print("  " + "; ".join(f"{k}: {dict(c)}" for k, c in sorted(by_kind(report, kinds).items())))
            results["runs"].append(  # type: ignore[union-attr]
                {
                    "jobs": 1,
                    "gpus": 1 if verdict.runs else 0,
                    "one_off_children": args.serial_one_off,
                    "answers": len(chosen),
                    "seconds": round(seconds, 2),
                    "outcomes": {k: dict(c) for k, c in by_kind(report, kinds).items()},
                }
            )
        first_rate: float | None = None
        for gpus in runs:
            count = len(gpus.devices)
            n_jobs = args.jobs or (args.jobs_per_gpu * max(1, count) if args.jobs_per_gpu else default_jobs())
            report, seconds, started = timed(key_path, subs, folder, n_jobs, gpus)
            got = outcomes(report)
            rate = args.answers / seconds
            first_rate = first_rate or rate
            kinds_seen = by_kind(report, kinds)
            ratio = f", {rate / serial_rate:.1f}x serial" if serial_rate else ""
            scale = f", {rate / first_rate:.2f}x the first run" if rate != first_rate else ""
            print(
                f"jobs {n_jobs} over {count or 'no'} GPU{'s' if count != 1 else ''}: {seconds:.1f} s, "
                f"{rate:.2f} answers/s{ratio}{scale}"
            )
            print("  " + "; ".join(f"{k}: {dict(c)}" for k, c in sorted(kinds_seen.items())))
            print(f"  {started} worker processes started (one per slot, and one after each fault or hang)")
            if args.answers == TARGET_ANSWERS and verdict.runs:
                print(
                    f"  target: {TARGET_ANSWERS} answers in <= {TARGET_S:.0f} s: {'met' if seconds <= TARGET_S else 'missed'}"
                )
            differ = [
                learner
                for learner, want in reference.items()
                if got[learner][:2] != want[:2]  # score and outcome
            ]
            notes = sum(1 for learner, want in reference.items() if got[learner][2] != want[2])
            if differ:
                problems.append(
                    f"{len(differ)} answers differ from the first run, e.g. {differ[0]}: {reference[differ[0]]} vs {got[differ[0]]}"
                )
            print(
                f"  the same score and outcome as before for all {len(reference)} compared"
                if reference and not differ
                else (
                    "  nothing to compare yet"
                    if not reference
                    else f"  DIFFERENT: {len(differ)} of {len(reference)}"
                )
            )
            if notes:
                print(f"  {notes} notes read differently (the scores and outcomes above are what count)")
            elsewhere = sum(
                1 for _, outcome, note in got.values() if outcome != "refused" and "(checked gpu)" not in note
            )
            if gate.gpu_required() and elsewhere:
                problems.append(f"{elsewhere} answers were not checked on the GPU although it is required")
            for learner, seen in got.items():  # the next run is compared on every answer
                reference.setdefault(learner, seen)
            results["runs"].append(  # type: ignore[union-attr]
                {
                    "jobs": n_jobs,
                    "gpus": count,
                    "devices": list(gpus.devices),
                    "answers": args.answers,
                    "seconds": round(seconds, 2),
                    "answers_per_s": round(rate, 3),
                    "vs_serial": round(rate / serial_rate, 2) if serial_rate else None,
                    "outcomes": {k: dict(c) for k, c in kinds_seen.items()},
                    "differ": len(differ),
                    "workers_started": started,
                }
            )
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    results["problems"] = problems
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
