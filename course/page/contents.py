"""The way around the course: the start page, and at the top and bottom of every page its links and goals.

Everything here is made from the lesson registry (``course.lessons``:
each ``Lesson`` declares its title, summary, goals, time and the lessons to
read first), so a new lesson gets its line on the start page and its links
by adding its files and running ``python -m course contents --write``.
The cells it writes are Markdown, so they show before anything runs:

- ``notebooks/00_start.ipynb``: what each day teaches, what to know first,
  about how long each takes, and why there is no Day 77; its one code cell
  says which pages this machine can run (``contents()``);
- in every lesson page, a cell after the title (cell id ``course-nav-top``:
  previous and next page, the contents, the goals, the time, what to read
  first, and the page's outline: its ``##`` sections in order, read from the
  page itself, so a learner sees where they are) and a last cell
  (``course-nav-bottom``: the next page).

``tests/page/test_contents.py`` fails when a notebook's cells are not what the
registry makes, naming the command that rewrites them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import _paths
from .._atomic import atomic_write_text
from .._html import escape
from ..errors import CourseError
from ..kernel import evidence, gate
from ..lesson import Lesson
from ..lessons import LESSONS

__all__ = ["START", "bottom_cell", "contents", "headings", "outline", "start_page", "sync", "top_cell"]

START = "00_start.ipynb"
TOP_ID, BOTTOM_ID = "course-nav-top", "course-nav-bottom"
_MISSING_DAYS_NOTE = (
    "**Where is Day 77?** There is no Day 77 page. The course was written from material for Days 76 "
    "and 78, and no Day 77 lesson was part of it; nothing is skipped: Day 78 does not build on a Day 77, "
    "and Day 79 brings Day 76's TMA copy and Day 78's `wgmma` together."
)
_PREREQUISITES = (
    "**What to know first.** CUDA C++ at the level of a first course: threads, blocks and warps, "
    "global and shared memory, `__syncthreads()`, launching a kernel; a matrix product written as three "
    "loops; reading Python. No GPU is needed to read, answer the quizzes and write the exercises: "
    "without a Hopper GPU each page compile-checks its kernel, checks your code against a model on the "
    "CPU, and shows what was recorded on a real GPU: an H100, the GPU learners rent, unless the course "
    "keeps recordings of your own GPU's model (it keeps an H200's too), and each page says which."
)


def _ordered() -> list[Lesson]:
    return sorted(LESSONS.values(), key=lambda lesson: (lesson.day, lesson.id))


def _check(lessons: list[Lesson]) -> None:
    for lesson in lessons:
        for other in lesson.requires:
            if other not in LESSONS:
                raise CourseError(
                    f"lesson {lesson.id!r} requires {other!r}, which is not a lesson (the lessons: "
                    f"{', '.join(LESSONS)})"
                )
        if not lesson.summary or not lesson.goals or lesson.minutes <= 0:
            raise CourseError(
                f"lesson {lesson.id!r} must declare summary, goals and minutes (its Lesson in {lesson.package or 'course.lessons'})"
            )


def _link(lesson: Lesson) -> str:
    return f"[Day {lesson.day}: {lesson.title}]({lesson.notebook})"


def _days(ids: tuple[str, ...]) -> str:
    found = [LESSONS[i] for i in ids]
    return ", ".join(f"[Day {lesson.day}]({lesson.notebook})" for lesson in found)


def headings(cells: Sequence[dict[str, Any]]) -> list[str]:
    """The page's sections: the text of every ``## `` heading of its Markdown cells, in order
    (outside code fences; the cells this module writes excluded)."""
    found: list[str] = []
    for cell in cells:
        if cell.get("cell_type") != "markdown" or cell.get("id") in (TOP_ID, BOTTOM_ID):
            continue
        fenced = False
        for line in _source(cell).splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and line.startswith("## "):
                found.append(line[3:].strip())
    return found


# Where to jump from: links to "#Heading" would not do, as JupyterLab looks the id up in the
# whole window, where every open page has its own "Quiz" (the first open page's would scroll).
OUTLINE_JUMP = "*(View > Table of Contents jumps to each.)*"


def outline(sections: Sequence[str]) -> str:
    """One line: the page's sections in order, and where to jump to one."""
    return f"**On this page:** {' · '.join(sections)}. {OUTLINE_JUMP}"


def top_cell(lesson: Lesson, sections: Sequence[str] = ()) -> str:
    """The Markdown after a page's title: previous, contents, next; goals; time; what to read first;
    the page's outline (``sections``: its headings)."""
    lessons = _ordered()
    _check(lessons)
    n = lessons.index(lesson)
    links = [f"[← Day {lessons[n - 1].day}]({lessons[n - 1].notebook})"] if n else []
    links.append(f"[Contents]({START})")
    if n + 1 < len(lessons):
        links.append(f"[Day {lessons[n + 1].day} →]({lessons[n + 1].notebook})")
    first = f" Read first: {_days(lesson.requires)}." if lesson.requires else ""
    goals = "\n".join(f"- {goal}" for goal in lesson.goals)
    return (
        f"{' · '.join(links)}\n\n**After this page you can:**\n\n{goals}\n\n"
        f"*About {lesson.minutes} minutes.*{first}" + (f"\n\n{outline(sections)}" if sections else "")
    )


def bottom_cell(lesson: Lesson) -> str:
    """The page's last cell: where to go next."""
    lessons = _ordered()
    n = lessons.index(lesson)
    after = f"**Next:** {_link(lessons[n + 1])}. " if n + 1 < len(lessons) else "**This is the last page.** "
    return f"---\n\n{after}Back to the [contents]({START})."


def start_page() -> str:
    """The start page's Markdown: every lesson in order, with what it teaches and its time."""
    lessons = _ordered()
    _check(lessons)
    rows = "\n".join(
        f"| {lesson.day} | {_link(lesson)} | {lesson.summary} | {_days(lesson.requires) or '—'} | "
        f"about {lesson.minutes} min |"
        for lesson in lessons
    )
    total = sum(lesson.minutes for lesson in lessons)
    return (
        "# Hopper at the metal: TMA and wgmma, hands on\n\n"
        "A course on programming NVIDIA Hopper GPUs below the libraries: bulk tensor copies through the "
        "Tensor Memory Accelerator (TMA) and `wgmma.mma_async` warpgroup matrix instructions. Each page "
        "shows its kernel's regions, runs and checks the kernel where a Hopper GPU is present, asks you to "
        "write a piece of it, and ends with a quiz.\n\n"
        f"{_PREREQUISITES}\n\n"
        "## The days\n\n"
        "| day | page | what it teaches | read first | time |\n|---|---|---|---|---|\n"
        f"{rows}\n\n"
        f"About {total // 60} hours {total % 60} minutes in all. Days 79 to 84 are one ladder, each step "
        "changing one idea of the step before and showing the diff; Day 85 puts the steps side by side.\n\n"
        f"{_MISSING_DAYS_NOTE}\n\n"
        "## This machine\n\nRun the cell below to see which pages can run their kernel here."
    )


class _Table:
    def __init__(self, rows: list[tuple[Lesson, str]], why: str = ""):
        self.rows = rows
        self.why = why

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td style='text-align:right'>{lesson.day}</td><td style='text-align:left'>"
            f"{escape(lesson.title)}</td><td style='text-align:left'>{escape(here)}</td></tr>"
            for lesson, here in self.rows
        )
        why = f"<p>{escape(self.why)}</p>" if self.why else ""
        return (
            f"{why}<table style='border-collapse:collapse;width:100%;table-layout:auto'>"
            "<tr><th>day</th><th style='text-align:left'>page</th>"
            f"<th style='text-align:left'>on this machine</th></tr>{body}</table>"
        )

    def __repr__(self) -> str:
        said = [self.why] if self.why else []
        return "\n".join(said + [f"Day {lesson.day}: {here}" for lesson, here in self.rows])


def contents() -> _Table:
    """Which lessons run their kernel on this machine, and what each page does where it cannot."""

    verdicts = [(lesson, gate.verdict(lesson)) for lesson in _ordered()]
    reasons = {v.reason for _, v in verdicts if not v.runs}
    gpu = evidence.shown().short
    rows = []
    for lesson, v in verdicts:
        if v.runs:
            here = "runs its kernel here."
        elif len(reasons) == 1:
            here = f"reads, compile-checks its kernel and shows the {gpu} recording."
        else:
            here = f"reads, compile-checks and shows the {gpu} recording here ({v.reason.rstrip('.')})."
        rows.append((lesson, here))
    # One reason for every page (no GPU at all, no CuPy): said once, above the table, with what to do.
    said = next((v.message() for _, v in verdicts if not v.runs), "") if len(reasons) == 1 else ""
    return _Table(rows, said)


# ---------------------------------------------------------------------------
# Writing the cells into the notebooks.


def _markdown(cell_id: str, text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": text}


def _code(cell_id: str, text: str) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cell_id,
        "metadata": {},
        "outputs": [],
        "source": text,
    }


def _start_notebook(kernelspec: dict[str, Any]) -> dict[str, Any]:
    return {
        "cells": [
            _markdown("course-start", start_page()),
            _code("course-start-machine", "from course.page.contents import contents\n\ncontents()"),
        ],
        "metadata": {"kernelspec": kernelspec, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _lines(text: str) -> list[str]:
    # As Jupyter writes a cell's source: a list of lines, each but the last ending in a newline.
    return text.splitlines(keepends=True)


def _place(cells: list[dict[str, Any]], cell: dict[str, Any], index: int) -> bool:
    """Put ``cell`` at ``index`` (-1: last), replacing the cell with its id and any copy of its text
    under another id (a page written by hand with the block pasted in); True if anything changed."""
    found = [
        i
        for i, c in enumerate(cells)
        if c.get("id") == cell["id"] or (c.get("cell_type") == "markdown" and _source(c) == _source(cell))
    ]
    where = len(cells) - 1 if index < 0 else index
    if len(found) == 1 and found[0] == where and _source(cells[where]) == _source(cell):
        return False
    for i in reversed(found):
        del cells[i]
    cell = {**cell, "source": _lines(cell["source"])}
    if index < 0:
        cells.append(cell)
    else:
        cells.insert(index, cell)
    return True


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise CourseError(f"cannot read the notebook ({e})", path=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise CourseError("not a notebook (no list of cells)", path=path)
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    # The notebooks' own format (indent 1, UTF-8 as is), the keys in the order they were read:
    # only the cells this module owns change.
    atomic_write_text(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def sync(write: bool = False, folder: Path | None = None) -> list[Path]:
    """The notebooks whose contents cells differ from what the registry makes; rewritten with ``write``."""
    folder = folder or _paths.notebooks_dir()
    stale: list[Path] = []
    kernelspec: dict[str, Any] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    for lesson in _ordered():
        path = folder / lesson.notebook
        nb = _read(path)
        kernelspec = dict(nb.get("metadata", {}).get("kernelspec", kernelspec))
        changed = _place(nb["cells"], _markdown(TOP_ID, top_cell(lesson, headings(nb["cells"]))), 1)
        changed = _place(nb["cells"], _markdown(BOTTOM_ID, bottom_cell(lesson)), -1) or changed
        if changed:
            stale.append(path)
            if write:
                _write(path, nb)
    start = folder / START
    want = _start_notebook(kernelspec)
    have = _read(start) if start.exists() else None
    if have is None or [(c["cell_type"], _source(c)) for c in have["cells"]] != [
        (c["cell_type"], _source(c)) for c in want["cells"]
    ]:
        stale.append(start)
        if write:
            for cell in want["cells"]:
                cell["source"] = _lines(cell["source"])
            _write(start, want)
    return stale
