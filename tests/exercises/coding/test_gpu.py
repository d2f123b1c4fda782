"""Coding exercises on a GPU that runs the lesson (the H200 run; skipped with the gate's reason elsewhere).

For every exercise of every lesson (the registry): the reference piece passes
the lesson's own check, and every declared wrong piece gives its declared
outcome with a message that names what went wrong. Then the grader scores a
folder of right, wrong, faulting and hanging code submissions, each in the
sandbox's child process, without stopping and within its time limits.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from course.exercises.coding import load_coding
from course.exercises.coding_check import check_piece
from course.lessons import LESSONS, get_lesson
from course.quiz.code_runner import CodeRunner
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.submission import Submission, write_submission

pytestmark = pytest.mark.gpu
LESSON_IDS = [lid for lid, lesson in LESSONS.items() if load_coding(lesson)]
RUN_LIMIT_S = 20.0


def _message_names_it(outcome: str, result) -> bool:
    text = str(result)
    if outcome == "failed-check":
        return any(word in text for word in ("row", "element", "col", "got", "max rel"))
    if outcome == "fault":
        return result.gpu is not None and bool(result.gpu.error_name)
    if outcome == "timeout":
        return "stopped" in text
    return "error" in text


@pytest.mark.parametrize("lesson_id", LESSON_IDS)
def test_reference_passes_and_each_wrong_piece_fails_as_declared(lesson_id, gpu_for, tmp_path):
    gpu_for(lesson_id)
    lesson = get_lesson(lesson_id)
    kernel = lesson.kernel_path.read_text("utf-8")
    jobs = []
    for ex in load_coding(lesson):
        jobs.append((ex, "reference", ex.reference(kernel), "passed"))
        jobs += [(ex, f"wrong {w.name}", w.code, w.expect) for w in ex.wrong]

    def run(job):
        ex, what, code, _ = job
        src = tmp_path / ex.id / what.replace(" ", "-") / lesson.kernel_file
        src.parent.mkdir(parents=True)
        start = time.monotonic()
        r = check_piece(lesson, ex, code, use_gpu=True, timeout_s=RUN_LIMIT_S, source_path=src)
        return r, time.monotonic() - start

    with ThreadPoolExecutor(max_workers=4) as pool:  # child processes: one CUDA context each
        results = list(pool.map(run, jobs))
    problems = []
    for (ex, what, _code, want), (r, seconds) in zip(jobs, results, strict=True):
        print(f"{lesson_id} {ex.id} {what}: {r.outcome} ({r.check}, {seconds:.1f} s): {r.headline[:200]}")
        if r.check != "gpu" or r.outcome != want or not (want == "passed" or _message_names_it(want, r)):
            problems.append(f"{ex.id} {what}: wanted {want}, got {r.outcome} ({r.check})\n{r}")
    assert not problems, "\n\n".join(problems)


def test_the_grader_scores_right_wrong_faulting_and_hanging_code(gpu_for, tmp_path):
    gpu_for("day78")
    lesson = get_lesson("day78")
    (ex,) = load_coding(lesson)[:1]
    wrong = {w.expect: w.code for w in ex.wrong}
    key_path = tmp_path / "key.toml"
    key_path.write_text(
        '[quiz]\nid = "graded"\ntitle = "t"\nlesson = "day78"\n\n[[questions]]\nid = "c"\ntype = "code"\n'
        f'prompt = "p"\npoints = 1\nreference = "r"\nexercise = "{ex.id}"\nexplanation = "e"\n'
    )
    key = load_quiz(key_path)
    pieces = {
        "right": ex.reference(lesson.kernel_path.read_text("utf-8")),
        "wrong": wrong["failed-check"],
        "faults": wrong["fault"],
        "hangs": "while (clock64() >= 0) {}\nreturn 0;",  # no asm: a piece holding asm is refused
        "noncompiling": "return mn +;",
    }
    subs = tmp_path / "subs"
    for learner, piece in pieces.items():
        write_submission(
            Submission(key.id, key.version, learner, "2026-11-30T10:00:00+00:00", {"c": piece}, {}), subs
        )
    limit = 10.0
    start = time.monotonic()
    with CodeRunner(
        use_gpu=True, timeout_s=limit
    ) as runner:  # its workers end with the block (their pipes too)
        report = grade_submissions(key, subs, run_code=runner, progress=print)
    seconds = time.monotonic() - start
    got = {r.learner: (r.items[0].outcome, r.total) for r in report.results}
    print(got, f"{seconds:.1f} s")
    assert got == {
        "right": ("passed", 1.0),
        "wrong": ("failed-check", 0.0),
        "faults": ("fault", 0.0),
        "hangs": ("timeout", 0.0),
        "noncompiling": ("compile-error", 0.0),
    }
    # Each submission within its run limit plus compiling: nothing waited on a hung or faulted child.
    assert seconds < len(pieces) * (limit + 60)


def test_side_by_side_on_the_gpu_every_outcome_is_the_serial_one(gpu_for, tmp_path):
    """The parallel grader on this machine's GPUs: the same pieces, jobs 1 and jobs 4, the same outcomes."""
    gpu_for("day78")
    lesson = get_lesson("day78")
    (ex,) = load_coding(lesson)[:1]
    wrong = {w.expect: w.code for w in ex.wrong}
    right = ex.reference(lesson.kernel_path.read_text("utf-8"))
    pieces = {
        "right": right,
        "right2": f"// mine\n{right}",
        "wrong": wrong["failed-check"],
        "faults": wrong["fault"],
        "hangs": "while (clock64() >= 0) {}\nreturn 0;",
        "noncompiling": "return mn +;",
    }
    key_path = tmp_path / "key.toml"
    key_path.write_text(
        '[quiz]\nid = "graded"\ntitle = "t"\nlesson = "day78"\n\n[[questions]]\nid = "c"\ntype = "code"\n'
        f'prompt = "p"\npoints = 1\nreference = "r"\nexercise = "{ex.id}"\nexplanation = "e"\n'
    )
    key = load_quiz(key_path)
    subs = tmp_path / "subs"
    for learner, piece in pieces.items():
        write_submission(
            Submission(key.id, key.version, learner, "2026-11-30T10:00:00+00:00", {"c": piece}, {}), subs
        )
    got = {}
    for jobs in (1, 4):
        with CodeRunner(use_gpu=True, timeout_s=10.0) as runner:  # its workers end with the block
            report = grade_submissions(key, subs, run_code=runner, jobs=jobs)
        got[jobs] = {r.learner: (r.items[0].outcome, r.total) for r in report.results}
        print(jobs, got[jobs])
    assert got[4] == got[1]
    assert got[1]["right2"] == ("passed", 1.0) and got[1]["hangs"] == ("timeout", 0.0)


def test_the_page_panel_checks_on_the_gpu_and_keeps_it(gpu_for, monkeypatch):
    """What a learner's Check button does on an H100/H200: the GPU check, saved to progress."""
    gpu_for("day78")
    from course.exercises import progress
    from course.page import Page

    monkeypatch.setenv(progress.LEARNER_ENV, "gpu-learner")
    panel = Page("day78").coding()
    panel.editor.value = panel.exercise.reference(panel.lesson.kernel_path.read_text("utf-8"))
    result = panel.check()
    assert result is not None and result.passed and result.check == "gpu", str(result)
    assert "✓ passed" in panel.result.value
    saved = progress.restore("day78", "coding", panel.exercise.id)
    assert saved is not None and saved["passed"] and saved["check"] == "gpu"
