"""Try a version of a lesson's kernel: the learner's copy, a file, or a suggested experiment.

What ``page.try_mine()`` and ``python -m course try`` share: pick the file
(``course.tryout.workspace``), run it in the sandbox (``course.tryout.sandbox``), and put
the result beside the lesson's own kernel's (its recorded run, or a fresh
sandbox run of it), with the diff of what changed and, for a suggested
experiment (``course.tryout.suggestions``), whether this GPU did what the page said.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .._html import escape
from ..errors import CourseError
from ..kernel import evidence
from ..quiz._markup import inline
from .outcome import outcome_words
from .sandbox import DEFAULT_TIMEOUT_S, TryResult, run_variant
from .suggestions import Suggestion, get_suggestion
from .workspace import LearnerCopy, experiment_copy, learner_copy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..lesson import Lesson

__all__ = ["Tried", "try_kernel"]

Original = Literal["recorded", "run", "none"]


@dataclass(frozen=True)
class Tried:
    lesson: Lesson
    copy: LearnerCopy  # the file that ran, and its diff against the lesson's kernel
    result: TryResult
    suggestion: Suggestion | None = None
    original: evidence.Evidence | TryResult | None = None  # the lesson's kernel: recorded, or run now

    @property
    def confirmed(self) -> bool | None:
        """For a suggested experiment run on a GPU: did the outcome match the page? Else None."""
        if self.suggestion is None or self.result.outcome == "not-run":
            return None
        return self.suggestion.confirms(self.result.outcome)

    @property
    def exit_code(self) -> int:
        return self.result.exit_code

    def verdict_text(self) -> str:
        s = self.suggestion
        if s is None:
            return ""
        if self.confirmed is None:
            return f"The page expects {s.expect_words}; not run here, so this GPU cannot confirm it."
        if self.confirmed:
            return f"As the page says: {s.expect_words}."
        return (
            f"Not what the page says: it expects {s.expect_words}, and this GPU gave "
            f"{outcome_words(self.result.outcome)}. "
            "Please tell the course's authors (with the output above)."
        )

    def _original_text(self) -> str:
        o = self.original
        if o is None:
            return "The lesson's kernel: no recorded run in this checkout."
        if isinstance(o, TryResult):
            return f"The lesson's kernel, run the same way just now: {o.outcome}: {o.headline}"
        state = "passed" if o.passed else "failed"
        return f"The lesson's kernel, recorded on {o.device} ({o.recorded_at[:10]}): {state}: {o.output[-1]}"

    def __str__(self) -> str:
        body = [ln for ln in self.copy.diff().splitlines() if ln[:3] not in ("+++", "---")]
        removed = sum(1 for ln in body if ln.startswith("-"))
        added = sum(1 for ln in body if ln.startswith("+"))
        lines = [
            f"{self.lesson.id}: {self.copy.path}"
            + (f" (suggested experiment {self.suggestion.name!r})" if self.suggestion else ""),
            str(self.result),
            self._original_text(),
            f"Compared with kernels/{self.lesson.kernel_file}: {removed} line(s) removed, {added} added."
            if removed or added
            else "Same as the lesson's kernel.",
        ]
        if self.suggestion is not None:
            lines.append(self.verdict_text())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        if self.original is not None:
            original = self.original._repr_html_()
        else:
            original = f"<p>{escape(self._original_text())}</p>"
        suggestion = ""
        if self.suggestion is not None:
            s = self.suggestion
            color = {True: "#1a7f37", False: "#cf222e", None: "#1f5fa8"}[self.confirmed]
            suggestion = (
                f"<div style='border-left:4px solid {color};padding:4px 10px;margin:4px 0'>"
                f"<p><b>{inline(s.title)}</b> (expected: {inline(s.expect_words)})</p>"
                f"<p>{inline(s.explain)}</p><p><b>{escape(self.verdict_text())}</b></p></div>"
            )
        return (
            "<div class='course-tried'>"
            f"<p>Ran {self.copy.where_html()} as {escape(self.lesson.id)}'s kernel.</p>"
            f"{suggestion}"
            "<div style='display:flex;gap:16px;align-items:flex-start'>"
            f"<div style='flex:1'><h4>Your version</h4>{self.result._repr_html_()}</div>"
            f"<div style='flex:1'><h4>The lesson's kernel</h4>{original}</div></div>"
            f"<details open><summary>What changed</summary>{self.copy.diff_html()}</details></div>"
        )


def _recorded(lesson: Lesson) -> evidence.Evidence | None:
    try:
        return evidence.load(lesson)
    except CourseError:
        return None


def try_kernel(
    lesson: Lesson,
    path: Path | str | None = None,
    *,
    experiment: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    reset: bool = False,
    original: Original = "recorded",
    command: Sequence[str] | None = None,
) -> Tried:
    """Run a version of ``lesson``'s kernel in the sandbox and put it beside the lesson's own.

    The version is ``path`` when given, else the suggested ``experiment``
    (written to the workspace's ``experiments/`` folder), else the learner's
    copy (made on first use; ``reset=True`` starts it again, keeping a
    backup). ``original`` is "recorded" (the lesson's evidence file), "run"
    (the lesson's kernel through the sandbox too), or "none".
    """
    if original not in ("recorded", "run", "none"):
        raise CourseError(f"original must be 'recorded', 'run' or 'none' (got {original!r})")
    if path is not None and experiment is not None:
        raise CourseError("give a file or an experiment, not both")
    suggestion = None
    if experiment is not None:
        suggestion = get_suggestion(lesson, experiment)
        copy = experiment_copy(
            lesson, suggestion.name, suggestion.source(lesson.kernel_path.read_text("utf-8"))
        )
    elif path is not None:
        # run_variant reads it through the one reader of named files before anything runs: a FIFO
        # or a device (/dev/zero) is refused with a message, never waited on or read whole.
        copy = LearnerCopy(lesson, Path(path).expanduser())
    else:
        copy = learner_copy(lesson, reset=reset)
    result = run_variant(lesson, copy.path, timeout_s, command=command)
    base: evidence.Evidence | TryResult | None = None
    if original == "recorded":
        base = _recorded(lesson)
    elif original == "run":
        base = run_variant(lesson, lesson.kernel_path, timeout_s, command=command)
    return Tried(lesson, copy, result, suggestion, base)
