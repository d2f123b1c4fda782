"""The snippet parser and anchors under hostile input (course/snippets.py).

``parse_snippets`` is checked against a small reference parser written
from the module's documented rules: for every mutated kernel, both agree
on the regions found, or both refuse, at the same line. ``Snippet.find``
is checked against the plain definition of an anchor match.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from course.errors import AnchorError, SnippetError
from course.snippets import Snippet, load_snippets, parse_snippets

from ._util import HOSTILE_TEXT, ROOT, assert_located, budget, mutated_bytes, mutated_lines, seen

KERNELS = {p.name: p.read_text("utf-8") for p in sorted((ROOT / "kernels").glob("*.cu"))}
FAKE = Path("kernels/under-test.cu")

MARKERS = (
    "// snippet: extra",
    "    // snippet: issue-tma",
    "// end snippet",
    "  //   end snippet  ",
    "//snippet:x",
    "// snippet: ",
    "// snippet: ../../etc/passwd",
    "// snippet: <script>",
    "// snippet: a b",
    "// snippet: .hidden",
    "// end snippet // trailing",
    "/* // snippet: in-comment */",
)


@st.composite
def mutated_kernel(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(sorted(KERNELS)).map(KERNELS.__getitem__))
    text = draw(mutated_lines(text, toml=False))
    lines = text.splitlines()
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.sampled_from(MARKERS) | st.sampled_from(HOSTILE_TEXT)))
    return "\n".join(lines) + draw(st.sampled_from(("\n", "", "\r\n", "\n\n")))


# --- the reference: the module docstring's rules, written out plainly ------
_OPEN = re.compile(r"^\s*//\s*snippet:\s*(.*?)\s*$")
_CLOSE = re.compile(r"^\s*//\s*end snippet\s*$")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def reference(text: str) -> dict[str, tuple[int, int, tuple[str, ...]]] | int:
    """{name: (open line, close line, body)}, or the line of the first error."""
    found: dict[str, tuple[int, int, tuple[str, ...]]] = {}
    name, opened, body = None, 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        m = _OPEN.match(line)
        if m:
            if name is not None or not _NAME.fullmatch(m.group(1)) or m.group(1) in found:
                return number
            name, opened, body = m.group(1), number, []
        elif _CLOSE.match(line):
            if name is None:
                return number
            if not "".join(body).strip():
                return opened
            found[name] = (opened, number, tuple(body))
            name = None
        elif name is not None:
            body.append(line)
    return opened if name is not None else found


@budget("snippets_mutated")
@given(mutated_kernel())
def test_parse_snippets_agrees_with_the_reference(text: str):
    seen("snippets_mutated")
    want = reference(text)
    try:
        got = parse_snippets(text, FAKE)
    except SnippetError as e:
        assert_located(e, FAKE, SnippetError)
        assert e.line == want, f"refused at line {e.line}, the reference says {want}"
        assert f"{FAKE}:{e.line}:" in str(e)
        return
    assert isinstance(want, dict), f"loaded, but the reference refuses at line {want}"
    assert {n: (s.open_line, s.close_line, s.lines) for n, s in got.items()} == want
    for snippet in got.values():
        assert snippet.path == FAKE
        assert [n for n, _ in snippet.numbered()] == list(range(snippet.start, snippet.end + 1))


@budget("snippets_bytes")
@given(st.sampled_from(sorted(KERNELS)).flatmap(lambda n: mutated_bytes(KERNELS[n].encode())))
def test_load_snippets_on_corrupted_bytes(scratch, raw: bytes):
    seen("snippets_bytes")
    path = scratch / "k.cu"
    path.write_bytes(raw)
    try:
        load_snippets(path)
    except SnippetError as e:
        assert_located(e, path, SnippetError)


def _all_snippets() -> list[Snippet]:
    return [s for name, text in KERNELS.items() for s in parse_snippets(text, Path(name)).values()]


SNIPPETS = _all_snippets()


@st.composite
def anchors(draw: st.DrawFn) -> tuple[Snippet, str]:
    snippet = draw(st.sampled_from(SNIPPETS))
    line = draw(st.sampled_from(snippet.lines))
    start = draw(st.integers(0, len(line)))
    end = draw(st.integers(start, len(line)))
    piece = line[start:end]
    anchor = draw(
        st.just(piece)
        | st.just(line)
        | st.just(line[: len(line) - len(line.lstrip())] + line.strip()[:8])  # indentation + start
        | st.text(max_size=20)
        | st.sampled_from(HOSTILE_TEXT)
        | st.sampled_from(("", " ", "\t", "\n", "    ", ";", "(", "{", "}", "  __syncthreads();"))
    )
    return snippet, anchor


@budget("snippet_find")
@given(anchors())
def test_find_matches_exactly_one_line_or_refuses(case: tuple[Snippet, str]):
    seen("snippet_find")
    snippet, anchor = case
    if anchor[:1].isspace():
        hits = [n for n, line in snippet.numbered() if line.startswith(anchor)]
    else:
        hits = [n for n, line in snippet.numbered() if anchor in line]
    try:
        got = snippet.find(anchor)
    except AnchorError as e:
        assert_located(e, snippet.path, AnchorError)
        assert not anchor.strip() or len(hits) != 1
        if anchor.strip() and len(hits) > 1:
            assert e.line == hits[0]  # the first of the lines it matches
        elif anchor.strip():
            assert e.line == snippet.open_line  # no match: the region's opening line
        return
    assert anchor.strip() and hits == [got]
