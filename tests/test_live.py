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
