"""What changed between two versions of kernel code: one diff renderer for every page.

``side_by_side`` is the one renderer (side by side where the page is wide enough,
``SIDE_BY_SIDE_PX`` of output width, else unified: a CSS container query picks): a step's page shows its kernel's
regions against the step before (``kernel_diff``), and the learner's copy
shows what they changed against the lesson's kernel
(``course.tryout.workspace.LearnerCopy.diff_html``); both are this.

It is built on difflib's own matcher (``SequenceMatcher``, no junk
heuristic): the changed lines with ``context`` lines around them are shown,
and every longer run of unchanged code is folded into a ``<details>`` the
learner can open. Long lines wrap between words, never inside one (a word
longer than its column scrolls), with their indentation kept (a wrapped line
continues indented under its own start), tokens are
coloured as in the listings (``course.view.listing.code_lines``) with the theme's
colours, and lines can be hidden (``course.view.listing.Hidden``: a coding
exercise's answer), on either side, with the lines the matcher pairs with
them: the hidden text is not in the page. Every piece of text is escaped.

A ``KernelDiff`` (a page's ``page.changes()``) is a summary first: one line per
changed region (its name, the lines removed and added), each a closed
``<details>`` that opens on the region's diff, so the lesson starts on the page's
first screen and the whole diff is one click away, region by region.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .._html import escape
from ..lesson import Lesson
from ..snippets import Snippet, load_snippets
from .listing import BACKGROUND, MUTED, STYLE, TEXT, Hidden, code_lines, listing_html

__all__ = ["KernelDiff", "RegionDiff", "kernel_diff", "side_by_side"]


def _tint(color: str, percent: int) -> str:
    return f"color-mix(in srgb,{color} {percent}%,var(--jp-layout-color0,white))"


# Row backgrounds by matcher tag: theme colours mixed into the page's background (Light and Dark alike).
_TINT = {
    "equal": "",
    "replace": _tint("var(--jp-warn-color2,#ffb74d)", 20),
    "delete": _tint("var(--jp-error-color2,#e57373)", 18),
    "insert": _tint("var(--jp-success-color2,#81c784)", 20),
}
_FONT = "font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.4"
_HANG = 4  # a wrapped line's continuation sits this many columns right of the line's own indentation
# ... up to this many columns of it: a continuation line aligned 40 columns in (Day 81's
# swizzledDesc arguments) wrapped into an 8-character strip of its half of the table.
_MAX_HANG = 16
# Below this width of the page's output a diff is unified (one column: the old lines, then
# the new ones): side by side there each half held 12-27 characters at 1024 px (issue 38).
SIDE_BY_SIDE_PX = 1100
# The cells' look, once per diff (classes; inline on every cell it made a long diff a megabyte).
# Code wraps only between words (a token is never split: "TL_W / AIT_EMPTY"); a word longer
# than its column scrolls (the unified table grows and its box scrolls sideways; a side-by-side
# cell scrolls itself).
_DIFF_STYLE = (
    "<style>"
    ".cx-diff{container-type:inline-size}"
    f".cx-diff td{{{_FONT};vertical-align:top;padding-top:0;padding-bottom:0}}"
    f".cx-diff td.n{{color:{MUTED};text-align:right;padding:0 6px;white-space:nowrap}}"
    f".cx-diff td.m{{color:{MUTED};padding:0 4px 0 0;white-space:pre;user-select:none}}"
    ".cx-diff td.c{white-space:pre-wrap;overflow-wrap:normal;word-break:normal;text-align:left;"
    "padding-right:6px;tab-size:4}"
    ".cx-diff .cx-side td.c{overflow-x:auto}"
    ".cx-diff .cx-unified{overflow-x:auto}"
    ".cx-diff .cx-side{display:none}"
    f"@container (min-width:{SIDE_BY_SIDE_PX}px){{.cx-diff .cx-side{{display:block}}"
    ".cx-diff .cx-unified{display:none}}"
    + "".join(f".cx-diff .d-{tag}{{background:{tint}}}" for tag, tint in _TINT.items() if tint)
    + "</style>"
)

Row = tuple[str, int | None, str, int | None, str]  # tag, old number, old text, new number, new text


def _rows(a: Sequence[str], b: Sequence[str], a_start: int, b_start: int) -> list[Row]:
    out: list[Row] = []
    matcher = difflib.SequenceMatcher(a=list(a), b=list(b), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            left = (a_start + i, a[i]) if i < i2 else (None, "")
            right = (b_start + j, b[j]) if j < j2 else (None, "")
            out.append((tag, left[0], left[1], right[0], right[1]))
    return out


def _code(text: str, html: str, tint: str) -> str:
    # Hanging indentation: the first line starts at the cell's left edge with its own leading
    # spaces; a wrapped continuation starts _HANG columns right of that indentation.
    indent = len(text.expandtabs(4)) - len(text.expandtabs(4).lstrip())
    hang = min(indent + _HANG, _MAX_HANG)
    return f"<td class='c{tint}' style='padding-left:calc({hang}ch + 6px);text-indent:-{hang}ch'>{html}</td>"


def _cell(number: int | None, text: str, html: str, tag: str) -> str:
    tint = f" d-{tag}" if number is not None and _TINT[tag] else ""
    return f"<td class='n{tint}'>{number or ''}</td>{_code(text, html, tint)}"


def _table(rows: list[str], head: str = "") -> str:
    return (
        f"<table class='course-diff' style='border-collapse:collapse;table-layout:fixed;width:100%;"
        f"background:{BACKGROUND};color:{TEXT};margin:0'>"
        "<colgroup><col style='width:4em'><col><col style='width:4em'><col></colgroup>"
        f"{head}{''.join(rows)}</table>"
    )


def _unified_table(rows: list[str]) -> str:
    # Auto layout: the code column takes the rest of the width, or more (then the box scrolls).
    return (
        f"<table class='course-diff-unified' style='border-collapse:collapse;min-width:100%;"
        f"background:{BACKGROUND};color:{TEXT};margin:0'>"
        "<colgroup><col style='width:3.5em'><col style='width:3.5em'><col style='width:1.5em'><col></colgroup>"
        f"{''.join(rows)}</table>"
    )


def _unified_order(rows: list[Row]) -> list[tuple[int, str]]:
    """(row index, side) in unified order: in each changed run, its old lines ('-') then its new ('+')."""
    out: list[tuple[int, str]] = []
    n = 0
    while n < len(rows):
        tag = rows[n][0]
        end = n
        while end < len(rows) and rows[end][0] == tag:
            end += 1
        if tag == "equal":
            out += [(k, " ") for k in range(n, end)]
        else:
            out += [(k, "-") for k in range(n, end) if rows[k][1] is not None]
            out += [(k, "+") for k in range(n, end) if rows[k][3] is not None]
        n = end
    return out


def _layout(items: list[tuple[int, str]], near: set[int], table: Callable[[list[str]], str]) -> str:
    """Rows (row index, HTML) as tables, each longer run of rows not ``near`` a change folded."""
    parts: list[str] = []
    shown: list[str] = []
    folded: list[str] = []

    def flush(rows: list[str], fold: bool) -> None:
        if not rows:
            return
        if fold:
            n = len(rows)
            parts.append(
                f"<details class='course-diff-fold' style='margin:0'><summary style='color:{MUTED};"
                f"font-size:12px;cursor:pointer;padding:1px 6px'>{n} unchanged line{'s' if n != 1 else ''}"
                f"</summary>{table(rows)}</details>"
            )
        else:
            parts.append(table(rows))
        rows.clear()

    for n, html in items:
        if n in near:
            flush(folded, True)
            shown.append(html)
        else:
            flush(shown, False)
            folded.append(html)
    flush(folded, True)
    flush(shown, False)
    return "".join(parts)


def side_by_side(
    a: Sequence[str],
    b: Sequence[str],
    a_name: str,
    b_name: str,
    *,
    a_start: int = 1,
    b_start: int = 1,
    context: int = 3,
    hide_a: Sequence[Hidden] = (),
    hide_b: Sequence[Hidden] = (),
) -> str:
    """``a`` and ``b`` (lines; numbered from ``a_start``, ``b_start``) side by side, as HTML.

    Changed rows and ``context`` rows around each are shown; each longer
    unchanged run is a ``<details>`` (closed). Rows whose line on either side
    falls in a ``Hidden`` range become one placeholder row per range.
    """
    rows = _rows(a, b, a_start, b_start)
    if all(tag == "equal" for tag, *_ in rows):
        return f"<p>No changes: {escape(b_name)} is the same as {escape(a_name)}.</p>"
    a_html = dict(zip(range(a_start, a_start + len(a)), code_lines("\n".join(a)), strict=True))
    b_html = dict(zip(range(b_start, b_start + len(b)), code_lines("\n".join(b)), strict=True))

    def fold_of(row: Row) -> Hidden | None:
        _, i, _, j, _ = row
        return next(
            (h for h in hide_a if i is not None and h.covers(i)),
            next((h for h in hide_b if j is not None and h.covers(j)), None),
        )

    changed = [n for n, row in enumerate(rows) if row[0] != "equal"]
    near = {m for n in changed for m in range(n - context, n + context + 1)}
    folds = {n: fold_of(row) for n, row in enumerate(rows)}
    near |= {n for n, f in folds.items() if f is not None}
    placed: set[Hidden] = set()
    placed_unified: set[Hidden] = set()

    def placeholder(fold: Hidden, columns: int) -> str:
        body = f"<span style='color:{MUTED};font-style:italic'>{escape(fold.placeholder())}</span>"
        cells = "<td class='n'>⋮</td>" * columns
        return f"<tr class='course-hidden'>{cells}{_code('', body, '')}</tr>"

    side: list[tuple[int, str]] = []
    for n, (tag, i, left, j, right) in enumerate(rows):
        fold = folds[n]
        if fold is not None:
            if fold not in placed:
                placed.add(fold)
                body = f"<span style='color:{MUTED};font-style:italic'>{escape(fold.placeholder())}</span>"
                side.append((n, f"<tr class='course-hidden'><td class='n'>⋮</td>{_code('', body, '')}"
                                f"<td class='n'>⋮</td>{_code('', body, '')}</tr>"))  # fmt: skip
            continue
        side.append((n, f"<tr>{_cell(i, left, a_html.get(i, '') if i is not None else '', tag)}"
                        f"{_cell(j, right, b_html.get(j, '') if j is not None else '', tag)}</tr>"))  # fmt: skip
    unified: list[tuple[int, str]] = []
    for n, mark in _unified_order(rows):
        tag, i, left, j, right = rows[n]
        fold = folds[n]
        if fold is not None:
            if fold not in placed_unified:
                placed_unified.add(fold)
                unified.append((n, placeholder(fold, 3)))
            continue
        number_a, number_b = (i, None) if mark == "-" else (None, j) if mark == "+" else (i, j)
        number = i if mark == "-" else j
        code = a_html if mark == "-" else b_html
        text, html = (left if mark == "-" else right), (code.get(number, "") if number is not None else "")
        tint = f" d-{'delete' if mark == '-' else 'insert'}" if mark != " " else ""
        unified.append((n, f"<tr><td class='n{tint}'>{number_a or ''}</td><td class='n{tint}'>{number_b or ''}</td>"
                           f"<td class='m{tint}'>{mark}</td>{_code(text, html, tint)}</tr>"))  # fmt: skip
    head = (
        f"<div style='display:flex;{_FONT};font-weight:bold'><div style='flex:1;padding:0 6px 0 calc(4em + 6px)'>"
        f"{escape(a_name)}</div><div style='flex:1;padding:0 6px 0 calc(4em + 6px)'>{escape(b_name)}</div></div>"
    )
    head_unified = (
        f"<div style='{_FONT};padding:0 6px'><b>- {escape(a_name)}</b><br><b>+ {escape(b_name)}</b></div>"
    )
    return (
        f"{STYLE}{_DIFF_STYLE}<div class='course-diffview cx-code cx-diff' style='border:1px solid var(--jp-border-color2,#e0e0e0);margin:4px 0'>"
        f"<div class='cx-side'>{head}{_layout(side, near, _table)}</div>"
        f"<div class='cx-unified'>{head_unified}{_layout(unified, near, _unified_table)}</div></div>"
    )


def _lines(n: int) -> str:
    return f"{n} line{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class RegionDiff:
    name: str
    old: Snippet | None
    new: Snippet | None

    @property
    def changed(self) -> bool:
        return self.old is None or self.new is None or self.old.lines != self.new.lines

    def rows(self) -> list[Row]:
        """(tag, old line number, old text, new line number, new text) for every row."""
        old = self.old.lines if self.old else ()
        new = self.new.lines if self.new else ()
        return _rows(old, new, self.old.start if self.old else 0, self.new.start if self.new else 0)

    def counts(self) -> tuple[int, int]:
        """Lines removed and added."""
        removed = sum(1 for tag, a, _, _, _ in self.rows() if tag in ("replace", "delete") and a is not None)
        added = sum(1 for tag, _, _, b, _ in self.rows() if tag in ("replace", "insert") and b is not None)
        return removed, added


@dataclass(frozen=True)
class KernelDiff:
    old: Lesson
    new: Lesson
    regions: tuple[RegionDiff, ...]
    hidden: tuple[Hidden, ...] = ()  # lines of the new kernel not to show (an exercise's answer)
    context: int = 3

    def _repr_html_(self) -> str:
        e = escape
        changed = [r for r in self.regions if r.changed]
        parts = [
            f"<p>What changed from <code>{e(self.old.kernel_file)}</code> (Day {self.old.day}) to "
            f"<code>{e(self.new.kernel_file)}</code> (Day {self.new.day}): {len(changed)} "
            f"region{'s' if len(changed) != 1 else ''}; open one to see its diff (the changed lines "
            f"with {self.context} lines around them).</p>"
        ]
        unchanged = [r.name for r in self.regions if not r.changed]
        for region in changed:
            removed, added = region.counts()
            old, new = region.old, region.new
            if new is None:
                parts.append(f"<p class='course-region'><b>{e(region.name)}</b>: gone in this step.</p>")
                continue
            if old is None:
                # Nothing to compare it with: the new region as a listing, the page's width (a
                # side-by-side table left its old half empty and wrapped every line in the other).
                what = f"new in this step, {_lines(added)}"
                body = listing_html(new.numbered(), (), self.hidden)
            else:
                what = f"{_lines(removed)} removed, {_lines(added)} added"
                body = side_by_side(
                    old.lines,
                    new.lines,
                    self.old.kernel_file,
                    self.new.kernel_file,
                    a_start=old.start,
                    b_start=new.start,
                    context=self.context,
                    hide_b=self.hidden,
                )
            parts.append(
                "<details class='course-region' style='margin:2px 0'><summary style='cursor:pointer'>"
                f"<b>{e(region.name)}</b>: {what}</summary>{body}</details>"
            )
        if unchanged:
            parts.append(f"<p><small>Unchanged regions: {e(', '.join(unchanged))}.</small></p>")
        return "".join(parts)

    def __repr__(self) -> str:
        changed = [r.name for r in self.regions if r.changed]
        return (
            f"<KernelDiff {self.old.kernel_file} -> {self.new.kernel_file}: "
            f"{len(changed)} region(s) changed ({', '.join(changed)})>"
        )

    def __str__(self) -> str:
        lines: list[str] = []
        for region in self.regions:
            if region.changed:
                old = list(region.old.lines) if region.old else []
                new = list(region.new.lines) if region.new else []
                if region.new is not None:
                    # The hidden lines, and the same text on the old side, read as a placeholder.
                    start = region.new.start
                    gone = {
                        t
                        for k, t in enumerate(new)
                        if t.strip() and any(h.covers(start + k) for h in self.hidden)
                    }
                    for n, h in enumerate(self.hidden):
                        new = [f"… hidden {n} …" if h.covers(start + k) else t for k, t in enumerate(new)]
                    old = ["… hidden …" if t in gone else t for t in old]
                lines += difflib.unified_diff(
                    old, new, f"{self.old.kernel_file}:{region.name}", f"{self.new.kernel_file}:{region.name}",
                    lineterm="",
                )  # fmt: skip
        return "\n".join(lines)


def kernel_diff(
    old: Lesson, new: Lesson, regions: tuple[str, ...] | None = None, hidden: tuple[Hidden, ...] = ()
) -> KernelDiff:
    """The regions of ``new`` (or the named ones) against the same-named regions of ``old``."""
    before, after = load_snippets(old.kernel_path), load_snippets(new.kernel_path)
    names = regions or tuple(after)
    return KernelDiff(old, new, tuple(RegionDiff(n, before.get(n), after.get(n)) for n in names), hidden)
