"""Rendering a snippet region as highlighted CUDA with its notes.

Pygments does the highlighting (CUDA lexer, inline styles so the page
needs no stylesheet), with the file's real line numbers and the annotated
lines highlighted; the notes follow as a table keyed by line. Every piece
of text from a data file is escaped: a note cannot inject markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CudaLexer

from ._html import escape, show_bidi
from .annotations import Note
from .snippets import Snippet


@dataclass(frozen=True)
class SnippetView:
    snippet: Snippet
    notes: tuple[Note, ...] = ()

    def _repr_html_(self) -> str:
        s = self.snippet
        formatter = HtmlFormatter(
            linenos="table",
            linenostart=s.start,
            hl_lines=[n.line - s.start + 1 for n in self.notes],
            noclasses=True,
            style="default",
            nobackground=False,
        )
        code = show_bidi(highlight(s.text, CudaLexer(), formatter))
        # Line numbers in their own column, apart from the code (JupyterLab right-aligns table
        # cells by default: the code column must stay left-aligned, the numbers get a gap).
        code = code.replace(
            '<td class="linenos">', '<td class="linenos" style="text-align:right;padding-right:12px">'
        )
        code = code.replace('<td class="code">', '<td class="code" style="text-align:left">')
        title = (
            f"<p><code>{escape(s.path.name)}</code>, snippet <b>{escape(s.name)}</b>, "
            f"lines {s.start}&ndash;{s.end}</p>"
        )
        if not self.notes:
            return f"<div class='course-snippet'>{title}{code}</div>"
        rows = "".join(
            f"<tr><td style='text-align:right;vertical-align:top'><b>{n.line}</b></td>"
            f"<td style='text-align:left'>{escape(n.text)}"
            f"<br><small><i>{escape(n.cite)}</i></small></td></tr>"
            for n in self.notes
        )
        return f"<div class='course-snippet'>{title}{code}<table>{rows}</table></div>"

    def __str__(self) -> str:
        s = self.snippet
        width = len(str(s.end))
        marks = {n.line for n in self.notes}
        out = [f"{s.path.name}, snippet {s.name}, lines {s.start}-{s.end}"]
        out += [f"{'*' if n in marks else ' '}{n:>{width}} | {line}" for n, line in s.numbered()]
        out += [f"  line {n.line}: {n.text} ({n.cite})" for n in self.notes]
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"<SnippetView {self.snippet.path.name}:{self.snippet.name} lines {self.snippet.start}-{self.snippet.end}>"
