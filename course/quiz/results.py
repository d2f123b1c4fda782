"""What a grading run found: per learner and question, what was skipped, what was flagged (``course.quiz.grade``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .model import Quiz, Response

__all__ = ["REASON_LIMIT", "Flag", "GradeReport", "ItemResult", "LearnerResult", "Skipped", "cut"]


@dataclass(frozen=True)
class ItemResult:
    question: str
    response: Response
    score: float
    max: float
    attempts: int
    note: str = ""  # an override's reason, or what running a code response did
    outcome: str = ""  # a code response: passed, failed-check, compile-error, fault, timeout, ...


@dataclass(frozen=True)
class LearnerResult:
    learner: str
    submitted_at: str
    path: Path
    items: tuple[ItemResult, ...]
    flags: tuple[str, ...] = ()  # graded, but the instructor should look (a future submitted_at)

    @property
    def total(self) -> float:
        return sum(i.score for i in self.items)


# A reason is cut to this length in every report: the values inside it are
# cut already (``model.brief``); this bounds the rest whatever they say.
REASON_LIMIT = 400


def cut(text: str, limit: int = REASON_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying so and how long it was."""
    return text if len(text) <= limit else f"{text[: limit - 20]}... (cut: {len(text)} characters)"


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", cut(self.reason))


@dataclass(frozen=True)
class Flag:
    path: Path
    learner: str
    reason: str


@dataclass(frozen=True)
class GradeReport:
    quiz: Quiz
    results: tuple[LearnerResult, ...]
    skipped: tuple[Skipped, ...]
    # Submissions not graded because their content disagrees with their place (another learner's
    # name, another quiz): the instructor looks at each, so they are flagged, not merely skipped.
    misplaced: tuple[Flag, ...] = ()

    @property
    def flagged(self) -> tuple[Flag, ...]:
        """What the instructor should look at, with why: graded submissions, then ungraded misplaced ones."""
        graded = tuple(Flag(r.path, r.learner, reason) for r in self.results for reason in r.flags)
        return graded + self.misplaced
