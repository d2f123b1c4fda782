"""The kernels' own constants, read from their source.

The Python host side of a lesson must use the same shapes as the C++
program. Rather than copy ``kTileWidth = 64`` into Python, read it from
the ``constexpr`` lines of the kernel, honouring ``#define`` defaults and
``-D`` overrides (the benchmark rebuilds with ``-DTMA_DIM=4096``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

_DEFINE = re.compile(r"^\s*#define\s+([A-Za-z_]\w*)\s+(\S+)\s*$", re.M)
_CONSTEXPR = re.compile(r"^\s*constexpr\s+(?:int|size_t|unsigned|float|double)\s+(k\w+)\s*=\s*([^;]+);", re.M)
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?[fFuU]?$")


def kernel_constants(path: Path, defines: Mapping[str, int | str] | None = None) -> dict[str, int | float]:
    """Every ``constexpr ... kName = literal-or-macro;`` of a kernel file."""
    text = path.read_text(encoding="utf-8")
    macros: dict[str, str] = dict(_DEFINE.findall(text))
    macros.update({k: str(v) for k, v in (defines or {}).items()})
    out: dict[str, int | float] = {}
    for name, expr in _CONSTEXPR.findall(text):
        expr = expr.strip()
        expr = macros.get(expr, expr)
        if not _NUMBER.match(expr):
            continue  # an expression, not a plain constant
        literal = expr.rstrip("fFuU")
        out[name] = float(literal) if any(c in literal for c in ".eE") else int(literal)
    return out
