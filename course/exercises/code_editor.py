"""A code editor widget: CodeMirror 6 (C++ highlighting, Tab and Shift-Tab indent, line numbers).

``CodeEditor(value=..., first_line=N)`` is an anywidget whose ``value`` syncs both ways
like a ``Textarea``'s, so ``panel.editor.value`` works headless. The gutter counts
from ``first_line``: the kernel's line number of the piece's first line. Keys typed
in it never reach JupyterLab's notebook shortcuts (its element carries
``data-lm-suppress-shortcuts``: Lumino's ``CommandRegistry`` matches no key
binding for an event from inside such an element; JupyterLab's extension guide,
Notebook, "Keyboard interaction model").

The browser side is ``course/static/code_editor.js``, bundled ahead of time from
npm packages with pinned versions (``tools/code_editor/build.sh``), so the page
needs no network.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

__all__ = ["BUNDLE", "CodeEditor"]

BUNDLE = Path(__file__).resolve().parents[1] / "static" / "code_editor.js"


class CodeEditor(anywidget.AnyWidget):
    _esm = BUNDLE
    value = traitlets.Unicode("").tag(sync=True)
    first_line = traitlets.Int(1).tag(sync=True)
    rows = traitlets.Int(10).tag(sync=True)

    def __repr__(self) -> str:
        return f"CodeEditor(first_line={self.first_line}, {len(self.value.splitlines())} lines)"
