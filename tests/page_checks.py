"""What a learner sees in a page's outputs: the checks, one cell at a time.

nbval runs every page in ``notebooks/`` (``--nbval-lax``), one test item a
cell; the root ``conftest.py`` puts each cell's outputs from that run through
``problems`` and fails the cell's item when it finds one. So every page is
executed once per test run, not once for nbval and again for these checks.
``tests/page/test_page_outputs.py`` shows that the checks, and the hook, fail
what they must.

Every output must be something a person can read: no error output, no
traceback in a stream; no output is a bare object repr (``<Figure size
...>``, ``<... object at 0x...>`` or IPython's ``<... at 0x...>``, an
exception's repr); a figure cell
(its source ends with a ``..._figure()`` call) shows a PNG image of a
sensible size.
"""

from __future__ import annotations

import base64
import re
import struct
from collections.abc import Iterable, Mapping
from typing import Any

BARE_REPR = re.compile(
    # object.__repr__ is "<mod.Cls object at 0x...>"; IPython shows it as "<mod.Cls at 0x...>".
    r"^(<Figure size [^>]*>|<[\w.]+(?: object)? at 0x[0-9a-f]+>|(?:[\w.]+\.)?[A-Z]\w*(Error|Exception|Problem|Failed)\(.*\))$",
    re.S,
)
FIGURE_CELL = re.compile(r"\w+_figure\(\)\s*$")
MIN_WIDTH, MIN_HEIGHT = 300, 200


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def problems(source: str, outputs: Iterable[Mapping[str, Any]]) -> list[str]:
    """What is wrong with what one code cell shows (nothing: an empty list)."""
    found = []
    images = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "error":
            found.append(f"an error: {out.get('ename')}: {out.get('evalue')}")
        elif kind == "stream" and "Traceback" in out.get("text", ""):
            found.append(f"a traceback in {out.get('name', 'a stream')}: {out['text'][:300]}")
        elif kind in ("display_data", "execute_result"):
            data = out.get("data", {})
            text = data.get("text/plain", "").strip()
            if not set(data) - {"text/plain"} and BARE_REPR.match(text):
                found.append(f"only a bare repr: {text[:120]!r}")
            if "image/png" in data:
                images.append(data["image/png"])
    if FIGURE_CELL.search(source):
        last = source.splitlines()[-1]
        if not images:
            found.append(f"no image from a figure cell ({last})")
        else:
            width, height = png_size(base64.b64decode(images[0]))
            if width < MIN_WIDTH or height < MIN_HEIGHT:
                found.append(f"an image of {width}x{height} px from a figure cell ({last})")
    return found
