"""Text from data files into HTML: one escape for every renderer.

``html.escape`` stops markup and script; it does not stop Unicode's bidi
embedding, override and isolate controls, and one left open reverses the
rest of its line in the browser: the page's own words, or code in a kernel
listing ("Trojan Source", CVE-2021-42574). Those are shown visibly as
``<U+202E>`` instead.

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


# An address in brackets after the words it names: "PTX ISA, wgmma.fence (https://docs...#...)".
_URL = re.compile(r" ?\((https?://[^\s()<>\"']+)\)")
_CUTS = ("; ", ": ", ", ", " and ", "(")  # the link's words begin after the last of these


def cited(text: str, render: Callable[[str], str] = escape) -> str:
    """A citation as HTML: each ``(https://...)`` becomes a link on the words before it (back to
    the previous ``;``, ``:``, ``,``, ``and`` or bracket), the address itself not shown; with no
    words before it, on the address's host. The rest is ``render``-ed (escaped by default)."""
    out = []
    cursor = 0
    for found in _URL.finditer(text):
        url = found.group(1)
        before = text[cursor : found.start()]
        cut = max((before.rfind(d) + len(d) for d in _CUTS if d in before), default=0)
        words = before[cut:].strip() or url.split("/")[2]
        out.append(render(before[:cut]))
        out.append(f'<a href="{escape(url)}" target="_blank" rel="noopener noreferrer">{render(words)}</a>')
        cursor = found.end()
    out.append(render(text[cursor:]))
    return "".join(out)
