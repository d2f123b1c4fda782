"""Where a graded code answer's time goes: the phases of a one-off GPU child, alone and 16 at once, and a worker.

    python benchmarks/grade_phases.py [--together 16] [--worker-pieces 10] [--out FILE.json]

Each one-off child (this file with ``--child``) is what the sandbox's child
does for one piece of Day 78's ``core-offset``, timed phase by phase:
the process's start (from the parent's clock before ``Popen`` to the
child's first line), the course's and CuPy's imports, the CUDA context
(``cudaFree(0)``), the gate's probe, NVRTC through CuPy (a distinct piece,
so never from a cache) and the launch with its check; the parent adds the
exit (the context's teardown). Three run one after another, then
``--together`` at once (the grader's slots on one GPU). Then one worker
(``course.tryout.worker``) runs ``--worker-pieces`` distinct pieces in turn,
and the CPU check (g++) runs three pieces. Needs a GPU that runs Day 78;
prints medians and maxima, and with ``--out`` writes every number.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LESSON, EXERCISE = "day78", "core-offset"


def child(launched: float, n: int) -> None:
    """One piece, as the sandbox's child runs it, each phase timed; prints one JSON line."""
    t = {"start": time.time() - launched}
    mark = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        t[name] = now - mark
        mark = now

    import cupy

    from course.exercises.coding import get_exercise, splice
    from course.kernel import gate
    from course.kernel.compile import compile_lesson
    from course.kernel.host import run_lesson
    from course.lessons import get_lesson

    lap("imports")
    cupy.cuda.runtime.free(0)
    lap("context")
    lesson = get_lesson(LESSON)
    gate.ensure_runs(lesson)
    lap("probe")
    exercise = get_exercise(lesson, EXERCISE)
    kernel = lesson.kernel_path.read_text("utf-8")
    source = splice(kernel, exercise, f"// phases {n} {time.time()}\n{exercise.reference(kernel)}")
    compiled = compile_lesson(lesson, source=source, defines=lesson.run_defines)
    lap("nvrtc")
    result = run_lesson(lesson, compiled=compiled, progress=lambda _line: None)
    lap("run_and_check")
    t["passed"] = result.passed
    print(json.dumps(t), flush=True)


def one_off(count: int, scratch: Path) -> list[dict[str, float]]:
    """``count`` children at once; each one's phases and its exit (wall to its end, less what it reported)."""
    procs = []
    for n in range(count):
        launched = time.time()
        procs.append(
            (
                launched,
                subprocess.Popen(
                    [sys.executable, __file__, "--child", str(launched), str(n)],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    cwd=scratch,
                ),
            )
        )
    rows = []
    for launched, proc in procs:
        out, err = proc.communicate(timeout=300)
        ended = time.time()
        try:
            row = json.loads(out.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise SystemExit(
                f"a one-off child gave no timings (exit {proc.returncode}):\n{err[-3000:]}"
            ) from None
        inside = sum(v for k, v in row.items() if k != "passed")
        row["exit"] = (ended - launched) - inside
        row["total"] = ended - launched
        rows.append(row)
    return rows


def summary(rows: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    keys = [k for k in rows[0] if k != "passed"]
    return {
        k: {
            "median": round(statistics.median(r[k] for r in rows), 3),
            "max": round(max(r[k] for r in rows), 3),
        }
        for k in keys
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--together", type=int, default=16)
    parser.add_argument("--worker-pieces", type=int, default=10)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(float(args.child[0]), int(args.child[1]))
        return 0

    from course.exercises.coding import get_exercise, splice
    from course.exercises.coding_check import cpu_check
    from course.lessons import get_lesson
    from course.tryout.worker import GpuWorker

    lesson = get_lesson(LESSON)
    exercise = get_exercise(lesson, EXERCISE)
    kernel = lesson.kernel_path.read_text("utf-8")
    right = exercise.reference(kernel)
    numbers: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="grade_phases_") as tmp:
        scratch = Path(tmp)
        one_off(1, scratch)  # CuPy's own kernels and the driver's caches warm, as in the grading benchmark
        for label, count in (("one after another", 3), (f"{args.together} at once", args.together)):
            rows = []
            if count == 3:
                for _ in range(3):
                    rows += one_off(1, scratch)
            else:
                rows = one_off(count, scratch)
            s = summary(rows)
            numbers[label] = {"rows": rows, "summary": s}
            print(f"one-off GPU child, {label} ({len(rows)}; all passed: {all(r['passed'] for r in rows)}):")
            for k, v in s.items():
                print(f"  {k:14s} median {v['median']:.3f} s, max {v['max']:.3f} s")
        seconds = []
        with GpuWorker(lesson) as worker:
            for n in range(args.worker_pieces):
                path = scratch / f"w{n}" / lesson.kernel_file
                path.parent.mkdir()
                path.write_text(
                    splice(kernel, exercise, f"// worker {n} {time.time()}\n{right}"), encoding="utf-8"
                )
                start = time.perf_counter()
                result = worker.run(path)
                seconds.append(round(time.perf_counter() - start, 3))
                if result.outcome != "passed":
                    print(f"worker piece {n}: {result.outcome}: {result.headline}")
            started = worker.started
        numbers["worker"] = {"seconds": seconds, "started": started}
        print(
            f"one worker, {len(seconds)} distinct pieces in turn ({started} started): the first "
            f"{seconds[0]:.2f} s (its start included), then median {statistics.median(seconds[1:]):.3f} s, "
            f"max {max(seconds[1:]):.3f} s"
        )
        cpu = []
        for n in range(3):
            start = time.perf_counter()
            cpu_check(lesson, exercise, f"// cpu {n}\n{right}")
            cpu.append(round(time.perf_counter() - start, 3))
        numbers["cpu_check"] = cpu
        print(f"CPU check (g++ compile and run, in its child), 3 pieces: {cpu} s")
    if args.out:
        args.out.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
