"""Text from data files into HTML: one escape for every renderer.

``html.escape`` stops markup and script; it does not stop Unicode's bidi
embedding, override and isolate controls, and one left open reverses the
rest of its line in the browser: the page's own words, or code in a kernel
listing ("Trojan Source", CVE-2021-42574). Those are shown visibly as
``<U+202E>`` instead.
"""

from __future__ import annotations

import html
import re

_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def show_bidi(markup: str) -> str:
    """Make bidi controls visible in already-escaped markup (pygments output)."""
    return _BIDI.sub(lambda m: f"&lt;U+{ord(m.group()):04X}&gt;", markup)


def escape(text: str) -> str:
    """``text`` for HTML: escaped (quotes too), with bidi controls made visible."""
    return show_bidi(html.escape(text, quote=True))
