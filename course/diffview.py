"""What changed between two kernels: their snippet regions side by side.

Each step of a ladder changes one idea of the step before it; its page
shows that change as a side-by-side diff of the regions both kernels have
(same region name), with the files' real line numbers, changed lines
marked, and regions that are new in this step listed as such.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ._html import escape
from .lesson import Lesson
from .snippets import Snippet, load_snippets

_STYLE = {
    "equal": "",
    "replace": "background:#fff5b1",
    "delete": "background:#ffebe9",
    "insert": "background:#e6ffec",
}
# pre-wrap: indentation kept, and a long line wraps inside its half instead of widening the page.
_CODE = (
    "font-family:var(--jp-code-font-family,monospace);font-size:12px;white-space:pre-wrap;"
    "overflow-wrap:anywhere;padding:0 6px;text-align:left;vertical-align:top"
)
_NUMBER = "color:#888;text-align:right;vertical-align:top"


@dataclass(frozen=True)
class RegionDiff:
    name: str
    old: Snippet | None
    new: Snippet | None

    @property
    def changed(self) -> bool:
        return self.old is None or self.new is None or self.old.lines != self.new.lines

    def rows(self) -> list[tuple[str, int | None, str, int | None, str]]:
        """(tag, old line number, old text, new line number, new text) for every row."""
        old = self.old.lines if self.old else ()
        new = self.new.lines if self.new else ()
        o0 = self.old.start if self.old else 0
        n0 = self.new.start if self.new else 0
        out: list[tuple[str, int | None, str, int | None, str]] = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                left = (o0 + i, old[i]) if i < i2 else (None, "")
                right = (n0 + j, new[j]) if j < j2 else (None, "")
                out.append((tag, left[0], left[1], right[0], right[1]))
        return out

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

    def _repr_html_(self) -> str:
        e = escape
        parts = [
            f"<p>What changed from <code>{e(self.old.kernel_file)}</code> (Day {self.old.day}) to "
            f"<code>{e(self.new.kernel_file)}</code> (Day {self.new.day}), region by region:</p>"
        ]
        unchanged = [r.name for r in self.regions if not r.changed]
        for region in self.regions:
            if not region.changed:
                continue
            if region.old is None:
                parts.append(f"<p><b>{e(region.name)}</b>: new in this step.</p>")
            elif region.new is None:
                parts.append(f"<p><b>{e(region.name)}</b>: gone in this step.</p>")
                continue
            removed, added = region.counts()
            parts.append(f"<p><b>{e(region.name)}</b>: {removed} line(s) out, {added} in.</p>")
            rows = "".join(
                f"<tr><td style='{_NUMBER}'>{a or ''}</td>"
                f"<td style='{_CODE};{_STYLE[tag] if a is not None else ''}'>{e(left)}</td>"
                f"<td style='{_NUMBER}'>{b or ''}</td>"
                f"<td style='{_CODE};{_STYLE[tag] if b is not None else ''}'>{e(right)}</td></tr>"
                for tag, a, left, b, right in region.rows()
            )
            parts.append(
                "<table style='border-collapse:collapse;table-layout:fixed;width:100%'>"
                "<colgroup><col style='width:3.5em'><col><col style='width:3.5em'><col></colgroup>"
                f"<tr><th></th><th style='text-align:left'>{e(self.old.kernel_file)}</th><th></th>"
                f"<th style='text-align:left'>{e(self.new.kernel_file)}</th></tr>{rows}</table>"
            )
        if unchanged:
            parts.append(f"<p><small>Unchanged regions: {e(', '.join(unchanged))}.</small></p>")
        return "".join(parts)

    def __str__(self) -> str:
        lines: list[str] = []
        for region in self.regions:
            if region.changed:
                old = region.old.lines if region.old else ()
                new = region.new.lines if region.new else ()
                lines += difflib.unified_diff(
                    old, new, f"{self.old.kernel_file}:{region.name}", f"{self.new.kernel_file}:{region.name}",
                    lineterm="",
                )  # fmt: skip
        return "\n".join(lines)


def kernel_diff(old: Lesson, new: Lesson, regions: tuple[str, ...] | None = None) -> KernelDiff:
    """The regions of ``new`` (or the named ones) against the same-named regions of ``old``."""
    before, after = load_snippets(old.kernel_path), load_snippets(new.kernel_path)
    names = regions or tuple(after)
    return KernelDiff(old, new, tuple(RegionDiff(n, before.get(n), after.get(n)) for n in names))
