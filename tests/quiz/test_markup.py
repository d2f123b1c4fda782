"""Quiz text into HTML (course/quiz/_markup.py): inline code and reference links, nothing else."""

from __future__ import annotations

import re

import pytest

from course.quiz._markup import DOCS, Link, inline, reference_html, reference_parts, reference_problems

PTX = DOCS["PTX ISA"]


def test_inline_escapes_then_shows_backticked_spans_as_code():
    assert inline("Pick `b` <i>now</i>") == "Pick <code>b</code> &lt;i&gt;now&lt;/i&gt;"
    # Markup inside backticks is shown as code text, never passed through.
    assert inline("`<img src=x onerror=alert(1)>`") == "<code>&lt;img src=x onerror=alert(1)&gt;</code>"
    assert inline("one ` alone") == "one ` alone"
    assert inline("\u202e`x`") == "&lt;U+202E&gt;<code>x</code>"


def test_plain_text_without_backticks_or_anchors_is_only_escaped():
    assert inline('a & b "c"') == "a &amp; b &quot;c&quot;"
    assert (
        reference_html("kernels/tma_tile.cu, snippet issue-tma") == "kernels/tma_tile.cu, snippet issue-tma"
    )


@pytest.mark.parametrize(
    ("reference", "links"),
    [
        (
            "PTX ISA, Phase Completion of the mbarrier object "
            "(#parallel-synchronization-and-communication-instructions-mbarrier-phase-completion)",
            [
                (
                    "Phase Completion of the mbarrier object",
                    "parallel-synchronization-and-communication-instructions-mbarrier-phase-completion",
                )
            ],
        ),
        (
            "PTX ISA, mbarrier: expect-tx operation (#a-expect) and complete-tx operation (#a-complete)",
            [("expect-tx operation", "a-expect"), ("complete-tx operation", "a-complete")],
        ),
        (
            "PTX ISA, wgmma.fence (#f), wgmma.commit_group (#c), wgmma.mma_async (#m)",
            [("wgmma.fence", "f"), ("wgmma.commit_group", "c"), ("wgmma.mma_async", "m")],
        ),
        (
            "PTX ISA, cp.async.bulk.tensor: .mbarrier::complete_tx::bytes (#t); "
            "mbarrier complete-tx operation (#c)",
            [(".mbarrier::complete_tx::bytes", "t"), ("mbarrier complete-tx operation", "c")],
        ),
        ("libcu++ cuda::ptx: cp.async.bulk.tensor; PTX ISA (#x)", [("PTX ISA", "x")]),
    ],
)
def test_each_anchor_becomes_a_link_named_by_the_words_before_it(reference, links):
    parts = reference_parts(reference)
    found = [(p.text, p.anchor) for p in parts if isinstance(p, Link)]
    assert found == links
    assert all(p.url == f"{PTX}#{p.anchor}" for p in parts if isinstance(p, Link))
    # Nothing is lost: the parts give back the text, less the "(#...)" anchors.
    joined = "".join(p.text if isinstance(p, Link) else p for p in parts)
    assert joined == re.sub(r"\s?\(#[^)]*\)", "", reference)
    assert reference_problems(reference) == []


def test_the_link_html_is_an_anchor_to_the_document_and_nothing_else():
    html = reference_html(
        "PTX ISA, `wgmma` <b>x</b> (#asynchronous-warpgroup-level-matrix-instructions-wgmma-fence)"
    )
    assert html == (
        "PTX ISA, "
        f'<a href="{PTX}#asynchronous-warpgroup-level-matrix-instructions-wgmma-fence" '
        'target="_blank" rel="noopener noreferrer"><code>wgmma</code> &lt;b&gt;x&lt;/b&gt;</a>'
    )


@pytest.mark.parametrize(
    ("reference", "words"),
    [
        ("Somewhere (#anchor)", "follows no document"),
        ("PTX ISA, a; CUDA Driver API, cuTensorMapEncodeTiled (#group__CUDA__TENSOR)", "CUDA Driver API"),
    ],
)
def test_an_anchor_that_cannot_be_linked_is_a_problem_and_stays_text(reference, words):
    (problem,) = reference_problems(reference)
    assert words in problem and "(#" in problem
    assert "<a " not in reference_html(reference)


def test_anchor_like_text_with_odd_characters_is_not_a_link():
    for text in ('PTX ISA (#a" onclick="x)', "PTX ISA (#javascript:alert(1))", "PTX ISA (# a)"):
        assert "<a " not in reference_html(text)
        assert reference_problems(text) == []


def test_the_shipped_references_all_link(monkeypatch):
    from pathlib import Path

    from course.quiz.loader import load_quiz

    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("COURSE_ROOT", str(root))
    anchors = 0
    for name in ("day76", "day78"):
        for q in load_quiz(root / "content" / "quizzes" / f"{name}.toml").questions:
            assert reference_problems(q.reference) == [], (q.id, q.reference)
            assert "(#" not in reference_html(q.reference), (q.id, q.reference)
            anchors += q.reference.count("(#")
    assert anchors > 20


def test_a_full_address_in_brackets_is_a_link_on_its_words_and_never_shown_raw():
    """Issue 38: notes and sources showed learners raw documentation URLs."""
    url = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html#g7c7d"
    html = reference_html(f"CUDA Driver API, cuTensorMapEncodeTiled: oobFill ({url}); `x` <b>")
    assert html == (
        f'CUDA Driver API, cuTensorMapEncodeTiled: <a href="{url}" target="_blank" '
        'rel="noopener noreferrer">oobFill</a>; <code>x</code> &lt;b&gt;'
    )
    # No words before it: the link is named by the address's host; never an address in the text.
    bare = reference_html(f"({url})")
    assert ">docs.nvidia.com</a>" in bare and bare.count(url) == 1


def test_the_listings_notes_show_no_raw_address():
    from course.lessons import LESSONS
    from course.snippets import get_snippet
    from course.view.listing import SnippetView
    from course.view.notes import load_notes

    seen = 0
    for lesson in LESSONS.values():
        if not lesson.annotations_path.exists():
            continue
        for name, notes in load_notes(lesson).items():
            if not any("https://" in n.cite for n in notes):
                continue
            html = SnippetView(get_snippet(lesson.kernel_path, name), tuple(notes))._repr_html_()
            shown = re.sub(r'href="[^"]*"', "", html)  # the addresses live in links only
            assert "https://" not in shown, (lesson.id, name)
            seen += 1
    assert seen, "no note cites an address: the test checks nothing"
