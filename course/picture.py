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
# Text in a picture must read at no less than about 11 px where the page shows it: at 1280 px with
# JupyterLab's file browser open, an output area is about 800 px wide, and a wider PNG is scaled down
# to it (issue 22, item 11: 6-7 px before). A text of s points in a figure w inches wide shows at
# s / 72 * 800 / w px, so every text is raised to at least MIN_TEXT_PX * 72 * w / SHOWN_PX points.
MIN_TEXT_PX = 11
SHOWN_PX = 800


class Picture(Figure):
    """A ``matplotlib.figure.Figure`` that Jupyter shows as an image."""

    def min_fontsize(self) -> float:
        """The smallest font size (points) that shows at MIN_TEXT_PX when the picture is SHOWN_PX wide."""
        return MIN_TEXT_PX * 72 * float(self.get_size_inches()[0]) / SHOWN_PX

    def readable(self) -> None:
        """Raise every text (titles, labels, notes, tick labels, legends) to ``min_fontsize``."""
        # heavy: matplotlib, when a figure is drawn
        from matplotlib.text import Text

        least = self.min_fontsize()
        for ax in self.axes:
            for axis in (ax.xaxis, ax.yaxis):
                labels = axis.get_majorticklabels()
                if labels and float(labels[0].get_fontsize()) < least:
                    axis.set_tick_params(labelsize=least)
        for text in self.findobj(Text):
            if float(text.get_fontsize()) < least:
                text.set_fontsize(least)

    def png(self, dpi: int = DPI) -> bytes:
        """The picture as PNG; drawn once and kept while no artist of it changes (matplotlib's
        ``stale``: any change to the figure or an artist in it sets it again)."""
        kept = self.__dict__.get("_png_kept")
        if kept is not None and kept[0] == dpi and not self.stale:
            return kept[1]
        if kept is not None:
            self._redrawn = True  # changed (or asked at another dpi) since it was first drawn
        self.readable()
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
        self._png_kept = (dpi, data)
        # The PNG shows the figure as it is now (savefig's tight box leaves it marked stale).
        self.stale = False
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
