"""Rendering kernel code: a snippet region as a listing with its notes, and the code lines of a diff.

Pygments' CUDA lexer finds the tokens; their colours are JupyterLab's own
theme variables (``--jp-mirror-editor-*``, ``--jp-content-font-color*``,
``--jp-cell-editor-background``), inline on each span, so the listing reads
in the Light and the Dark theme alike and needs no stylesheet. The variables
are the ones whose colours keep a contrast of 4.5 or more on a highlighted
line in both themes (JupyterLab's comment, meta and def colours do not).

A listing is two ``<pre>`` columns, the file's line numbers and the code,
with the same font, the same line height and ``white-space: pre`` (no
wrapping, no word-break): one line is one row in both, so every number sits
beside its line however long the code is, and a long line scrolls sideways
inside the code column instead of widening the page. Every piece of text
from a data file is escaped: a note cannot inject markup.

Lines can be hidden: a coding exercise's answer is replaced by one
placeholder row (``Hidden``) until the learner passes it or asks to see it;
the hidden text is then not in the page at all, not merely out of sight.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pygments.lexers import CudaLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String

from .._html import cited, escape
from ..snippets import Snippet
from .notes import Note

# Token type -> (class, CSS); the first of a token's ancestors that is listed applies.
_TOKEN_STYLE: dict[Any, tuple[str, str]] = {
    Comment.Preproc: ("cx-p", "color:var(--jp-mirror-editor-property-color)"),
    Comment.PreprocFile: ("cx-s", "color:var(--jp-mirror-editor-string-color)"),
    Comment: ("cx-c", "color:var(--jp-content-font-color2);font-style:italic"),
    Keyword: ("cx-k", "color:var(--jp-mirror-editor-keyword-color);font-weight:bold"),
    Name.Builtin: ("cx-b", "color:var(--jp-mirror-editor-keyword-color)"),
    String: ("cx-s", "color:var(--jp-mirror-editor-string-color)"),
    Number: ("cx-n", "color:var(--jp-mirror-editor-operator-color)"),
    Operator: ("cx-o", "color:var(--jp-mirror-editor-operator-color)"),
    Punctuation: ("cx-u", "color:var(--jp-mirror-editor-punctuation-color)"),
}
# One small stylesheet with each listing and diff (the token classes alone: inline styles on every
# token made a long diff a third of a megabyte).


def token_rules(scope: str = "") -> str:
    """The token classes' CSS rules, each under ``scope`` (a selector and a space, or nothing)."""
    return "".join(sorted({f"{scope}.cx-code .{c}{{{css}}}" for c, css in _TOKEN_STYLE.values()}))


STYLE = "<style>" + token_rules() + "</style>"
# The code's own colour, the listing's background, a highlighted (annotated) line's background.
TEXT = "var(--jp-mirror-editor-variable-color,var(--jp-content-font-color1))"
BACKGROUND = "var(--jp-cell-editor-background,#f5f5f5)"
HIGHLIGHT = "color-mix(in srgb,var(--jp-warn-color2,#ffb74d) 18%,var(--jp-layout-color0,white))"
MUTED = "var(--jp-content-font-color2,#757575)"
# Both columns: one font, one line height, no wrapping (the number column must match the code row for row).
_COLUMN = (
    "margin:0;padding:4px 8px;border:0;background:transparent;font-family:var(--jp-code-font-family,monospace);"
    "font-size:var(--jp-code-font-size,13px);line-height:1.4;white-space:pre;word-break:normal;"
    "overflow-wrap:normal;tab-size:4"
)
_ROW = "display:block;min-height:1.4em"


def _style(ttype: Any) -> str:
    while ttype is not None:
        style = _TOKEN_STYLE.get(ttype)
        if style is not None:
            return style[0]
        ttype = ttype.parent
    return ""


def code_lines(text: str) -> list[str]:
    """``text`` (lines of CUDA C++) as one HTML fragment per line: escaped, tokens classed.

    The classes take their colours from ``STYLE`` inside an element of class ``cx-code``."""
    lines: list[list[str]] = [[]]
    lexer = CudaLexer(stripnl=False, ensurenl=False)
    # Pygments ends a // comment at its newline: a listing's last line, a comment with none, would
    # come out as two '/' operators and plain text. The lexer gets the newline; the row it adds goes.
    for ttype, value in lexer.get_tokens(text if text.endswith("\n") else text + "\n"):
        style = _style(ttype)
        for n, part in enumerate(value.split("\n")):
            if n:
                lines.append([])
            if part:
                body = escape(part)
                lines[-1].append(f"<span class='{style}'>{body}</span>" if style else body)
    out = ["".join(parts) for parts in lines]
    wanted = len(text.splitlines())
    return (out + [""] * wanted)[:wanted]


@dataclass(frozen=True)
class Hidden:
    """File lines ``first``..``last`` (inclusive) shown as one placeholder row saying ``why``."""

    first: int
    last: int
    why: str

    @property
    def count(self) -> int:
        return self.last - self.first + 1

    def placeholder(self) -> str:
        n = self.count
        return f"… {self.why} ({n} line{'s' if n != 1 else ''}) …"

    def covers(self, line: int) -> bool:
        return self.first <= line <= self.last


def listing_html(
    numbered: Sequence[tuple[int, str]],
    marked: Iterable[int] = (),
    hidden: Sequence[Hidden] = (),
    *,
    style: bool = True,
) -> str:
    """Two columns, numbers and code, one row per line; ``marked`` lines highlighted, ``hidden`` folded.

    ``style=False``: without the token stylesheet (``STYLE``), for a caller that puts it on the
    page once itself (the quiz's style sheet)."""
    marks = set(marked)
    html = code_lines("\n".join(text for _, text in numbered))
    numbers: list[str] = []
    code: list[str] = []
    done: set[int] = set()
    for (line, _), body in zip(numbered, html, strict=True):
        fold = next((h for h in hidden if h.covers(line)), None)
        if fold is not None:
            if fold.first in done:
                continue
            done.add(fold.first)
            numbers.append(f"<span style='{_ROW}'>⋮</span>")
            code.append(
                f"<span class='course-hidden' style='{_ROW};color:{MUTED};font-style:italic'>"
                f"{escape(fold.placeholder())}</span>"
            )
            continue
        lit = f";background:{HIGHLIGHT}" if line in marks else ""
        weight = f";font-weight:bold;color:{TEXT}" if line in marks else ""
        numbers.append(f"<span style='{_ROW}{lit}{weight}'>{line}</span>")
        code.append(f"<span style='{_ROW}{lit}'>{body or ' '}</span>")
    return (
        f"{STYLE if style else ''}<div class='course-listing cx-code' style='display:flex;align-items:flex-start;background:{BACKGROUND};"
        f"color:{TEXT};border:1px solid var(--jp-border-color2,#e0e0e0);border-radius:2px;margin:4px 0;"
        "text-align:left;max-width:100%;box-sizing:border-box'>"
        f"<pre class='course-linenos' style='{_COLUMN};flex:none;text-align:right;color:{MUTED};"
        f"user-select:none;border-right:1px solid var(--jp-border-color2,#e0e0e0)'>{''.join(numbers)}</pre>"
        f"<pre class='course-code' style='{_COLUMN};flex:1 1 auto;min-width:0;overflow-x:auto;color:{TEXT}'>"
        f"<span style='display:block;width:max-content;min-width:100%'>{''.join(code)}</span></pre></div>"
    )


@dataclass(frozen=True)
class SnippetView:
    snippet: Snippet
    notes: tuple[Note, ...] = ()
    hidden: tuple[Hidden, ...] = ()

    def _visible_notes(self) -> tuple[Note, ...]:
        # A note on a hidden line would tell the hidden answer: it is hidden with it.
        return tuple(n for n in self.notes if not any(h.covers(n.line) for h in self.hidden))

    def _repr_html_(self) -> str:
        s = self.snippet
        notes = self._visible_notes()
        code = listing_html(s.numbered(), (n.line for n in notes), self.hidden)
        title = (
            f"<p><code>{escape(s.path.name)}</code>, snippet <b>{escape(s.name)}</b>, "
            f"lines {s.start}&ndash;{s.end}</p>"
        )
        if not notes:
            return f"<div class='course-snippet'>{title}{code}</div>"
        rows = "".join(
            f"<tr><td style='text-align:right;vertical-align:top'><b>{n.line}</b></td>"
            f"<td style='text-align:left;overflow-wrap:anywhere'>{escape(n.text)}"
            f"<br><small><i>{cited(n.cite)}</i></small></td></tr>"
            for n in notes
        )
        # As wide as the output and no wider: a long citation (a URL) wraps instead of widening it.
        return (
            f"<div class='course-snippet'>{title}{code}<table style='table-layout:fixed;width:100%'>"
            f"<colgroup><col style='width:4em'><col></colgroup>{rows}</table></div>"
        )

    def __str__(self) -> str:
        s = self.snippet
        notes = self._visible_notes()
        width = len(str(s.end))
        marks = {n.line for n in notes}
        out = [f"{s.path.name}, snippet {s.name}, lines {s.start}-{s.end}"]
        shown: set[int] = set()
        for n, line in s.numbered():
            fold = next((h for h in self.hidden if h.covers(n)), None)
            if fold is None:
                out.append(f"{'*' if n in marks else ' '}{n:>{width}} | {line}")
            elif fold.first not in shown:
                shown.add(fold.first)
                out.append(f" {'⋮':>{width}} | {fold.placeholder()}")
        out += [f"  line {n.line}: {n.text} ({n.cite})" for n in notes]
        return "\n".join(out)

    def __repr__(self) -> str:
        return f"<SnippetView {self.snippet.path.name}:{self.snippet.name} lines {self.snippet.start}-{self.snippet.end}>"
