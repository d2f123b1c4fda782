"""Grade a folder of submissions against the instructor's key.

Scores come from the responses and the key alone (``Question.score``), never
from anything the learner's side wrote. A submission that is malformed, for
another quiz, or for another version of this quiz is reported by file name
and skipped; it never stops the run and is never scored. Overrides (regrades)
are applied last and recorded with their reason.

Identity comes from a file's place, ``<quiz>/<learner>.json``, which the
instructor sets when collecting (from the LMS that authenticated the
upload); a file whose ``learner`` field disagrees is skipped. The folder is
walked without following any symbolic link, and only regular files are
read: links, FIFOs, sockets and devices are listed as skipped, never opened.
``submitted_at`` is the learner's own clock: a time later than the grading
run is flagged, and such a submission never wins over one that is not.

Outputs (``write_reports``): ``long.csv`` (one row per learner and question),
``wide.csv`` (one row per learner, one column per question, total),
``items.csv`` and ``items.json`` (per question: percent correct, mean score,
response distribution), ``skipped.csv``, ``flagged.csv``. The Canvas gradebook export is
``course.quiz.canvas``; regrades are ``course.quiz.overrides``.

Whatever a submission holds, the run ends with whole reports: every file
that is not ``*.json`` is listed as skipped with why (``Bob.JSON``); the walk
keeps its own stack (no nesting exhausts Python's recursion); a text answer
holding a lone surrogate scores 0 with the reason; names go into the
terminal and the cells escaped (``_files.shown``), cells never start a
spreadsheet formula; and the reports are written to a temp folder and moved
into place together (``_io.write_files_atomic``): all new, or all as before.

Running code answers has a time budget for the whole run (``budget_s``;
default ``default_budget``: three child limits per distinct piece and a
minute, capped at ``BUDGET_CAP_S``). Once it is spent, every code answer
not run yet scores 0 with ``BUDGET_NOTE`` and is flagged; the reports are
still written whole.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from .._files import file_kind, shown
from ..errors import CourseError
from ._io import csv_bytes, encoded, write_files_atomic
from .model import (
    Code,
    MultipleSelect,
    Numeric,
    Question,
    Quiz,
    Response,
    ShortText,
    SingleChoice,
    fmt_points,
)
from .overrides import Override, load_overrides
from .submission import Submission, SubmissionError, check_place, parse_time, read_submission

if TYPE_CHECKING:
    from ..exercises.coding_check import CodingResult

# Runs a code question's response (the piece) and says what happened: ``course.quiz.code_runner.CodeRunner``.
RunCode = Callable[[Code, str], "CodingResult"]
# The same, or None when the run's time budget is spent before this piece ran.
_Budgeted = Callable[[Code, str], "CodingResult | None"]

PER_PIECE_LIMITS = 3  # the child limits one piece may use: compile, CPU check, run
BUDGET_MARGIN_S = 60.0  # the run's own start-up and reports
BUDGET_CAP_S = 4 * 3600.0  # no grading run of code answers goes on longer than this unless asked
_CHILD_LIMIT_S = 20.0  # a runner that does not say its limit for one child (tryout.sandbox.DEFAULT_TIMEOUT_S)
BUDGET_NOTE = "not run: the grading run's time budget was spent"


def default_budget(pieces: int, child_limit_s: float) -> float:
    """The whole run's budget for ``pieces`` distinct code answers, each a child of at most ``child_limit_s``."""
    # A piece may use its limit more than once (the compile, the CPU check, the run), and the run has
    # its own start-up: room for three limits a piece and a minute, so no piece that keeps to its limits
    # is ever cut (a budget of one limit a piece cut the last of two hanging pieces on a busy machine).
    return min(BUDGET_CAP_S, max(1, pieces) * PER_PIECE_LIMITS * child_limit_s + BUDGET_MARGIN_S)


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


def _cut(text: str, limit: int = REASON_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[: limit - 20]}... (cut: {len(text)} characters)"


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", _cut(self.reason))


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

    @property
    def flagged(self) -> tuple[Flag, ...]:
        """Graded submissions the instructor should look at, with why."""
        return tuple(Flag(r.path, r.learner, reason) for r in self.results for reason in r.flags)


# A spreadsheet runs a cell that starts with one of these as a formula; a
# learner's free text must not run on the instructor's machine (OWASP "CSV
# injection"). Such a text response is written with a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str) -> str:
    """A text cell for a report: a leading formula character made harmless with an apostrophe (OWASP)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def _response_text(question: Question, response: Response) -> str:
    if response is None:
        return ""
    if isinstance(response, list):
        return ";".join(response)
    text = str(response)
    return _cell(text) if isinstance(question, ShortText | Code) else text


def _lone_surrogate(response: Response) -> str | None:
    """Where a text response holds a lone surrogate (JSON's ``"\\ud800"``, which is not a character), in words."""
    texts = [response] if isinstance(response, str) else response if isinstance(response, list) else []
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            return f"{shown(text[e.start])} at character {e.start + 1}"
    return None


def _score_code(
    q: Code, response: Response, attempts: int, run_code: _Budgeted
) -> tuple[ItemResult, str | None]:
    """Run a code response in the runner's child processes; its outcome, never an exception, is the result."""
    if response is None:
        return ItemResult(q.id, response, 0.0, q.points, attempts), None
    try:
        result = run_code(q, str(response))
    except CourseError as e:  # refused before running (the piece holds a marker line, the exercise is gone)
        return ItemResult(
            q.id, response, 0.0, q.points, attempts, _cut(f"refused: {e.message}"), "refused"
        ), None
    if result is None:
        item = ItemResult(q.id, response, 0.0, q.points, attempts, BUDGET_NOTE, "not-run")
        return item, f"question {q.id!r}: {BUDGET_NOTE}; grade it again with a larger --budget"
    note = _cut(f"{result.outcome} (checked {result.check}): {result.headline}")
    item = ItemResult(
        q.id, response, q.points if result.passed else 0.0, q.points, attempts, note, result.outcome
    )
    flag = None
    if result.outcome == "not-checked":
        flag = f"question {q.id!r}: the code could not be checked on this machine ({result.headline}); grade it again where a GPU runs {q.lesson}"
    return item, flag


def _score_one(
    quiz: Quiz, submission: Submission, run_code: _Budgeted | None
) -> tuple[tuple[ItemResult, ...], tuple[str, ...]]:
    items = []
    flags: list[str] = []
    for q in quiz.questions:
        response = submission.responses.get(q.id)
        attempts = submission.attempts.get(q.id, 0)
        bad = _lone_surrogate(response)
        if bad is not None:  # no text can match it, and no compiler reads it: scored 0, and said why
            note = f"refused: the response holds a lone surrogate ({bad}), which is not a character; scored 0"
            outcome = "refused" if isinstance(q, Code) else ""
            items.append(ItemResult(q.id, response, 0.0, q.points, attempts, note, outcome))
            flags.append(f"question {q.id!r}: {note}")
            continue
        if isinstance(q, Code):
            if run_code is None:
                raise CourseError(f"question {q.id!r} is a code question: grading it needs a code runner")
            item, flag = _score_code(q, response, attempts, run_code)
            items.append(item)
            flags += [flag] if flag else []
            continue
        items.append(ItemResult(q.id, response, q.score(response), q.points, attempts))
    return tuple(items), tuple(flags)


def _not_json(name: str) -> str:
    """Why a file whose name does not end in ``.json`` is not read, in words that help rename it."""
    if name.startswith(".") and name.endswith(".tmp") and ".json." in name:
        why = "a temporary file left by a save that never finished (the save writes it, then renames it)"
    elif name.rstrip() != name and name.rstrip().endswith(".json"):
        why = "its name ends in a space or other blank after '.json'"
    elif name.lower().endswith(".json"):
        why = f"its name ends in {shown(name[-5:])!r}, not '.json' (the case matters)"
    elif ".json" in name.lower():
        why = "its name holds '.json' but does not end in it"
    else:
        why = "its name does not end in '.json'"
    return f"not read: {why}; the grader reads only <quiz>/<learner>.json"


def _walk(folder: Path) -> Iterator[tuple[Path, str | None]]:
    """Every file under ``folder``: a ``*.json`` to read with None, anything else with why it is skipped.

    Links are never followed (a link to a folder is reported, not entered);
    anything that is not a regular file or a folder is reported without
    being opened: opening a FIFO blocks until someone writes to it. Every
    other file is listed too (``Bob.JSON``, ``x.json.txt``), so nothing in
    the folder is passed over without a word. The walk keeps its own stack
    of folders, so no depth of nesting exhausts Python's recursion limit.
    """
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as e:
            yield current, f"cannot list this folder ({e.strerror or e})"
            continue
        folders = []
        for entry in entries:
            path = Path(entry.path)
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError as e:
                yield path, f"cannot read it ({e.strerror or e})"
                continue
            if stat.S_ISLNK(mode):
                try:
                    to_folder = entry.is_dir()  # follows the link, only to say what it points at
                except OSError:
                    to_folder = False
                if to_folder:
                    yield path, "a symbolic link to a folder, not followed: the grader follows no links"
                else:
                    yield (
                        path,
                        "a symbolic link, not followed: the grader follows no links; copy the file itself",
                    )
            elif stat.S_ISDIR(mode):
                folders.append(path)
            elif not entry.name.endswith(".json"):
                kind = "" if stat.S_ISREG(mode) else f"not a regular file but {file_kind(mode)}, and "
                yield path, f"{kind}{_not_json(entry.name)}"
            elif stat.S_ISREG(mode):
                yield path, None
            else:
                yield path, f"not a regular file but {file_kind(mode)}; skipped without opening it"
        pending.extend(reversed(folders))


def grade_submissions(
    key: Quiz,
    folder: Path | str,
    *,
    overrides: Path | str | None = None,
    now: datetime | None = None,
    run_code: RunCode | None = None,
    progress: Callable[[int, int], object] | None = None,
    budget_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> GradeReport:
    """Score every ``<quiz>/<learner>.json`` under ``folder`` (recursively) against ``key``.

    ``now`` is the time of the grading run (default: the clock); a
    ``submitted_at`` after it is flagged and never preferred. A quiz with
    code questions runs each code response through ``run_code`` (default:
    ``course.quiz.code_runner.CodeRunner()``: child processes with time limits,
    never this process) within ``budget_s`` seconds of ``clock`` for the
    whole run (see the module's docstring); ``progress(done, total)`` is told
    after each code answer, since running code takes seconds each.
    """
    folder = Path(folder)
    now = now or datetime.now(timezone.utc)  # noqa: UP017 (datetime.UTC is 3.11+)
    if key.released:
        raise CourseError(
            "grading needs the instructor's key file; this is a released learner copy", path=key.path
        )
    if not folder.is_dir():
        raise CourseError("the submissions folder does not exist or is not a folder", path=folder)
    if run_code is None and any(isinstance(q, Code) for q in key.questions):
        from .code_runner import CodeRunner

        run_code = CodeRunner()
    # Per learner: the preferred submission so far, its rank (not in the future, time) and
    # flags. Scoring comes after the choice, so a superseded submission's code never runs.
    latest: dict[str, tuple[tuple[bool, datetime], Path, Submission, tuple[str, ...]]] = {}
    skipped: list[Skipped] = []
    for path, refused in sorted(_walk(folder)):
        if refused is not None:
            skipped.append(Skipped(path, refused))
            continue
        try:
            submission = read_submission(path, key)
            check_place(path, submission)
        except SubmissionError as e:
            skipped.append(Skipped(path, e.message))
            continue
        stamp = parse_time(submission.submitted_at)
        future = stamp > now
        flags: tuple[str, ...] = (_future_flag(submission.submitted_at, now),) if future else ()
        entry = ((not future, stamp), path, submission, flags)
        earlier = latest.get(submission.learner)
        if earlier is None:
            latest[submission.learner] = entry
            continue
        keep, drop = (entry, earlier) if entry[0] >= earlier[0] else (earlier, entry)
        latest[submission.learner] = keep
        if drop[3] and not keep[3]:
            why = f"{drop[3][0]}; the submission of {submission.learner!r} in {shown(keep[1])} is graded instead"
        else:
            why = f"superseded by the later submission of {submission.learner!r} in {shown(keep[1])}"
        skipped.append(Skipped(drop[1], why))
    within = _within_budget(key, [entry[2] for entry in latest.values()], run_code, budget_s, clock, progress)
    results = []
    for learner in sorted(latest):
        _, path, submission, held = latest[learner]
        items, code_flags = _score_one(key, submission, within)
        results.append(LearnerResult(learner, submission.submitted_at, path, items, held + code_flags))
    if overrides is not None:
        results = _apply(results, load_overrides(overrides, key), key)
    return GradeReport(key, tuple(results), tuple(skipped))


def _within_budget(
    key: Quiz,
    submissions: list[Submission],
    run_code: RunCode | None,
    budget_s: float | None,
    clock: Callable[[], float],
    progress: Callable[[int, int], object] | None,
) -> _Budgeted | None:
    """``run_code`` for this run: None once ``budget_s`` is spent for a piece not run yet; progress told."""
    if budget_s is not None and not (isinstance(budget_s, int | float) and budget_s > 0):
        raise CourseError(f"the time budget must be a positive number of seconds (got {budget_s!r})")
    if run_code is None:
        return None
    answers = [
        (q.id, str(s.responses[q.id]))
        for s in submissions
        for q in key.questions
        if isinstance(q, Code)
        and s.responses.get(q.id) is not None
        and _lone_surrogate(s.responses[q.id]) is None
    ]
    if budget_s is None:
        budget_s = default_budget(len(set(answers)), float(getattr(run_code, "timeout_s", _CHILD_LIMIT_S)))
    deadline = clock() + budget_s
    ran: set[tuple[str, str]] = set()
    done = 0

    def within(q: Code, piece: str) -> CodingResult | None:
        nonlocal done
        try:
            if (q.id, piece) not in ran and clock() >= deadline:
                return None
            ran.add((q.id, piece))
            return run_code(q, piece)
        finally:
            done += 1
            if progress is not None:
                progress(done, len(answers))

    return within


def _future_flag(submitted_at: str, now: datetime) -> str:
    return (
        f"submitted_at {submitted_at} is later than this grading run "
        f"({now.isoformat(timespec='seconds')}): the learner's clock was wrong or the file was edited"
    )


def _apply(results: list[LearnerResult], overrides: list[Override], quiz: Quiz) -> list[LearnerResult]:
    by_learner = {r.learner: r for r in results}
    for o in overrides:
        if o.learner not in by_learner:
            raise CourseError(
                f"{o.where}: learner {o.learner!r} has no graded submission of quiz {quiz.id!r}; "
                "an override changes a graded score, it cannot create one"
            )
    changes = {(o.learner, o.question): o for o in overrides}
    updated = []
    for r in results:
        items = []
        for item in r.items:
            change = changes.get((r.learner, item.question))
            if change is not None:
                item = ItemResult(
                    item.question,
                    item.response,
                    change.score,
                    item.max,
                    item.attempts,
                    f"override: {change.reason}",
                )
            items.append(item)
        updated.append(LearnerResult(r.learner, r.submitted_at, r.path, tuple(items), r.flags))
    return updated


def _distribution(question: Question, responses: Iterable[Response]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for response in responses:
        if response is None:
            counts["(blank)"] += 1
        elif isinstance(question, MultipleSelect) and isinstance(response, list):
            counts.update(response)
            if not response:
                counts["(none selected)"] += 1
        elif isinstance(question, ShortText) and isinstance(response, str):
            counts[question.normalize(response)] += 1
        elif isinstance(question, Numeric) and isinstance(response, int | float):
            try:
                counts[format(float(response), ".10g")] += 1
            except OverflowError:  # an integer past float's range
                counts["(out of range)"] += 1
        else:
            counts[str(response)] += 1
    if isinstance(question, SingleChoice | MultipleSelect):
        ordered = {o.id: counts.pop(o.id, 0) for o in question.options}
        return {**ordered, **dict(counts.most_common())}
    return dict(counts.most_common(20))


@dataclass(frozen=True)
class ItemStats:
    question: str
    type: str
    max: float
    responses: int  # graded submissions
    answered: int  # of those, how many answered this question
    percent_correct: float  # full credit, after overrides
    mean_score: float
    distribution: dict[str, int]  # per option for choice questions, else the most common responses


def item_statistics(report: GradeReport) -> list[ItemStats]:
    """Per question: responses, answered, percent full credit, mean score, distribution."""
    stats = []
    n = len(report.results)
    for index, q in enumerate(report.quiz.questions):
        items = [r.items[index] for r in report.results]
        full = sum(1 for i in items if math.isclose(i.score, i.max))
        stats.append(
            ItemStats(
                question=q.id,
                type=q.type,
                max=q.points,
                responses=n,
                answered=sum(1 for i in items if i.response is not None),
                percent_correct=round(100.0 * full / n, 2) if n else 0.0,
                mean_score=round(sum(i.score for i in items) / n, 4) if n else 0.0,
                distribution=(
                    dict(Counter(i.outcome or "(blank)" for i in items).most_common())
                    if isinstance(q, Code)
                    else _distribution(q, (i.response for i in items))
                ),
            )
        )
    return stats


REPORTS = {
    "long": "long.csv",
    "wide": "wide.csv",
    "items_csv": "items.csv",
    "items_json": "items.json",
    "skipped": "skipped.csv",
    "flagged": "flagged.csv",
}


def report_files(report: GradeReport) -> dict[str, bytes]:
    """The reports' bytes by file name: long.csv, wide.csv, items.csv, items.json, skipped.csv, flagged.csv.

    A learner's text goes into a cell with any leading formula character made
    harmless (``_cell``); a file name goes in escaped (``_files.shown``); a lone
    surrogate, which UTF-8 cannot hold, goes in as its escape (``_io.encoded``).
    """
    qids = [q.id for q in report.quiz.questions]
    long_rows: list[list[object]] = [["learner", "question", "response", "score", "max", "attempts", "note"]]
    wide_rows: list[list[object]] = [["learner", *qids, "total"]]
    for r in report.results:
        for q, i in zip(report.quiz.questions, r.items, strict=True):
            long_rows.append(
                [
                    r.learner,
                    i.question,
                    _response_text(q, i.response),
                    fmt_points(i.score),
                    fmt_points(i.max),
                    i.attempts,
                    _cell(i.note),
                ]
            )
        wide_rows.append([r.learner, *(fmt_points(i.score) for i in r.items), fmt_points(r.total)])
    stats = item_statistics(report)
    item_rows: list[list[object]] = [
        ["question", "type", "max", "responses", "answered", "percent_correct", "mean_score", "distribution"]
    ]
    for st in stats:
        item_rows.append(
            [
                st.question,
                st.type,
                fmt_points(st.max),
                st.responses,
                st.answered,
                st.percent_correct,
                st.mean_score,
                _cell(json.dumps(st.distribution, ensure_ascii=False)),
            ]
        )
    skipped_rows: list[list[object]] = [["file", "reason"]]
    skipped_rows += [[_cell(shown(sk.path)), _cell(sk.reason)] for sk in report.skipped]
    flagged_rows: list[list[object]] = [["file", "learner", "reason"]]
    flagged_rows += [[_cell(shown(f.path)), f.learner, _cell(f.reason)] for f in report.flagged]
    summary = {
        "quiz": report.quiz.id,
        "version": report.quiz.version,
        "max_points": report.quiz.max_points,
        "graded": len(report.results),
        "skipped": len(report.skipped),
        "flagged": len(report.flagged),
        "items": [asdict(st) for st in stats],
    }
    return {
        REPORTS["long"]: csv_bytes(long_rows),
        REPORTS["wide"]: csv_bytes(wide_rows),
        REPORTS["items_csv"]: csv_bytes(item_rows),
        REPORTS["items_json"]: encoded(json.dumps(summary, indent=2, ensure_ascii=False) + "\n"),
        REPORTS["skipped"]: csv_bytes(skipped_rows),
        REPORTS["flagged"]: csv_bytes(flagged_rows),
    }


def write_reports(
    report: GradeReport, outdir: Path | str, *, also: Mapping[str, bytes] | None = None
) -> dict[str, Path]:
    """Write the reports (``report_files``) to ``outdir``, all of them new or (on a failure) all as before.

    ``also`` adds files to the same set (the CLI's ``canvas.csv``). Returns
    the paths by report key (``REPORTS``), and each of ``also``'s by its name.
    """
    files = report_files(report)
    extra = dict(also or {})
    clash = sorted(set(extra) & set(files))
    if clash:
        raise CourseError(f"{clash[0]} is a report's name; give the extra file another")
    written = write_files_atomic(outdir, {**files, **extra})
    paths = {key: written[name] for key, name in REPORTS.items()}
    return {**paths, **{name: written[name] for name in extra}}
