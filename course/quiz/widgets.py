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
and the file to upload; on JupyterHub the learner is the hub's user and the
folder is in their own workspace (``hub``). A "which line" listing is shown once per snippet;
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

from .._html import escape
from .._live import LiveBox
from ..errors import CourseError
from ..exercises import progress as _progress
from ..lessons import LESSONS, get_lesson
from ._look import (
    QUIZ_CLASS,
    STYLE,
    folded_answers,
    listing_heading,
    listing_widget,
    local_time,
    not_saved,
    total_html,
    verdict_html,
    which_line_askers,
)
from ._markup import inline
from .graded import graded_path
from .hub import SubmitPlace, send_to_service, submit_place
from .loader import load_quiz
from .model import Quiz, Response, ResponseError, WhichLine
from .question_panel import QuestionPanel
from .submission import Submission, submission_path, validate_learner_id, write_submission

__all__ = ["MODES", "QUIZ_CLASS", "STYLE", "QuestionPanel", "QuizPanel", "show_quiz", "verdict_html"]

MODES = ("practice", "graded")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")  # noqa: UP017 (datetime.UTC is 3.11+)


class QuizPanel(LiveBox):
    """The whole quiz. ``panels`` maps question id to its ``QuestionPanel``."""

    def __init__(
        self,
        quiz: Quiz,
        *,
        mode: str,
        place: SubmitPlace,
    ):
        practice = mode == "practice"
        self.quiz = quiz
        self.mode = mode
        self.place = place  # who submits and where (course.quiz.hub: on JupyterHub, the hub says)
        self.learner_id = place.learner
        self.submissions_dir = place.folder
        learner_id = place.learner
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
        said = self.place.note
        note = f"<br>{escape(said)}" if said else ""
        if self.learner_id is None:
            return f"<p><small>{escape(said)}</small></p>" if said else ""
        origin = self.place.origin or _progress.learner_origin(self.learner_id)
        return (
            f"<p><small>Submit saves your answers (not a score) to a file for your instructor, "
            f"as learner <b>{escape(self.learner_id)}</b> ({escape(origin)}).{note}</small></p>"
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
                f"<p>Nothing was saved: {escape(self.place.note)}</p>"
                if self.place.note
                else "<p>Nothing was saved: submitting needs a learner id, "
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
            f"<code>{escape(str(path))}</code>.<br>{self._hand_in(path)}</p>"
        ) + self.save_progress()
        return path

    def _hand_in(self, path: Path) -> str:
        if self.place.service:
            try:
                data = path.read_bytes()
            except OSError as e:
                return f"It was not sent to your instructor: it could not be read back ({escape(str(e))})."
            why = send_to_service(self.place.service, self.quiz.id, data)
            if why is None:
                return (
                    "Sent to your instructor through JupyterHub, under your hub user name; a copy "
                    "stays in your own folder, and submitting again replaces both."
                )
            return (
                f"<b>It was not sent to your instructor</b>: {escape(why)}. Your answers are kept in "
                "your folder; press Submit again, and tell your instructor if this stays."
            )
        if self.place.hub:
            return (
                "Your instructor collects this file from your JupyterHub server; it stays in your "
                "own folder, and submitting again replaces it."
            )
        return (
            "To hand them in, upload this file to your course's assignment for this quiz; your "
            "instructor grades it. Submitting again replaces the file: upload the latest."
        )

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
    if isinstance(quiz, str) and (released := graded_path(quiz)) is not None:
        return released  # a graded quiz: its released copy (content/quizzes/graded/), never a key
    return Path(quiz)


def show_quiz(
    quiz: str | os.PathLike[str],
    mode: str = "practice",
    learner_id: str | None = None,
    submissions_dir: str | os.PathLike[str] | None = None,
    restore: bool = True,
) -> QuizPanel:
    """The quiz for a lesson id (``"<lesson id>"``), a graded quiz's id, or a quiz file, as a widget.

    A graded quiz's id names its released copy, ``content/quizzes/graded/<id>.toml``
    (``course.quiz.graded``): ``show_quiz("<id>", mode="graded")``.

    ``mode="practice"`` needs the key file and checks answers on the page;
    ``mode="graded"`` shows the learner copy only (pass a released file).
    ``learner_id`` names the submission file; ``submissions_dir`` defaults to
    ``submissions/`` in the course checkout. On JupyterHub both are set by
    the hub instead (``course.quiz.hub``): Submit writes as the signed-in
    user into their own workspace, and says so when an argument was ignored. Checked and submitted answers
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
    place = submit_place(learner_id, submissions_dir)  # on JupyterHub: the hub's user, in their workspace
    if place.learner is not None:
        submission_path(place.folder, shown.id, place.learner)  # refuse a bad id before anyone types
    panel = QuizPanel(shown, mode=mode, place=place)
    if restore:
        panel.restore_progress()
    return panel
