"""Every course widget keeps its keys (issue 38's blocker), in a real JupyterLab in headless Chromium.

Day 78 holds every kind of course widget: the coding panel, the annotation
exercise, the shared-memory budget and the quiz. After each way a learner ends
up with the focus in one of them (a click on the quiz's Check, on a radio
button, on an annotation or a budget drop-down, on the coding panel's Hint, a
click on a widget's text, a Tab out of the quiz's text box), the test presses
JupyterLab's command-mode shortcuts ``x``, ``d d``, ``a``, ``b``, ``m``, ``z``
and Ctrl-S, and checks the notebook's cells (their number and their types) are
as before. A control step shows the keys do reach JupyterLab from outside a
widget (``b`` there adds a cell), so the test can see a key that gets through.

Then the keys a Jupyter user expects: Enter in the quiz's text box checks it,
Shift-Enter in the coding editor checks the code, Ctrl-S in the editor saves
the learner's file (and the key goes no further: no cell changes), Ctrl-S in
the quiz's text box saves the notebook and never reaches the browser (its
"Save page as": the key's default is prevented).

The server, the browser and Day 78's Run All are the fixtures of
``test_jupyterlab.py`` (``course_lab``: JupyterLab as scripts/course.sh serves
it, Day 78 run), one each for this module.
"""

# ruff: noqa: F811  (the fixtures imported from test_jupyterlab.py are test arguments by name)
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_jupyterlab import (  # noqa: F401  (fixtures, used by name)
    _save_screenshot,
    _wait_until,
    browser,
    browser_available,
    course_copy,
    course_lab,
    hard_limit_per_test,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHORTCUTS = ("x", "d", "d", "a", "b", "m", "z", "Control+s")
JS_CELLS = "nb => Array.from(nb.querySelectorAll('.jp-Cell')).map(c => c.classList.contains('jp-CodeCell') ? 'code' : c.classList.contains('jp-MarkdownCell') ? 'markdown' : 'raw')"


def _cells(notebook: Any) -> list[str]:
    return notebook.evaluate(JS_CELLS)


def _press_shortcuts(page: Any) -> None:
    for key in SHORTCUTS:
        page.keyboard.press(key)
        page.wait_for_timeout(120)  # d d is a chord: two presses inside JupyterLab's chord time
    page.wait_for_timeout(600)  # JupyterLab's chord timeout: a pending key would act by now


def _focus_in(notebook: Any, root_class: str) -> str:
    """Where the focus is: inside the widget (its class), else the focused element's description."""
    return notebook.evaluate(
        """(nb, cls) => { const a = document.activeElement;
             if (a && a.closest('.' + cls)) return 'inside';
             return a ? (a.tagName + '.' + a.className).slice(0, 120) : 'none'; }""",
        root_class,
    )


def _widget(notebook: Any, cls: str) -> Any:
    box = notebook.locator(f".course-live.{cls}").first
    box.wait_for()
    box.scroll_into_view_if_needed()
    return box


# Each way into a widget: (name, the widget's class, what the learner does there).
def _quiz_check(box: Any, page: Any) -> None:
    box.locator(".course-question button.course-check").first.click()


def _quiz_radio(box: Any, page: Any) -> None:
    box.locator(".course-question input[type=radio]").first.click()


def _quiz_text_tab(box: Any, page: Any) -> None:
    text = box.locator(".course-question input[type=text]").first
    text.click()
    page.keyboard.type("7")
    page.keyboard.press("Tab")


def _quiz_text_click(box: Any, page: Any) -> None:
    box.locator(".course-question .widget-html-content p").first.click()  # a question's words


def _select(box: Any, page: Any) -> None:
    select = box.locator("select").first
    select.select_option(index=1)
    select.focus()  # as after a click on it and a choice in its list


def _hint(box: Any, page: Any) -> None:
    box.locator("button", has_text="Hint").first.click()


WAYS = [
    ("quiz-check", "course-quiz", _quiz_check),
    ("quiz-radio", "course-quiz", _quiz_radio),
    ("quiz-text-tab", "course-quiz", _quiz_text_tab),
    ("quiz-words", "course-quiz", _quiz_text_click),
    ("annotation-dropdown", "course-annotation", _select),
    ("budget-dropdown", "course-budget", _select),
    ("coding-hint", "course-coding", _hint),
]


def test_jupyterlabs_shortcuts_reach_the_notebook_from_outside_a_widget(course_lab: Any, artifacts: Path):
    """The control: the same keys do act from a cell outside any widget (the test can see them)."""
    _lab, tab, _work = course_lab
    page, notebook = tab.page, tab.panel
    before = _cells(notebook)
    first = notebook.locator(".jp-MarkdownCell").first
    first.scroll_into_view_if_needed()
    first.click()
    page.keyboard.press("Escape")  # command mode on that cell
    page.keyboard.press("b")
    after = _wait_until(
        "a cell added by b", 10, lambda: _cells(notebook), lambda c: len(c) == len(before) + 1
    )
    assert len(after) == len(before) + 1, "b outside a widget added no cell: the test could not see a key"
    page.keyboard.press("d")
    page.keyboard.press("d")
    back = _wait_until("the cell deleted", 10, lambda: _cells(notebook), lambda c: c == before)
    assert back == before


@pytest.mark.parametrize(("name", "cls", "way"), WAYS, ids=[w[0] for w in WAYS])
def test_after_using_a_widget_jupyterlabs_shortcuts_leave_the_notebook_alone(
    name: str, cls: str, way: Any, course_lab: Any, artifacts: Path
):
    _lab, tab, _work = course_lab
    page, notebook = tab.page, tab.panel
    tab.bring_to_front()
    before = _cells(notebook)
    box = _widget(notebook, cls)
    try:
        way(box, page)
        page.wait_for_timeout(300)
        assert _focus_in(notebook, cls) == "inside", f"after {name} the focus left the widget"
        _press_shortcuts(page)
        after = _cells(notebook)
        assert len(after) == len(before), (
            f"after {name}, {SHORTCUTS} changed the cell count {len(before)} -> {len(after)}"
        )
        assert after == before, f"after {name}, {SHORTCUTS} changed a cell's type"
        assert notebook.locator(f".course-live.{cls}").count() >= 1, f"the {cls} widget is gone"
    except BaseException:
        _save_screenshot(page, artifacts, f"keys-{name}-failure.png")
        raise


def test_enter_in_the_quiz_text_box_checks_it(course_lab: Any, artifacts: Path):
    _lab, tab, _work = course_lab
    page, notebook = tab.page, tab.panel
    before = _cells(notebook)
    box = _widget(notebook, "course-quiz")
    question = box.locator(".course-question", has=page.locator("input[type=text]")).first
    feedback = question.locator(".widget-html").last  # the question's feedback, after its Check
    question.locator("input[type=text]").fill("12")
    question.locator("input[type=text]").press("Enter")
    said = _wait_until("the check's feedback", 30, feedback.inner_text, lambda t: t.strip() != "")
    assert said.strip(), "Enter in the text box did not check the answer"
    assert _cells(notebook) == before
    question.screenshot(path=str(artifacts / "keys-quiz-enter-checks.png"), animations="disabled")


def test_shift_enter_in_the_editor_checks_and_ctrl_s_saves_the_file(course_lab: Any, artifacts: Path):
    _lab, tab, work = course_lab
    page, notebook = tab.page, tab.panel
    before = _cells(notebook)
    box = _widget(notebook, "course-coding")
    box.locator(".cm-line").first.click()
    page.keyboard.press("Control+End")
    page.keyboard.type(" // mine")
    page.keyboard.press("Control+s")
    learner = work / "day78" / "coding" / "core-offset.cu"
    text = _wait_until("the file saved", 30, lambda: learner.read_text("utf-8"), lambda t: "// mine" in t)
    assert "// mine" in text, (
        "Ctrl-S in the editor did not save the learner's file: " + box.inner_text()[-800:]
    )
    said = _wait_until("the panel says so", 30, box.inner_text, lambda t: "Saved to" in t)
    assert "Saved to" in said, said[-600:]
    lines = box.locator(".cm-line").count()
    page.keyboard.press("Shift+Enter")
    said = _wait_until("the check", 60, box.inner_text, lambda t: "of your code so far" in t)
    assert "of your code so far" in said, "Shift-Enter in the editor did not check: " + said[-600:]
    assert box.locator(".cm-line").count() == lines, "Shift-Enter put a new line in the editor"
    assert _cells(notebook) == before
    box.screenshot(path=str(artifacts / "keys-editor-shift-enter-checked.png"), animations="disabled")


JS_WATCH_SAVE = """() => { window.__courseSave = null;
  window.addEventListener('keydown', e => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's' && e.isTrusted) window.__courseSave = e;
  }, {capture: true}); }"""


def test_ctrl_s_in_a_quiz_text_box_saves_the_notebook_and_never_the_browsers_page(
    course_lab: Any, artifacts: Path
):
    """ipywidgets' text box stops its keydowns, so Ctrl-S there never reached JupyterLab and the
    browser's "Save page as" opened (issue 38): the key's default (the browser's save) must be
    prevented, the notebook saved on disk, the text box keep the focus and its text."""
    _lab, tab, work = course_lab
    page, notebook = tab.page, tab.panel
    tab.bring_to_front()
    before = _cells(notebook)
    on_disk = work.parent / tab.notebook
    assert on_disk.is_file(), on_disk
    saved_before = on_disk.stat().st_mtime_ns
    box = _widget(notebook, "course-quiz")
    text = box.locator(".course-question input[type=text]").first
    try:
        text.click()
        text.fill("")
        page.keyboard.type("34")
        page.evaluate(JS_WATCH_SAVE)
        page.keyboard.press("Control+s")
        prevented = page.evaluate("() => window.__courseSave && window.__courseSave.defaultPrevented")
        assert prevented is True, "Ctrl-S in the quiz's text box reached the browser (its Save page as)"
        mtime = _wait_until(
            "the notebook saved", 30, lambda: on_disk.stat().st_mtime_ns, lambda t: t != saved_before
        )
        assert mtime != saved_before, "Ctrl-S in the quiz's text box did not save the notebook"
        assert text.input_value() == "34" and _focus_in(notebook, "course-quiz") == "inside"
        assert _cells(notebook) == before
        box.locator(".course-question", has=page.locator("input[type=text]")).first.screenshot(
            path=str(artifacts / "keys-quiz-text-ctrl-s-saved.png"), animations="disabled"
        )
        # the window: the notebook's tab saved (no unsaved dot), the focus still in the text box
        page.screenshot(path=str(artifacts / "keys-quiz-text-ctrl-s-window.png"), animations="disabled")
    except BaseException:
        _save_screenshot(page, artifacts, "keys-quiz-text-ctrl-s-failure.png")
        raise
