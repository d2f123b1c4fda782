"""A coding exercise on the page: the prompt, an editor holding your piece, Check, a hint, start again.

``CodingPanel(lesson, exercise)`` is an ``ipywidgets.VBox`` (``course._live.LiveBox``). The
editor (``course.exercises.code_editor.CodeEditor``: CodeMirror, C++ highlighting, Tab
indents) shows the piece between the markers of your file
(``course.exercises.coding.learner_file``: made from the starter on first use, never
overwritten), numbered as the lines of that file, so an edit made in
JupyterLab's editor shows here and the other way round, and a compiler's line
numbers are the editor's. Check saves the editor into your file, then checks
it every way this machine can (``course.exercises.coding_check.check_piece``: on the GPU
in a child process with the lesson's own check, on the CPU against the
lesson's model) and says in words which check ran and what it found
(``result_html``). Everything works headless: set ``panel.editor.value`` and
call ``panel.check()``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from .._files import shown
from .._html import escape, pre
from .._live import LiveBox
from ..errors import CourseError
from ..quiz._markup import inline, reference_html
from ..tryout.outcome import OUTCOME_WORDS
from ..tryout.sandbox import DEFAULT_TIMEOUT_S
from ..tryout.workspace import WORKSPACE_ENV, where_html
from . import progress
from .code_editor import CodeEditor
from .coding import CodingExercise, LearnerFile, learner_file, learner_file_path
from .coding_check import CodingResult, check_piece

if TYPE_CHECKING:
    from pathlib import Path

    from ..lesson import Lesson

__all__ = ["CHECK_WORDS", "CodingPanel", "result_html"]

CLASS = "course-coding"
STYLE = """<style>
.course-coding .widget-html-content { line-height: 1.45; }
.course-coding .widget-html-content a { color: var(--jp-content-link-color, #1976d2); text-decoration: underline; }
.course-coding .widget-html-content p { margin: 0.3em 0; }
.course-coding .widget-html-content pre { margin: 0.3em 0; line-height: var(--jp-code-line-height, 1.3); }
</style>"""

# What each check means, in the learner's words (the outcomes': course.tryout.outcome.OUTCOME_WORDS).
CHECK_WORDS = {
    "gpu": "checked on the GPU with the lesson's own check",
    "cpu": "checked on the CPU against the lesson's model",
    "compile": "compiled only: no GPU here runs this lesson",
    "none": "not checked: no GPU here runs this lesson",
}
_COLORS = {"passed": "#1a7f37", "not-checked": "#1f5fa8", "not-run": "#1f5fa8"}
_MARKS = {"passed": "✓", "not-checked": "?", "not-run": "?"}
# The CPU harness's compiler, after course.exercises.coding_check mapped its lines: "your code, line N: ...".
_YOUR_LINE = re.compile(r"^your code, line (\d+): (.*)$")


def _words(table: dict[str, str], key: str) -> str:
    return table.get(key, key)


def _compile_errors(result: CodingResult, path: Path, first_line: int) -> str:
    """The compiler's errors once, in the lines of the learner's file (as the editor numbers them)."""
    problem = result.gpu.compile if result.gpu is not None else None
    if problem is not None:
        error = re.compile(rf"{re.escape(str(problem.path))}:\d+: (?:catastrophic )?error")
        ours = [ln for ln in problem.log.splitlines() if error.match(ln)]
        body = "\n".join(([problem.excerpt, ""] if problem.excerpt else []) + (ours or [problem.message]))
        return pre(body)
    cpu = result.cpu
    if cpu is None:
        return ""
    lines = []
    for ln in cpu.detail.splitlines():
        m = _YOUR_LINE.match(ln)
        if m:
            lines.append(f"{path}:{first_line + int(m.group(1)) - 1}: {m.group(2)}")
    return pre(chr(10).join(lines) or cpu.headline)


def result_html(result: CodingResult, path: Path, first_line: int) -> str:
    """What a check found, in words: the verdict, which check decided, and what to look at."""
    color = _COLORS.get(result.outcome, "#cf222e")
    mark = _MARKS.get(result.outcome, "✗")
    parts = [
        f"<div class='course-coding-result' style='border-left:4px solid {color};padding:2px 10px;margin:4px 0'>",
        f"<p><b style='color:{color}'>{mark} {escape(_words(OUTCOME_WORDS, result.outcome))}</b> "
        f"<span style='color:var(--jp-ui-font-color2,#57606a)'>({escape(_words(CHECK_WORDS, result.check))})</span></p>",
    ]
    if result.outcome == "compile-error":
        parts.append("<p>Nothing ran. The compiler's errors, in the lines of your file:</p>")
        parts.append(_compile_errors(result, path, first_line))
    else:
        parts.append(f"<p>{escape(result.headline.removeprefix('CPU check: '))}</p>")
        gpu = result.gpu
        if gpu is not None and result.check == "gpu":
            if gpu.meaning:
                parts.append(f"<p>{escape(gpu.meaning)}</p>")
            if gpu.output:
                parts.append(pre(chr(10).join(gpu.output)))
            if gpu.detail and gpu.outcome != "passed":
                parts.append(f"<details><summary>details</summary>{pre(gpu.detail)}</details>")
        cpu = result.cpu
        if cpu is not None and cpu.detail and result.check == "cpu":
            parts.append(pre(cpu.detail))  # the cases; the headline said the rest
        elif cpu is not None and cpu.ran and result.check == "gpu":
            parts.append(f"<p>On the CPU, against the lesson's model: {escape(cpu.headline)}</p>")
    parts.append("</div>")
    return "".join(parts)


def _first_line(text: str, exercise: CodingExercise) -> int | None:
    """The line number (1-based) of the piece's first line in the learner's file: after the marker."""
    begin = exercise.markers()[0]
    for n, ln in enumerate(text.splitlines(), start=1):
        if ln.strip() == begin:
            return n + 1
    return None


class CodingPanel(LiveBox):
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
        self.passed = bool(saved and saved["passed"])
        piece = self._read_piece() if self._problem is None else exercise.starter
        reference = exercise.reference(lesson.kernel_path.read_text("utf-8"))
        rows = max(4, min(14, max(piece.count("\n"), reference.count("\n")) + 2))
        self.editor = CodeEditor(
            value=piece, rows=rows, first_line=self._piece_line(), layout=widgets.Layout(width="auto")
        )
        self.check_button = widgets.Button(description="Check", button_style="primary", icon="play")
        self.hint_button = widgets.Button(description="Hint", disabled=not exercise.hints)
        self.reset_button = widgets.Button(
            description="Start again", tooltip="Back to the starter; your file is kept as a backup"
        )
        self.check_button.on_click(lambda _b: self.check())
        self.editor.on_run(self.check)  # Shift-Enter in the editor
        self.editor.on_save(self.save)  # Ctrl/Cmd-S in the editor
        self.hint_button.on_click(lambda _b: self.hint())
        self.reset_button.on_click(lambda _b: self.ask_reset())
        # "Start again" over a passing (or edited) answer asks first.
        self.confirm_text = widgets.HTML()
        self.confirm_button = widgets.Button(description="Yes, start again", button_style="warning")
        self.cancel_button = widgets.Button(description="Keep my code")
        self.confirm_button.on_click(lambda _b: self.reset())
        self.cancel_button.on_click(lambda _b: self._hide_confirm())
        self.confirm = widgets.HBox(
            [self.confirm_text, self.confirm_button, self.cancel_button],
            layout=widgets.Layout(display="none"),
        )
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
            f"<p style='color:var(--jp-ui-font-color2,#57606a)'>Source: {reference_html(exercise.cite)}</p>"
            if exercise.cite
            else ""
        )
        head = widgets.HTML(
            f"{STYLE}<h4>Write it: {inline(exercise.title)}</h4><p>{inline(exercise.prompt)}</p>{cite}"
            f"<p>Your code lives in {where_html(self.file.path)} between two marker lines; only what is "
            "between them is checked. The editor numbers its lines as that file does.</p>"
        )
        if saved is not None:
            # The piece itself is the file's (above); progress keeps the attempts and the last verdict.
            self.attempts = saved["attempts"]
            mark = "✓" if saved["passed"] else "✗"
            self.result.value = (
                f"<p style='color:var(--jp-ui-font-color2,#57606a)'>Restored from your progress: {mark} "
                f"{escape(_words(OUTCOME_WORDS, saved['outcome']))} "
                f"({escape(_words(CHECK_WORDS, saved['check']))}) after {self.attempts} check{'s' if self.attempts != 1 else ''}, saved at "
                f"{escape(saved['saved_at'])}: {escape(saved['message'].removeprefix('CPU check: '))}</p>"
            )
        buttons = widgets.HBox([self.check_button, self.hint_button, self.reset_button])
        super().__init__(
            children=[head, self.editor, buttons, self.confirm, self.status, self.hints, self.result]
        )
        self.add_class(CLASS)

    def __repr__(self) -> str:
        return f"CodingPanel(lesson={self.lesson.id!r}, exercise={self.exercise.id!r})"

    def _piece_line(self) -> int:
        """Where the piece starts in the learner's file (what the file will hold after a Check)."""
        try:
            found = _first_line(self.file.text(), self.exercise)
        except CourseError:
            found = None
        if found is None:
            start, _end, _indent = self.exercise.region(self.lesson.kernel_path.read_text("utf-8"))
            found = start + 2  # the marker line takes the region's first line; the piece follows it
        return found

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
        self.result.value = ""  # an old verdict must not stand beside a new check
        self._hide_confirm()
        try:
            backup = self.file.save(self.editor.value)
            saved = f"Saved to {where_html(self.file.path)}."
            if backup is not None:
                saved += f" Your file had changes outside the markers; it was kept as {where_html(backup)}."
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
        self.passed = result.passed
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
        checks = f"{self.attempts} check{'s' if self.attempts != 1 else ''} of your code so far"
        self.status.value = f"<p>{saved} Checked ({checks}).{note}</p>"
        self.editor.first_line = self._piece_line()
        self.result.value = result_html(result, self.file.path, self.editor.first_line)
        return result

    def save(self) -> bool:
        """Save the editor into your file without checking (Ctrl/Cmd-S in the editor); True when saved."""
        try:
            backup = self.file.save(self.editor.value)
        except (CourseError, OSError) as e:
            why = e.message if isinstance(e, CourseError) else (e.strerror or str(e))
            self.status.value = f"<p style='color:#cf222e'>Not saved: {escape(why)}</p>"
            return False
        saved = f"Saved to {where_html(self.file.path)} (Check, or Shift-Enter in the editor, checks it)."
        if backup is not None:
            saved += f" Your file had changes outside the markers; it was kept as {where_html(backup)}."
        self.status.value = f"<p>{saved}</p>"
        self.editor.first_line = self._piece_line()
        return True

    def hint(self) -> None:
        if self.hints_shown < len(self.exercise.hints):
            self.hints_shown += 1
        shown = self.exercise.hints[: self.hints_shown]
        self.hints.value = "".join(f"<p>Hint {n}: {inline(h)}</p>" for n, h in enumerate(shown, start=1))
        self.hint_button.disabled = self.hints_shown >= len(self.exercise.hints)

    def ask_reset(self) -> None:
        """The Start again button: straight back to the starter when nothing would be replaced,
        else a question first (a passing answer, or code of your own)."""
        if not self.passed and self.editor.value.strip() == self.exercise.starter.strip():
            self.reset()
            return
        what = "Your code passed." if self.passed else "This replaces your code with the starter."
        self.confirm_text.value = f"<p>{what} Start again? Your file is kept as a backup.</p>"
        self.confirm.layout.display = "flex"

    def _hide_confirm(self) -> None:
        self.confirm.layout.display = "none"

    def reset(self) -> None:
        self._hide_confirm()
        try:
            self.file = learner_file(self.lesson, self.exercise, reset=True)
            self.editor.value = self.file.piece()
        except CourseError as e:
            self.status.value = f"<p style='color:#cf222e'>Not started again: {escape(str(e))}</p>"
            return
        self.editor.first_line = self._piece_line()
        self.passed = False
        kept = f" The old file is kept as {where_html(self.file.backup)}." if self.file.backup else ""
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
