"""Quizzes: authored as TOML, checked on the page, graded by the instructor.

``load_quiz`` parses and validates a quiz file; ``show_quiz`` renders it as
widgets (imported lazily, so the command line does not load ipywidgets);
``release_quiz`` writes a learner copy without the key; ``grade_submissions``
scores a folder of submissions. The format: content/quizzes/README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .grade import grade_submissions
from .loader import load_quiz
from .model import Quiz, QuizError
from .release import release_quiz

if TYPE_CHECKING:
    from .widgets import show_quiz

__all__ = ["Quiz", "QuizError", "grade_submissions", "load_quiz", "release_quiz", "show_quiz"]


def __getattr__(name: str) -> Any:
    if name == "show_quiz":
        # heavy: ipywidgets, only when a page shows a quiz (the grader and the CLI never do)
        from .widgets import show_quiz

        return show_quiz
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
