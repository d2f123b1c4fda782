"""The box every widget of the course is displayed in, with a note for a page reopened without its kernel.

A widget lives in the kernel. A saved page keeps only a reference to it, so a
page reopened (or a kernel restarted) shows "Error displaying widget: model not
found" in JupyterLab until its cell runs again; ipywidgets' own fallback (the
``text/plain`` of the display bundle) is not shown where the widget manager is
installed. So a ``LiveBox`` is displayed after a short note of its own, an
ordinary HTML output that says to run the cell; the note hides itself while the
widget below it is live (its output area holds a ``course-live`` element: CSS
``:has()``), and shows wherever the widget cannot be drawn: a reopened page,
a viewer without a kernel.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

__all__ = ["LIVE_CLASS", "NOTE_CLASS", "RUN_NOTE", "LiveBox"]

LIVE_CLASS = "course-live"
NOTE_CLASS = "course-run-note"
RUN_NOTE = (
    f"<style>.jp-OutputArea:has(.{LIVE_CLASS}) > .jp-OutputArea-child:has(.{NOTE_CLASS}),"
    f" .jp-OutputArea:has(.{LIVE_CLASS}) .{NOTE_CLASS} {{ display: none; }}</style>"
    f"<div class='{NOTE_CLASS}' style='border-left:4px solid #1f5fa8;padding:2px 10px'>"
    "This part of the page needs its Python kernel. If it shows an error or nothing below, "
    "run this cell (Shift-Enter), or run the whole page (Run &gt; Run All Cells).</div>"
)


class LiveBox(widgets.VBox):
    """An ``ipywidgets.VBox`` displayed after ``RUN_NOTE`` (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.add_class(LIVE_CLASS)

    def _ipython_display_(self, **kwargs: Any) -> None:
        # IPython: only in a Jupyter kernel
        from IPython.display import HTML, display

        display(HTML(RUN_NOTE))
        display(self._repr_mimebundle_(**kwargs), raw=True)
