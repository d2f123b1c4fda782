"""``course record`` and the suggested experiments it records (``record = true``), without a GPU.

The sandbox run is replaced by a stand-in that returns what the H200 does for
Day 81's count-too-low (a fault), so what is tested is the recording and the
page's view of it, not the GPU. On the H200, ``python -m course record day81``
records the real run (the GPU session's record step).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.cli.record import record_suggested
from course.kernel import evidence
from course.kernel.gate import Gpu, Machine
from course.lessons import LESSONS, get_lesson
from course.tryout.sandbox import TryResult
from course.tryout.suggestions import load_suggestions

H200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {"cupy": "14.2.0"})
DAY81 = get_lesson("day81")


def _fault(lesson, path, timeout_s=0, **_):
    """count-too-low faults, as its page says; Day 81's other recorded experiments fail the check
    (both-store-the-top-half) or hang (setmaxnreg-over-budget), as theirs say."""
    source = Path(path).read_text()
    if '::"n"(240)' in source:
        return TryResult(lesson.id, "timeout", Path(path), "stopped", output=("GPU: x",))
    if source.count("mbarInit(&s.empty[i], 1);") != 1:  # not count-too-low's source
        return TryResult(lesson.id, "failed-check", Path(path), "wrong result", output=("GPU: x",))
    return TryResult(
        lesson.id,
        "fault",
        Path(path),
        "The kernel faulted while running (cudaErrorLaunchFailure).",
        output=("GPU: NVIDIA H200 (compute capability 9.0)",),
        error_name="cudaErrorLaunchFailure",
        seconds=1.5,
    )


def test_day81_records_the_experiments_that_break_it_and_not_the_one_that_passes():
    recorded = [s.name for s in load_suggestions(DAY81) if s.record]
    assert recorded == ["count-too-low", "both-store-the-top-half", "setmaxnreg-over-budget"]
    s = load_suggestions(DAY81)[0]
    assert s.expect == ("fault",)


def test_record_writes_the_sandbox_outcome_and_the_page_words_it(tmp_path, monkeypatch):
    monkeypatch.setattr("course.tryout.sandbox.run_variant", _fault)
    assert record_suggested(DAY81, H200, tmp_path, ["a note"]) == 0
    path = tmp_path / "day81.count-too-low.json"
    ev = evidence.load(DAY81, path)
    assert ev is not None and ev.outcome == "fault" and not ev.passed
    assert ev.output[-1] == "CUDA error: cudaErrorLaunchFailure"
    assert "a note" in ev.notes and ev.command == "page.try_mine(experiment='count-too-low') (day81)"
    assert "faulted" in ev._repr_html_() and "check <b>failed</b>" not in ev._repr_html_()
    other = evidence.load(DAY81, tmp_path / "day81.both-store-the-top-half.json")
    assert other is not None and other.outcome == "failed-check"


def test_record_writes_into_the_folder_of_the_gpu_it_ran_on(tmp_path, monkeypatch):
    monkeypatch.setattr("course.tryout.sandbox.run_variant", _fault)
    monkeypatch.setattr("course._paths.evidence_dir", lambda: tmp_path)
    assert record_suggested(DAY81, H200, None, []) == 0
    recorded = [s.name for s in load_suggestions(DAY81) if s.record]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")) == sorted(
        f"h200/day81.{name}.json" for name in recorded
    )


def test_an_outcome_the_page_does_not_promise_is_exit_status_1(tmp_path, monkeypatch):
    def passed(lesson, path, timeout_s=0, **_):
        return TryResult(lesson.id, "passed", Path(path), "passed", output=("GPU: x",))

    monkeypatch.setattr("course.tryout.sandbox.run_variant", passed)
    assert record_suggested(DAY81, H200, tmp_path, []) == 1
    assert evidence.load(DAY81, tmp_path / "day81.count-too-low.json").outcome == "passed"


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_a_recorded_experiment_shows_its_recording_or_says_it_is_not_recorded_yet(lesson_id):
    from course.page import Page

    lesson = get_lesson(lesson_id)
    for s in (s for s in load_suggestions(lesson) if s.record):
        shown = Page(lesson_id).evidence(s.name)
        if evidence.path_of(lesson, s.name).exists():
            assert isinstance(shown, evidence.Evidence) and shown.outcome is not None
            assert s.confirms(shown.outcome), (
                f"the recording of {s.name} is {shown.outcome}, the page says {s.expect}"
            )
        else:
            assert "Not recorded yet" in shown.text
