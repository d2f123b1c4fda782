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
