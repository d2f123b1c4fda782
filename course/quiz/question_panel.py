"""One question of the quiz as ipywidgets: prompt, input, Check (practice mode) and feedback.

``QuizPanel`` (``widgets``) builds one ``QuestionPanel`` per question. The
input is the widget of the question's type; the options of a choice
question come in this learner's own order (``model.option_order``) with
option ids as values. Check scores with the same pure function the grader
uses (a code question: ``course.exercises.coding_check``, as the grader runs it) and
shows the verdict by setting an ``HTML`` widget's value; every check is
saved to the learner's progress and can be put back (``restore``).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from .._html import escape
from .._live import CHECK_CLASS, QUESTION_CLASS
from ..errors import CourseError
from ..exercises import progress as _progress
from ..exercises.coding import get_exercise, learner_file
from ..exercises.coding_check import check_piece
from ..lessons import get_lesson
from ._look import line_options, listing_html, not_saved, partly_why, points_text, verdict_html
from ._markup import inline, plain, reference_html
from .model import (
    Code,
    MultipleSelect,
    Numeric,
    Question,
    Response,
    ResponseError,
    ShortText,
    SingleChoice,
    WhichLine,
    option_order,
    readable_points,
)

__all__ = ["QuestionPanel"]


class QuestionPanel:
    """One question's widgets: prompt, input, Check (practice) and feedback."""

    def __init__(
        self,
        number: int,
        question: Question,
        *,
        practice: bool,
        quiz_id: str = "",
        learner_id: str | None = None,
        lesson_id: str | None = None,
        listing_note: str | None = None,
        on_check: Any = None,
        hidden: tuple[Any, ...] = (),
    ):
        self.question = question
        self.on_check = on_check  # called after every scored Check (the quiz's running total)
        self.attempts = 0
        self.practice = practice
        self.quiz_id = quiz_id
        self.learner_id = learner_id
        self.lesson_id = lesson_id  # progress is saved under it; None: not saved
        self.last_check: dict[str, Any] | None = None  # the last checked response and its fraction
        points = points_text(question.points)
        self.prompt = widgets.HTML(
            value=f"<p><b>{number}.</b> {inline(question.prompt)} <small>({points})</small></p>"
        )
        self.feedback = widgets.HTML(value="")
        self.checkboxes: dict[str, widgets.Checkbox] = {}
        self.text: widgets.Text | None = None  # the text box of numeric and text questions
        parts: list[widgets.Widget] = [self.prompt]
        self.input: widgets.Widget
        if isinstance(question, SingleChoice | MultipleSelect):
            # This learner's order; the values are option ids (see option_order).
            shown = option_order(question.options, quiz_id, question.id, learner_id)
        if isinstance(question, SingleChoice):
            # A radio label is plain text in ipywidgets: code spans lose their backticks.
            self.input = widgets.RadioButtons(
                options=[(plain(o.text), o.id) for o in shown], value=None, layout={"width": "auto"}
            )
        elif isinstance(question, MultipleSelect):
            self.checkboxes = {
                # width auto: the default 300px cuts a long option's text to "..." (seen in Chromium).
                # The description is our own escaped markup (code spans only); JupyterLab
                # sanitizes it again before showing it.
                o.id: widgets.Checkbox(
                    value=False,
                    description=inline(o.text),
                    description_allow_html=True,
                    indent=False,
                    layout={"width": "auto"},
                )
                for o in shown
            }
            self.input = widgets.VBox(list(self.checkboxes.values()))
        elif isinstance(question, Numeric | ShortText):
            # One rule for every numeric box (model.parse_number): decimal, 0x.., 0b.., 0o...
            placeholder = (
                "a number (12, 2.5e3, 0x1f, 0b101)" if isinstance(question, Numeric) else "your answer"
            )
            self.text = widgets.Text(value="", placeholder=placeholder)
            self.input = self.text
            if isinstance(question, Numeric) and question.unit:
                self.input = widgets.HBox([self.text, widgets.Label(value=question.unit)])
        elif isinstance(question, WhichLine):
            # The listing itself is shown once per quiz, above the first question that asks
            # about it (QuizPanel); standalone, with this question.
            if listing_note is None:
                parts.append(widgets.HTML(value=listing_html(question.listing, "The listing:", hidden)))
            else:
                parts.append(widgets.HTML(value=f"<p><small>{escape(listing_note)}</small></p>"))
            self.input = widgets.Dropdown(
                options=line_options(question, hidden), value=None, description="Line:"
            )
        elif isinstance(question, Code):
            # The learner's piece, from their file of the coding exercise (the page's coding panel
            # edits the same file); what is in this box when they submit is what is graded.
            self.text = widgets.Textarea(value=_code_piece(question), rows=6, layout={"width": "100%"})
            self.input = self.text
        else:
            raise CourseError(f"no widget for question type {question.type!r}")
        parts.append(self.input)
        self.check_button: widgets.Button | None = None
        if practice:
            # primary: the same blue as every other Check on the page (coding, annotation)
            self.check_button = widgets.Button(
                description="Check", tooltip="Check this answer", button_style="primary"
            )
            self.check_button.on_click(lambda _button: self.check())
            self.check_button.add_class(CHECK_CLASS)  # Enter in the text box presses it (course._live)
            parts.append(self.check_button)
        parts.append(self.feedback)
        self.box = widgets.VBox(parts)
        self.box.add_class(QUESTION_CLASS)

    def response(self) -> Response:
        """The current response, or None when unanswered; ResponseError if unreadable."""
        q = self.question
        if isinstance(q, SingleChoice | WhichLine):
            return self.input.value
        if isinstance(q, MultipleSelect):
            # In the authored order, whatever order this learner was shown.
            chosen = [o.id for o in q.options if self.checkboxes[o.id].value]
            return chosen or None
        raw = self.text.value if self.text is not None else ""
        if not raw.strip():
            return None
        return q.parse(raw) if isinstance(q, Numeric) else raw

    def set_response(self, response: Response) -> None:
        """Set the widgets as a learner would (for headless use and tests)."""
        q = self.question
        if isinstance(q, MultipleSelect):
            chosen = set(response) if isinstance(response, list) else set()
            for oid, box in self.checkboxes.items():
                box.value = oid in chosen
        elif isinstance(q, SingleChoice | WhichLine):
            self.input.value = response
        elif self.text is not None:
            self.text.value = "" if response is None else str(response)

    def show_every_line(self) -> None:
        """The folded exercise lines revealed: the dropdown names every line (the choice kept)."""
        if isinstance(self.question, WhichLine) and isinstance(self.input, widgets.Dropdown):
            chosen = self.input.value
            self.input.options = line_options(self.question, ())
            self.input.value = chosen

    def check(self) -> None:
        """Score the current response, show the verdict with the reasoning, and save it to progress."""
        q = self.question
        try:
            response = self.response()
        except ResponseError as e:
            self.feedback.value = f'<div class="quiz-feedback invalid">{escape(e.message)}</div>'
            return
        if response is None:
            self.feedback.value = '<div class="quiz-feedback empty">Choose or type an answer first.</div>'
            return
        self.attempts += 1
        if isinstance(q, Code):
            fraction = self._check_code(q, str(response))
        else:
            fraction = q.fraction(response)
            self.feedback.value = self.verdict(fraction, response)
        self.last_check = {"response": response, "fraction": fraction}
        self.feedback.value += self.save_progress()
        if self.on_check is not None:
            self.on_check()

    def _check_code(self, q: Code, piece: str) -> float | None:
        """Practice: run the piece the way the grader will (``course.exercises.coding_check``) and show what it did.

        Returns 1.0 or 0.0 (passed or not), None when it could not be run.
        """
        self.feedback.value = (
            '<div class="quiz-feedback">Checking (a GPU run compiles first: seconds) ...</div>'
        )
        try:
            lesson = get_lesson(q.lesson)
            result = check_piece(lesson, get_exercise(lesson, q.exercise), piece)
        except CourseError as e:
            self.feedback.value = f'<div class="quiz-feedback invalid">{escape(str(e))}</div>'
            return None
        css = "right" if result.passed else "wrong"
        verdict = "Right." if result.passed else f"Not right: {result.outcome}."
        self.feedback.value = verdict_html(css, verdict, result._repr_html_())
        return 1.0 if result.passed else 0.0

    def verdict(self, fraction: float, response: Response = None) -> str:
        """The feedback HTML for ``response``, scored ``fraction``."""
        q = self.question
        if fraction >= 1.0:
            verdict, css = "Right.", "right"
        elif fraction > 0.0:
            verdict = f"Partly right: {readable_points(q.points * fraction)} of {points_text(q.points)}"
            verdict += f" ({why})." if (why := partly_why(q, response)) else "."
            css = "partial"
        else:
            verdict, css = "Not right.", "wrong"
        body = f"{inline(q.explanation or '')}<br><small>Reference: {reference_html(q.reference)}</small>"
        return verdict_html(css, verdict, body)

    # -- progress ----------------------------------------------------------
    def progress_state(self) -> dict[str, Any] | None:
        """What progress keeps of this question: the response, attempts and the last check's result."""
        try:
            response = self.response()
        except ResponseError:
            return None
        if response is None:
            return None
        q = self.question
        checked = self.last_check is not None and self.last_check["response"] == response
        fraction = self.last_check["fraction"] if checked and self.last_check is not None else None
        return {
            "quiz": self.quiz_id,
            "type": q.type,
            "response": response,
            "text": self.text.value if self.text is not None else None,  # as typed: 0x8 stays 0x8
            "attempts": self.attempts,
            "checked": checked,
            "fraction": fraction,
            "score": None if fraction is None else q.points * fraction,
            "points": q.points,
        }

    def save_progress(self) -> str:
        """Save this question's state; "" when saved (or nothing to save), else a note (HTML) saying why not."""
        state = self.progress_state()
        if self.lesson_id is None or state is None:
            return ""
        try:
            _progress.record(self.lesson_id, "quiz", self.question.id, state, learner=self.learner_id)
        except CourseError as e:
            return not_saved(e)
        return ""

    def restore(self, state: dict[str, Any]) -> bool:
        """Put a saved state back into the widgets; False (and nothing changed) when it no longer fits."""
        q = self.question
        if state.get("type") != q.type:
            return False
        response = state.get("response")
        text = state.get("text")
        if isinstance(q, Code):
            # The box shows the learner's file of the exercise (the coding panel edits the same
            # file): that is their code now, so only the attempts and the last result come back.
            attempts = state.get("attempts", 0)
            if type(attempts) is not int or attempts < 0:
                return False
            self.attempts = attempts
            fraction = state.get("fraction")
            last = None
            if state.get("checked") is True and fraction in (0.0, 1.0):
                last = "passed" if fraction == 1.0 else "did not pass"
            said = f"your last check {last}. " if last else ""
            self.feedback.value = (
                f'<div class="quiz-restored"><small>From your progress: {said}'
                "The box shows the piece in your file now.</small></div>"
            )
            return True
        if isinstance(q, SingleChoice):
            if not isinstance(response, str) or response not in {o.id for o in q.options}:
                return False
        elif isinstance(q, MultipleSelect):
            ids = {o.id for o in q.options}
            if not isinstance(response, list) or not response or not all(r in ids for r in response):
                return False
        elif isinstance(q, WhichLine):
            if type(response) is not int or response not in {n for n, _ in q.listing}:
                return False
        else:
            if not isinstance(text, str) or not text.strip():
                return False
            try:
                response = q.parse(text) if isinstance(q, Numeric) else text
            except ResponseError:
                return False
        try:
            q.check_response(response)
        except ResponseError:
            return False
        attempts = state.get("attempts", 0)
        if type(attempts) is not int or attempts < 0:
            return False
        if isinstance(q, Numeric | ShortText):
            assert self.text is not None
            self.text.value = text
        else:
            self.set_response(response)
        self.attempts = attempts
        # When it was saved is said once, for the whole quiz (QuizPanel.restore_progress).
        if self.practice and state.get("checked") is True and q.has_key:
            fraction = q.fraction(response)  # scored again: the key may have changed since
            self.last_check = {"response": response, "fraction": fraction}
            self.feedback.value = self.verdict(fraction, response)
        else:
            self.feedback.value = ""
        return True


def _code_piece(q: Code) -> str:
    """The learner's current piece for a code question ("" when the exercise cannot be read)."""
    try:
        lesson = get_lesson(q.lesson)
        return learner_file(lesson, get_exercise(lesson, q.exercise)).piece()
    except CourseError:
        return ""
