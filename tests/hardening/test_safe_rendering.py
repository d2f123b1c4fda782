"""Safe rendering: a content file cannot run script in the learner's JupyterLab.

A temporary checkout (``COURSE_ROOT``) gets a hostile kernel, quiz,
annotations and exercise: every piece of text that reaches the page holds
a payload (``<script>``, an ``onerror`` attribute, a ``javascript:`` URL,
``</pre>``, HTML entities, bidi controls, or generated text from an
alphabet of HTML's special characters). Then every renderer runs: the quiz
widgets in both modes, with Check and Submit pressed, the snippet view with
its notes, the annotation exercise and its verdict, the page's messages and
the recorded evidence. Every HTML string produced (``ipywidgets.HTML``
values and ``_repr_html_`` outputs) is parsed: only the renderers' own tags
may appear, with no event-handler attribute and no URL but a link into the
documents ``course.quiz._markup.DOCS`` names (a reference's anchor); a
widget that renders its description as HTML (a multiple-select option)
may hold ``<code>`` only; the quiz's one style sheet is the module's
constant, nothing from a quiz file.
"""

from __future__ import annotations

import html
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import ipywidgets as widgets
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from course.exercises.annotation import check_marks, exercise_widget
from course.kernel.evidence import Evidence
from course.kernel.provenance import Provenance
from course.page import Message, Page
from course.quiz import show_quiz
from course.quiz._markup import DOCS
from course.quiz.widgets import STYLE, QuizPanel
from course.view.listing import STYLE as LISTING_STYLE

from ._util import HOSTILE_TEXT, ROOT, budget, fresh_dir, seen, toml_string

# Tags the renderers write themselves (pygments adds div/pre/span).
ALLOWED_TAGS = {
    "b", "br", "code", "col", "colgroup", "details", "div", "h3", "h4", "i", "p", "pre", "small", "span",
    "summary", "table", "tbody", "td", "th", "thead", "tr",
}  # fmt: skip
ALLOWED_ATTRS = {"class", "style"}
# A reference's link: only into a known document, at a plain anchor, opened apart.
LINK_ATTRS = {"href", "target", "rel"}
_LINK = re.compile(
    "(?:" + "|".join(re.escape(url) for url in DOCS.values()) + r")#[A-Za-z0-9][A-Za-z0-9._-]*"
)

_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.tags.append((tag, attrs))

    handle_startendtag = handle_starttag

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.text.append(data)

    def handle_comment(self, data):  # type: ignore[no-untyped-def]
        raise AssertionError(f"an HTML comment appeared: {data!r}")


def assert_safe(markup: str, where: str, allowed: set[str] = ALLOWED_TAGS) -> str:
    """Parse ``markup``; fail on any tag or attribute the renderers do not write. Return the text."""
    parser = _Collect()
    parser.feed(markup)
    parser.close()
    links = 0
    for tag, attrs in parser.tags:
        if tag == "a" and "a" not in allowed:
            # The one link the renderers write: a reference into the docs.
            links += 1
            got = dict(attrs)
            assert set(got) == LINK_ATTRS, (
                f"{where}: a link with attributes {sorted(got)} in {markup[:300]!r}"
            )
            assert _LINK.fullmatch(got["href"] or ""), f"{where}: a link to {got['href']!r}"
            assert got["target"] == "_blank" and got["rel"] == "noopener noreferrer", got
            continue
        assert tag in allowed, f"{where}: a <{tag}> tag survived in {markup[:300]!r}"
        for name, value in attrs:
            assert name in ALLOWED_ATTRS, f"{where}: attribute {name!r} on <{tag}> in {markup[:300]!r}"
            assert "javascript:" not in (value or "").lower().replace(" ", ""), f"{where}: {value!r}"
            assert "url(" not in (value or "").lower(), f"{where}: a URL in a style: {value!r}"
    lowered = markup.lower()
    for raw in ("<script", "<img", "<svg", "<iframe", "<!--"):
        assert raw not in lowered, f"{where}: {raw!r} appears raw in {markup[:300]!r}"
    assert lowered.count("<a ") == lowered.count('<a href="https://docs.nvidia.com/') == links, (
        f"{where}: a link the parser did not see as one in {markup[:300]!r}"
    )
    return "".join(parser.text)


def walk(widget: widgets.Widget) -> list[widgets.Widget]:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += walk(child)
    return found


_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def check_widgets(root: widgets.Widget, where: str, *, bidi: bool = True) -> list[str]:
    """Every HTML value is safe; every other text trait is shown as text. Return the HTML values' text.

    ``bidi=False``: no bidi embedding/override/isolate control may reach an
    HTML value either (an open one reverses the rest of the line on screen).
    """
    texts = []
    for w in walk(root):
        if isinstance(w, widgets.HTML | widgets.HTMLMath):
            if w.value == STYLE:  # the quiz's style sheet: a constant, no quiz text in it
                continue
            texts.append(assert_safe(w.value, f"{where}: {type(w).__name__}"))
            assert bidi or not _BIDI.search(w.value), f"{where}: a bidi control in {w.value[:200]!r}"
        if w.has_trait("description_allow_html") and w.description_allow_html:
            # Only a multiple-select option does this: its text with `code` spans, escaped.
            assert isinstance(w, widgets.Checkbox), f"{where}: {type(w).__name__} renders HTML"
            texts.append(assert_safe(w.description, f"{where}: option", allowed={"code"}))
            assert bidi or not _BIDI.search(w.description), f"{where}: a bidi control in an option"
        assert not isinstance(w, widgets.Output), (
            f"{where}: an Output widget (its content is not checked here)"
        )
    return texts


# --- a hostile checkout ------------------------------------------------------
def kernel_with(payload: str, source: Path) -> str:
    """The real kernel, with a statement and a comment holding the payload at the top of every region."""
    flat = _LINE_BREAKS.sub(" ", payload).replace("end snippet", "end-snippet")
    out = []
    count = 0
    for line in source.read_text("utf-8").splitlines():
        out.append(line)
        if line.strip().startswith("// snippet:"):
            out.append(f"    int hostile_{count} = 0; // {flat}")
            count += 1
    return "\n".join(out) + "\n"


QUIZ = """
[quiz]
id = "day76"
title = {p}
lesson = "day76"

[[questions]]
id = "s"
type = "single"
points = 1
prompt = {p}
options = [{{ id = "a", text = {p} }}, {{ id = "b", text = {o} }}]
answer = "a"
explanation = {p}
reference = {r}

[[questions]]
id = "m"
type = "multiple"
points = 1
prompt = {p}
options = [{{ id = "a", text = {p} }}, {{ id = "b", text = {o} }}]
answers = ["a"]
explanation = {p}
reference = {r}

[[questions]]
id = "n"
type = "numeric"
points = 1
prompt = {p}
unit = {p}
answer = 1
explanation = {p}
reference = {r}

[[questions]]
id = "t"
type = "text"
points = 1
prompt = {p}
accept = [{p}]
explanation = {p}
reference = {r}

[[questions]]
id = "l"
type = "line"
points = 1
snippet = "issue-tma"
prompt = {p}
anchors = ["int hostile_0 = 0;"]
explanation = {p}
reference = {r}
"""

NOTES = """
[[note]]
snippet = "issue-tma"
anchor = "int hostile_0 = 0;"
text = {p}
cite = {p}
"""

EXERCISE = """
lesson = "day78"
title = {p}
intro = {p}
regions = ["pipeline"]

[[role]]
id = "r"
label = {p}
kind = "barrier"

[[item]]
region = "pipeline"
anchor = "int hostile_{k} = 0;"
role = "r"
explanation = {p}
separates = {p}
cite = {p}
"""


def make_checkout(root: Path, payload: str) -> None:
    if root.exists():
        shutil.rmtree(root)
    for sub in ("kernels", "content/quizzes", "content/annotations", "content/exercises", "evidence"):
        (root / sub).mkdir(parents=True)
    for name in ("tma_tile.cu", "wgmma_gemm.cu"):
        (root / "kernels" / name).write_text(kernel_with(payload, ROOT / "kernels" / name), "utf-8")
    p = toml_string(payload if payload.strip() else payload + "x")
    # A reference names its document first, so an anchor in the payload becomes a link.
    r = toml_string("PTX ISA, " + payload)
    # The other option holds the payload too, and more: never the same text as the first once
    # normalised (a fixed "B" once met the payload "b", and the loader rightly refused two equal options).
    o = toml_string((payload if payload.strip() else payload + "x") + " / the other option")
    (root / "content" / "quizzes" / "day76.toml").write_text(QUIZ.format(p=p, r=r, o=o), "utf-8")
    (root / "content" / "annotations" / "day76.toml").write_text(NOTES.format(p=p), "utf-8")
    shutil.copy(
        ROOT / "content" / "annotations" / "day78.toml", root / "content" / "annotations" / "day78.toml"
    )
    # The pipeline region of wgmma_gemm.cu is its N-th region: its hostile line is hostile_N.
    regions = [
        line.split(":", 1)[1].strip()
        for line in (ROOT / "kernels" / "wgmma_gemm.cu").read_text("utf-8").splitlines()
        if line.strip().startswith("// snippet:")
    ]
    (root / "content" / "exercises" / "day78.toml").write_text(
        EXERCISE.format(p=p, k=regions.index("pipeline")), "utf-8"
    )


def render_everything(root: Path, payload: str) -> list[str]:
    """Run every renderer on the hostile checkout; return the text of every HTML produced.

    Progress goes to a workspace of this checkout's own, so the graded pass
    restores what the practice pass saved (the payload included) and no other
    test restores it.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COURSE_WORKSPACE", str(root.parent / "workspace"))
        mp.delenv("COURSE_LEARNER", raising=False)
        return _render_everything(root, payload)


def _render_everything(root: Path, payload: str) -> list[str]:
    texts: list[str] = []
    subs = root / "subs <b>x</b> &amp;"  # a folder name the Submit status shows
    for mode, quiz in (("practice", "day76"), ("graded", root / "content" / "quizzes" / "day76.toml")):
        panel: QuizPanel = show_quiz(quiz, mode=mode, learner_id="alice", submissions_dir=subs)
        p = panel.panels
        for right in (True, False):
            p["s"].set_response("a" if right else "b")
            p["m"].set_response(["a"] if right else ["b"])
            p["l"].set_response(p["l"].question.listing[1 if right else 0][0])
            assert p["n"].text is not None and p["t"].text is not None
            p["n"].text.value = "1" if right else payload  # a non-number: the invalid-input feedback
            p["t"].text.value = payload
            for qp in p.values():
                if qp.check_button is not None:
                    qp.check_button.click()
            panel.submit_button.click()
            # The buttons did their work (so their HTML is what gets checked).
            assert "Saved" in panel.status.value or "Nothing was saved" in panel.status.value
            if mode == "practice":
                assert p["s"].feedback.value and p["n"].feedback.value
            texts += check_widgets(panel, f"quiz ({mode})", bidi=False)
    page = Page("day76")
    view = page.snippet("issue-tma")
    markup = view._repr_html_()
    # The listing's one style sheet (token colours): the renderer's constant, no text from a file in it.
    assert markup.count(LISTING_STYLE) == 1
    texts.append(assert_safe(markup.replace(LISTING_STYLE, ""), "snippet view"))
    exercise = exercise_widget("day78")
    (line,) = [item.line for item in exercise.exercise.items]
    for marks in ({}, {line: "r"}):
        texts.append(assert_safe(check_marks(exercise.exercise, marks).html(), "exercise verdict"))
    for dropdown in exercise.dropdowns.values():
        dropdown.value = "r"
    exercise.check_button.click()
    texts += check_widgets(exercise, "exercise widget")
    texts.append(assert_safe(Message("warning", payload, payload)._repr_html_(), "message"))
    evidence = Evidence(
        lesson="day76",
        provenance=Provenance(payload, payload, payload, payload, 132, {payload: payload, "cupy": None}),
        output=[payload, payload],
        passed=True,
    )
    texts.append(assert_safe(evidence._repr_html_(), "evidence"))
    return texts


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    root = tmp_path / "checkout"
    monkeypatch.setenv("COURSE_ROOT", str(root))
    return root


@pytest.mark.parametrize("payload", HOSTILE_TEXT, ids=range(len(HOSTILE_TEXT)))
def test_every_renderer_escapes_the_known_payloads(checkout, payload):
    make_checkout(checkout, payload)
    texts = render_everything(checkout, payload)
    # The payload is shown to the learner as text, not dropped: the quiz
    # title, for one, holds it verbatim once the HTML is decoded.
    if "`" not in payload:
        # Bidi controls are shown visibly as <U+202E> (course._html), not passed through.
        shown = re.sub("[\u202a-\u202e\u2066-\u2069]", lambda m: f"<U+{ord(m.group()):04X}>", payload.strip())
        assert any(shown in t for t in texts), "the payload vanished instead of being shown as text"


_SPECIAL = st.sampled_from(
    list("<>\"'&/=;:`#\\ \t()")
    + ["\u202e", "\u2066", "\u200f", "script", "onerror", "javascript", "(#", " (#a-1)", " and "]
)


@budget("render_hostile")
# No lone surrogates: a UTF-8 file cannot hold one, so no quiz file can carry it.
@given(st.lists(_SPECIAL | st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).map("".join))
@example("b")  # once the same as a fixed option "B" (a flaky refusal); pinned
@example("plain")
def test_every_renderer_escapes_generated_payloads(scratch, payload: str):
    seen("render_hostile")
    base = fresh_dir(scratch)
    root = base / "checkout"
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("COURSE_ROOT", str(root))
            make_checkout(root, payload)
            render_everything(root, payload)
    finally:
        shutil.rmtree(base)


def test_the_style_sheet_holds_no_url_import_or_script():
    body = STYLE.removeprefix("<style>").removesuffix("</style>")
    assert "<" not in body and ">" not in body
    for bad in ("url(", "@import", "expression(", "javascript:", "behavior"):
        assert bad not in STYLE.lower(), bad
    assert all(rule.strip().startswith(".course-quiz ") for rule in body.split("}") if rule.strip())


def test_the_checker_catches_raw_markup():
    # The check itself must fail on what an unescaped renderer would produce.
    for bad in (
        '<p><img src=x onerror="alert(1)"></p>',
        "<pre></pre><script>x</script>",
        "<a href='javascript:x'>",
        '<a href="https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#x" onclick="y">',
        '<a href="https://evil.example/#x" target="_blank" rel="noopener noreferrer">',
    ):
        with pytest.raises(AssertionError):
            assert_safe(bad, "self-test")
    assert assert_safe(f"<p>{html.escape(HOSTILE_TEXT[1])}</p>", "self-test") == HOSTILE_TEXT[1]
