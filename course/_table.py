"""Fixed-width text tables for the terminal: tabulate's ``simple`` format.

Cells arrive as the strings the caller formatted (``1,234.5``, ``41.0%``),
so tabulate parses no numbers: what the caller wrote is what is shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate


def text_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], align: str | Sequence[str] = "left"
) -> str:
    """A header, a line of dashes under each column, then the rows; columns two spaces apart.

    ``align``: "left", "right" or "center" for every column, or one per column."""
    aligns = (align,) * len(header) if isinstance(align, str) else tuple(align)
    return tabulate(
        [list(r) for r in rows],
        headers=list(header),
        tablefmt="simple",
        disable_numparse=True,
        colalign=aligns,
    )
