"""Suggested experiments: edits to a lesson's kernel, each with the outcome its page promises.

Declared as data beside the lesson, in ``content/experiments/<lesson>.toml``:

    [[experiment]]
    name = "integer-one"                  # lowercase, digits, - and _
    title = "Add the integer 1 instead of 1.0f"
    expect = "passed"                     # or a list of outcomes the page accepts
    explain = "Why it behaves so, in words."
    record = true                         # optional: `course record` runs it on the GPU and keeps
                                          # the run as evidence/<model>/<lesson>.<name>.json for the page

    [[experiment.change]]                 # one or more text substitutions
    old = "tile[r][c] + 1.0f;"            # must occur exactly once in the kernel
    new = "tile[r][c] + 1;"

The changes are ``course.kernel.variants.Substitution``s (whitespace runs match
any whitespace), applied to the lesson's kernel by ``course.kernel.variants.apply``,
so an edit to the kernel that moves the text is an error naming the
experiment, never a silent no-op. ``expect`` uses the sandbox's outcomes
(``course.tryout.sandbox.OUTCOMES``); the page runs the variant in the sandbox and
says whether this GPU confirmed what it promised. The table of experiments
(``suggestions_html``, ``page.suggested()``) shows beside each promise what the GPU
run kept as evidence came to (``recorded_words``), and says plainly where no run is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _paths
from .._html import escape
from .._toml import read_toml
from ..errors import CourseError
from ..kernel import evidence
from ..kernel.variants import Substitution, apply
from ..quiz._markup import inline
from .outcome import outcome_words

if TYPE_CHECKING:
    from ..lesson import Lesson

__all__ = [
    "EXPECTABLE",
    "Suggestion",
    "get_suggestion",
    "load_suggestions",
    "recorded_words",
    "suggestions_path",
]

# What an experiment may promise: every outcome of a run on a GPU that runs
# the lesson ("crashed" and "not-run" are never a lesson's point).
EXPECTABLE = ("passed", "failed-check", "compile-error", "fault", "refused", "timeout")
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


@dataclass(frozen=True)
class Suggestion:
    lesson_id: str
    name: str
    title: str  # one line: what to change
    changes: tuple[Substitution, ...]
    expect: tuple[str, ...]  # the outcomes the page promises (usually one)
    explain: str  # why it behaves so
    path: Path  # the TOML file that declares it
    record: bool = False  # `python -m course record` runs it and writes its evidence

    def source(self, original: str) -> str:
        """``original`` (the lesson's kernel) with this experiment's changes."""
        return apply(original, self.changes, self.name, self.path)

    @property
    def expect_text(self) -> str:
        """The promised outcomes as labels ("failed-check"): for scripts and the command line."""
        return " or ".join(self.expect)

    @property
    def expect_words(self) -> str:
        """The promised outcomes in the learner's words ("wrong result"): for the page."""
        return " or ".join(outcome_words(e) for e in self.expect)

    def confirms(self, outcome: str) -> bool:
        return outcome in self.expect

    def recording(self) -> evidence.Evidence | None:
        """The GPU run ``python -m course record`` kept of this experiment (``record = true``), if any."""
        from ..lessons import get_lesson  # the registry, when a page asks

        lesson = get_lesson(self.lesson_id)
        return evidence.load(lesson, evidence.path_of(lesson, self.name))


def recorded_words(s: Suggestion) -> str:
    """What the kept GPU run of ``s`` came to, for the page; never an outcome no run produced."""
    if not s.record:
        return "no recording kept for this one: run it with page.try_mine"
    ev = s.recording()
    if ev is None or ev.outcome is None:
        return "not recorded yet: no GPU run of it is kept in this checkout"
    words = f"{outcome_words(ev.outcome)} on {ev.device} ({ev.recorded_at[:10]})"
    return words if s.confirms(ev.outcome) else f"{words}: not what the page expects"


def suggestions_path(lesson: Lesson) -> Path:
    return _paths.content_dir() / "experiments" / f"{lesson.id}.toml"


def _text(table: dict[str, Any], key: str, path: Path, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CourseError(f"{where}: {key} must be a non-empty string (got {value!r})", path=path)
    return value


def _parse(lesson: Lesson, path: Path, data: dict[str, Any]) -> tuple[Suggestion, ...]:
    entries = data.get("experiment")
    if not isinstance(entries, list) or not entries:
        raise CourseError("the file must declare at least one [[experiment]]", path=path)
    out: list[Suggestion] = []
    for i, entry in enumerate(entries, start=1):
        where = f"experiment {i}"
        if not isinstance(entry, dict):
            raise CourseError(f"{where} must be a table (got {type(entry).__name__})", path=path)
        name = _text(entry, "name", path, where)
        if not set(name) <= _NAME_CHARS:
            raise CourseError(
                f"{where}: name must be lowercase letters, digits, - and _ (got {name!r})", path=path
            )
        where = f"experiment {name!r}"
        if any(s.name == name for s in out):
            raise CourseError(f"{where} is declared twice; names must be unique", path=path)
        raw_expect = entry.get("expect")
        expect = (raw_expect,) if isinstance(raw_expect, str) else tuple(raw_expect or ())
        if not expect or any(e not in EXPECTABLE for e in expect):
            raise CourseError(
                f"{where}: expect must be one of {', '.join(EXPECTABLE)}, or a list of them (got {raw_expect!r})",
                path=path,
            )
        record = entry.get("record", False)
        if not isinstance(record, bool):
            raise CourseError(f"{where}: record must be true or false (got {record!r})", path=path)
        raw_changes = entry.get("change")
        if not isinstance(raw_changes, list) or not raw_changes:
            raise CourseError(f"{where} must have at least one [[experiment.change]]", path=path)
        changes = []
        for change in raw_changes:
            if not isinstance(change, dict):
                raise CourseError(f"{where}: each change must be a table with old and new", path=path)
            new = change.get("new")
            if not isinstance(new, str):
                raise CourseError(f"{where}: a change's new must be a string (got {new!r})", path=path)
            changes.append(Substitution(_text(change, "old", path, where), new, str(change.get("why", ""))))
        out.append(
            Suggestion(
                lesson.id,
                name,
                _text(entry, "title", path, where),
                tuple(changes),
                expect,
                _text(entry, "explain", path, where).strip(),
                path,
                record,
            )
        )
    return tuple(out)


def load_suggestions(lesson: Lesson) -> tuple[Suggestion, ...]:
    """The lesson's suggested experiments; () when it declares none."""
    path = suggestions_path(lesson)
    if not path.exists():
        return ()
    _, data = read_toml(path, "the suggested experiments")
    return _parse(lesson, path, data)


def get_suggestion(lesson: Lesson, name: str) -> Suggestion:
    found = load_suggestions(lesson)
    for s in found:
        if s.name == name:
            return s
    names = ", ".join(s.name for s in found) or "none"
    raise CourseError(f"{lesson.id} has no suggested experiment {name!r} (its experiments: {names})")


def suggestions_html(suggestions: tuple[Suggestion, ...]) -> str:
    """A table of experiments for the page: name, the change (its explanation folded under it,
    so a page without a GPU says what happens and why), what the page expects, and what the GPU
    run kept as evidence came to (or that none is kept)."""
    cell = "text-align:left;vertical-align:top;padding:2px 8px"  # JupyterLab right-aligns cells by default
    rows = "".join(
        f"<tr><td style='{cell};white-space:nowrap'><code>{escape(s.name)}</code></td>"
        f"<td style='{cell}'>{inline(s.title)}<details><summary>what happens, and why</summary>"
        f"<p>{inline(s.explain)}</p></details></td><td style='{cell}'>{inline(s.expect_words)}</td>"
        f"<td style='{cell}'>{escape(recorded_words(s))}</td></tr>"
        for s in suggestions
    )
    head = "".join(
        f"<th style='{cell}'>{h}</th>" for h in ("name", "the change", "expected", "recorded on a GPU")
    )
    return f"<table class='course-suggestions'><tr>{head}</tr>{rows}</table>"
