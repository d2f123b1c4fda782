"""The grading benchmark's answers (benchmarks/code_grade_bench.py): the mix, distinct, and each kind what it says."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest

from course.exercises.coding import get_exercise, splice
from course.exercises.coding_check import cpu_check
from course.exercises.coding_piece import refuse_escape
from course.kernel.compile import compile_offline
from course.lessons import get_lesson
from course.quiz.grade import _LOOP

_PATH = Path(__file__).resolve().parents[3] / "benchmarks" / "code_grade_bench.py"
_SPEC = importlib.util.spec_from_file_location("code_grade_bench", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_three_hundred_distinct_answers_in_the_issues_mix():
    made = bench.pieces(300)
    assert Counter(kind for kind, _ in made) == {
        "right": 180, "wrong result": 75, "faulting": 30, "endless loop": 15
    }  # fmt: skip
    assert len({piece for _, piece in made}) == 300
    assert bench.counts(7) == {"right": 4, "wrong result": 2, "faulting": 1, "endless loop": 0}


def test_a_serial_sample_keeps_the_mix():
    kinds = {f"l{n:03d}": kind for n, (kind, _) in enumerate(bench.pieces(300))}
    chosen = bench.sample(kinds, 40)
    assert Counter(kinds[learner] for learner in chosen) == bench.counts(40)


@pytest.mark.usefixtures("cxx")
def test_each_rewrite_does_what_its_kind_says_on_the_cpu(monkeypatch):
    """Every form of rewrite, of a right and of a wrong piece, checked by the CPU check: right passes, wrong fails."""
    lesson = get_lesson(bench.LESSON)
    exercise = get_exercise(lesson, bench.EXERCISE)
    made = bench.pieces(40)
    forms = {}
    for kind, piece in made:  # the first four of a kind are the four forms of rewrite
        if kind in ("right", "wrong result") and sum(1 for k in forms if k[0] == kind) < 4:
            forms[(kind, piece)] = piece
    assert len(forms) == 8
    for kind, piece in forms:
        verdict = cpu_check(lesson, exercise, piece)
        assert verdict.outcome == ("passed" if kind == "right" else "failed-check"), (piece, verdict)


def test_the_endless_loops_stay_loops_on_the_gpu(monkeypatch, tmp_path):
    """Each loop form reads global memory on every pass (ld.volatile.global in NVRTC's PTX); a volatile
    local does not: NVRTC drops it, which is how the 2026-12-03 run graded its "loops" as wrong results."""
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "nvrtc"))
    lesson = get_lesson(bench.LESSON)
    exercise = get_exercise(lesson, bench.EXERCISE)
    kernel = lesson.kernel_path.read_text("utf-8")
    loops = [piece for kind, piece in bench.pieces(40) if kind == "endless loop"]
    assert len(loops) == 2 and all(_LOOP.search(p) for p in loops)  # the grader starts them first
    for piece in [*loops, "volatile int spin = 1;\nwhile (spin) {}\nreturn 0;"]:
        refuse_escape(piece, exercise, kernel)  # a piece the grader accepts
        ptx = compile_offline(lesson, source=splice(kernel, exercise, piece), defines=lesson.run_defines).ptx
        kept = "ld.volatile.global" in ptx
        assert kept == piece.startswith("static volatile"), piece
