"""The newest pages as a learner sees them: three widths, Light and Dark, the widgets by keyboard.

In JupyterLab in headless Chromium (the fixtures of ``test_jupyterlab.py``: its
server, browser and Run All, on a machine without a GPU, so the pages show the
recorded evidence), each page's folded headings opened (Expand All Headings):

- screenshots of the whole page at 1024, 1280 and 1920 px, in JupyterLab
  Light and JupyterLab Dark, kept with the other artifacts to be looked at;
- at every width, no table, listing or picture is wider than its output
  area unless it sits in a box that scrolls sideways (``JS_TOO_WIDE_22``);
- in the Dark theme, every picture an output shows paints its own opaque
  background (a transparent one would put its black text on the dark page);
- no button's label is cut (the reveal's "Show the 7 hidden lines" read "Show
  the ..." at 1024 and 1280 px), and no <pre> of a course output breaks words
  anywhere (JupyterLab's break-all split "4.00947e-05" over two rows);
- no table wider than its box scrolls there without a cue (Day 90's speed table
  hid two columns at 1024 px with no scrollbar or shade: ``JS_SCROLL_CUES``), and
  no word of an output (the course's HTML, and the lines a cell prints, which
  JupyterLab split "clu" / "ster") is split across two lines where it fits in
  one (``JS_SPLIT_WORDS``);
- the quiz (a choice with the arrow keys, which must reach the kernel; a box
  ticked with Space; Check with Enter and with Space), the coding panel's Hint,
  the diff's folds and the reveal button are reached with Tab or Shift-Tab from
  the control beside them and used with Enter, Space and the arrows; the focused
  control shows it (a button: the 2 px ring of ``course._live.RUN_NOTE``).

The pages: ``NEWEST_DEFAULT`` (Days 85, 86, 88, 89 and 90), or ``COURSE_BROWSER_PAGES``'s selection
(``COURSE_BROWSER_PAGES=day90,day85`` runs those pages alone, with every test here).
"""

# ruff: noqa: F811  (the fixtures imported from test_jupyterlab.py are test arguments by name)
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from course.lessons import LESSONS

from .test_jupyterlab import (  # noqa: F401  (fixtures, used by name)
    JS_TOO_WIDE_22,
    PAGES_ENV,
    VIEWPORT,
    _page,
    _shots_at,
    _theme,
    browser,
    browser_available,
    course_copy,
    hard_limit_per_test,
    jupyterlab,
    pages,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The pages this test looks at: COURSE_BROWSER_PAGES's selection when set (the pages the
# ``pages`` fixture runs), else the pages changed in the latest sessions.
NEWEST_DEFAULT = ("day85", "day86", "day88", "day89", "day90")
NEWEST = tuple(w.strip() for w in os.environ.get(PAGES_ENV, "").split(",") if w.strip()) or NEWEST_DEFAULT
WIDTHS = (1024, 1280, 1920)
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def _expand(page: Any) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:expand-all-headings')")
    page.wait_for_timeout(300)


# Each picture in an output, with how much of it is see-through (sampled on a grid; the image's own
# pixels, drawn onto a canvas: a data: URL or a same-origin file, so the canvas is not tainted).
JS_PICTURES = """
nb => Array.from(nb.querySelectorAll('.jp-Cell')).flatMap((cell, i) =>
  Array.from(cell.querySelectorAll('.jp-OutputArea-output img')).map(img => {
    const w = img.naturalWidth, h = img.naturalHeight;
    if (!w || !h) return {cell: i, broken: true};
    const c = document.createElement('canvas');
    c.width = w; c.height = h;
    const ctx = c.getContext('2d', {willReadFrequently: true});
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, w, h).data;
    let clear = 0, seen = 0;
    for (let y = 0; y < h; y += 7) for (let x = 0; x < w; x += 7) {
      seen += 1;
      if (data[(y * w + x) * 4 + 3] < 250) clear += 1;
    }
    const box = img.getBoundingClientRect();
    return {cell: i, clear: clear / seen, shown: Math.round(box.width), natural: w,
            area: Math.round(img.closest('.jp-OutputArea-output').getBoundingClientRect().width)};
  }))
"""


@pytest.mark.parametrize("lesson_id", NEWEST)
def test_the_newest_pages_at_three_widths_light_and_dark(lesson_id: str, pages, artifacts: Path):
    lesson = LESSONS[lesson_id]
    tab = _page(pages, lesson.notebook)
    page, panel, stem = tab.page, tab.panel, Path(lesson.notebook).stem
    _expand(page)
    problems: list[str] = []
    try:
        for theme, name in THEMES.items():
            _theme(page, name)
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
                page.wait_for_timeout(500)
                for wide in panel.evaluate(JS_TOO_WIDE_22):
                    problems.append(
                        f"{theme}, {width} px, cell {wide['cell']}: a <{wide['tag']}> is {wide['over']} px "
                        f"wider than its output area ({wide['text']!r})"
                    )
                seen = panel.evaluate(JS_CUT_AND_BROKEN)
                for b in seen["cut"]:
                    problems.append(
                        f"{theme}, {width} px: the button {b['text']!r} is cut ({b['has']} px of {b['need']})"
                    )
                for text in seen["broken"] if theme == "light" else ():
                    problems.append(f"{width} px: a <pre> that breaks words anywhere: {text!r}")
                for box in panel.evaluate(JS_SCROLL_CUES):
                    problems.append(
                        f"{theme}, {width} px, cell {box['cell']}: a table {box['over']} px wider than its box, "
                        f"which scrolls with no cue (no scrollbar, no edge shade): {box['text']!r}"
                    )
                for split in panel.evaluate(JS_SPLIT_WORDS) if theme == "light" else ():
                    problems.append(
                        f"{width} px, cell {split['cell']}: {split['word']!r} split across two lines after "
                        f"{split['at']} characters in a <{split['tag']}> ({split['wordPx']} px, its line "
                        f"{split['linePx']} px)"
                    )
                pictures = panel.evaluate(JS_PICTURES)
                for p in pictures:
                    if p.get("broken"):
                        problems.append(f"{width} px, cell {p['cell']}: a picture that did not load")
                    elif theme == "dark" and p["clear"] > 0.01:
                        problems.append(
                            f"dark, cell {p['cell']}: a picture {p['clear']:.0%} see-through "
                            "(its text and axes drawn on the dark page)"
                        )
                suffix = "" if theme == "light" else "-dark"
                _shots_at(width, page, artifacts, {f"{stem}-look-{width}{suffix}.png": None})
    finally:
        _theme(page, THEMES["light"])
        page.set_viewport_size(VIEWPORT)
    assert not problems, f"{lesson_id}, {len(problems)} problems:\n" + "\n".join(problems)


# Every button shown whose label is cut (its text wider than the button), and every <pre> of a
# course output (not a listing's columns, not JupyterLab's own stream text) that breaks words anywhere.
JS_CUT_AND_BROKEN = """
nb => {
  const cut = Array.from(nb.querySelectorAll('.jp-OutputArea-output button')).filter(b => {
    const r = b.getBoundingClientRect();
    return r.width > 0 && b.scrollWidth > b.clientWidth + 1;
  }).map(b => ({text: b.innerText.trim(), need: b.scrollWidth, has: b.clientWidth}));
  const broken = Array.from(nb.querySelectorAll('.jp-RenderedHTMLCommon pre, .widget-html-content pre'))
    .filter(p => !p.closest('.course-listing') && getComputedStyle(p).whiteSpace !== 'pre'
                 && getComputedStyle(p).wordBreak === 'break-all')
    .map(p => p.innerText.trim().slice(0, 60));
  return {cut, broken};
}
"""

# Every table in an output that is wider than the box that scrolls it, where the box shows no cue:
# a scrollbar that takes room (hidden ones do not: macOS until used, headless Chromium), or the
# scroll shadows of course._html.scroll_box (gradients fixed at the edges under covers that move).
JS_SCROLL_CUES = """
nb => Array.from(nb.querySelectorAll('.jp-Cell')).flatMap((cell, i) =>
  Array.from(cell.querySelectorAll('.jp-OutputArea-output table')).flatMap(table => {
    const out = table.closest('.jp-OutputArea-output');
    let box = table.parentElement;
    while (box && box !== out && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) box = box.parentElement;
    if (!box || box === out || !box.checkVisibility() || box.scrollWidth <= box.clientWidth + 1) return [];
    const s = getComputedStyle(box);
    const bar = box.offsetHeight - box.clientHeight - parseFloat(s.borderTopWidth) - parseFloat(s.borderBottomWidth);
    const layers = s.backgroundAttachment.split(',').map(a => a.trim());
    const shades = (s.backgroundImage.match(/gradient/g) || []).length >= 4
                   && layers.includes('local') && layers.includes('scroll');
    if (bar >= 4 || shades) return [];
    return [{cell: i, over: box.scrollWidth - box.clientWidth, text: table.innerText.trim().slice(0, 60)}];
  }))
"""

# Every word of an output (the course's HTML and widgets, and the lines a cell prints: JupyterLab's
# break-all split "cluster" there, fixed for course pages by course._live.RUN_NOTE; not stderr)
# that the browser split across two lines though it fits in its line: each character's box, two
# letters or digits in a row on different lines. Hidden text (a closed <details>) and text that
# does not wrap (listings, white-space: pre) are left out.
JS_SPLIT_WORDS = r"""
nb => {
  const letter = /[\p{L}\p{N}_.]/u;
  const found = [];
  Array.from(nb.querySelectorAll('.jp-Cell')).forEach((cell, i) => {
    for (const out of cell.querySelectorAll('.jp-OutputArea-output')) {
      if ((out.dataset.mimeType || '') === 'application/vnd.jupyter.stderr') continue;
      const walker = document.createTreeWalker(out, NodeFilter.SHOW_TEXT);
      for (let t = walker.nextNode(); t; t = walker.nextNode()) {
        const s = t.data, el = t.parentElement;
        if (s.trim().length < 2 || !el.checkVisibility()) continue;
        if (['pre', 'nowrap'].includes(getComputedStyle(el).whiteSpace)) continue;
        const range = document.createRange();
        let prev = null;
        for (let k = 0; k < s.length; k++) {
          range.setStart(t, k); range.setEnd(t, k + 1);
          const rs = range.getClientRects();
          const r = rs.length ? rs[rs.length - 1] : null;
          if (!r || r.width === 0) continue;
          if (prev && letter.test(s[k - 1]) && letter.test(s[k]) && r.top >= prev.bottom - 1) {
            let a = k, b = k;
            while (a > 0 && !/\s/.test(s[a - 1])) a--;
            while (b < s.length && !/\s/.test(s[b])) b++;
            range.setStart(t, a); range.setEnd(t, b);
            const wordPx = Array.from(range.getClientRects()).reduce((x, q) => x + q.width, 0);
            let box = el;
            while (box.parentElement && getComputedStyle(box).display.startsWith('inline')) box = box.parentElement;
            const bs = getComputedStyle(box);
            const linePx = box.clientWidth - parseFloat(bs.paddingLeft) - parseFloat(bs.paddingRight);
            if (wordPx <= linePx + 1) {
              found.push({cell: i, word: s.slice(a, b), at: k - a, wordPx: Math.round(wordPx),
                          linePx: Math.round(linePx), tag: box.tagName.toLowerCase()});
            }
          }
          prev = r;
        }
      }
    }
  });
  return found;
}
"""

# The focused element: what it is, whether the browser shows it as keyboard-focused, and its ring.
JS_FOCUSED = """
() => {
  const a = document.activeElement;
  if (!a || a === document.body) return {tag: 'none'};
  const s = getComputedStyle(a);
  const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || (s.boxShadow || 'none') !== 'none';
  return {tag: a.tagName.toLowerCase(), type: a.type || '', checked: !!a.checked,
          text: (a.innerText || a.value || '').trim().slice(0, 50), visible: a.matches(':focus-visible'), ring,
          outline: `${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}`, shadow: s.boxShadow};
}
"""


def _focused(page: Any) -> dict[str, Any]:
    return page.evaluate(JS_FOCUSED)


def _press(page: Any, key: str, where: str, steps: list[str], problems: list[str]) -> dict[str, Any]:
    """Press ``key``; the element that has the focus then must show it (a ring the learner sees)."""
    page.keyboard.press(key)
    page.wait_for_timeout(150)
    now = _focused(page)
    steps.append(
        f"{where}: {key} -> {now['tag']} {now['type']} {now.get('text', '')!r} ring={now.get('ring')}"
    )
    if now["tag"] == "none":
        problems.append(f"{where}: after {key} nothing has the focus")
    elif now["tag"] == "button" and now["visible"] and not now["outline"].startswith("solid 2px"):
        problems.append(f"{where}: the focused button {now['text']!r} has a faint ring ({now['outline']})")
    elif not (now["visible"] and now["ring"]):
        problems.append(
            f"{where}: after {key} the focused {now['tag']} {now['text']!r} shows no ring ({now})"
        )
    return now


def _shows(page: Any, what: str, probe: str, arg: Any, problems: list[str], seconds: float = 15) -> bool:
    """Wait (bounded) until ``probe(arg)`` is true in the page; a wait that runs out is a problem."""
    try:
        page.wait_for_function(probe, arg=arg, timeout=seconds * 1000)
        return True
    except Exception as e:  # playwright's TimeoutError
        problems.append(f"{what} (nothing after {seconds:.0f} s: {type(e).__name__})")
        return False


FEEDBACK = "q => !!q.querySelector('.quiz-feedback')"
HINT = "c => c.innerText.includes('Hint 1:')"


@pytest.mark.parametrize("lesson_id", NEWEST)
def test_the_newest_pages_widgets_work_with_the_keyboard(lesson_id: str, pages, artifacts: Path):
    """The quiz (a choice with the arrows, a box with Space, Check with Enter and with Space), the
    coding panel's Hint, the diff's folds and the button that shows folded lines: reached with Tab
    or Shift-Tab from the control beside them, used with Enter, Space and the arrows, each focus shown."""
    lesson = LESSONS[lesson_id]
    tab = _page(pages, lesson.notebook)
    page, panel, stem = tab.page, tab.panel, Path(lesson.notebook).stem
    _expand(page)
    problems: list[str] = []
    steps: list[str] = []
    try:
        # The quiz: the first question with radio buttons, from its Check button back to its choices.
        single = panel.locator(".course-question", has=page.locator("input[type=radio]")).first
        single.scroll_into_view_if_needed()
        check = single.get_by_role("button", name="Check").first
        check.focus()
        _press(page, "Shift+Tab", "quiz choice", steps, problems)
        _press(page, "ArrowDown", "quiz choice", steps, problems)
        page.wait_for_timeout(500)
        picked = single.locator("input[type=radio]:checked").count()
        if picked != 1:
            problems.append(f"quiz: ArrowDown on the choices left {picked} chosen, not 1")
        # ipywidgets' radio buttons are a tab stop each (not one for the group): Tab past the rest.
        for _ in range(single.locator("input[type=radio]").count()):
            if _press(page, "Tab", "quiz choice", steps, problems)["text"] == "Check":
                break
        else:
            problems.append("quiz: Tab from the choices never reached Check")
        _press(page, "Enter", "quiz Check", steps, problems)
        if _shows(
            page,
            "quiz: Enter on the focused Check did not check",
            FEEDBACK,
            single.element_handle(),
            problems,
        ):
            if "Choose or type an answer first" in single.inner_text():
                problems.append("quiz: the choice made with ArrowDown did not reach the kernel")
        _screenshots_of(single, artifacts, f"{stem}-keys-quiz-choice.png")
        # A select-all-that-apply question: Space ticks the box that has the focus.
        many = panel.locator(".course-question", has=page.locator("input[type=checkbox]")).first
        many.scroll_into_view_if_needed()
        many.get_by_role("button", name="Check").first.focus()
        box = _press(page, "Shift+Tab", "quiz boxes", steps, problems)
        _press(page, "Space", "quiz boxes", steps, problems)
        if box["type"] != "checkbox" or _focused(page)["checked"] == box["checked"]:
            problems.append(f"quiz: Space did not tick the focused box ({box})")
        for _ in range(many.locator("input[type=checkbox]").count()):
            if _press(page, "Tab", "quiz boxes", steps, problems)["text"] == "Check":
                break
        page.keyboard.press("Space")
        if _shows(
            page, "quiz: Space on the focused Check did not check", FEEDBACK, many.element_handle(), problems
        ):
            if "Choose or type an answer first" in many.inner_text():
                problems.append("quiz: the box ticked with Space did not reach the kernel")
        # The coding panel: Tab from Check to Hint; Enter, or Space, shows a hint.
        coding = panel.locator(".course-coding").first
        coding.scroll_into_view_if_needed()
        coding.get_by_role("button", name="Check").first.focus()
        hint = _press(page, "Tab", "coding", steps, problems)
        if hint["text"] != "Hint":
            problems.append(f"coding: Tab from Check reached {hint['text']!r}, not Hint")
        else:
            page.keyboard.press("Enter")
            if not _shows(
                page,
                "coding: Enter on the focused Hint showed no hint",
                HINT,
                coding.element_handle(),
                problems,
            ):
                page.keyboard.press("Space")
                _shows(
                    page,
                    "coding: Space on the focused Hint showed no hint",
                    HINT,
                    coding.element_handle(),
                    problems,
                )
        _screenshots_of(coding, artifacts, f"{stem}-keys-coding-hint.png")
        # The diff's folds (Days 86 and 89): Tab to the next region's name, Enter opens it; then the
        # button under them that shows the exercise's folded lines, with Space.
        regions = panel.locator("details.course-region")
        if lesson.previous and regions.count() < 2:
            problems.append(f"{lesson_id}: a page after another with fewer than two diff regions")
        elif lesson.previous:
            first = regions.first.locator("summary").first
            first.scroll_into_view_if_needed()
            first.focus()
            _press(page, "Tab", "diff", steps, problems)
            page.keyboard.press("Enter")
            page.wait_for_timeout(300)
            if not regions.nth(1).evaluate("d => d.open"):
                problems.append("diff: Enter on the second region's name did not open it")
            page.keyboard.press("Enter")  # closed again
            out = panel.locator(".jp-OutputArea-output", has=page.locator("details.course-region")).first
            reveal = out.locator(".course-reveal button")
            if reveal.count():
                out.locator("details.course-region").last.locator("summary").first.focus()
                now = _press(page, "Tab", "diff's reveal", steps, problems)
                if not now["text"].startswith("Show the"):
                    problems.append(f"diff: Tab from the last region reached {now['text']!r}, not the reveal")
                else:
                    page.keyboard.press("Space")
                    _shows(
                        page,
                        "diff: Space on the reveal did not show the lines",
                        "o => !o.querySelector('.course-hidden')",
                        out.element_handle(),
                        problems,
                    )
        _theme(page, THEMES["dark"])
        single.scroll_into_view_if_needed()
        check.focus()
        _press(page, "Shift+Tab", "dark quiz choice", steps, problems)
        _screenshots_of(single, artifacts, f"{stem}-keys-quiz-choice-dark.png")
    finally:
        print("\n".join(steps))
        _theme(page, THEMES["light"])
    assert not problems, f"{lesson_id}, {len(problems)} problems:\n" + "\n".join(problems)


def _screenshots_of(element: Any, folder: Path, name: str) -> None:
    element.screenshot(path=str(folder / name), animations="disabled")
