"""Quiz text into HTML: escaped, with inline code and links to the docs; nothing else.

Quiz files are plain text. Two things in them render: a span in backticks
(`` `bar.arrive()` ``) is shown as code, and in a ``reference`` an anchor
written ``(#section-anchor)`` becomes a link into the document named before
it ("PTX ISA, wgmma.fence (#asynchronous-warpgroup-level-...)"). The words
before the anchor, back to the previous ``;``, ``:``, ``,`` or ``and``, are
the link's text. Everything is escaped first (``course._html.escape``), so no
markup in a quiz file ever passes through; a link's address is built from a
fixed document URL and an anchor of letters, digits, ``.``, ``_`` and ``-``. A full
address in brackets, ``(https://...)``, becomes a link on the words before it in
the same way (``course._html.cited``): no raw URL is shown to a learner.

The loader refuses a reference whose anchor cannot be placed
(``reference_problems``); the renderer, given one anyway, shows it as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._html import cited, escape

# Documents an anchor can point into: one page each, so "#anchor" is enough.
DOCS: dict[str, str] = {
    "PTX ISA": "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html",
    "CUDA C++ Programming Guide": "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html",
}
# Named in references, but spread over many pages: an anchor cannot follow them.
_UNLINKED = ("CUDA Driver API",)

_CODE = re.compile(r"`([^`\n]+)`")
_ANCHOR = re.compile(r"\s?\(#([A-Za-z0-9][A-Za-z0-9._-]*)\)")
_DOC_NAME = re.compile("|".join(re.escape(name) for name in (*DOCS, *_UNLINKED)))
_DELIMITERS = ("; ", ": ", ", ", " and ")


def inline(text: str) -> str:
    """``text`` escaped for HTML, with `backticked` spans shown as code."""
    return _CODE.sub(r"<code>\1</code>", escape(text))


def plain(text: str) -> str:
    """``text`` for a widget that shows plain text (a radio label): the backticks of code spans go."""
    return _CODE.sub(r"\1", text)


@dataclass(frozen=True)
class Link:
    text: str  # the words the link shows
    anchor: str
    url: str  # document URL + "#" + anchor


def _document(text: str, end: int) -> str | None:
    """The last document named in ``text[:end]``."""
    names = [m.group() for m in _DOC_NAME.finditer(text, 0, end)]
    return names[-1] if names else None


def reference_parts(text: str) -> list[str | Link]:
    """``text`` as plain pieces and links; an anchor that cannot be placed stays plain text."""
    parts: list[str | Link] = []
    cursor = 0
    for found in _ANCHOR.finditer(text):
        url = DOCS.get(_document(text, found.start()) or "")
        if url is None:
            continue
        before = text[cursor : found.start()]
        cut = max((before.rfind(d) + len(d) for d in _DELIMITERS if d in before), default=0)
        if before[:cut]:
            parts.append(before[:cut])
        words = before[cut:].strip() or (_document(text, found.start()) or "")
        anchor = found.group(1)
        parts.append(Link(words, anchor, f"{url}#{anchor}"))
        cursor = found.end()
    if text[cursor:]:
        parts.append(text[cursor:])
    return parts


def reference_problems(text: str) -> list[str]:
    """Why an anchor in ``text`` cannot become a link (empty when every one can)."""
    problems = []
    for found in _ANCHOR.finditer(text):
        document = _document(text, found.start())
        where = f"anchor (#{found.group(1)})"
        if document is None:
            problems.append(
                f"{where} follows no document the course links into; name one before it "
                f"({', '.join(DOCS)}), e.g. 'PTX ISA, wgmma.fence (#...)'"
            )
        elif document not in DOCS:
            problems.append(
                f"{where} follows {document!r}, which has no single page to link into; "
                f"anchors go with {', '.join(DOCS)}; name the {document} section in words"
            )
    return problems


def reference_html(text: str) -> str:
    """A reference as HTML: escaped text, code spans, and a link for each placed anchor."""
    out = []
    for part in reference_parts(text):
        if isinstance(part, Link):
            out.append(
                f'<a href="{escape(part.url)}" target="_blank" rel="noopener noreferrer">'
                f"{inline(part.text)}</a>"
            )
        else:  # a full address in brackets: a link on its words too (``course._html.cited``)
            out.append(cited(part, inline))
    return "".join(out)
