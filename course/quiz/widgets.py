"""The quiz at the end of a page, as ipywidgets.

``show_quiz("<lesson id>")`` returns a ``QuizPanel`` (an ``ipywidgets.VBox``).

Practice mode (the shipped pages) needs the key: each question has a Check
button that scores the response with the same pure function the grader uses
and shows right or wrong with the explanation and the reference. Graded mode
builds every widget from the learner copy, so no widget trait holds key
material; it has no Check buttons. Practice mode keeps a running total
under the questions after each Check. In both modes, given a learner id,
Submit writes the responses (never a score) to
``<submissions>/<quiz>/<learner>.json`` atomically, and names the learner
and the file to upload. A "which line" listing is shown once per snippet;
restored answers are announced once per quiz (``_look`` draws all that).

Each learner sees the options of a choice question in an order of their
own (``model.option_order``, stable per learner, quiz and question), so the
position gives nothing away; responses are option ids, so the order never
reaches a score. Feedback is shown by setting an ``HTML`` widget's value,
never by printing into an ``Output`` widget (its text lands in different
places under nbclient and nbval): right, partly right and wrong each with a
mark (✓ ~ ✗) and a colour. Every piece of quiz text that goes into HTML is
escaped (``_markup``: `code` spans and reference links are the only markup),
so a quiz file cannot inject markup or script. Long option texts wrap under
one scoped style sheet (``_look.STYLE``). Everything works headless: set a
widget's ``value`` and call ``button.click()``.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from .. import _paths
from .._html import escape
from .._live import LiveBox
from ..errors import CourseError
from ..exercises import progress as _progress
from ..lessons import LESSONS, get_lesson
from ._look import (
    QUIZ_CLASS,
    STYLE,
    folded_answers,
    line_options,
    listing_heading,
    listing_html,
    listing_widget,
    local_time,
    not_saved,
    partly_why,
    points_text,
    total_html,
    verdict_html,
    which_line_askers,
)
from ._markup import inline, plain, reference_html
from .loader import load_quiz
from .model import (
    Code,
    MultipleSelect,
    Numeric,
    Question,
    Quiz,
    Response,
    ResponseError,
    ShortText,
    SingleChoice,
    WhichLine,
    option_order,
    readable_points,
)
from .submission import Submission, submission_path, validate_learner_id, write_submission

__all__ = ["MODES", "QUIZ_CLASS", "STYLE", "QuestionPanel", "QuizPanel", "show_quiz", "verdict_html"]

MODES = ("practice", "graded")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")  # noqa: UP017 (datetime.UTC is 3.11+)


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
            parts.append(self.check_button)
        parts.append(self.feedback)
        self.box = widgets.VBox(parts)

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
        from ..exercises.coding import get_exercise
        from ..exercises.coding_check import check_piece

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
    from ..exercises.coding import get_exercise, learner_file

    try:
        lesson = get_lesson(q.lesson)
        return learner_file(lesson, get_exercise(lesson, q.exercise)).piece()
    except CourseError:
        return ""


class QuizPanel(LiveBox):
    """The whole quiz. ``panels`` maps question id to its ``QuestionPanel``."""

    def __init__(self, quiz: Quiz, *, mode: str, learner_id: str | None, submissions_dir: Path):
        practice = mode == "practice"
        self.quiz = quiz
        self.mode = mode
        self.learner_id = learner_id
        self.submissions_dir = submissions_dir
        self.submits = 0
        # A "which line" listing is shown once, above the first question that asks about it;
        # the later ones point back to it (a 60-90-line listing once repeated per question).
        asking = which_line_askers(quiz)
        self.panels: dict[str, QuestionPanel] = {}
        # Listings holding a coding exercise's answer show it folded until the learner passes it
        # or asks (course.exercises.reveal); the page reveals them with its own listings (Page.refresh_reveals).
        self.reveals: list[Any] = []
        reveal_of: dict[tuple[str, str], Any] = {}
        boxes: list[widgets.Widget] = []
        for n, q in enumerate(quiz.questions, start=1):
            note = None
            folded: tuple[Any, ...] = ()
            if isinstance(q, WhichLine):
                first = asking[(q.lesson, q.snippet)][0]
                note = (
                    "Pick a line of the listing just above."
                    if first == n
                    else (f"Pick a line of the listing above question {first}.")
                )
                answers = folded_answers(q.lesson, q.listing, learner_id)
                folded = tuple(a.hidden() for a in answers)
                if first == n:
                    listing, shown = listing_widget(
                        q, listing_heading(asking[(q.lesson, q.snippet)]), answers
                    )
                    boxes.append(listing)
                    if shown is not None:
                        reveal_of[(q.lesson, q.snippet)] = shown
                        self.reveals.append(shown)
            panel = QuestionPanel(
                n,
                q,
                practice=practice,
                quiz_id=quiz.id,
                learner_id=learner_id,
                lesson_id=quiz.lesson,
                listing_note=note,
                on_check=self.show_total,
                hidden=folded,
            )
            self.panels[q.id] = panel
            listing_box = reveal_of.get((q.lesson, q.snippet)) if isinstance(q, WhichLine) else None
            if listing_box is not None:
                listing_box.on_reveal.append(panel.show_every_line)
            boxes.append(panel.box)
        self.style = widgets.HTML(value=STYLE, layout=widgets.Layout(display="none"))
        self.title = widgets.HTML(value=f"<h3>{inline(quiz.title)}</h3>")
        self.restored = widgets.HTML(value="")  # one line when saved answers came back
        self.total = widgets.HTML(value="")  # practice: the score so far, after each Check
        self.submit_button = widgets.Button(
            description="Submit", tooltip="Save your answers to a file for grading", icon="save"
        )
        self.submit_button.on_click(lambda _button: self.submit())
        self.submit_note = widgets.HTML(value=self._submit_note())
        self.status = widgets.HTML(value="")
        children = [
            self.style,
            self.title,
            self.restored,
            *boxes,
            self.total,
            self.submit_note,
            self.submit_button,
            self.status,
        ]
        super().__init__(children=children)
        self.add_class(QUIZ_CLASS)

    def __repr__(self) -> str:
        # The notebook's text/plain output (which nbval compares): short and
        # stable, instead of ipywidgets' repr of every child widget.
        return f"QuizPanel(quiz={self.quiz.id!r}, mode={self.mode!r}, questions={len(self.panels)})"

    def _submit_note(self) -> str:
        if self.learner_id is None:
            return ""
        origin = _progress.learner_origin(self.learner_id)
        return (
            f"<p><small>Submit saves your answers (not a score) to a file for your instructor, "
            f"as learner <b>{escape(self.learner_id)}</b> ({escape(origin)}).</small></p>"
        )

    def show_total(self) -> None:
        """Practice: the score so far over every question, from each one's last Check."""
        if self.mode == "practice":
            checks = [
                (p.question.points, p.last_check["fraction"]) for p in self.panels.values() if p.last_check
            ]
            self.total.value = total_html(checks, len(self.panels), self.quiz.max_points)

    def responses(self) -> dict[str, Response]:
        """Every answered question's response; raises ResponseError on an unreadable one."""
        found: dict[str, Response] = {}
        for qid, panel in self.panels.items():
            try:
                response = panel.response()
            except ResponseError as e:
                raise ResponseError(f"question {qid!r}: {e.message}") from None
            if response is not None:
                found[qid] = response
        return found

    def submit(self) -> Path | None:
        """Write the submission file; return its path, or None (status says why)."""
        if self.learner_id is None:
            self.status.value = (
                "<p>Nothing was saved: submitting needs a learner id, "
                "<code>show_quiz(..., learner_id=&quot;your-id&quot;)</code>.</p>"
            )
            return None
        try:
            responses = self.responses()
        except ResponseError as e:
            self.status.value = f"<p>Nothing was saved: {escape(e.message)}</p>"
            return None
        self.submits += 1
        if self.mode == "graded":
            for qid in responses:
                self.panels[qid].attempts += 1
        submission = Submission(
            quiz=self.quiz.id,
            quiz_version=self.quiz.version,
            learner=self.learner_id,
            submitted_at=_now(),
            responses=responses,
            attempts={qid: p.attempts for qid, p in self.panels.items()},
        )
        try:
            path = write_submission(submission, self.submissions_dir)
        except CourseError as e:
            self.status.value = f"<p>Nothing was saved: {escape(str(e))}</p>"
            return None
        self.status.value = (
            f"<p>Saved {len(responses)} of {len(self.panels)} answers as learner "
            f"<b>{escape(self.learner_id)}</b> at {escape(local_time(submission.submitted_at))} to "
            f"<code>{escape(str(path))}</code>.<br>To hand them in, upload this file to your "
            "course's assignment for this quiz; your instructor grades it. "
            "Submitting again replaces the file: upload the latest.</p>"
        ) + self.save_progress()
        return path

    def save_progress(self) -> str:
        """Save every answered question to progress at once; "" when saved, else a note (HTML)."""
        states = {qid: s for qid, p in self.panels.items() if (s := p.progress_state()) is not None}
        try:
            _progress.record_items(self.quiz.lesson, "quiz", states, learner=self.learner_id)
        except CourseError as e:
            return not_saved(e)
        return ""

    def restore_progress(self) -> int:
        """Put the learner's saved answers back; return how many questions were restored.

        A question that changed since the save (gone, another type, an option
        or line that is no longer there) is left empty. A progress file that
        cannot be read never stops the quiz: the status line says why.
        """
        try:
            saved = _progress.lesson_progress(self.quiz.lesson, learner=self.learner_id)["quiz"]
        except CourseError as e:
            self.restored.value = (
                f"<p><small>Your saved progress was not restored: {escape(str(e))}</small></p>"
            )
            return 0
        restored = [
            state.get("saved_at")
            for qid, panel in self.panels.items()
            if isinstance(state := saved.get(qid), dict)
            and state.get("quiz", self.quiz.id) == self.quiz.id
            and panel.restore(state)
        ]
        if restored:
            latest = max(str(t) for t in restored)
            self.restored.value = (
                f'<div class="quiz-restored"><small>Restored {len(restored)} of {len(self.panels)} '
                f"answers from your progress (last saved {escape(local_time(latest))}). "
                "Submit still saves them for grading.</small></div>"
            )
            self.show_total()
        return len(restored)


def _quiz_path(quiz: str | os.PathLike[str]) -> Path:
    if isinstance(quiz, str) and quiz in LESSONS:
        return get_lesson(quiz).quiz_path
    return Path(quiz)


def show_quiz(
    quiz: str | os.PathLike[str],
    mode: str = "practice",
    learner_id: str | None = None,
    submissions_dir: str | os.PathLike[str] | None = None,
    restore: bool = True,
) -> QuizPanel:
    """The quiz for a lesson id (``"<lesson id>"``) or a quiz file, as a widget.

    ``mode="practice"`` needs the key file and checks answers on the page;
    ``mode="graded"`` shows the learner copy only (pass a released file).
    ``learner_id`` names the submission file; ``submissions_dir`` defaults to
    ``submissions/`` in the course checkout. Checked and submitted answers
    are saved to the learner's progress (``course.exercises.progress``; the learner is
    ``learner_id``, else ``COURSE_LEARNER``, else ``JUPYTERHUB_USER``, else
    the login name, else ``default``), and
    ``restore=True`` puts them back, so a restarted kernel or a reopened
    page shows where the learner was.
    """
    if mode not in MODES:
        raise CourseError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
    if learner_id is not None:
        validate_learner_id(learner_id)
    loaded = load_quiz(_quiz_path(quiz))
    if mode == "practice" and loaded.released:
        raise CourseError(
            "practice mode checks answers on the page and needs the key file; this is a released "
            "learner copy: use mode='graded' with it",
            path=loaded.path,
        )
    shown = loaded if mode == "practice" else loaded.learner_copy()
    folder = Path(submissions_dir) if submissions_dir is not None else _paths.repo_root() / "submissions"
    if learner_id is not None:
        submission_path(folder, shown.id, learner_id)  # refuse a bad id before anyone types an answer
    panel = QuizPanel(shown, mode=mode, learner_id=learner_id, submissions_dir=folder)
    if restore:
        panel.restore_progress()
    return panel
