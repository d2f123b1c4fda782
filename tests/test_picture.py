"""Pictures show whole: every title, label and note inside the PNG a page displays."""

from __future__ import annotations

import io

from PIL import Image

from course.lessons.day78.figures import core_matrix_figure
from course.picture import DPI, picture


def _png_size(data: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(data)).size


def _drawn_px(fig) -> tuple[float, float]:
    """The size, in pixels at DPI, of everything the figure draws (its tight box)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    box = fig.get_tightbbox(FigureCanvasAgg(fig).get_renderer())
    return box.width * DPI, box.height * DPI


def test_a_title_and_labels_past_the_edge_are_still_in_the_png():
    fig = picture(figsize=(3, 2), layout=None)  # no layout engine: the text runs off the canvas
    ax = fig.add_subplot()
    ax.set_title("a title far longer than a three-inch figure is wide\nand two lines tall", fontsize=14)
    ax.set_xlabel("an x label")
    data = fig.png()
    width, height = _drawn_px(fig)
    assert (width, height) > (3 * DPI, 2 * DPI)
    shown = _png_size(data)
    assert shown[0] >= width - 1 and shown[1] >= height - 1


def test_the_core_matrix_picture_keeps_its_title_and_x_label():
    # It lost the top of its title and its x label when saved at its nominal size.
    fig = core_matrix_figure()
    data = fig.png()
    width, height = _drawn_px(fig)
    shown = _png_size(data)
    assert shown[0] >= width - 1 and shown[1] >= height - 1


def test_the_repr_states_the_size_of_the_png_it_last_made():
    fig = picture(figsize=(3, 2), layout=None)
    ax = fig.add_subplot()
    ax.set_title("a title far longer than a three-inch figure is wide", fontsize=14)
    assert repr(fig) == f"Picture({ax.get_title()!r}, {3 * DPI}x{2 * DPI} px)"  # before any PNG: nominal
    for dpi in (DPI, 50):
        width, height = _png_size(fig.png(dpi=dpi))
        assert repr(fig) == f"Picture({ax.get_title()!r}, {width}x{height} px)"
    assert width < 3 * DPI  # the last PNG, at 50 dpi, not the first


def _figures():
    from course import timeline as tl
    from course.lessons import LESSONS
    from course.lessons.day78 import figures as f78
    from course.lessons.day82 import figures as f82
    from course.timeline.draw import figure as timeline_figure

    yield "day78 core matrices", f78.core_matrix_figure()
    yield "day78 descriptor", f78.descriptor_figure()
    yield "day78 fragment", f78.fragment_figure()
    yield "day82 tile order", f82.tile_order_figure()
    yield "day80 timeline", timeline_figure(tl.timeline_section(LESSONS["day80"]).timeline)


def test_text_in_every_picture_reads_at_11_px_where_the_page_shows_it():
    """At 1280 px with the file browser open an output is ~800 px wide; a wider PNG is scaled to it
    (issue 22, item 11: 6-7 px text before)."""
    from matplotlib.text import Text

    for name, fig in _figures():
        fig.png()  # what the page shows
        width_in = fig.get_size_inches()[0]
        smallest = min(
            t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
        )
        shown_px = smallest / 72 * 800 / width_in
        assert shown_px >= 10.9, f"{name}: text of {smallest:.1f} pt shows at {shown_px:.1f} px"


# ---- issue 28: a picture is drawn once per kernel for the same arguments ----


def _counting(monkeypatch):  # type: ignore[no-untyped-def]
    """Count Picture.savefig calls (every PNG drawn)."""
    from course.picture import Picture

    drawn = []
    real = Picture.savefig

    def savefig(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Picture, "savefig", savefig)
    return drawn


def test_a_kept_figure_is_built_and_drawn_once_for_the_same_arguments(monkeypatch):
    from course._kept import kept

    built = []

    @kept
    def square(side: int = 2):  # type: ignore[no-untyped-def]
        built.append(side)
        fig = picture(figsize=(side, side))
        fig.add_subplot().set_title(f"side {side}")
        return fig

    drawn = _counting(monkeypatch)
    first = square(2)
    png = first._repr_png_()
    again = square(2)
    assert again is first and again._repr_png_() == png  # Run All again: nothing built or drawn
    assert built == [2] and len(drawn) == 1
    other = square(3)  # other arguments: another picture
    other._repr_png_()
    assert built == [2, 3] and len(drawn) == 2


def test_a_changed_picture_is_drawn_again_and_a_kept_one_never_comes_back_changed(monkeypatch):
    from course._kept import kept

    @kept
    def plain():  # type: ignore[no-untyped-def]
        fig = picture(figsize=(2, 2))
        fig.add_subplot().set_title("as built")
        return fig

    drawn = _counting(monkeypatch)
    fig = plain()
    before = fig._repr_png_()
    fig.axes[0].set_title("changed by the learner")
    after = fig._repr_png_()
    assert len(drawn) == 2 and after != before  # the change is drawn, not the kept PNG
    fresh = plain()
    assert fresh is not fig and fresh.axes[0].get_title() == "as built"


def test_unhashable_arguments_are_built_every_time():
    from course._kept import kept

    calls = []

    @kept
    def listed(values):  # type: ignore[no-untyped-def]
        calls.append(values)
        return picture(figsize=(2, 2))

    listed([1, 2])._repr_png_()
    listed([1, 2])._repr_png_()
    assert len(calls) == 2


def test_a_listing_does_not_import_matplotlib():
    """A page's listings (and the coding check behind them) draw nothing: matplotlib, most of a second
    of a cold Run All, is imported by the first figure (issue 28)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom course.page import Page\n"
        "page = Page('day78')\npage.snippet('gate')._repr_html_()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib')[:3])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
