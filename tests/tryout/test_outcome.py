"""The try panel, the suggested experiments and the coding panel say what a run came to in the
learner's words (course.tryout.outcome.OUTCOME_WORDS), never the labels scripts read
("failed-check", "compile-error", "not-run", a bare "fault" or "timeout")."""

from __future__ import annotations

import json
import re
import sys

import pytest

from course.exercises.coding_check import CodingResult
from course.kernel import gate
from course.lessons import get_lesson
from course.page import Page
from course.tryout.outcome import OUTCOME_WORDS, outcome_words
from course.tryout.sandbox import OUTCOMES, PROTOCOL_PREFIX
from course.tryout.suggestions import load_suggestions, suggestions_html
from course.tryout.trial import try_kernel
from course.tryout.workspace import WORKSPACE_ENV

LESSON = get_lesson("day76")
# A label with a hyphen is never prose; a one-word label is raw where it fills a slot: a bold
# verdict, a table cell, or what a page expects or a GPU gave.
_ONE_WORD = "fault|timeout|refused|crashed|hang"
RAW = re.compile(
    r"\b(?:failed-check|compile-error|not-run|not-checked)\b"
    rf"|<b>(?:{_ONE_WORD})</b>|<td[^>]*>(?:{_ONE_WORD})(?: or |</td>)"
    rf"|(?:expects?|expected:|gave|says:) (?:{_ONE_WORD})\b"
)


@pytest.fixture(autouse=True)
def ws(tmp_path, monkeypatch):
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "work"))
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)


def _child(outcome: str, **facts) -> list[str]:
    if outcome == "timeout":  # the parent's verdict: a child that compiled and never finishes
        compiled = PROTOCOL_PREFIX + json.dumps({"event": "compiled"})
        return [sys.executable, "-c", f"import time; print({compiled!r}, flush=True); time.sleep(60)"]
    event = json.dumps({"event": "result", "outcome": outcome, **facts})
    return [sys.executable, "-c", f"print({PROTOCOL_PREFIX + event!r})"]


FACTS = {
    "passed": {"line": "round trip: PASS."},
    "failed-check": {"line": "round trip wrong at 192"},
    "compile-error": {"log": 'kern.cu(3): error: identifier "x" is undefined'},
    "fault": {"error": "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access"},
    "refused": {"error": "CUDA_ERROR_INVALID_VALUE"},
    "timeout": {},
    "crashed": {"message": "it broke"},
    "not-run": {"reason": "no GPU here runs this lesson"},
}


def test_the_pattern_finds_raw_labels_and_leaves_words():
    for raw in ("<b>failed-check</b>: x", "expected: fault", "this GPU gave timeout.", "<td style='a'>fault</td>",
                "compile-error: y", "As the page says: fault."):  # fmt: skip
        assert RAW.search(raw), raw
    for fine in ("The kernel faulted while running", "The fault is in your change", "<b>wrong result</b>",
                 "expected: the kernel faulted", "stopped: it ran too long"):  # fmt: skip
        assert not RAW.search(fine), fine


def test_every_outcome_has_words_that_are_not_its_label():
    for outcome in (*OUTCOMES, "not-checked"):
        assert outcome in OUTCOME_WORDS, outcome
        assert not RAW.search(outcome_words(outcome)), outcome
    assert sum(outcome_words(o) == o for o in OUTCOME_WORDS) == 1  # "passed" only


@pytest.mark.parametrize("lesson_id", ["day76", "day78", "day81"])
def test_the_experiments_table_says_what_each_promises_in_words(lesson_id):
    lesson = get_lesson(lesson_id)
    found = load_suggestions(lesson)
    html = suggestions_html(found)
    assert not RAW.findall(html), RAW.findall(html)
    assert not RAW.findall(repr(Page(lesson_id).suggested()))
    for s in found:
        assert f">{s.expect_words}</td>" in html


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize("experiment", [None, "last-column-skipped", "expect-tx-twice"])
def test_the_try_panel_says_each_outcome_in_words(outcome, experiment):
    timeout_s = 1.0 if outcome == "timeout" else 20.0
    tried = try_kernel(
        LESSON, experiment=experiment, timeout_s=timeout_s, command=_child(outcome, **FACTS[outcome])
    )
    assert tried.result.outcome == outcome
    html = tried._repr_html_()
    assert not RAW.findall(html), RAW.findall(html)
    assert outcome_words(outcome).lower() in html.lower()
    assert not RAW.findall(tried.verdict_text())


@pytest.mark.parametrize("outcome", [*OUTCOMES, "not-checked"])
def test_a_coding_result_shown_on_its_own_says_its_outcome_in_words(outcome):
    html = CodingResult("day78", "core-offset", outcome, "cpu", "what it found")._repr_html_()
    assert f"{outcome_words(outcome)}</b>" in html and not RAW.findall(html), RAW.findall(html)
