"""A program's output in a course output wraps between words (course._html.pre).

JupyterLab gives every <pre> in an output ``word-break: break-all``: at 1024 px
Days 88 and 89's recorded runs read "max rel error O 4.009" and, on the next
row, "47e-05". The course's own <pre>s of output text say how to wrap instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from course._html import PRE_STYLE, pre
from course.kernel.evidence import load
from course.lessons import LESSONS

COURSE = Path(__file__).resolve().parents[2] / "course"


def test_pre_escapes_and_wraps_between_words():
    out = pre("a <b> & 4.00947e-05")
    assert out == f"<pre style='{PRE_STYLE}'>a &lt;b&gt; &amp; 4.00947e-05</pre>"
    assert "word-break:normal" in PRE_STYLE and "white-space:pre-wrap" in PRE_STYLE


def test_a_recorded_run_shows_its_output_in_that_pre():
    recorded = load(LESSONS["day89"])
    assert recorded is not None, "Day 89 has a recorded run (evidence/h100-80gb-hbm3)"
    shown = recorded._repr_html_()
    assert f"<pre style='{PRE_STYLE}'>" in shown
    assert "<pre>" not in shown


def test_no_course_renderer_writes_a_bare_pre():
    # A listing's columns are <pre> with their own white-space: pre (course.view.listing), and the
    # annotation exercise's rows too: every other <pre> the course writes goes through ``pre``.
    bare = [
        f"{path.relative_to(COURSE)}:{n}"
        for path in COURSE.rglob("*.py")
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if re.search(r"""<pre>["'{]|["']<pre>""", line)
    ]
    assert bare == []


def test_pre_breaks_only_a_word_longer_than_the_line():
    # overflow-wrap:anywhere lets a table cell or a flex item holding the <pre> shrink below its
    # longest word (every word then split); break-word wraps the same in a block and does not.
    assert "overflow-wrap:break-word" in PRE_STYLE
    assert "anywhere" not in PRE_STYLE and "break-all" not in PRE_STYLE


def test_the_scroll_box_shades_an_edge_with_more_beyond_it_in_the_themes_colours():
    from course._html import SCROLL_CLASS, SCROLL_STYLE, scroll_box

    assert scroll_box("<table></table>") == f"{SCROLL_STYLE}<div class='{SCROLL_CLASS}'><table></table></div>"
    rule = re.search(rf"\.{SCROLL_CLASS}\{{(.*?)\}}", SCROLL_STYLE)
    assert rule is not None and "overflow-x:auto" in rule.group(1)
    layers = rule.group(1).split("background:", 1)[1].split(",linear-gradient")
    # Two covers that move with the content (local) over two shades fixed at the edges (scroll).
    assert [layer.rsplit(" ", 1)[-1] for layer in layers] == ["local", "local", "scroll", "scroll"]
    assert [("left" in layer.split(")")[-1], "right" in layer.split(")")[-1]) for layer in layers] == [
        (True, False),
        (False, True),
        (True, False),
        (False, True),
    ]
    # The theme's colours, not fixed ones: the page's colour covers, the text colour shades.
    assert layers[0].count("var(--jp-layout-color0") == 1 and "var(--jp-ui-font-color1" in layers[2]
    # JupyterLab's opaque row backgrounds would hide the shades: inside the box they let them through.
    assert f".{SCROLL_CLASS} tbody tr:nth-child(odd){{background:transparent}}" in SCROLL_STYLE
    assert "transparent)}" in SCROLL_STYLE.split("nth-child(even)")[1]
