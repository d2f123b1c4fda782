"""Text from data files into HTML: one escape for every renderer.

``html.escape`` stops markup and script; it does not stop Unicode's bidi
embedding, override and isolate controls, and one left open reverses the
rest of its line in the browser: the page's own words, or code in a kernel
listing ("Trojan Source", CVE-2021-42574). Those are shown visibly as
``<U+202E>`` instead.

``pre`` shows a program's output: JupyterLab breaks the lines of an output's ``<pre>``
anywhere (``word-break: break-all``), so "4.00947e-05" read as "4.009" and "47e-05" on
two rows at 1024 px; this one wraps between words, and breaks a word only where it is
longer than the line (``overflow-wrap: break-word``: ``anywhere`` would also let a table
cell or a flex item holding it shrink below its longest word, and split every word).

``scroll_box`` holds a table that may be wider than a narrow notebook (8 columns at
1024 px): the box scrolls sideways, and a shadow inside its right (and left) edge shows
that there is more beyond it, in every browser, also where the scrollbar is hidden until
used (macOS, headless Chromium); the shadows are drawn in the theme's colours.

``cited`` shows a citation's addresses as links on its words: a learner reads
"PTX ISA, wgmma.fence" as a link, not the raw documentation URL (issue 38).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def show_bidi(markup: str) -> str:
    """Make bidi controls visible in already-escaped markup (pygments output)."""
    return _BIDI.sub(lambda m: f"&lt;U+{ord(m.group()):04X}&gt;", markup)


def escape(text: str) -> str:
    """``text`` for HTML: escaped (quotes too), with bidi controls made visible."""
    return show_bidi(html.escape(text, quote=True))


# Wrapped between words: JupyterLab's output <pre> has word-break: break-all, which splits numbers.
# break-word, not anywhere: the same in a block, but a word's width still counts as the least
# width of a table cell or flex item around the <pre> (anywhere let those squeeze it mid-word).
PRE_STYLE = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word"


def pre(text: str) -> str:
    """``text`` (a program's output, plain text) as an escaped ``<pre>`` that wraps between words."""
    return f"<pre style='{PRE_STYLE}'>{escape(text)}</pre>"


# An address in brackets after the words it names: "PTX ISA, wgmma.fence (https://docs...#...)".
_URL = re.compile(r" ?\((https?://[^\s()<>\"']+)\)")
_CUTS = ("; ", ": ", ", ", " and ", "(")  # the link's words begin after the last of these


def link_words(before: str, cuts: tuple[str, ...] = _CUTS) -> tuple[str, str]:
    """The text before a link's address split where the link's words begin (after the last of
    ``cuts``): (what stays plain, the words the link goes on)."""
    cut = max((before.rfind(c) + len(c) for c in cuts if c in before), default=0)
    return before[:cut], before[cut:].strip()


def cited(text: str, render: Callable[[str], str] = escape) -> str:
    """A citation as HTML: each ``(https://...)`` becomes a link on the words before it (back to
    the previous ``;``, ``:``, ``,``, ``and`` or bracket), the address itself not shown; with no
    words before it, on the address's host. The rest is ``render``-ed (escaped by default)."""
    out = []
    cursor = 0
    for found in _URL.finditer(text):
        url = found.group(1)
        plain, words = link_words(text[cursor : found.start()])
        words = words or url.split("/")[2]
        out.append(render(plain))
        out.append(f'<a href="{escape(url)}" target="_blank" rel="noopener noreferrer">{render(words)}</a>')
        cursor = found.end()
    out.append(render(text[cursor:]))
    return "".join(out)


SCROLL_CLASS = "course-scroll"
# The scroll shadows: two shades fixed at the box's edges (attachment ``scroll``) under two covers
# of the page's colour that move with the content (``local``), so an edge shows its shade only
# while there is more beyond it. JupyterLab paints every table row opaque (which would hide
# the shades): inside the box the odd rows are clear and the striped ones half see-through.
_SHADE = "color-mix(in srgb,var(--jp-ui-font-color1,#000) 40%,transparent)"
_PAGE = "var(--jp-layout-color0,#fff)"
SCROLL_STYLE = (
    "<style>"
    f".{SCROLL_CLASS}{{overflow-x:auto;background:"
    f"linear-gradient(to right,{_PAGE} 40%,transparent) left center/32px 100% no-repeat local,"
    f"linear-gradient(to left,{_PAGE} 40%,transparent) right center/32px 100% no-repeat local,"
    f"linear-gradient(to right,{_SHADE},transparent) left center/14px 100% no-repeat scroll,"
    f"linear-gradient(to left,{_SHADE},transparent) right center/14px 100% no-repeat scroll}}"
    f".jp-RenderedHTMLCommon .{SCROLL_CLASS} tbody tr:nth-child(odd){{background:transparent}}"
    f".jp-RenderedHTMLCommon .{SCROLL_CLASS} tbody tr:nth-child(even){{background:"
    "color-mix(in srgb,var(--jp-rendermime-table-row-background,#f5f5f5) 55%,transparent)}"
    f".jp-RenderedHTMLCommon .{SCROLL_CLASS} tbody tr:hover{{background:"
    "var(--jp-rendermime-table-row-hover-background,#e1f5fe)}"
    "</style>"
)


def scroll_box(table: str) -> str:
    """``table`` (HTML) in a box that scrolls sideways when the notebook is narrower than it,
    with a shadow at each edge that has more beyond it (``SCROLL_STYLE``, written with it)."""
    return f"{SCROLL_STYLE}<div class='{SCROLL_CLASS}'>{table}</div>"
