"""How long every page is, and what a learner sees first (issue 38, items 2-4), in JupyterLab in Chromium.

Every registry page is run (Run All, the ``pages`` fixture of ``test_jupyterlab.py``)
and measured as a learner scrolls it: the notebook's height, from its top to
the bottom of its last cell, in screens (the notebook panel's visible height in
a 1280 x 1000 window, and at 1024 px wide). The numbers are written to
``page-heights.json`` beside the screenshots and printed.

Then:
- every page is at most ``MAX_SCREENS`` screens at 1280 px;
- Days 84, 86 and 87 start with the lesson: their diff (``page.changes()``) is
  a summary of closed regions, and the page's first lesson section after it
  starts within ``LESSON_BY_SCREENS`` screens at 1024 and 1280 px;
- a diff region opened shows a unified diff at 1024 px and a side-by-side one
  at 1920 px, and no line of code in it is broken inside a word;
- the outline at the top of the page names its sections in order, and the
  Table of Contents it points to opens from the View menu;
- screenshots of each page's first screen at 1024, 1280 and 1920 px and in the
  Dark theme, and of an opened diff region, are kept with the others.
"""

# ruff: noqa: F811  (the fixtures imported from test_jupyterlab.py are test arguments by name)
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from course.lessons import LESSONS

from .test_jupyterlab import (  # noqa: F401  (fixtures, used by name)
    NOTEBOOK,
    PAGES_ENV,
    VIEWPORT,
    _page,
    _theme,
    _wait_until,
    browser,
    browser_available,
    course_copy,
    hard_limit_per_test,
    jupyterlab,
    pages,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MAX_SCREENS = 30
LESSON_BY_SCREENS = 1.5  # the page's first lesson section starts within this many screens
DIFF_SCREENS = 0.6  # a diff's summary (its regions closed) is at most this tall (it was 10-19 screens)
DIFF_PAGES = ("day84", "day86", "day87")
WIDTHS = (1024, 1280)

JS_HEIGHT = """
scroller => {
  const cells = scroller.querySelectorAll('.jp-Cell');
  const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
  const end = cells.length ? cells[cells.length - 1].getBoundingClientRect().bottom - top : scroller.scrollHeight;
  const tall = Array.from(cells).map((c, i) => {
    const b = c.getBoundingClientRect();
    const src = c.querySelector('.jp-InputArea-editor, .jp-RenderedMarkdown');
    return {cell: i, px: Math.round(b.height), text: src ? src.textContent.trim().slice(0, 60) : ''};
  }).sort((a, b) => b.px - a.px).slice(0, 6);
  return {end, screen: scroller.clientHeight, tall};
}
"""

# Where the lesson starts (the page's first h2) and how tall the diff's output is, in px.
JS_LESSON_START = """
scroller => {
  const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
  const diff = scroller.querySelector('.course-region');
  const first = scroller.querySelector('.jp-RenderedMarkdown h2');
  if (!diff || !first) return null;
  const out = diff.closest('.jp-OutputArea').getBoundingClientRect();
  return {diff: out.height, diffTop: out.top - top, lesson: first.getBoundingClientRect().top - top,
          heading: first.textContent, screen: scroller.clientHeight};
}
"""


def _scroller(tab: Any) -> Any:
    return tab.page.locator(f"{NOTEBOOK} .jp-WindowedPanel-outer").first


def _at(page: Any, width: int) -> None:
    page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
    page.wait_for_timeout(600)  # the notebook takes the new width; outputs reflow


def _first_screen(tab: Any, path: Path) -> None:
    scroller = _scroller(tab)
    scroller.evaluate("e => { e.scrollTop = 0; }")
    tab.page.wait_for_timeout(200)
    scroller.screenshot(path=str(path), animations="disabled")


def test_every_page_is_at_most_30_screens_at_1280_px(pages, artifacts: Path):
    heights: dict[str, dict[str, Any]] = {}
    # Every page; a targeted run (COURSE_BROWSER_PAGES, never in CI) measures the pages it ran.
    measured = [lesson for lesson in LESSONS.values() if lesson.notebook in pages]
    if not measured:
        pytest.skip(f"none of the registry's pages is among {PAGES_ENV}={os.environ.get(PAGES_ENV, '')!r}")
    tab = _page(pages, measured[0].notebook)
    try:
        for lesson in measured:
            tab = _page(pages, lesson.notebook)
            for width in WIDTHS:
                _at(tab.page, width)
                got = _scroller(tab).evaluate(JS_HEIGHT)
                heights.setdefault(lesson.id, {})[str(width)] = round(got["end"] / got["screen"], 1)
                heights[lesson.id][f"{width}px_height"] = round(got["end"])
                if width == 1280:
                    heights[lesson.id]["tallest_cells_1280"] = got["tall"]
    finally:
        tab.page.set_viewport_size(VIEWPORT)
    (artifacts / "page-heights.json").write_text(json.dumps(heights, indent=1), "utf-8")
    print("screens (notebook height / visible height, 1000 px window):")
    for lesson_id, h in heights.items():
        print(f"  {lesson_id}: {h['1280']} at 1280 px, {h['1024']} at 1024 px")
    long = {k: h["1280"] for k, h in heights.items() if h["1280"] > MAX_SCREENS}
    assert not long, f"pages longer than {MAX_SCREENS} screens at 1280 px: {long}"


@pytest.mark.parametrize("lesson_id", DIFF_PAGES)
def test_the_page_starts_with_the_lesson_and_its_diff_is_a_summary(lesson_id: str, pages, artifacts: Path):
    lesson = LESSONS[lesson_id]
    tab = _page(pages, lesson.notebook)
    page = tab.page
    stem = Path(lesson.notebook).stem
    try:
        for width in (*WIDTHS, 1920):
            _at(page, width)
            where = _scroller(tab).evaluate(JS_LESSON_START)
            assert where is not None, f"{lesson_id}: no diff summary (.course-region) or no section"
            if width in WIDTHS:
                screens = where["lesson"] / where["screen"]
                assert screens <= LESSON_BY_SCREENS, (
                    f"{lesson_id} at {width} px: the first section {where['heading']!r} starts "
                    f"{screens:.1f} screens down"
                )
                assert where["diff"] / where["screen"] <= DIFF_SCREENS, (
                    f"{lesson_id} at {width} px: the diff's summary is {where['diff'] / where['screen']:.1f} screens"
                )
            _first_screen(tab, artifacts / f"{stem}-top-{width}.png")
            if width == 1024:
                summary = tab.panel.locator(".jp-OutputArea:has(.course-region)").first
                summary.scroll_into_view_if_needed()
                summary.screenshot(
                    path=str(artifacts / f"{stem}-diff-summary-1024.png"), animations="disabled"
                )
        regions = tab.panel.locator("details.course-region")
        assert regions.count() >= 1
        assert tab.panel.locator("details.course-region[open]").count() == 0, "a region opens by itself"
        first = regions.first
        first.locator(":scope > summary").click()
        for width, shown, hidden in ((1024, ".cx-unified", ".cx-side"), (1920, ".cx-side", ".cx-unified")):
            _at(page, width)
            assert first.locator(f".course-diffview {shown}").first.is_visible(), (
                f"{width} px: {shown} not shown"
            )
            assert not first.locator(f".course-diffview {hidden}").first.is_visible(), (
                f"{width} px: {hidden} shown"
            )
            # No line breaks inside a word: every wrapped code cell wraps at spaces only.
            wrap = first.locator(f".course-diffview {shown} td.c").first.evaluate(
                "c => getComputedStyle(c).overflowWrap + ' ' + getComputedStyle(c).wordBreak"
            )
            assert wrap == "normal normal", wrap
            first.scroll_into_view_if_needed()
            first.screenshot(path=str(artifacts / f"{stem}-diff-region-{width}.png"), animations="disabled")
        first.locator(":scope > summary").click()  # closed again
    finally:
        page.set_viewport_size(VIEWPORT)


def test_the_outline_names_the_pages_sections_and_the_menu_it_points_to_exists(pages, artifacts: Path):
    """The outline at the top lists the page's sections as JupyterLab shows them, in order, and
    its View > Table of Contents is a menu item there (links to "#Quiz" would not do: JupyterLab
    looks the id up in the whole window, so with several pages open the first page's scrolled)."""
    lesson = LESSONS["day86"]
    tab = _page(pages, lesson.notebook)
    page = tab.page
    top = tab.panel.locator(".jp-MarkdownOutput", has_text="On this page:").first
    said = top.locator("p", has_text="On this page:").first.inner_text()
    shown = [h.replace("¶", "").strip() for h in tab.panel.locator(".jp-MarkdownOutput h2").all_inner_texts()]
    assert said.startswith("On this page: " + " · ".join(shown) + "."), (said, shown)
    page.locator(".lm-MenuBar-item", has_text="View").first.click()
    try:
        item = page.locator(".lm-Menu-item:not(.lm-mod-hidden)", has_text="Table of Contents").first
        item.wait_for(timeout=10_000)
        item.click()
        toc = page.locator(".jp-TableOfContents-tree, .jp-TableOfContents").first
        toc.wait_for(timeout=10_000)
        assert "Quiz" in toc.inner_text()
        page.screenshot(path=str(artifacts / "day86_shapes-outline-and-toc.png"), animations="disabled")
    finally:
        page.keyboard.press("Escape")
        browser_tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='filebrowser']")
        if browser_tab.count():
            browser_tab.first.click()  # the file browser back, as the other tests' window has it


@pytest.mark.parametrize("lesson_id", DIFF_PAGES)
def test_dark_theme_first_screens(lesson_id: str, pages, artifacts: Path):
    tab = _page(pages, LESSONS[lesson_id].notebook)
    page = tab.page
    try:
        _theme(page, "JupyterLab Dark")
        tab = _page(pages, LESSONS[lesson_id].notebook)
        _first_screen(tab, artifacts / f"{Path(LESSONS[lesson_id].notebook).stem}-top-dark.png")
    finally:
        _theme(page, "JupyterLab Light")


JS_WORDS_FIT = """
table => {
  const ctx = document.createElement('canvas').getContext('2d');
  const broken = [];
  for (const td of table.querySelectorAll('td')) {
    const st = getComputedStyle(td);
    ctx.font = `${st.fontStyle} ${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
    const room = td.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
    for (const el of [td, ...td.querySelectorAll('small')]) {
      const est = getComputedStyle(el);
      ctx.font = `${est.fontStyle} ${est.fontWeight} ${est.fontSize} ${est.fontFamily}`;
      // A word: between spaces, or the part of a name up to a dot or underscore (a <wbr> there),
      // or of a hyphenated word up to its hyphen (where a browser breaks a line anyway).
      for (const word of el.innerText.split(/\\s+|(?<=[._-])/).filter(Boolean)) {
        const w = ctx.measureText(word).width;
        if (w > room + 1) broken.push({word, w: Math.round(w), room: Math.round(room)});
      }
    }
  }
  return broken;
}
"""


def test_day78_card_table_breaks_no_word_at_1024_px(pages, artifacts: Path):
    """Issue 38, item 6: every word of the card table fits its cell at 1024 px (none is split; an
    instruction's name may break after a dot or an underscore) and the table fits the page."""
    tab = _page(pages, LESSONS["day78"].notebook)
    try:
        _at(tab.page, 1024)
        table = tab.panel.locator(".jp-OutputArea-output table", has_text="Tensor-core path").first
        table.scroll_into_view_if_needed()
        broken = table.evaluate(JS_WORDS_FIT)
        assert not broken, f"words wider than their cell (split mid-word): {broken[:10]}"
        over = table.evaluate(
            "t => t.getBoundingClientRect().width - t.closest('.jp-OutputArea-output').getBoundingClientRect().width"
        )
        assert over <= 1, f"the table is {over:.0f} px wider than the page's output"
        table.screenshot(path=str(artifacts / "day78_wgmma-card-table-1024.png"), animations="disabled")
    finally:
        tab.page.set_viewport_size(VIEWPORT)


def _output_of(tab: Any, source: str) -> Any:
    """The output area of the page's first code cell whose source contains ``source``."""
    cell = tab.panel.locator(".jp-CodeCell", has=tab.page.locator(".jp-InputArea-editor", has_text=source))
    out = cell.first.locator(".jp-OutputArea").first
    out.scroll_into_view_if_needed()
    return out


def _shoot(tab: Any, element: Any, path: Path) -> None:
    """The element whole, in a window tall enough to hold it (a taller one than the 1000 px
    window gets pieced together over the toolbars), at the window's width."""
    width = tab.page.viewport_size["width"]
    tab.page.set_viewport_size({"width": width, "height": 3000})
    try:
        tab.page.wait_for_timeout(400)
        element.scroll_into_view_if_needed()
        tab.page.wait_for_timeout(200)
        element.screenshot(path=str(path), animations="disabled")
    finally:
        tab.page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})


def test_days_85_to_87_show_each_number_once_and_charts_keep_legends_off_the_data(pages, artifacts: Path):
    """Issue 38, items 4 and 7, as a learner sees them. Day 86's speed section shows the shape
    table (once on the page: no second copy, no per-shape sentences, no table of the squares beside
    it); Day 87's shows the like-with-like table once; Day 85's climb note does not repeat the
    status line's no-GPU reason. Screenshots: each speed section at 1024, 1280 and 1920 px and in
    the Dark theme; Day 86's climb chart and timeline (legends under the axes, the timeline's
    'after release (loop)' named)."""
    day86, day87, day85 = (_page(pages, LESSONS[i].notebook) for i in ("day86", "day87", "day85"))
    page = day86.page
    try:
        day86.bring_to_front()
        # a table headed by the column (the folded list of every number names it in its rows too)
        shapes = day86.panel.locator(
            """.jp-OutputArea-output table:has(th:text-is("the chooser's pick (tile, cluster, split)"))"""
        )
        assert shapes.count() == 1, f"Day 86 shows the shape table {shapes.count()} times"
        bench86 = day86.panel.locator(".course-bench").first
        assert (
            bench86.locator("""table:has(th:text-is("the chooser's pick (tile, cluster, split)"))""").count()
            == 1
        )
        assert "kernel time (median, min-max)" not in bench86.inner_text()
        assert bench86.locator(":scope > ul").first.locator("li").count() == 1, "per-shape sentences"
        day87.bring_to_front()
        bench87 = day87.panel.locator(".course-bench").first
        headed = """table:has(th:text-is("default build (never promoting)"))"""
        like = day87.panel.locator(f".jp-OutputArea-output {headed}")
        assert like.count() == 1 and bench87.locator(headed).count() == 1, like.count()
        assert "kernel time (median, min-max)" not in bench87.inner_text()
        day85.bring_to_front()
        climb85 = _output_of(day85, "page.climb(measure=True)")
        note = climb85.inner_text()
        status = _output_of(day85, "page.status()").inner_text().strip()
        assert "No measuring button here" in note and status.split(".")[0] not in note, (note, status)
        _at(page, 1280)
        _shoot(
            day85,
            climb85.locator(".jp-OutputArea-output").first,
            artifacts / "issue38-day85-climb-note-1280.png",
        )
        day86.bring_to_front()
        _shoot(day86, _output_of(day86, "page.climb()"), artifacts / "issue38-day86-climb-legend-1280.png")
        _shoot(
            day86, _output_of(day86, "page.timeline("), artifacts / "issue38-day86-timeline-legend-1280.png"
        )
        for width in (1024, 1280, 1920):
            _at(page, width)
            _shoot(day86, bench86, artifacts / f"issue38-day86-speed-once-{width}.png")
            day87.bring_to_front()
            _shoot(day87, bench87, artifacts / f"issue38-day87-speed-legend-{width}.png")
            day86.bring_to_front()
        _at(page, 1280)
        _theme(page, "JupyterLab Dark")
        _shoot(day86, bench86, artifacts / "issue38-day86-speed-once-dark-1280.png")
        day87.bring_to_front()
        _shoot(day87, bench87, artifacts / "issue38-day87-speed-legend-dark-1280.png")
    finally:
        _theme(page, "JupyterLab Light")
        page.set_viewport_size(VIEWPORT)


def test_an_annotation_drop_downs_cut_choice_is_written_out_under_its_line(pages, artifacts: Path):
    """Issue 38, item 7: the closed drop-down (13em, so the code keeps its width) cut a long role
    name; the chosen name is written out under the line, at every width and in the Dark theme."""
    from course.exercises.annotation import NONE, SHOWN_CHARS, exercise_path, load_exercise

    tab = _page(pages, LESSONS["day78"].notebook)
    page = tab.page
    box = tab.panel.locator(".course-live.course-annotation").first
    select = box.locator("select").first
    roles = load_exercise(exercise_path("day78")).roles
    none = next(r.label for r in roles if r.id == NONE)
    long = max(roles, key=lambda r: len(r.label))
    assert len(long.label) > SHOWN_CHARS
    try:
        select.scroll_into_view_if_needed()
        select.select_option(label=long.label)
        caption = box.locator("small", has_text=long.label).first
        caption.wait_for(timeout=10_000)
        assert caption.is_visible()
        for width in (1024, 1280, 1920):
            _at(page, width)
            _shoot(
                tab,
                box.locator(".widget-vbox").first,
                artifacts / f"issue38-day78-annotation-choice-{width}.png",
            )
        _at(page, 1280)
        _theme(page, "JupyterLab Dark")
        _shoot(
            tab,
            box.locator(".widget-vbox").first,
            artifacts / "issue38-day78-annotation-choice-dark-1280.png",
        )
    finally:
        _theme(page, "JupyterLab Light")
        select.select_option(label=none)
        page.set_viewport_size(VIEWPORT)
