"""The timeline: section (see course.timeline)."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._html import escape
from .._kept import kept_rendering, rendering_key
from ..kernel import evidence

if TYPE_CHECKING:
    from ..lesson import Lesson
from .draw import png_bytes
from .model import Timeline
from .store import load, recorded_cost, recorded_path, timeline_dir
from .summary import summarize


def _code(message: str) -> str:
    """The message as HTML, a `command` in it as code (the page showed the backticks)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(message))


# ---------------------------------------------------------------------------
# What a page shows.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TimelineSection:
    lesson: str
    timeline: Timeline | None
    png: bytes | None = field(repr=False)
    recorded_here: bool
    message: str

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.recorded_here else "#1f5fa8"
        parts = [
            f"<div style='border-left:4px solid {color};padding:4px 10px;margin:4px 0'>{_code(self.message)}</div>"
        ]
        if self.timeline is not None:
            parts.append(summarize(self.timeline).html())
        if self.png:
            data = base64.b64encode(self.png).decode("ascii")
            parts.append(f"<img alt='{escape(self.lesson)} timeline' src='data:image/png;base64,{data}'/>")
        return "<div class='course-timeline'>" + "".join(parts) + "</div>"

    def __str__(self) -> str:
        out = self.message
        if self.timeline is not None:
            out += "\n" + summarize(self.timeline).text()
        return out


# The section last drawn from each recording, with the file's (mtime, size) then: drawing a timeline
# costs most of a second, and Run All again in the same kernel shows the same file (issue 28).
_DRAWN: dict[Path, tuple[tuple[int, int], TimelineSection]] = {}


def timeline_section(lesson: Lesson, directory: Path | None = None) -> TimelineSection:
    """The recorded timeline of a lesson, as a page shows it (no GPU needed); drawn again only
    when its file changed."""
    path = recorded_path(lesson.id, directory)
    try:
        st = path.stat()
        stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    drawn = _DRAWN.get(path)
    if stamp is not None and drawn is not None and drawn[0] == stamp:
        return drawn[1]
    section = _section(lesson, directory)
    if stamp is not None and section.timeline is not None:
        _DRAWN[path] = (stamp, section)
    return section


def timeline_rendering_key(lesson: Lesson, directory: Path | None = None) -> str:
    """The key of a recorded timeline's kept rendering (``course._kept.rendering_key``): the
    drawing code (this package's and the picture's), the lesson's roles and the recording."""
    here = Path(__file__).parent
    code = [here / f"{name}.py" for name in ("draw", "summary", "model", "store", "decode")]
    code.append(here.parent / "picture.py")
    return rendering_key(
        "timeline",
        code,
        [repr((lesson.id, tuple(lesson.warpgroup_roles))), recorded_path(lesson.id, directory)],
    )


def _section(lesson: Lesson, directory: Path | None) -> TimelineSection:
    recorded = load(lesson.id, directory, lesson.warpgroup_roles)
    if recorded is None:
        said = (
            f"Not recorded yet: no timeline of {lesson.id} has been recorded on a real GPU for this page; "
            f"`python -m course timeline {lesson.id}` on a Hopper GPU records one."
        )
        if directory is None:  # the recordings the page picked: say whose, and which GPU has one
            shown = evidence.shown()
            others = [
                k
                for k in evidence.recorded_keys()
                if k != shown.key and recorded_path(lesson.id, timeline_dir(k)).exists()
            ]
            said = (
                f"Not recorded yet on the {shown.device}: no timeline of {lesson.id} has been recorded on it "
                f"for this page; `python -m course timeline {lesson.id}` on a Hopper GPU records one."
            )
            if others:
                said += (
                    f" The course keeps one recorded on another GPU ({', '.join(others)}); "
                    f"{evidence.DEVICE_ENV}={others[0]} in the environment shows that GPU's recordings."
                )
        return TimelineSection(lesson.id, None, None, False, said)
    # Drawn from the recording with today's drawing code (readable text, issue 22), not the PNG saved
    # beside it when it was recorded: the rendering kept with the evidence when one was drawn from
    # exactly this recording with this code (a test checks each), else drawn here.
    kept = kept_rendering(timeline_rendering_key(lesson, directory))
    png = kept.data if kept is not None else png_bytes(recorded)
    p = recorded.provenance
    # The learner is told how to record one like it, not which of the course's own tools ran.
    how = (
        f" by `{p.command}`"
        if p is not None and p.command.startswith(("python -m course", "page."))
        else f"; `python -m course timeline {lesson.id}` records one like it on a Hopper GPU"
    )
    said = (
        f"Recorded on {p.device} (compute capability {p.compute_capability}) on {p.recorded_at[:10]}{how}."
        if p is not None
        else "Recorded timeline."
    )
    cost = recorded_cost(lesson.id, directory)
    if cost is not None:
        said += " " + cost.sentence()
    return TimelineSection(lesson.id, recorded, png, False, said)


def section_of(timeline: Timeline, message: str) -> TimelineSection:
    return TimelineSection(timeline.lesson, timeline, png_bytes(timeline), True, message)
