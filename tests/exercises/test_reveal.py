"""A coding exercise's answer is out of the page's listings and diffs until a pass or a click (issue 22, item 5)."""

from __future__ import annotations

import html
import re

import pytest

from course.exercises import progress
from course.exercises.reveal import RevealBox, answers
from course.lessons import LESSONS
from course.page import Page


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<style>.*?</style>|<[^>]+>", "", markup, flags=re.S))


def _answer_lines(lesson_id: str) -> list[str]:
    """Every exercise's answer lines that appear once in the kernel (a line like `}` proves nothing)."""
    lesson = LESSONS[lesson_id]
    kernel = lesson.kernel_path.read_text("utf-8").splitlines()
    lines = [kernel[n - 1].strip() for a in answers(lesson) for n in range(a.first, a.last + 1)]
    return [ln for ln in lines if len(ln) > 6 and sum(ln in k for k in kernel) == 1]


def _shown(obj) -> str:
    return obj.html.value if isinstance(obj, RevealBox) else obj._repr_html_()


@pytest.mark.parametrize("lesson_id", [lid for lid in LESSONS if answers(LESSONS[lid])])
def test_no_listing_or_diff_shows_the_answer_until_the_learner_passes(lesson_id, workspace):
    lesson = LESSONS[lesson_id]
    page = Page(lesson_id)
    secret = _answer_lines(lesson_id)
    assert secret, f"{lesson_id}: the exercise has no line unique in the kernel to look for"
    shown = [page.snippet(name) for name in lesson.snippets]
    if lesson.previous:
        shown.append(page.changes())
    boxes = [s for s in shown if isinstance(s, RevealBox)]
    for s in shown:
        leaked = [ln for ln in secret if ln in _text(_shown(s))]
        assert not leaked, f"{lesson_id}: {s!r} shows {leaked}"
    if not boxes:  # Day 78: no listing on the page holds the exercise's lines
        return
    # A pass of every exercise in the learner's progress, then Check's hook: every folded line is shown
    # (Day 86 has two exercises, in two listings: each line must show in one of the boxes).
    for answer in answers(lesson):
        progress.record(lesson_id, "coding", answer.exercise.id, {"passed": True, "attempts": 1})
    page.refresh_reveals()
    for box in boxes:
        assert box.revealed and box.button.layout.display == "none"
    assert all(any(ln in _text(_shown(b)) for b in boxes) for ln in secret)
    # A page run after the pass shows everything, with no button.
    again = Page(lesson_id)
    assert not any(isinstance(again.snippet(name), RevealBox) for name in lesson.snippets)


def test_the_reveal_button_shows_the_lines_and_a_failed_check_does_not(workspace):
    page = Page("day76")
    box = page.snippet("plain-store")
    assert isinstance(box, RevealBox)
    (answer,) = answers(LESSONS["day76"])
    progress.record("day76", "coding", answer.exercise.id, {"passed": False, "attempts": 1})
    page.refresh_reveals()
    assert not box.revealed
    assert "… the lines you write in the exercise" in _text(box.html.value)
    box.button.click()
    assert box.revealed and "tile[r][c] + 1.0f;" in _text(box.html.value)


def test_the_learners_copy_diff_hides_the_answer_too(workspace):
    page = Page("day76")
    copy = page.my_copy()
    path = copy.path
    text = path.read_text()
    path.write_text(
        text.replace("const size_t rowBase", "const size_t  rowBase")
    )  # an edit beside the answer
    shown = _text(page.my_copy()._repr_html_())
    assert "rowBase" in shown
    assert not [ln for ln in _answer_lines("day76") if ln in shown]
