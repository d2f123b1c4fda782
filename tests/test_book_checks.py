"""book/build.py's checks of the built site and its stand-ins for widgets, on small made-up pages.

The whole build runs in tests/browser/test_book.py; here each check is shown to find what it is
for (and to pass a page without it), in well under a second.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def _build_module() -> Any:
    spec = importlib.util.spec_from_file_location("book_build", ROOT / "book" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("book_build", module)
    spec.loader.exec_module(module)
    return module


build = _build_module()

GOOD = """<html><head><link rel="stylesheet" href="_static/a.css"><script src="_static/a.js"></script></head>
<body><h1 id="top">T</h1><a href="other.html#there">x</a><a href="#top">up</a>
<a href="https://example.org/page">a citation</a><img src="_images/p.png"></body></html>"""
OTHER = '<html><body><section id="there">y</section><a href="index.html">home</a></body></html>'


def _site(tmp_path: Path, index: str) -> Path:
    (tmp_path / "_static").mkdir()
    (tmp_path / "_images").mkdir()
    for name in ("_static/a.css", "_static/a.js", "_images/p.png"):
        (tmp_path / name).write_text("")
    (tmp_path / "index.html").write_text(index)
    (tmp_path / "other.html").write_text(OTHER)
    return tmp_path


def test_a_sound_site_has_no_problem(tmp_path: Path):
    assert build.check_site(_site(tmp_path, GOOD)) == []


def test_a_missing_file_and_a_missing_anchor_are_named(tmp_path: Path):
    page = GOOD.replace("other.html#there", "other.html#nowhere").replace(
        "</body>", '<a href="gone.html">g</a></body>'
    )
    problems = build.check_site(_site(tmp_path, page))
    assert problems == [
        "index.html: link to other.html#nowhere: no #nowhere there",
        "index.html: link to gone.html: no such file",
    ]


def test_an_asset_from_the_network_is_named(tmp_path: Path):
    page = GOOD.replace("_static/a.js", "https://cdn.example.org/require.js")
    assert build.check_site(_site(tmp_path, page)) == [
        "index.html: <script> loads https://cdn.example.org/require.js from the network"
    ]


def test_an_error_output_and_stderr_are_named(tmp_path: Path):
    page = GOOD.replace(
        "</body>",
        '<div class="output traceback highlight-ipythontb">Traceback</div><div class="output stderr">w</div></body>',
    )
    problems = build.check_site(_site(tmp_path, page))
    assert len(problems) == 2 and all("shows an error output" in p for p in problems), problems


def _widget(text: str, model_id: str = "m1") -> dict[str, Any]:
    view = {"model_id": model_id, "version_major": 2, "version_minor": 0}
    return nbformat.v4.new_output("display_data", data={build.WIDGET: view, "text/plain": text})


def test_a_course_widget_becomes_a_note_naming_it():
    out = build.widget_output(
        _widget("QuizPanel(quiz='day78', mode='practice', questions=19)"), "day78_wgmma.ipynb", {}
    )
    html = out["data"]["text/html"]
    assert "The quiz" in html and "notebooks/day78_wgmma.ipynb" in html and build.WIDGET not in out["data"]


def test_a_plain_box_shows_its_text_and_no_button():
    state = {
        "m1": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_m2", "IPY_MODEL_m3"]}},
        "m2": {"model_name": "HTMLModel", "state": {"value": "<pre>the listing</pre>"}},
        "m3": {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_m4", "IPY_MODEL_m5"]}},
        "m4": {"model_name": "ButtonModel", "state": {"description": "Show the 2 hidden lines"}},
        "m5": {"model_name": "LabelModel", "state": {"value": "folded <until> you pass"}},
    }
    out = build.widget_output(_widget("VBox(children=(HTML(value='...'),))"), "p.ipynb", state)
    html = out["data"]["text/html"]
    assert "<pre>the listing</pre>" in html and "folded &lt;until&gt; you pass" in html
    assert "Show the 2 hidden lines" not in html
    # A box with nothing to show (its state missing) is a note, not an empty output.
    empty = build.widget_output(_widget("VBox(children=())", "m9"), "p.ipynb", state)
    assert "course-widget" in empty["data"]["text/html"]


def test_the_run_note_before_a_widget_is_left_out_and_nothing_else():
    from course._live import RUN_NOTE

    note = nbformat.v4.new_output("display_data", data={"text/html": RUN_NOTE, "text/plain": "<HTML>"})
    table = nbformat.v4.new_output("display_data", data={"text/html": "<table><tr><td>1</td></tr></table>"})
    assert build._run_note(note) and not build._run_note(table)
