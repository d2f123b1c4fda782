"""Checks on a quiz key that are judgement, not schema: where the right option sits.

The page shows each learner the options in a shuffled order
(``model.option_order``), but the authored order still reaches people: the
released learner copy, an LMS export, a printout. When the right option
sits at one position in most questions, or every multiple-select question
lists its answers first, that order gives the key away. ``quiz validate``
prints these as warnings; tests/quiz/test_checks.py holds the shipped
quizzes to them.
"""

from __future__ import annotations

from collections import Counter

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
