"""Checks on a quiz key that are judgement, not schema: where the right option sits, how long it is.

The page shows each learner the options in a shuffled order
(``model.option_order``), but the authored order still reaches people: the
released learner copy, an LMS export, a printout. When the right option
sits at one position in most questions, or every multiple-select question
lists its answers first, that order gives the key away. Length gives it
away wherever the options are shown: a key that is the longest, most
qualified option in most questions (45 of 49 once did), or the shortest
(24 of 61 later), is found by a learner who knows nothing. And quiz text
renders `code` alone: Markdown emphasis shows its stars (``markup_problems``).
``quiz validate`` prints these as warnings; tests/quiz/test_checks.py holds
the shipped quizzes to them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from ._markup import _CODE as _CODE_SPAN
from ._markup import plain
from .model import MultipleSelect, Quiz, SingleChoice

# Fewer single-choice questions than this say nothing about a habit.
_MIN_SINGLE = 3
_MIN_MULTIPLE = 2


def key_position_problems(quiz: Quiz) -> list[str]:
    """Why the authored option order gives the key away (empty when it does not)."""
    problems = []
    singles = [q for q in quiz.questions if isinstance(q, SingleChoice) and q.answer is not None]
    if len(singles) >= _MIN_SINGLE:
        where = Counter([o.id for o in q.options].index(q.answer or "") for q in singles)
        position, count = where.most_common(1)[0]
        if count > len(singles) / 2:
            ids = ", ".join(
                q.id for q in singles if [o.id for o in q.options].index(q.answer or "") == position
            )
            problems.append(
                f"quiz {quiz.id!r}: the right option is option {position + 1} in {count} of {len(singles)} "
                f"single-choice questions ({ids}); a reader of the file can guess it: vary where it sits"
            )
    multiples = [q for q in quiz.questions if isinstance(q, MultipleSelect) and q.answers is not None]
    if len(multiples) >= _MIN_MULTIPLE and all(
        {o.id for o in q.options[: len(q.answers or ())]} == q.answers for q in multiples
    ):
        problems.append(
            f"quiz {quiz.id!r}: every multiple-select question lists its right options first "
            f"({', '.join(q.id for q in multiples)}): mix them among the others"
        )
    return problems


# The key may be the longest option in at most this share of a quiz's
# questions: by chance it is the longest in about 1/4 (four options).
_LONGEST_SHARE = 1 / 3


def _shown_length(text: str) -> int:
    """An option's length as the learner reads it (code spans without their backticks)."""
    return len(" ".join(plain(text).split()))


def _key_at_end(q: SingleChoice, pick: Callable[[Iterable[int]], int]) -> bool:
    """Whether ``q``'s key is at the end ``pick`` (max: longest, min: shortest) of its options; a
    tie with another option counts as at that end."""
    key = _shown_length(next(o.text for o in q.options if o.id == q.answer))
    return pick([key, *(_shown_length(o.text) for o in q.options if o.id != q.answer)]) == key


def key_length_problems(quiz: Quiz) -> list[str]:
    """Why the options' lengths give the key away (empty when they do not).

    A key that is the longest, most qualified option is a known tell: a
    learner who picks the longest wins; so is its mirror, a key that is
    always the short plain statement among long decoys (issue 35: "pick the
    shortest" once scored 39% over all quizzes). Single choice: the key is
    flagged as the longest when no other option is longer, as the shortest
    when no other option is shorter (a tie counts at both ends); each end
    may hold at most a third of the quiz's single-choice keys. Multiple
    select: flagged when every right option is longer than every wrong one,
    in at most a third of those questions (a quiz has one or two of them, so
    there one flagged question alone is not yet a habit).
    """
    problems = []
    singles = [q for q in quiz.questions if isinstance(q, SingleChoice) and q.answer is not None]
    for end, pick, fix in (
        ("longest", max, "make the other options as specific, or the right one shorter"),
        ("shortest", min, "give the right one its qualification, or make a wrong one as plain"),
    ):
        ids = [q.id for q in singles if _key_at_end(q, pick)]
        if len(ids) > len(singles) * _LONGEST_SHARE:
            problems.append(
                f"quiz {quiz.id!r}: the right option is the {end} in {len(ids)} of {len(singles)} "
                f"single-choice questions ({', '.join(ids)}); at most a third may be: {fix}"
            )
    multiples = [q for q in quiz.questions if isinstance(q, MultipleSelect) and q.answers is not None]
    tells = []
    for q in multiples:
        right = [_shown_length(o.text) for o in q.options if o.id in (q.answers or ())]
        wrong = [_shown_length(o.text) for o in q.options if o.id not in (q.answers or ())]
        if wrong and min(right) > max(wrong):
            tells.append(q.id)
    if len(tells) >= 2 and len(tells) > len(multiples) * _LONGEST_SHARE:
        problems.append(
            f"quiz {quiz.id!r}: every right option is longer than every wrong one in {len(tells)} of "
            f"{len(multiples)} multiple-select questions ({', '.join(tells)}); at most a third may be"
        )
    return problems


# Markdown emphasis, which quiz text does not render (``_markup``: backticks alone): a learner read
# "may *issue* its wgmmas" with the stars. A star or underscore hugging a word, outside code spans.
_EMPHASIS = re.compile(r"(?<![\w*`])(\*\*?|__?)(?=\S)[^*_`\n]*?\S\1(?![\w*])")


def markup_problems(quiz: Quiz) -> list[str]:
    """Text a learner would read with its Markdown marks: quiz text renders `code` and nothing else."""
    problems = []
    for q in quiz.questions:
        texts = [("prompt", q.prompt), ("explanation", q.explanation or "")]
        texts += [(f"option {o.id!r}", o.text) for o in getattr(q, "options", ())]
        for field, text in texts:
            for found in _EMPHASIS.finditer(_CODE_SPAN.sub("", text)):
                problems.append(
                    f"question {q.id!r}, {field}: {found.group()!r} shows its marks (quiz text renders "
                    "`code` only); write the word plain"
                )
    return problems
