"""How a quiz looks: its style sheet, the verdict after Check, a line listing.

Kept apart from the widgets (``widgets.py``) so the look is one place: every
constant here is HTML the quiz builds itself; quiz text reaches it only
escaped (``_markup``, ``course._html``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from functools import partial
from typing import Any

from .._html import escape
from ..errors import CourseError
from ..lessons import get_lesson
from ..view.listing import Hidden, token_rules
from ..view.listing import listing_html as render_listing
from .model import MultipleSelect, Question, Quiz, Response, WhichLine, readable_points

# One style sheet per quiz, scoped to the quiz's own class. ipywidgets 8
# gives each radio label a fixed height and line height, so a label that
# wraps spills over the next option (its radio then sits on the next
# line's text: Day 76 Q4, Day 78 Q11 in Chromium); checkbox labels are cut
# to one line with "...". Here labels grow with their text, the input
# stays at the first line's left, and wrapped lines hang beside it.
# Radio buttons and checkboxes share one geometry, in px: ipywidgets sets a
# checkbox in `font-size: large` (so an em margin is wider there) inside a
# box with a 2px margin, which put checkboxes 2px and their text 5px right
# of the radio buttons' (issue 22).
QUIZ_CLASS = "course-quiz"
# The first two rules: an HTML widget sizes its content box by its content, so a listing takes the
# output's width instead and its long lines scroll inside it (as a page's listing does, course.exercises.reveal).
STYLE = """<style>
.course-quiz .widget-html-content:has(.quiz-listing) { flex: 1 1 auto; min-width: 0; width: 100%; }
.course-quiz .quiz-listing .course-listing { max-width: 100%; box-sizing: border-box; }
.course-quiz .widget-radio-box label {
  display: flex; flex-direction: row-reverse; justify-content: flex-end; align-items: flex-start;
  height: auto; min-height: var(--jp-widgets-radio-item-height, 24px); line-height: 1.4;
  white-space: normal; margin: 2px 0 4px 0;
}
.course-quiz .widget-radio-box input[type="radio"],
.course-quiz .widget-checkbox input[type="checkbox"] {
  flex: none; float: none; align-self: flex-start; font-size: inherit;
  width: 13px; height: 13px; margin: 3px 8px 0 1px;
}
.course-quiz .widget-checkbox { height: auto; line-height: 1.4; margin: 0; }
.course-quiz .widget-checkbox .widget-label-basic {
  display: flex; align-items: flex-start; height: auto; line-height: 1.4;
  white-space: normal; overflow: visible; margin: 2px 0 4px 0;
}
.course-quiz .widget-html-content { line-height: 1.45; }
.course-quiz .widget-html-content a { color: var(--jp-content-link-color, #1565c0); text-decoration: underline; }
</style>"""
# The listings' token colours, once for the quiz and scoped to it (its listings come without them).
STYLE = STYLE.removesuffix("</style>") + token_rules(f".{QUIZ_CLASS} ") + "</style>"

# How each verdict looks: a mark, a colour (border and text) and a faint
# background of the same colour (readable on light and dark themes).
_VERDICT_LOOK = {
    "right": ("\u2713", "#1b7f3b", "rgba(27, 127, 59, 0.12)"),
    "partial": ("~", "#b26a00", "rgba(178, 106, 0, 0.14)"),
    "wrong": ("\u2717", "#c62828", "rgba(198, 40, 40, 0.12)"),
}


def verdict_html(css: str, verdict: str, body: str) -> str:
    """A checked answer's feedback: the mark and verdict in the verdict's colour, then ``body`` (HTML)."""
    mark, colour, background = _VERDICT_LOOK[css]
    return (
        f'<div class="quiz-result {css}" style="display: flex; gap: 0.6em; align-items: flex-start; '
        f"border-left: 4px solid {colour}; background: {background}; padding: 0.4em 0.7em; "
        f'margin: 0.3em 0;">'
        f'<span class="quiz-mark" style="color: {colour}; font-weight: bold; font-size: 1.3em; '
        f'line-height: 1.1;">{mark}</span>'
        f'<div class="quiz-feedback {css}"><b style="color: {colour};">{verdict}</b> {body}</div></div>'
    )


def listing_html(listing: tuple[tuple[int, str], ...], heading: str, hidden: Sequence[Hidden] = ()) -> str:
    """A "which line" listing, shown once for every question that asks about it: the page's own
    listing (``course.view.listing.listing_html``: the file's line numbers in a column that cannot drift
    from or wrap apart from its code) under ``heading``. Lines in ``hidden`` (a coding exercise's
    answer, ``course.exercises.reveal``) are one placeholder row: their text is not in the page until revealed.
    """
    return f'<div class="quiz-listing"><p><small>{heading}</small></p>{render_listing(listing, (), hidden, style=False)}</div>'


def local_time(stamp: object) -> str:
    """An ISO time as saved (UTC) shown in this machine's time zone, named: ``2025-02-03 05:05 CET``."""
    try:
        when = datetime.fromisoformat(str(stamp))
    except ValueError:
        return "an unknown time"
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)  # noqa: UP017 (datetime.UTC is 3.11+)
    return when.astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()


def points_text(points: float) -> str:
    return f"{readable_points(points)} point{'' if points == 1 else 's'}"


def partly_why(q: Question, response: Response) -> str:
    """What a partly right multiple-select response got, by the question's rule ("" for others)."""
    if not isinstance(q, MultipleSelect) or not isinstance(response, list) or q.answers is None:
        return ""
    chosen, correct = set(response), q.answers
    hits, wrong = len(chosen & correct), len(chosen - correct)
    if q.partial == "each-answer":
        fine = len(q.options) - len(chosen ^ correct)
        return f"{fine} of {len(q.options)} options marked as they should be"
    said = f"{hits} of {len(correct)} right options chosen"
    if q.partial == "coverage":
        return f"{said}; {hits} of {len(chosen)} chosen are right"
    return said + (f", {wrong} wrong one{'' if wrong == 1 else 's'} taken off" if wrong else "")


def not_saved(error: CourseError) -> str:
    return (
        '<div class="quiz-progress-error"><small>Your progress was not saved: '
        f"{escape(str(error))}</small></div>"
    )


def listing_heading(numbers: list[int]) -> str:
    which = (
        f"question {numbers[0]}"
        if len(numbers) == 1
        else ("questions " + ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}")
    )
    return f"The listing for {which}, with the kernel's line numbers:"


def total_html(checks: list[tuple[float, float | None]], questions: int, max_points: float) -> str:
    """Practice mode's running total: ``checks`` holds (points, fraction or None) per checked question."""
    if not checks:
        return ""
    right = sum(1 for _, f in checks if f is not None and f >= 1.0)
    points = sum(p * f for p, f in checks if f is not None)
    left = f"; {questions - len(checks)} not checked yet" if questions > len(checks) else ""
    return (
        f'<p class="quiz-total"><b>So far: {right} of {questions} right</b>, '
        f"{readable_points(points)} of {points_text(max_points)}{left}. "
        "<small>Practice scores are for you; they are not a grade.</small></p>"
    )


def line_options(question: WhichLine, hidden: tuple[Any, ...]) -> list[tuple[str, int]]:
    """The dropdown of a "which line" question; a folded exercise line is offered by number only."""
    return [
        (
            f"line {n}: (a line you write in the coding exercise)"
            if any(h.covers(n) for h in hidden)
            else f"line {n}: {line.strip()[:60]}",
            n,
        )
        for n, line in question.listing
    ]


def folded_answers(
    lesson_id: str, listing: tuple[tuple[int, str], ...], learner_id: str | None
) -> tuple[Any, ...]:
    """The coding exercises' answers (not passed yet) that fall in ``listing``: they stay folded."""
    from ..exercises.reveal import still_hidden  # the coding exercises' files: only for a quiz with a listing

    lines = {n for n, _ in listing}
    try:
        answers = still_hidden(get_lesson(lesson_id), learner_id)
    except CourseError:
        return ()
    return tuple(a for a in answers if any(a.first <= n <= a.last for n in lines))


def which_line_askers(quiz: Quiz) -> dict[tuple[str, str], list[int]]:
    """For each (lesson, snippet) of a "which line" question, the numbers of the questions asking it."""
    asking: dict[tuple[str, str], list[int]] = {}
    for n, q in enumerate(quiz.questions, start=1):
        if isinstance(q, WhichLine):
            asking.setdefault((q.lesson, q.snippet), []).append(n)
    return asking


def listing_widget(q: WhichLine, heading: str, answers: tuple[Any, ...]) -> tuple[Any, Any]:
    """The listing shown above the first question asking about it, and its RevealBox when it holds
    a coding exercise's answer (folded until the learner passes it or asks), else None."""
    # heavy: ipywidgets, only on a page
    import ipywidgets as widgets

    if not answers:
        listing = widgets.HTML(
            value=listing_html(q.listing, heading), layout={"width": "auto", "align_self": "stretch"}
        )
        return listing, None
    # the coding exercises' files: only for a quiz with a listing
    from ..exercises.reveal import RevealBox

    box = RevealBox(partial(listing_html, q.listing, heading), answers)
    return box.widget, box
