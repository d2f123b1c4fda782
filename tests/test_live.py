"""Every widget the course displays says, in a plain output of its own, to run its cell when it cannot be drawn."""

from __future__ import annotations

import pytest

from course._live import LIVE_CLASS, NOTE_CLASS, LiveBox


def _shown(obj) -> list[dict]:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    outputs: list[dict] = []
    publish = shell.display_pub.publish
    shell.display_pub.publish = lambda data, metadata=None, **kw: outputs.append(data)
    try:
        from IPython.display import display

        display(obj)
    finally:
        shell.display_pub.publish = publish
    return outputs


def test_a_live_box_is_shown_after_a_note_that_hides_while_it_is_live():
    box = LiveBox()
    out = _shown(box)
    assert len(out) == 2
    assert NOTE_CLASS in out[0]["text/html"] and "run this cell" in out[0]["text/html"]
    assert f":has(.{LIVE_CLASS})" in out[0]["text/html"]  # hidden while the widget below is live
    assert out[1]["application/vnd.jupyter.widget-view+json"]["model_id"] == box.model_id
    assert LIVE_CLASS in box._dom_classes


@pytest.mark.parametrize("make", ["coding", "quiz", "annotate", "budget", "measure"])
def test_every_course_widget_is_a_live_box(make, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_WORKSPACE", str(tmp_path / "work"))
    from course.exercises.annotation import exercise_widget
    from course.hopper.smem_budget import budget_widget
    from course.page import Page, _gpu_action

    page = Page("day78")
    widget = {
        "coding": lambda: page.coding(),
        "quiz": lambda: page.quiz(),
        "annotate": lambda: exercise_widget("day78"),
        "budget": lambda: budget_widget(),
        "measure": lambda: _gpu_action("Measure", "measuring", lambda progress: None, name="measure"),
    }[make]()
    assert isinstance(widget, LiveBox), type(widget).__mro__


@pytest.mark.parametrize("make", ["coding", "quiz", "annotate", "budget", "slider"])
def test_every_course_widget_keeps_its_keys(make, tmp_path, monkeypatch):
    """Its last child is the hidden KeyGuard (the browser test presses the keys), also after its
    children are set again; the guard's module stops keys at the box and lets Ctrl-S through."""
    monkeypatch.setenv("COURSE_WORKSPACE", str(tmp_path / "work"))
    import ipywidgets as widgets

    from course._live import KEYS_BUNDLE, KeyGuard
    from course.exercises.annotation import exercise_widget
    from course.hopper.smem_budget import budget_widget
    from course.lessons.day87.accuracy import promotion_explorer
    from course.page import Page

    page = Page("day78")
    widget = {
        "coding": lambda: page.coding(),
        "quiz": lambda: page.quiz(),
        "annotate": lambda: exercise_widget("day78"),
        "budget": lambda: budget_widget(),
        "slider": lambda: promotion_explorer(),
    }[make]()
    guards = [c for c in widget.children if isinstance(c, KeyGuard)]
    assert len(guards) == 1 and widget.children[-1] is guards[0]
    assert guards[0].layout.display == "none"
    widget.children = [widgets.HTML("x"), *widget.children]
    assert widget.children[-1] is guards[0] and sum(isinstance(c, KeyGuard) for c in widget.children) == 1
    js = KEYS_BUNDLE.read_text("utf-8")
    assert "stopPropagation()" in js and "isSave(e)" in js and ".course-live" in js


def test_enter_in_a_quiz_text_box_has_a_check_to_press(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_WORKSPACE", str(tmp_path / "work"))
    from course._live import CHECK_CLASS, QUESTION_CLASS
    from course.page import Page

    quiz = Page("day78").quiz()
    panels = [p for p in quiz.panels.values() if p.text is not None and p.check_button is not None]
    assert panels, "Day 78's quiz has a text or number question"
    for p in panels:
        assert QUESTION_CLASS in p.box._dom_classes and CHECK_CLASS in p.check_button._dom_classes
        assert p.check_button in p.box.children
