"""The box every widget of the course is displayed in, with a note for a page reopened without its kernel.

A widget lives in the kernel. A saved page keeps only a reference to it, so a
page reopened (or a kernel restarted) shows "Error displaying widget: model not
found" in JupyterLab until its cell runs again; ipywidgets' own fallback (the
``text/plain`` of the display bundle) is not shown where the widget manager is
installed. So a ``LiveBox`` is displayed after a short note of its own, an
ordinary HTML output that says to run the cell; the note hides itself while the
widget below it is live (its output area holds a ``course-live`` element: CSS
``:has()``), and shows wherever the widget cannot be drawn: a reopened page,
a viewer without a kernel. The note's style sheet also gives a course widget's button a
focus ring a learner sees (2 px of the theme's brand blue) when Tab reaches it, and
makes the lines a cell prints (stdout) wrap between words in a page that shows a course
widget (JupyterLab's ``word-break: break-all`` split "cluster" over two rows at 1024 px;
a notebook without a course widget keeps JupyterLab's own look).

Every ``LiveBox`` keeps its keys: it holds, last and hidden, a ``KeyGuard`` (an
anywidget, ``course/static/keys.js``) that stops every key pressed inside the box
before JupyterLab's command-mode shortcuts see it (after a click on Check or a
radio button, ``d d`` would delete the cell), keeps Ctrl/Cmd-S from the browser
("Save page as") and hands it to JupyterLab, which saves the notebook (also from a
quiz's text or number box, whose ipywidgets view stops its keys; the code editor
keeps its own Ctrl-S, which saves the learner's file), focuses the box after a click
that left the focus outside it, and makes Enter in a quiz text or number box press
its question's Check (``CHECK_CLASS`` in a ``QUESTION_CLASS`` box).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets

__all__ = [
    "CHECK_CLASS",
    "KEYS_BUNDLE",
    "LIVE_CLASS",
    "NOTE_CLASS",
    "QUESTION_CLASS",
    "RUN_NOTE",
    "KeyGuard",
    "LiveBox",
]

KEYS_BUNDLE = Path(__file__).resolve().parent / "static" / "keys.js"
QUESTION_CLASS = "course-question"  # a quiz question's box: Enter in its text box presses ...
CHECK_CLASS = "course-check"  # ... its Check button

LIVE_CLASS = "course-live"
NOTE_CLASS = "course-run-note"
RUN_NOTE = (
    f"<style>.jp-OutputArea:has(.{LIVE_CLASS}) > .jp-OutputArea-child:has(.{NOTE_CLASS}),"
    f" .jp-OutputArea:has(.{LIVE_CLASS}) .{NOTE_CLASS} {{ display: none; }}"
    # A button reached with Tab shows it: ipywidgets' 1 px light-blue outline was about 2:1 against
    # a white page or a grey button; the theme's brand blue, 2 px, is 3:1 or more in Light and Dark.
    f" .{LIVE_CLASS} .jupyter-button:focus-visible {{ outline: 2px solid var(--jp-brand-color1, #1976d2);"
    " outline-offset: 1px; }"
    # The lines a cell prints wrap between words, in a course page only (a notebook that shows a
    # course widget): JupyterLab breaks a stream's lines anywhere, "clu" / "ster" at 1024 px.
    f" .jp-Notebook:has(.{LIVE_CLASS}) .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout'] pre"
    " { word-break: normal; overflow-wrap: break-word; }</style>"
    f"<div class='{NOTE_CLASS}' style='border-left:4px solid #1f5fa8;padding:2px 10px'>"
    "This part of the page needs its Python kernel. If it shows an error or nothing below, "
    "run this cell (Shift-Enter), or run the whole page (Run &gt; Run All Cells).</div>"
)


class KeyGuard(anywidget.AnyWidget):
    """Hidden; keeps the keys of the ``LiveBox`` it is in (see the module's docstring)."""

    _esm = KEYS_BUNDLE

    def __init__(self, **kwargs: Any):
        super().__init__(layout=widgets.Layout(display="none"), **kwargs)


class LiveBox(widgets.VBox):
    """An ``ipywidgets.VBox`` displayed after ``RUN_NOTE``, its last child a ``KeyGuard``
    (see the module's docstring), also when its children are set again."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.add_class(LIVE_CLASS)
        self.set_trait("children", tuple(self.children))  # validated below: the guard comes last

    @traitlets.validate("children")
    def _guarded(self, proposal: Any) -> tuple[Any, ...]:
        guard = self.__dict__.get("_key_guard")
        if guard is None:
            guard = self.__dict__["_key_guard"] = KeyGuard()
        return (*(c for c in proposal["value"] if c is not guard), guard)

    def _ipython_display_(self, **kwargs: Any) -> None:
        # IPython: only in a Jupyter kernel
        from IPython.display import HTML, display

        display(HTML(RUN_NOTE))
        display(self._repr_mimebundle_(**kwargs), raw=True)
