"""page.try_mine() and course.tryout.trial.try_kernel on this machine (stand-in children, or no GPU)."""

from __future__ import annotations

import re
import sys
from html import unescape

import pytest

from course.errors import CheckFailed, CourseError, EnvironmentProblem
from course.kernel import gate
from course.lessons import get_lesson
from course.page import Page
from course.tryout.sandbox import PROTOCOL_PREFIX
from course.tryout.trial import try_kernel
from course.tryout.workspace import WORKSPACE_ENV

LESSON = get_lesson("day76")
RUNS_HERE = gate.verdict(LESSON).runs


@pytest.fixture(autouse=True)
def ws(tmp_path, monkeypatch):
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "work"))
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    return tmp_path / "work"


def _child(outcome: str, **facts) -> list[str]:
    import json

    event = json.dumps({"event": "result", "outcome": outcome, **facts})
    return [sys.executable, "-c", f"print({PROTOCOL_PREFIX + event!r})"]


def test_my_copy_is_made_and_run(ws):
    tried = try_kernel(LESSON, command=_child("passed", line="round trip: PASS."))
    assert tried.copy.path == ws.resolve() / "day76" / LESSON.kernel_file
    assert tried.result.outcome == "passed" and tried.exit_code == 0
    assert tried.suggestion is None and tried.confirmed is None
    text = str(tried)
    assert "Same as the lesson's kernel." in text
    assert "The lesson's kernel, recorded on" in text  # the evidence beside it


def test_a_suggested_experiment_is_written_and_judged(ws):
    tried = try_kernel(
        LESSON,
        experiment="last-column-skipped",
        command=_child(
            "failed-check", line="round trip wrong at 192 (row 0, col 192): got 129.0, want 193.0"
        ),
    )
    assert tried.copy.path == ws.resolve() / "day76" / "experiments" / "last-column-skipped.cu"
    assert "gridDim.x - 1" in tried.copy.source()
    assert tried.confirmed is True
    assert "As the page says: wrong result." in str(tried)
    assert "1 line(s) removed, 1 added" in str(tried)


def test_an_experiment_that_does_not_behave_as_promised_is_refuted():
    tried = try_kernel(LESSON, experiment="integer-one", command=_child("failed-check", line="wrong"))
    assert tried.confirmed is False
    assert "Not what the page says: it expects passed, and this GPU gave wrong result" in tried.verdict_text()


def test_the_html_puts_both_results_side_by_side_with_the_diff():
    tried = try_kernel(LESSON, experiment="integer-one", command=_child("passed", line="round trip: PASS."))
    html = tried._repr_html_()
    assert "Your version" in html and "The lesson's kernel" in html
    text = unescape(re.sub(r"<style>.*?</style>|<[^>]+>", "", html, flags=re.S))
    assert "What changed" in html and "tile[r][c] + 1;" in text
    suggestion = html[html.index("(expected:") : html.index("What changed")]
    assert "`" not in suggestion and "<code>" in suggestion  # the explanation's code spans, as code
    assert "As the page says: passed." in html


def test_a_file_and_an_experiment_together_are_refused(tmp_path):
    with pytest.raises(CourseError, match="not both"):
        try_kernel(LESSON, tmp_path / "x.cu", experiment="integer-one")


def test_original_must_be_a_known_choice():
    with pytest.raises(CourseError, match="original must be"):
        try_kernel(LESSON, original="maybe")  # type: ignore[arg-type]


def test_the_original_can_be_run_the_same_way():
    tried = try_kernel(LESSON, original="run", command=_child("passed", line="round trip: PASS."))
    assert "The lesson's kernel, run the same way just now: passed" in str(tried)


@pytest.mark.skipif(RUNS_HERE, reason="this machine runs day76: try_mine would use the GPU")
def test_page_try_mine_without_a_gpu_compile_checks_my_copy(ws):
    page = Page("day76")
    copy = page.my_copy()
    assert copy.path.exists()
    tried = page.try_mine()
    assert tried.result.outcome == "not-run" and tried.exit_code == 2
    assert "your version compiles" in tried.result.headline
    assert "Your version" in tried._repr_html_()


@pytest.mark.skipif(RUNS_HERE, reason="this machine runs day76")
def test_page_try_mine_shows_a_compile_error_with_my_line(ws):
    page = Page("day76")
    copy = page.my_copy()
    lines = copy.path.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if "bar.wait(cuda::std::move(token));" in line) + 1
    copy.path.write_text(
        copy.path.read_text().replace("bar.wait(cuda::std::move(token));", "bar.wait(token);")
    )
    tried = page.try_mine()
    assert tried.result.outcome == "compile-error" and tried.result.line == n
    assert f"{copy.path}:{n}:" in tried.result.headline
    # reset keeps the broken copy as a backup and starts again
    fresh = page.my_copy(reset=True)
    assert fresh.backup is not None and "bar.wait(token);" in fresh.backup.read_text()
    assert not fresh.changed


@pytest.mark.skipif(RUNS_HERE, reason="this machine runs day76")
def test_page_try_mine_under_require_gpu_fails_loudly(monkeypatch):
    monkeypatch.setenv(gate.REQUIRE_GPU_ENV, "1")
    page = Page("day76")
    with pytest.raises(EnvironmentProblem, match="cannot run day76"):
        page.try_mine()


def test_page_try_mine_under_require_gpu_raises_when_an_experiment_is_refuted(monkeypatch):
    import course.tryout.trial

    real = course.tryout.trial.try_kernel
    monkeypatch.setattr(
        course.tryout.trial,
        "try_kernel",
        lambda lesson, **kw: real(lesson, command=_child("passed", line="ok"), **kw),
    )
    monkeypatch.setenv(gate.REQUIRE_GPU_ENV, "1")
    page = Page.__new__(Page)
    page.lesson = LESSON
    with pytest.raises(CheckFailed, match="it expects wrong result, and this GPU gave passed"):
        page.try_mine(experiment="last-column-skipped")
    assert page.try_mine(experiment="integer-one").confirmed is True


def test_page_lists_its_suggestions():
    page = Page.__new__(Page)
    page.lesson = LESSON
    table = page.suggested()
    assert "expect-tx-twice" in table._repr_html_()
    assert "expect-tx-twice: Tell the barrier to expect twice the bytes" in repr(table)
