"""The pictures a page draws from recordings alone, kept with the evidence (``course._kept.Rendering``).

The recorded climb (``page.climb()``) and the recorded timeline
(``page.timeline()``) are drawn from files that change only when a run is
recorded again, and a lesson's ``@rendered`` figures (``course._kept.rendered``)
from its own models alone, yet drawing them cost a cold page 0.2-1.4 s each on
an H200 (matplotlib's first import and its drawing; issue 28). Each is drawn once,
under the key of everything it is drawn from, and a page shows the kept PNG
while that key holds; a learner's own measurement or recording is still
drawn on the page. The climb and the timelines are kept for the recordings of every
GPU model in ``evidence/`` (each model's own, as its learners' pages show them).
``tools/keep_renderings.py`` writes them; a test draws each again and checks it is
the kept one, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import timeline as tl
from .._kept import RENDERED, png_and_words, renderings_dir
from ..bench.climb import ClimbRow, climb_figure, climb_rendering_key, family_of, recorded_climb
from ..bench.spec import Climb
from ..kernel import evidence
from ..lesson import Lesson
from ..lessons import LESSONS

Draw = Callable[[], tuple[bytes, str]]  # the PNG and the words its Picture says (its repr)


def _climb(upto: Lesson, rows: list[ClimbRow], family: Climb | None) -> Draw:
    return lambda: png_and_words(climb_figure(upto, rows, family))


def _timeline(timeline: tl.Timeline) -> Draw:
    return lambda: (tl.png_bytes(timeline), "")


def page_renderings() -> dict[str, Draw]:
    """Every picture the pages draw from recordings alone, by its rendering key: how to draw it;
    for the recordings of every GPU model a page may show (``course.kernel.evidence.shown``)."""
    out: dict[str, Draw] = {}
    for key in evidence.recorded_keys():
        with evidence.showing(key):
            out.update({k: _showing(key, draw) for k, draw in _renderings().items()})
    return out


def _showing(key: str, draw: Draw) -> Draw:
    """``draw``, reading the recordings of GPU model ``key``."""

    def drawn() -> tuple[bytes, str]:
        with evidence.showing(key):
            return draw()

    return drawn


def _renderings() -> dict[str, Draw]:
    """The pictures drawn from the recordings every reader reads now."""
    lessons = tuple(LESSONS.values())
    out: dict[str, Draw] = {}
    for lesson in lessons:
        # a page without a benchmark of its own shows the climb too (Day 85); each step its own
        # family's (GEMM's, attention's): a page showing another family's (Day 85 attention's) shows
        # its last step's, kept here for that step (``course.bench.climb.climb_upto``)
        rows = recorded_climb(lesson, lessons)
        if rows:
            out[climb_rendering_key(lesson, lessons)] = _climb(lesson, rows, family_of(lesson, lessons))
        if tl.instrumented(lesson):
            recorded = tl.load(lesson.id, None, lesson.warpgroup_roles)
            if recorded is not None:
                out[tl.timeline_rendering_key(lesson)] = _timeline(recorded)
        if lesson.has_module("figures"):
            lesson.module("figures")  # its @rendered figure functions join RENDERED
    for figure in RENDERED:
        out[figure.rendering_key()] = figure.drawing
    return out


def kept_files() -> set[str]:
    """The keys of the renderings kept now (a PNG and its words each)."""
    folder = renderings_dir()
    return {p.stem for p in folder.glob("*.png")} | {p.stem for p in folder.glob("*.txt")}
