"""A coding exercise's answer stays out of the page until the learner passes it or asks to see it.

The answer is the exercise's lines of the lesson's kernel (``first`` ..
``last`` in ``content/coding/<lesson>.toml``, ``course.exercises.coding``). Where a
listing or a diff on the page holds them, it is shown with those lines
folded into one placeholder row (``course.view.listing.Hidden``), and beside it a
button that shows them. The full text is sent to the page only then: before,
it is not in the page's HTML at all. Whether the learner has passed comes
from their progress (``course.exercises.progress``, kind ``coding``): a page run after
a pass shows everything, and a pass on this page shows the lines at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._html import escape
from ..errors import CourseError
from ..view.listing import Hidden
from . import progress
from .coding import CodingExercise, load_coding

if TYPE_CHECKING:
    from ..lesson import Lesson

__all__ = ["Answer", "RevealBox", "answers", "passed"]


@dataclass(frozen=True)
class Answer:
    """One exercise's lines in the lesson's kernel (file line numbers, inclusive)."""

    exercise: CodingExercise
    first: int
    last: int

    def hidden(self) -> Hidden:
        return Hidden(self.first, self.last, f"the lines you write in the exercise “{self.exercise.title}”")


def answers(lesson: Lesson) -> tuple[Answer, ...]:
    """Every coding exercise's answer lines in ``lesson``'s kernel."""
    kernel = lesson.kernel_path.read_text("utf-8")
    out = []
    for exercise in load_coding(lesson):
        start, end, _ = exercise.region(kernel)
        out.append(Answer(exercise, start + 1, end + 1))
    return tuple(out)


def passed(lesson: Lesson, exercise: CodingExercise, learner: str | None = None) -> bool:
    """The learner's progress holds a passing check of ``exercise`` (an unreadable progress: no)."""
    try:
        state = progress.restore(lesson.id, "coding", exercise.id, learner=learner)
    except CourseError:
        return False
    return isinstance(state, dict) and state.get("passed") is True


def still_hidden(lesson: Lesson, learner: str | None = None) -> tuple[Answer, ...]:
    """The answers the learner has not passed yet."""
    return tuple(a for a in answers(lesson) if not passed(lesson, a.exercise, learner))


class RevealBox:
    """A listing or diff with answers folded, and a button that shows them; ``reveal()`` does the same.

    ``render(hidden)`` makes the HTML with the given ranges folded; it is
    called with ``()`` only when the learner asks or has passed.
    """

    def __init__(self, render: Callable[[Sequence[Hidden]], str], folded: Sequence[Answer]):
        # heavy: ipywidgets, only on a page
        import ipywidgets as w

        self._render = render
        self.folded = tuple(folded)
        self.html = w.HTML(
            self._page(render([a.hidden() for a in self.folded])),
            layout=w.Layout(width="auto", align_self="stretch"),
        )
        lines = sum(a.last - a.first + 1 for a in self.folded)
        titles = ", ".join(f"“{a.exercise.title}”" for a in self.folded)
        self.button = w.Button(
            description=f"Show the {lines} hidden line{'s' if lines != 1 else ''}",
            tooltip=f"The answer to the exercise {titles}: try it first",
            icon="eye",
            # The default 148 px cut the label (issue 38); in the row beside the note it must not shrink
            # either: at 1024 px the note took the room and the label read "Show the ...".
            layout=w.Layout(width="auto", flex="0 0 auto"),
        )
        self.note = w.HTML(
            "<p style='color:var(--jp-content-font-color2);margin:2px 0'>The lines you write in the "
            f"exercise {escape(titles)} are folded until you pass it or show them.</p>"
        )
        self.button.on_click(lambda _b: self.reveal())
        self.on_reveal: list[Callable[[], None]] = []  # called once, when the lines are shown
        # A LiveBox keeps its keys (course._live): without it Space and Enter on the button went to
        # JupyterLab's command mode (Space scrolled the notebook; the lines stayed folded), and
        # `d d` after a click on it would delete the cell.
        from .._live import LiveBox

        self.widget = LiveBox([self.html, w.HBox([self.button, self.note])])
        self.widget.add_class("course-reveal")
        self.revealed = False

    def reveal(self) -> None:
        if not self.revealed:
            self.revealed = True
            self.html.value = self._page(self._render(()))
            self.button.layout.display = "none"
            self.note.value = ""
            for then in self.on_reveal:
                then()

    @staticmethod
    def _page(html: str) -> str:
        # An HTML widget sizes its content box by the content; the listing must take the output's
        # width instead (its long lines scroll inside it), as it does outside a widget.
        # And a widget's HTML takes ipywidgets' 28 px line height: the text keeps the page's own.
        return (
            "<style>.course-reveal .widget-html-content{flex:1 1 auto;min-width:0;width:100%;"
            "line-height:var(--jp-content-line-height,1.6)}</style>" + html
        )

    def refresh(self, lesson: Lesson, learner: str | None = None) -> None:
        """Reveal when every folded answer is now passed in the learner's progress."""
        if all(passed(lesson, a.exercise, learner) for a in self.folded):
            self.reveal()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"<listing with {len(self.folded)} exercise answer(s) folded>"
