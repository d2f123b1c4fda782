"""A code editor widget: CodeMirror 6 (C++ highlighting, Tab and Shift-Tab indent, line numbers).

``CodeEditor(value=..., first_line=N)`` is an anywidget whose ``value`` syncs both ways
like a ``Textarea``'s, so ``panel.editor.value`` works headless. The gutter counts
from ``first_line``: the kernel's line number of the piece's first line. Keys typed
in it never reach JupyterLab's notebook shortcuts (its element carries
``data-lm-suppress-shortcuts``: Lumino's ``CommandRegistry`` matches no key
binding for an event from inside such an element; JupyterLab's extension guide,
Notebook, "Keyboard interaction model"). Shift-Enter (or Ctrl/Cmd-Enter) calls the
callbacks given to ``on_run`` (the coding panel checks, as a Jupyter user expects
Shift-Enter to run), Ctrl/Cmd-S those given to ``on_save`` (the panel saves the piece
into the learner's file; the browser's "Save page as" never opens).

The browser side is ``course/static/code_editor.js``, bundled ahead of time from
npm packages with pinned versions (``tools/code_editor/build.sh``), so the page
needs no network.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets

__all__ = ["BUNDLE", "CodeEditor"]

BUNDLE = Path(__file__).resolve().parents[1] / "static" / "code_editor.js"


class CodeEditor(anywidget.AnyWidget):
    _esm = BUNDLE
    value = traitlets.Unicode("").tag(sync=True)
    first_line = traitlets.Int(1).tag(sync=True)
    rows = traitlets.Int(10).tag(sync=True)

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._on: dict[str, list[Callable[[], object]]] = {"run": [], "save": []}
        self.on_msg(self._message)

    def on_run(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` when the learner presses Shift-Enter (or Ctrl/Cmd-Enter) in the editor."""
        self._on["run"].append(callback)

    def on_save(self, callback: Callable[[], object]) -> None:
        """Call ``callback()`` when the learner presses Ctrl/Cmd-S in the editor."""
        self._on["save"].append(callback)

    def press(self, event: str) -> None:
        """What the browser's key message does (``"run"`` or ``"save"``); headless tests call it."""
        if event not in self._on:
            raise ValueError(f"CodeEditor: no key event {event!r} (known: {', '.join(self._on)})")
        for callback in self._on[event]:
            callback()

    def _message(self, _widget: object, content: Any, _buffers: object) -> None:
        event = content.get("event") if isinstance(content, dict) else None
        if event not in self._on:  # anything else is not this editor's message: ignored
            return
        # The text at the key: the last keystrokes' state updates may still be on their way.
        if isinstance(content.get("value"), str):
            self.value = content["value"]
        self.press(event)

    def __repr__(self) -> str:
        return f"CodeEditor(first_line={self.first_line}, {len(self.value.splitlines())} lines)"
