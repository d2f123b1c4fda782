"""The way around the course is made from the registry: start page, links and goals (issue 22, item 14)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from course.lessons import LESSONS
from course.page import contents
from course.page.contents import BOTTOM_ID, START, TOP_ID, bottom_cell, start_page, sync, top_cell

ROOT = Path(__file__).resolve().parents[2]
ORDER = sorted(LESSONS.values(), key=lambda lesson: lesson.day)


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text("utf-8"))["cells"]


def _source(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def test_the_notebooks_hold_what_the_registry_makes():
    stale = sync(write=False)
    assert not stale, (
        f"out of date: {[p.name for p in stale]}; run `python -m course contents --write` after changing a lesson"
    )


@pytest.mark.parametrize("lesson", ORDER, ids=lambda lesson: lesson.id)
def test_every_page_opens_with_its_goals_and_links_and_ends_with_the_next(lesson):
    cells = _cells(ROOT / "notebooks" / lesson.notebook)
    assert cells[0]["cell_type"] == "markdown" and _source(cells[0]).startswith(f"# Day {lesson.day}")
    assert cells[1]["id"] == TOP_ID and cells[-1]["id"] == BOTTOM_ID
    top, bottom = _source(cells[1]), _source(cells[-1])
    for goal in lesson.goals:
        assert f"- {goal}" in top
    n = ORDER.index(lesson)
    if n:
        assert f"[← Day {ORDER[n - 1].day}]({ORDER[n - 1].notebook})" in top
    if n + 1 < len(ORDER):
        assert f"[Day {ORDER[n + 1].day} →]({ORDER[n + 1].notebook})" in top
        assert f"({ORDER[n + 1].notebook})" in bottom
    else:
        assert "last page" in bottom
    # Every link points at a notebook that exists.
    for target in re.findall(r"\]\(([^)#]+\.ipynb)\)", top + bottom):
        assert (ROOT / "notebooks" / target).is_file(), target
    # The blocks stand once: a copy pasted by hand under another id shows the goals twice.
    sources = [_source(c) for c in cells]
    assert sources.count(top) == 1 and sources.count(bottom) == 1


def test_a_pasted_copy_of_the_top_block_is_stale_and_written_away(tmp_path):
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder)
    lesson = ORDER[-1]
    path = folder / lesson.notebook
    nb = json.loads(path.read_text("utf-8"))
    nb["cells"].insert(2, {**nb["cells"][1], "id": "pasted"})
    path.write_text(json.dumps(nb), "utf-8")
    assert sync(write=False, folder=folder) == [path]
    sync(write=True, folder=folder)
    assert [c["id"] for c in _cells(path)].count("pasted") == 0 and sync(write=False, folder=folder) == []


def test_the_start_page_lists_every_day_in_order_and_says_why_day_77_is_missing():
    text = start_page()
    days = [int(d) for d in re.findall(r"^\| (\d+) \|", text, re.M)]
    assert days == [lesson.day for lesson in ORDER]
    for lesson in ORDER:
        assert lesson.summary in text and f"about {lesson.minutes} min" in text
    assert "Day 77" in text and "no Day 77 page" in text
    assert "What to know first" in text


def test_a_new_lesson_gets_its_line_and_links_by_declaring_itself(tmp_path, monkeypatch):
    import dataclasses

    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder)
    last = ORDER[-1]
    day = last.day + 1  # a day after the last lesson there is
    new = dataclasses.replace(
        last, id=f"day{day}", day=day, title="A new day", notebook=f"day{day}_new.ipynb", summary="Something new.",
        goals=("do the new thing",), minutes=30, requires=(last.id,),
    )  # fmt: skip
    nb = json.loads((folder / last.notebook).read_text("utf-8"))
    nb["cells"] = [c for c in nb["cells"] if c.get("id") not in (TOP_ID, BOTTOM_ID)]
    nb["cells"][0]["source"] = f"# Day {day}: A new day\n"
    (folder / new.notebook).write_text(json.dumps(nb, indent=1), "utf-8")
    monkeypatch.setitem(LESSONS, new.id, new)
    stale = {p.name for p in sync(write=True, folder=folder)}
    assert stale == {last.notebook, new.notebook, START}  # the old last page gets a "next" link
    assert f"[Day {day} →](day{day}_new.ipynb)" in _source(_cells(folder / last.notebook)[1])
    assert f"| {day} | [Day {day}: A new day](day{day}_new.ipynb) | Something new." in _source(
        _cells(folder / START)[0]
    )
    assert sync(write=False, folder=folder) == []
    assert top_cell(new).startswith(f"[← Day {last.day}]") and "last page" in bottom_cell(new)


def test_a_lesson_that_declares_no_goals_is_refused(monkeypatch):
    import dataclasses

    from course.errors import CourseError

    bare = dataclasses.replace(ORDER[0], goals=())
    monkeypatch.setitem(LESSONS, bare.id, bare)
    with pytest.raises(CourseError, match="must declare summary, goals and minutes"):
        contents.start_page()


@pytest.mark.parametrize("lesson", ORDER, ids=lambda lesson: lesson.id)
def test_every_page_opens_with_an_outline_of_its_sections(lesson):
    """Issue 38: a learner's "where am I": the top block names every ## section of the page, in
    order, and says where to jump to one (JupyterLab's Table of Contents: a link to "#Quiz" would
    scroll the first open page's Quiz, tests/browser/test_page_length.py)."""
    from course.page.contents import OUTLINE_JUMP

    cells = _cells(ROOT / "notebooks" / lesson.notebook)
    top = _source(cells[1])
    wanted = [
        line[3:].strip()
        for c in cells[2:]
        if c["cell_type"] == "markdown"
        for line in _source(c).splitlines()
        if line.startswith("## ")
    ]
    line = next(x for x in top.splitlines() if x.startswith("**On this page:**"))
    assert line == f"**On this page:** {' · '.join(wanted)}. {OUTLINE_JUMP}"
    assert "](#" not in line


def test_a_heading_renamed_makes_the_outline_stale(tmp_path):
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder)
    path = folder / ORDER[0].notebook
    nb = json.loads(path.read_text("utf-8"))
    cell = next(c for c in nb["cells"][2:] if c["cell_type"] == "markdown" and "## " in _source(c))
    cell["source"] = _source(cell).replace("## ", "## Renamed ", 1)
    path.write_text(json.dumps(nb), "utf-8")
    assert sync(write=False, folder=folder) == [path]
    sync(write=True, folder=folder)
    assert "Renamed " in _source(_cells(path)[1]) and sync(write=False, folder=folder) == []
