"""Pictures a page shows: matplotlib figures that display themselves.

The course builds figures without pyplot (no global figure list, nothing
to close, no backend needed to build one). A bare ``Figure`` has no rich
display of its own, so a notebook cell returning one printed
``<Figure size 750x750 with 1 Axes>``. ``Picture`` is a ``Figure`` that
renders itself as PNG for IPython (``_repr_png_``), whatever backend the
kernel has; everything a ``Figure`` does still works.
"""

from __future__ import annotations

import io
from typing import Any

from matplotlib.figure import Figure
from PIL import Image

DPI = 100


class Picture(Figure):
    """A ``matplotlib.figure.Figure`` that Jupyter shows as an image."""

    def png(self, dpi: int = DPI) -> bytes:
        buf = io.BytesIO()
        # bbox_inches="tight", as Jupyter's inline backend saves every figure: the PNG grows to
        # hold every title, label and note, so none is cut at the edge (Day 78's core matrices
        # lost the top of their title and their x label without it).
        self.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.1)
        data = buf.getvalue()
        # The size the page shows, for the repr: Pillow reads it from the PNG's header (it
        # decodes no pixels until asked; Pillow comes with matplotlib, which draws with it).
        with Image.open(io.BytesIO(data)) as shown:
            self._png_px = shown.size
        return data

    def _repr_png_(self) -> bytes:
        return self.png()

    def __repr__(self) -> str:
        title = self.get_suptitle()
        if not title and self.axes:
            title = self.axes[0].get_title()
        # The PNG's size once one is made (the tight box: it holds every label); before, the nominal one.
        shown = getattr(self, "_png_px", None)
        width, height = shown or tuple(int(v * DPI) for v in self.get_size_inches())
        return f"Picture({title!r}, {width}x{height} px)"


def picture(**kwargs: Any) -> Picture:
    """A new ``Picture``; keyword arguments as for ``Figure`` (``figsize``, ``layout``)."""
    kwargs.setdefault("layout", "constrained")
    return Picture(**kwargs)
