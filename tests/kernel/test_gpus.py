"""The page's GPU table: facts, citations, and agreement with the lesson registry."""

from __future__ import annotations

import dataclasses
import html.parser
import re

import pytest

from course.errors import CourseError
from course.kernel import gpus
from course.lessons import LESSONS, get_lesson


def names(cards):
    return [card.name for card in cards]


def test_day76_runs_on_every_card_with_tma():
    assert names(gpus.runs_lesson(get_lesson("day76"))) == ["H100/H200", "B200/GB200", "RTX 50"]
    assert gpus.runs_lesson(get_lesson("day76")) == gpus.cards_for("tma")
    assert gpus.cards_phrase(get_lesson("day76")) == "H100/H200, B200/GB200, RTX 50"


def test_day78_runs_on_hopper_only():
    assert names(gpus.runs_lesson(get_lesson("day78"))) == ["H100/H200"]
    assert gpus.runs_lesson(get_lesson("day78")) == gpus.cards_for("wgmma")
    assert gpus.cards_phrase(get_lesson("day78")) == "H100/H200 only"


@pytest.mark.parametrize("lesson_id", sorted(LESSONS))
def test_runs_lesson_follows_the_registry(lesson_id):
    lesson = LESSONS[lesson_id]
    assert gpus.runs_lesson(lesson) == [card for card in gpus.CARDS if lesson.supports(card.cc)]


def test_a_lesson_no_card_runs_is_said_so():
    beyond = dataclasses.replace(LESSONS["day78"], min_cc=(99, 0), max_cc=None)
    assert gpus.runs_lesson(beyond) == []
    assert gpus.cards_phrase(beyond) == "none of the cards in the table"


@pytest.mark.parametrize(
    ("name", "cc", "kib"),
    [
        ("H100/H200", (9, 0), 227),
        ("B200/GB200", (10, 0), 227),
        ("RTX 50", (12, 0), 99),
        ("L4 / RTX 40", (8, 9), 99),
        ("A100", (8, 0), 163),
    ],
)
def test_compute_capability_and_shared_memory_per_block(name, cc, kib):
    card = next(c for c in gpus.CARDS if c.name == name)
    assert card.cc == cc
    assert card.smem_per_block_kib == kib
    assert card.smem_per_block_bytes == kib * 1024
    assert gpus.SMEM_TABLE in card.citations
    assert gpus.card_for_cc(cc) == card


def test_what_each_card_has_instead():
    by_name = {card.name: card for card in gpus.CARDS}
    assert names(gpus.cards_for("tcgen05")) == ["B200/GB200"]
    assert "tcgen05" in by_name["B200/GB200"].matrix_path
    for name in ("RTX 50", "L4 / RTX 40", "A100"):
        assert "mma.sync" in by_name[name].matrix_path
    for name in ("L4 / RTX 40", "A100"):
        assert not by_name[name].has_tma and "cp.async" in by_name[name].copy_path
        assert gpus.CP_ASYNC in by_name[name].citations
    assert names(gpus.cards_for("mma.sync")) == names(gpus.CARDS)


def test_every_no_wgmma_row_cites_the_sm90a_requirement():
    for card in gpus.CARDS:
        assert gpus.WGMMA_SM90A in card.citations
        assert card.has_wgmma == (card.cc == (9, 0))
        if card.has_tma:
            assert gpus.TMA_SM90 in card.citations
        assert card.has_tma == (card.cc >= (9, 0))


def test_unknown_feature_is_refused_with_the_list():
    with pytest.raises(CourseError, match="feature must be one of wgmma, tma"):
        gpus.cards_for("wmma")


def test_card_for_unknown_cc_is_none():
    assert gpus.card_for_cc((7, 5)) is None


class _Cells(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.rows += tag == "tr"

    def handle_data(self, data):
        self.text.append(data)


def test_table_html_has_one_row_per_card_and_the_facts():
    parser = _Cells()
    parser.feed(gpus.table_html())
    assert parser.rows == 1 + len(gpus.CARDS)
    text = " ".join(parser.text)
    for card in gpus.CARDS:
        assert card.name in text and card.cc_str in text and f"{card.smem_per_block_kib} KiB" in text


def test_table_html_escapes_text(monkeypatch):
    evil = dataclasses.replace(gpus.CARDS[0], name="<script>x</script>", products="a & b")
    monkeypatch.setattr(gpus, "CARDS", (evil,))
    out = gpus.table_html()
    assert "<script>" not in out
    assert "&lt;script&gt;" in out and "a &amp; b" in out


def test_table_sources_are_numbered_notes_each_listed_once():
    out = gpus.table_html()
    notes = re.findall(r'<li><a href="([^"]+)">', out)
    cited = {c for card in gpus.CARDS for c in card.citations}
    assert len(notes) == len(cited)  # each source once
    assert {c.url for c in cited} == set(notes)
    # every row refers to its notes by number, and no number points past the list
    refs = {int(n) for n in re.findall(r"\[(\d+)\]", out)}
    assert refs == set(range(1, len(notes) + 1))


def test_the_cards_table_never_breaks_a_word():
    """Issue 38, item 6: at 1024 px `overflow-wrap:anywhere` let the table squeeze its long columns
    until words broke mid-word; a column is now at least as wide as its longest word."""
    from course.kernel.gpus import table_html

    html = table_html()
    assert "anywhere" not in html and "word-break:break-all" not in html
    assert "overflow-wrap:break-word" in html  # only a word wider than the whole table may break
