"""Learner experiments through the sandbox, on a real Hopper GPU: each does what its page says,
and the page's own CUDA context survives every fault and hang.

Run from the repo root on the GPU machine (the GPU is required):

    PYTHONPATH=$PWD python3 tools/try_gpu_check.py [LESSON ...] [--timeout S]

For every lesson (default: all of course.lessons.LESSONS):
  1. run_lesson(lesson) in this process: the page's own run passes;
  2. each suggested experiment (content/experiments/<lesson>.toml) through
     course.tryout.sandbox.run_variant: the outcome must be what the page says;
     after any that faulted or hung, run_lesson(lesson) again, in this same
     process, and it must pass;
  3. a deliberately faulting variant (PTX trap) and a deliberately hanging
     one (an endless nanosleep loop), each followed at once by run_lesson(lesson)
     in this same process, which must pass.
Then, once: page.try_mine(experiment=...) in this process, headless, for a
faulting and for a hanging experiment, each followed at once by page.run(),
which must pass; page.try_mine() on the unchanged copy (passed); and
`python -m course try` for a faulting and a hanging experiment (exit 1, the
right words, no traceback) and for the unchanged copy (exit 0).

Prints one line per check and a summary; exits 1 on any mismatch.
Learner copies go to a temporary COURSE_WORKSPACE, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PYTHONUNBUFFERED", "1")
WORKSPACE = Path(tempfile.mkdtemp(prefix="course-try-"))
os.environ["COURSE_WORKSPACE"] = str(WORKSPACE)

from course.kernel import gate  # noqa: E402
from course.kernel.host import run_lesson  # noqa: E402
from course.lessons import LESSONS, get_lesson  # noqa: E402
from course.tryout.sandbox import DELIBERATE, deliberate_variant, run_variant  # noqa: E402
from course.tryout.suggestions import load_suggestions  # noqa: E402

rows: list[tuple[str, str, str, str, bool, float]] = []  # lesson, what, expected, got, ok, seconds


def report(lesson: str, what: str, expected: str, got: str, ok: bool, seconds: float, note: str = "") -> None:
    rows.append((lesson, what, expected, got, ok, seconds))
    mark = "ok  " if ok else "FAIL"
    print(
        f"{mark} {lesson:6} {what:34} expected {expected:22} got {got:14} {seconds:6.1f} s {note}", flush=True
    )


def parent_run(lesson_id: str, after: str) -> None:
    """run_lesson in THIS process: its CUDA context must still work."""
    t0 = time.perf_counter()
    try:
        r = run_lesson(get_lesson(lesson_id), progress=lambda _line: None)
        got, ok, note = ("passed" if r.passed else "failed-check"), r.passed, r.lines[-1]
    except Exception as e:  # any error here is the finding
        got, ok, note = "error", False, f"{type(e).__name__}: {e}"[:300]
    report(lesson_id, f"  page's run after {after}", "passed", got, ok, time.perf_counter() - t0, note[:90])


def check_lesson(lesson_id: str, timeout_s: float, scratch: Path) -> None:
    lesson = get_lesson(lesson_id)
    v = gate.verdict(lesson)
    if not v.runs:
        report(lesson_id, "this GPU runs the lesson", "runs", v.tier, False, 0.0, v.reason)
        return
    parent_run(lesson_id, "nothing (first run)")
    original = lesson.kernel_path.read_text(encoding="utf-8")
    (scratch / lesson_id).mkdir(parents=True, exist_ok=True)
    for s in load_suggestions(lesson):
        path = scratch / lesson_id / f"{s.name}.cu"
        path.write_text(s.source(original), encoding="utf-8")
        r = run_variant(lesson, path, timeout_s)
        note = (r.error_name or "") if r.outcome in ("fault", "refused") else r.headline[:90]
        report(
            lesson_id,
            f"experiment {s.name}",
            s.expect_text,
            r.outcome,
            s.confirms(r.outcome),
            r.seconds,
            note,
        )
        if r.outcome not in ("passed", "failed-check", "compile-error"):
            print("     " + str(r).replace("\n", "\n     ")[:1500])
        if r.outcome in ("fault", "timeout"):
            parent_run(lesson_id, s.name)
    for kind, (_, expected) in DELIBERATE.items():
        path = scratch / lesson_id / f"deliberate-{kind}.cu"
        path.write_text(deliberate_variant(lesson, original, kind), encoding="utf-8")
        r = run_variant(lesson, path, timeout_s)
        report(
            lesson_id,
            f"deliberate {kind}",
            expected,
            r.outcome,
            r.outcome == expected,
            r.seconds,
            r.error_name or "",
        )
        if r.outcome != expected:
            print("     " + str(r).replace("\n", "\n     ")[:1500])
        parent_run(lesson_id, f"deliberate {kind}")


def check_page(timeout_s: float) -> None:
    """page.try_mine in this process, headless, for a fault and a hang; page.run() right after each."""
    from course.page import Page

    words = {"fault": "faulted while running", "timeout": "hung and was stopped"}
    for kind, said in words.items():
        found = [
            (lid, s) for lid in LESSONS for s in load_suggestions(get_lesson(lid)) if s.expect == (kind,)
        ]
        if not found:
            report("-", f"page.try_mine (a {kind} experiment)", "a lesson with one", "none", False, 0.0)
            continue
        lesson_id, s = found[0]
        page = Page(lesson_id)
        t0 = time.perf_counter()
        try:
            tried = page.try_mine(experiment=s.name, timeout_s=timeout_s)
            html = tried._repr_html_()
            got = tried.result.outcome
            ok = got == kind and said in html and "What changed" in html and "As the page says" in html
        except Exception as e:  # any error here is the finding
            got, ok = f"{type(e).__name__}: {e}"[:200], False
        report(lesson_id, f"page.try_mine({s.name!r})", kind, got, ok, time.perf_counter() - t0)
        t0 = time.perf_counter()
        try:
            result = page.run()
            got = "passed" if getattr(result, "passed", False) else repr(result)[:60]
        except Exception as e:
            got = f"{type(e).__name__}: {e}"[:200]
        report(
            lesson_id, "  page.run() right after it", "passed", got, got == "passed", time.perf_counter() - t0
        )
    page = Page(next(iter(LESSONS)))
    t0 = time.perf_counter()
    try:
        got = page.try_mine(timeout_s=timeout_s).result.outcome  # the learner's copy, unchanged
    except Exception as e:
        got = f"{type(e).__name__}: {e}"[:200]
    report(
        page.lesson.id,
        "page.try_mine() unchanged copy",
        "passed",
        got,
        got == "passed",
        time.perf_counter() - t0,
    )


def check_cli(timeout_s: float) -> None:
    """python -m course try: exit codes and words for a fault, a hang and a pass."""
    wanted = {"fault": "faulted while running", "timeout": "hung and was stopped"}
    cases: list[tuple[str, list[str], int, str]] = []
    for kind, words in wanted.items():
        for lid in LESSONS:
            found = [s for s in load_suggestions(get_lesson(lid)) if s.expect == (kind,)]
            if found:
                cases.append((lid, ["--experiment", found[0].name], 1, words))
                break
    first = next(iter(LESSONS))
    cases.append((first, [], 0, "passed the lesson's check"))
    for lid, extra, code, words in cases:
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "course", "try", lid, *extra, "--timeout", f"{timeout_s:g}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        ok = p.returncode == code and words in p.stdout and "Traceback" not in p.stdout + p.stderr
        report(
            lid,
            f"course try {' '.join(extra) or '(my copy)'}",
            f"exit {code}",
            f"exit {p.returncode}",
            ok,
            time.perf_counter() - t0,
        )
        if not ok:
            print("     " + (p.stdout + p.stderr).replace("\n", "\n     ")[-2000:])
        parent_run(lid, "course try")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lessons to check (default: all)")
    parser.add_argument("--timeout", type=float, default=15.0, help="seconds before a run counts as hung")
    args = parser.parse_args()
    start = time.perf_counter()
    scratch = WORKSPACE / "variants"
    try:
        for lid in args.lessons or LESSONS:
            check_lesson(lid, args.timeout, scratch)
        check_page(args.timeout)
        check_cli(args.timeout)
    finally:
        shutil.rmtree(WORKSPACE, ignore_errors=True)
    failed = [r for r in rows if not r[4]]
    print(
        f"\ntry_gpu_check: {len(rows) - len(failed)} of {len(rows)} checks as expected, "
        f"{len(failed)} not, in {time.perf_counter() - start:.0f} s"
    )
    for lesson, what, expected, got, _, _ in failed:
        print(f"  MISMATCH {lesson} {what}: expected {expected}, got {got}")
    print("try_gpu_check: PASS" if not failed else "try_gpu_check: FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
