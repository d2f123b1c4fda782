"""A coding exercise on the page: the prompt, an editor holding your piece, Check, a hint, start again.

``CodingPanel(lesson, exercise)`` is an ``ipywidgets.VBox``. The editor shows the piece between the markers of your
file (``course.coding.learner_file``: made from the starter on first use,
never overwritten), so an edit made in JupyterLab's editor shows here and the
other way round. Check saves the editor into your file, then checks it
every way this machine can (``course.coding_check.check_piece``: on the GPU
in a child process with the lesson's own check, on the CPU against the
course's model) and says which check ran. Everything works headless: set
``panel.editor.value`` and call ``panel.check()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from . import progress
from ._files import shown
from ._html import escape
from .coding import CodingExercise, LearnerFile, learner_file, learner_file_path
from .coding_check import CodingResult, check_piece
from .errors import CourseError
from .quiz._markup import inline, reference_html
from .sandbox import DEFAULT_TIMEOUT_S
from .workspace import WORKSPACE_ENV, jupyterlab_link

if TYPE_CHECKING:
    from .lesson import Lesson

__all__ = ["CodingPanel"]

CLASS = "course-coding"
STYLE = """<style>
.course-coding textarea { font-family: var(--jp-code-font-family, monospace);
  font-size: var(--jp-code-font-size, 13px); line-height: 1.4; white-space: pre; }
</style>"""


class CodingPanel(widgets.VBox):
    def __init__(
        self,
        lesson: Lesson,
        exercise: CodingExercise,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        learner_id: str | None = None,
        restore: bool = True,
    ):
        self.lesson = lesson
        self.exercise = exercise
        self.timeout_s = timeout_s
        self.learner_id = learner_id
        self.attempts = 0
        self.last: CodingResult | None = None
        self.hints_shown = 0
        self._problem: CourseError | None = None
        unsaved = False  # the workspace cannot hold your file (read-only, full): said below
        try:
            self.file: LearnerFile = learner_file(lesson, exercise)
        except CourseError as e:
            self.file = LearnerFile(lesson, exercise, learner_file_path(lesson, exercise))
            self._problem, unsaved = e, True
        saved = _saved(lesson, exercise, learner_id) if restore else None
        piece = self._read_piece() if self._problem is None else exercise.starter
        reference = exercise.reference(lesson.kernel_path.read_text("utf-8"))
        rows = max(4, min(14, max(piece.count("\n"), reference.count("\n")) + 3))
        self.editor = widgets.Textarea(
            value=piece, rows=rows, layout=widgets.Layout(width="auto"), continuous_update=False
        )
        self.check_button = widgets.Button(description="Check", button_style="primary", icon="play")
        self.hint_button = widgets.Button(description="Hint", disabled=not exercise.hints)
        self.reset_button = widgets.Button(
            description="Start again", tooltip="Back to the starter; your file is kept as a backup"
        )
        self.check_button.on_click(lambda _b: self.check())
        self.hint_button.on_click(lambda _b: self.hint())
        self.reset_button.on_click(lambda _b: self.reset())
        self.status = widgets.HTML()
        if self._problem is not None:
            then = (
                "your code cannot be saved until the workspace can be written."
                if unsaved
                else "Check saves it into a fresh file and keeps yours as a backup."
            )
            self.status.value = f"<p style='color:#cf222e'>{escape(str(self._problem))}</p><p>The editor shows the starter; {then}</p>"
        self.hints = widgets.HTML()
        self.result = widgets.HTML()
        cite = (
            f"<p style='color:#57606a'>Source: {reference_html(exercise.cite)}</p>" if exercise.cite else ""
        )
        head = widgets.HTML(
            f"{STYLE}<h4>Write it: {inline(exercise.title)}</h4><p>{inline(exercise.prompt)}</p>{cite}"
            f"<p>Your code lives in {self._where()} between two marker lines; only what is between them is checked.</p>"
        )
        if saved is not None:
            # The piece itself is the file's (above); progress keeps the attempts and the last verdict.
            self.attempts = saved["attempts"]
            mark = "✓" if saved["passed"] else "✗"
            self.result.value = (
                f"<p style='color:#57606a'>Restored from your progress: {mark} {escape(saved['outcome'])} "
                f"(checked {escape(saved['check'])}) after {self.attempts} attempt(s), saved at "
                f"{escape(saved['saved_at'])}: {escape(saved['message'])}</p>"
            )
        buttons = widgets.HBox([self.check_button, self.hint_button, self.reset_button])
        super().__init__(children=[head, self.editor, buttons, self.status, self.hints, self.result])
        self.add_class(CLASS)

    def __repr__(self) -> str:
        return f"CodingPanel(lesson={self.lesson.id!r}, exercise={self.exercise.id!r})"

    def _where(self) -> str:
        link = jupyterlab_link(self.file.path)
        shown = f"<code>{escape(str(self.file.path))}</code>"
        return f"<a href='{escape(link)}' target='_blank'>{shown}</a>" if link else shown

    def _read_piece(self) -> str:
        try:
            return self.file.piece()
        except CourseError as e:
            # The markers were removed by hand: say so, and offer the starter (the file is untouched
            # until Check, which keeps it as a backup first).
            self._problem = e
            return self.exercise.starter

    def check(self) -> CodingResult | None:
        """Save the editor into your file, then check it; the result is shown and returned."""
        self.check_button.disabled = True
        self.status.value = "<p>Saving and checking ...</p>"
        try:
            backup = self.file.save(self.editor.value)
            saved = f"Saved to {self._where()}."
            if backup is not None:
                saved += f" Your file had changes outside the markers; it was kept as <code>{escape(str(backup))}</code>."
            self.status.value = f"<p>{saved} Checking (a GPU run compiles first: seconds) ...</p>"
            result = check_piece(self.lesson, self.exercise, self.editor.value, timeout_s=self.timeout_s)
        except CourseError as e:
            self.status.value = f"<p style='color:#cf222e'>Not checked: {escape(str(e))}</p>"
            return None
        except OSError as e:  # the check's own copy could not be written in the workspace
            where = f" ({escape(shown(e.filename))})" if e.filename else ""
            self.status.value = (
                f"<p style='color:#cf222e'>Not checked: cannot write in your workspace{where}: "
                f"{escape(e.strerror or str(e))}. Set {WORKSPACE_ENV} to a folder you can write to.</p>"
            )
            return None
        finally:
            self.check_button.disabled = False
        self.attempts += 1
        self.last = result
        note = ""
        try:
            progress.record(
                self.lesson.id,
                "coding",
                self.exercise.id,
                {**result.state(), "attempts": self.attempts},
                learner=self.learner_id,
            )
        except CourseError as e:  # a workspace that cannot be written never blocks a check
            note = f" (Not saved to your progress: {escape(e.message)})"
        self.status.value = f"<p>{saved} Attempt {self.attempts}.{note}</p>"
        self.result.value = result._repr_html_()
        return result

    def hint(self) -> None:
        if self.hints_shown < len(self.exercise.hints):
            self.hints_shown += 1
        shown = self.exercise.hints[: self.hints_shown]
        self.hints.value = "".join(f"<p>Hint {n}: {inline(h)}</p>" for n, h in enumerate(shown, start=1))
        self.hint_button.disabled = self.hints_shown >= len(self.exercise.hints)

    def reset(self) -> None:
        try:
            self.file = learner_file(self.lesson, self.exercise, reset=True)
            self.editor.value = self.file.piece()
        except CourseError as e:
            self.status.value = f"<p style='color:#cf222e'>Not started again: {escape(str(e))}</p>"
            return
        kept = (
            f" The old file is kept as <code>{escape(str(self.file.backup))}</code>."
            if self.file.backup
            else ""
        )
        self.status.value = f"<p>Started again from the starter.{kept}</p>"
        self.result.value = ""


def _saved(lesson: Lesson, exercise: CodingExercise, learner_id: str | None) -> dict[str, Any] | None:
    """The last check saved in progress, if it has the fields a panel shows; else None."""
    try:
        state = progress.restore(lesson.id, "coding", exercise.id, learner=learner_id)
    except CourseError:
        return None
    if not isinstance(state, dict):
        return None
    fields = {"outcome": str, "check": str, "message": str, "saved_at": str, "passed": bool, "attempts": int}
    if not all(isinstance(state.get(k), t) for k, t in fields.items()):
        return None
    return state
