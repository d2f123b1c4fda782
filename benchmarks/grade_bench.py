"""Time grading 10,000 submissions of a 15-question quiz.

    python benchmarks/grade_bench.py [--learners 10000] [--keep]

Writes a 15-question quiz (every question type, three "which line"
questions on the day 76 kernel) and the submissions into a temporary
folder, with random answers and a few malformed or hostile files (bad
JSON, a file naming another learner, a symbolic link, a FIFO), then times what
``python -m course quiz grade`` does: read and check every submission, score
it, write the reports. The target is at most 10 s on a 2-core machine.
Generating the files is not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course.quiz.grade import grade_submissions, write_reports  # noqa: E402
from course.quiz.loader import load_quiz  # noqa: E402
from course.quiz.model import MultipleSelect, Numeric, ShortText, SingleChoice, WhichLine  # noqa: E402
from course.quiz.submission import FORMAT  # noqa: E402

QUESTIONS = 15
TARGET_S = 10.0


def quiz_text() -> str:
    parts = ['[quiz]\nid = "bench"\ntitle = "Benchmark quiz"\nlesson = "day76"\n']
    kinds = [
        "single",
        "multiple",
        "numeric",
        "text",
        "single",
        "multiple",
        "numeric",
        "text",
        "single",
        "multiple",
        "numeric",
        "text",
        "line",
        "line",
        "line",
    ]
    anchors = ["cuda::ptx::cp_async_bulk_tensor(", "barrier_arrive_tx(bar, 1, sizeof(tile))", "bar.wait("]
    rules = ["off", "net-correct", "coverage", "each-answer"]
    for n, kind in enumerate(kinds):
        q = [
            f'[[questions]]\nid = "q{n:02d}"\ntype = "{kind}"\npoints = {1 + n % 3}\n'
            f'prompt = "Question {n}?"\nreference = "bench"\nexplanation = "because"\n'
        ]
        if kind in ("single", "multiple"):
            q.append(
                "options = [" + ", ".join(f'{{ id = "{o}", text = "Option {o}" }}' for o in "abcde") + "]\n"
            )
            q.append(
                'answer = "c"\n'
                if kind == "single"
                else f'answers = ["a", "c"]\npartial = "{rules[n % 4]}"\n'
            )
        elif kind == "numeric":
            q.append("answer = 16384\nrtol = 0.01\n")
        elif kind == "text":
            q.append('accept = ["cp.async.bulk.tensor", "tma"]\n')
        else:
            q.append(f'snippet = "issue-tma"\nanchors = [{json.dumps(anchors[n % 3])}]\n')
        parts.append("".join(q))
    return "\n".join(parts)


def random_response(q, rng: random.Random):
    if rng.random() < 0.05:
        return None
    if isinstance(q, SingleChoice):
        return rng.choice([o.id for o in q.options])
    if isinstance(q, MultipleSelect):
        return rng.sample([o.id for o in q.options], rng.randint(0, 3))
    if isinstance(q, Numeric):
        return rng.choice([16384, 16000, 16390.5, 1024])
    if isinstance(q, ShortText):
        return rng.choice(["cp.async.bulk.tensor", "CP.ASYNC.BULK.TENSOR ", "tma", "ldmatrix"])
    if isinstance(q, WhichLine):
        return rng.choice([n for n, _ in q.listing])
    raise TypeError(q)


def generate(folder: Path, learners: int, seed: int = 76) -> Path:
    key_path = folder / "bench.toml"
    key_path.write_text(quiz_text(), encoding="utf-8")
    quiz = load_quiz(key_path)
    if len(quiz.questions) != QUESTIONS:
        raise SystemExit(f"the benchmark quiz must have {QUESTIONS} questions (got {len(quiz.questions)})")
    rng = random.Random(seed)
    subs = folder / "submissions" / quiz.id
    subs.mkdir(parents=True)
    for i in range(learners):
        learner = f"learner{i:05d}"
        responses = {}
        for q in quiz.questions:
            r = random_response(q, rng)
            if r is not None:
                responses[q.id] = r
        data = {
            "format": FORMAT,
            "quiz": quiz.id,
            "quiz_version": quiz.version,
            "learner": learner,
            "submitted_at": "2025-03-01T12:00:00+00:00",
            "responses": responses,
            "attempts": {q.id: rng.randint(0, 3) for q in quiz.questions},
        }
        (subs / f"{learner}.json").write_text(json.dumps(data), encoding="utf-8")
    (subs / "broken.json").write_text("{", encoding="utf-8")  # must be reported, not crash the run
    # Hostile entries the grader must list as skipped without following or opening them:
    # a file that names another learner, a symbolic link, a FIFO.
    (subs / "impostor.json").write_text((subs / "learner00000.json").read_text("utf-8"), encoding="utf-8")
    (subs / "link.json").symlink_to(subs / "learner00001.json")
    if hasattr(os, "mkfifo"):
        os.mkfifo(subs / "pipe.json")
    return key_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--learners", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="grade_bench_")
    folder = Path(tmp)
    try:
        key_path = generate(folder, args.learners)
        start = time.perf_counter()
        key = load_quiz(key_path)
        report = grade_submissions(key, folder / "submissions")
        write_reports(report, folder / "out")
        elapsed = time.perf_counter() - start
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder)
    print(
        f"graded {len(report.results)} submissions of a {QUESTIONS}-question quiz "
        f"({len(report.skipped)} skipped) in {elapsed:.2f} s on {os.cpu_count()} CPUs "
        f"(target <= {TARGET_S:.0f} s)"
    )
    return 0 if elapsed <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
