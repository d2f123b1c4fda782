"""Grade a folder of submissions against the instructor's key.

Scores come from the responses and the key alone (``Question.score``), never
from anything the learner's side wrote. A submission that is malformed, for
another quiz, or for another version of this quiz is reported by file name
and skipped; it never stops the run and is never scored. Overrides (regrades)
are applied last and recorded with their reason.

Identity comes from a file's place, ``<quiz>/<learner>.json``, which the
instructor sets when collecting (from the LMS that authenticated the
upload, or ``quiz collect`` from the hub); a file whose ``learner`` field
disagrees is not graded and is listed in ``flagged.csv`` for a look. Only
the quiz's own folder is read: given ``collected/`` holding ``quiz-a/`` and
``quiz-b/``, grading quiz-b enters ``collected/quiz-b/`` (and any folder that
holds a ``quiz-b/``, such as a section's) and lists each other folder once as
another quiz's, unread (``_walk``'s ``only``). The folder is
walked without following any symbolic link, and only regular files are
read: links, FIFOs, sockets and devices are listed as skipped, never opened.
``submitted_at`` is the learner's own clock: a time later than the grading
run is flagged, and such a submission never wins over one that is not.

Outputs (``write_reports``, ``course.quiz.reports``; re-exported here):
``long.csv``, ``wide.csv``, ``items.csv``, ``items.json``, ``skipped.csv``,
``flagged.csv``. The Canvas gradebook export is ``course.quiz.canvas``;
regrades are ``course.quiz.overrides``.

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
still written whole. Each distinct code answer runs once; ``jobs`` of them
run side by side, each child shown one GPU (``course.quiz.parallel``), so a
child that hangs holds one slot for its own time limit and the rest go on.

Code runs only inside a working sandbox (``course.quiz.code_runner``): where
none works, each code answer scores 0 as "not-run" with why and is flagged;
a runner made ``unconfined`` (``quiz grade --unconfined``) gets every learner
whose code ran flagged with ``UNCONFINED_FLAG``.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from .._confine import NoSandbox
from .._files import file_kind, shown
from ..errors import CourseError
from .model import Code, Quiz, Response
from .overrides import Override, load_overrides
from .parallel import Gpus, check_jobs, find_gpus, run_parallel
from .reports import REPORTS, ItemStats, item_statistics, report_files, write_reports
from .results import Flag, GradeReport, ItemResult, LearnerResult, Skipped, cut
from .submission import Submission, SubmissionError, check_place, parse_time, read_submission

if TYPE_CHECKING:
    from ..exercises.coding_check import CodingResult
    from .code_runner import CodeRunner

__all__ = [  # the reports and results are re-exported: callers import them from here
    "BUDGET_CAP_S",
    "BUDGET_NOTE",
    "UNCONFINED_FLAG",
    "REPORTS",
    "Flag",
    "GradeReport",
    "ItemResult",
    "ItemStats",
    "LearnerResult",
    "RunCode",
    "Skipped",
    "default_budget",
    "grade_submissions",
    "item_statistics",
    "load_overrides",
    "quiz_folder",
    "report_files",
    "write_reports",
]


class RunCode(Protocol):
    """Runs a code question's response (the piece) in child processes and says what happened
    (``course.quiz.code_runner.CodeRunner``); ``device``, when not None, is the ``CUDA_VISIBLE_DEVICES``
    its GPU child gets. Raising ``CourseError`` means refused before anything ran."""

    def __call__(self, question: Code, piece: str, *, device: str | None = None) -> CodingResult: ...


# What running one distinct piece came to: its result, its refusal, or None (the budget was spent first).
_Ran: TypeAlias = "CodingResult | CourseError | None"
# A distinct piece: the same text for the same exercise is run once, whichever question holds it.
_PieceKey: TypeAlias = tuple[str, str, str]


PER_PIECE_LIMITS = 3  # the child limits one piece may use: compile, CPU check, run
BUDGET_MARGIN_S = 60.0  # the run's own start-up and reports
BUDGET_CAP_S = 4 * 3600.0  # no grading run of code answers goes on longer than this unless asked
_CHILD_LIMIT_S = 20.0  # a runner that does not say its limit for one child (tryout.sandbox.DEFAULT_TIMEOUT_S)
BUDGET_NOTE = "not run: the grading run's time budget was spent"
UNCONFINED_FLAG = (
    "code answers graded UNCONFINED (--unconfined): the learner's code ran with the grader's rights"
)


def default_budget(pieces: int, child_limit_s: float) -> float:
    """The whole run's budget for ``pieces`` distinct code answers, each a child of at most ``child_limit_s``."""
    # A piece may use its limit more than once (the compile, the CPU check, the run), and the run has
    # its own start-up: room for three limits a piece and a minute, so no piece that keeps to its limits
    # is ever cut (a budget of one limit a piece cut the last of two hanging pieces on a busy machine).
    return min(BUDGET_CAP_S, max(1, pieces) * PER_PIECE_LIMITS * child_limit_s + BUDGET_MARGIN_S)


def _lone_surrogate(response: Response) -> str | None:
    """Where a text response holds a lone surrogate (JSON's ``"\\ud800"``, which is not a character), in words."""
    texts = [response] if isinstance(response, str) else response if isinstance(response, list) else []
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            return f"{shown(text[e.start])} at character {e.start + 1}"
    return None


def _piece_key(q: Code, piece: str) -> _PieceKey:
    return (q.lesson, q.exercise, piece)


def _score_code(q: Code, response: Response, attempts: int, ran: _Ran) -> tuple[ItemResult, str | None]:
    """A code response scored from what running it came to (``_run_code_answers``)."""
    if isinstance(ran, NoSandbox):  # not run: no sandbox works here, and --unconfined was not given
        item = ItemResult(q.id, response, 0.0, q.points, attempts, cut(f"not run: {ran.message}"), "not-run")
        return (
            item,
            f"question {q.id!r}: not run, no sandbox works on this machine; grade it again where one does",
        )
    if isinstance(
        ran, CourseError
    ):  # refused before running (the piece holds a marker line, the exercise is gone)
        return ItemResult(
            q.id, response, 0.0, q.points, attempts, cut(f"refused: {ran.message}"), "refused"
        ), None
    if ran is None:
        item = ItemResult(q.id, response, 0.0, q.points, attempts, BUDGET_NOTE, "not-run")
        return item, f"question {q.id!r}: {BUDGET_NOTE}; grade it again with a larger --budget"
    note = cut(f"{ran.outcome} (checked {ran.check}): {ran.headline}")
    item = ItemResult(q.id, response, q.points if ran.passed else 0.0, q.points, attempts, note, ran.outcome)
    flag = None
    if ran.outcome == "not-checked":
        flag = f"question {q.id!r}: the code could not be checked on this machine ({ran.headline}); grade it again where a GPU runs {q.lesson}"
    return item, flag


def _score_one(
    quiz: Quiz, submission: Submission, ran: dict[_PieceKey, _Ran] | None
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
            if response is None:
                items.append(ItemResult(q.id, response, 0.0, q.points, attempts))
                continue
            if ran is None:
                raise CourseError(f"question {q.id!r} is a code question: grading it needs a code runner")
            item, flag = _score_code(q, response, attempts, ran[_piece_key(q, str(response))])
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


def _walk(folder: Path, only: str | None = None) -> Iterator[tuple[Path, str | None]]:
    """Every file under ``folder``: a ``*.json`` to read with None, anything else with why it is skipped.

    Links are never followed (a link to a folder is reported, not entered);
    anything that is not a regular file or a folder is reported without
    being opened: opening a FIFO blocks until someone writes to it. Every
    other file is listed too (``Bob.JSON``, ``x.json.txt``), so nothing in
    the folder is passed over without a word. The walk keeps its own stack
    of folders, so no depth of nesting exhausts Python's recursion limit.
    With ``only`` (a quiz id), a folder directly in ``folder`` that neither
    is named ``only`` nor holds a folder so named is another quiz's: listed
    once, not entered.
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
            elif stat.S_ISDIR(mode) and only is not None and current == folder and not _holds(path, only):
                yield (
                    path,
                    (
                        f"a folder of another quiz, not read: grading quiz {only!r} reads {shown(folder / only)} "
                        "(quiz collect saves each quiz in a folder of its own)"
                    ),
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


def quiz_folder(folder: Path | str, quiz: Quiz) -> Path:
    """The folder that holds ``quiz``'s submissions: ``folder/<quiz id>`` when there is one, else ``folder``.

    ``quiz collect`` saves ``collected/<quiz>/<user>.json`` for every quiz it
    is given; grading one quiz reads its own folder, not the others'.
    """
    folder = Path(folder)
    if folder.name != quiz.id and (folder / quiz.id).is_dir() and not (folder / quiz.id).is_symlink():
        return folder / quiz.id
    return folder


def _holds(folder: Path, name: str) -> bool:
    """Whether ``folder`` is named ``name`` or holds a folder so named, at any depth (no link followed)."""
    if folder.name == name:
        return True
    return any(name in dirs for _, dirs, _ in os.walk(folder, followlinks=False))


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
    jobs: int = 1,
    gpus: Gpus | None = None,
) -> GradeReport:
    """Score every ``<quiz>/<learner>.json`` under ``folder`` (recursively) against ``key``.

    ``now`` is the time of the grading run (default: the clock); a
    ``submitted_at`` after it is flagged and never preferred. A quiz with
    code questions runs each code response through ``run_code`` (default:
    ``course.quiz.code_runner.CodeRunner()``: child processes with time limits,
    never this process) within ``budget_s`` seconds of ``clock`` for the
    whole run (see the module's docstring); ``progress(done, total)`` is told
    after each code answer, since running code takes seconds each. ``jobs``
    distinct answers run at a time, spread over ``gpus`` (default:
    ``course.quiz.parallel.find_gpus()``); each outcome is the one a run with
    ``jobs=1`` gives.
    """
    folder = Path(folder)
    now = now or datetime.now(timezone.utc)  # noqa: UP017 (datetime.UTC is 3.11+)
    if key.released:
        raise CourseError(
            "grading needs the instructor's key file; this is a released learner copy", path=key.path
        )
    if not folder.is_dir():
        raise CourseError("the submissions folder does not exist or is not a folder", path=folder)
    only = key.id if quiz_folder(folder, key) != folder else None
    made: CodeRunner | None = None
    if run_code is None and any(isinstance(q, Code) for q in key.questions):
        # Only a quiz with code questions needs the runner (the sandbox, the compilers).
        from .code_runner import CodeRunner

        run_code = made = CodeRunner()
    # Per learner: the preferred submission so far, its rank (not in the future, time) and
    # flags. Scoring comes after the choice, so a superseded submission's code never runs.
    latest: dict[str, tuple[tuple[bool, datetime], Path, Submission, tuple[str, ...]]] = {}
    skipped: list[Skipped] = []
    misplaced: list[Flag] = []
    for path, refused in sorted(_walk(folder, only)):
        if refused is not None:
            skipped.append(Skipped(path, refused))
            continue
        try:
            submission = read_submission(path, key)
        except SubmissionError as e:
            skipped.append(Skipped(path, e.message))
            continue
        try:
            check_place(path, submission)
        except SubmissionError as e:
            if path.parent.name != submission.quiz:  # a file in the wrong folder: the layout, not a learner
                skipped.append(Skipped(path, e.message))
            else:  # a file naming another learner than its place: someone should look
                misplaced.append(Flag(path, path.stem, cut(f"not graded: {e.message}")))
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
    graded = [latest[learner] for learner in sorted(latest)]
    try:
        ran = _run_code_answers(
            key, [entry[2] for entry in graded], run_code, budget_s, clock, progress, jobs, gpus
        )
    finally:
        if made is not None:
            made.close()  # its GPU workers end here
    # --unconfined: every learner whose code ran is flagged, so no report hides it (code_runner).
    unconfined = bool(getattr(run_code, "unconfined", False))
    results = []
    for _, path, submission, held in graded:
        items, code_flags = _score_one(key, submission, ran)
        if unconfined and any(i.outcome not in ("", "not-run", "refused") for i in items):
            code_flags += (UNCONFINED_FLAG,)
        results.append(
            LearnerResult(submission.learner, submission.submitted_at, path, items, held + code_flags)
        )
    if overrides is not None:
        results = _apply(results, load_overrides(overrides, key), key)
    return GradeReport(key, tuple(results), tuple(skipped), tuple(misplaced))


def _run_code_answers(
    key: Quiz,
    submissions: Sequence[Submission],
    run_code: RunCode | None,
    budget_s: float | None,
    clock: Callable[[], float],
    progress: Callable[[int, int], object] | None,
    jobs: int,
    gpus: Gpus | None,
) -> dict[_PieceKey, _Ran] | None:
    """Run every distinct code answer once, ``jobs`` at a time over ``gpus``, within the budget; progress told.

    In the order the learners are scored (by name, then question), the
    answers' distinct pieces are handed to ``course.quiz.parallel.run_parallel``;
    a piece whose turn comes once ``budget_s`` is spent is not run (None).
    ``progress(done, total)`` counts answers, so a piece several learners
    gave moves it once for each of them.
    """
    if budget_s is not None and not (isinstance(budget_s, int | float) and budget_s > 0):
        raise CourseError(f"the time budget must be a positive number of seconds (got {budget_s!r})")
    check_jobs(jobs)
    if run_code is None:
        return None
    answers = [
        (q, str(s.responses[q.id]))
        for s in submissions
        for q in key.questions
        if isinstance(q, Code)
        and s.responses.get(q.id) is not None
        and _lone_surrogate(s.responses[q.id]) is None
    ]
    pieces: dict[_PieceKey, tuple[Code, str]] = {}
    given: dict[_PieceKey, int] = {}  # how many answers are this piece
    for q, piece in answers:
        pieces.setdefault(_piece_key(q, piece), (q, piece))
        given[_piece_key(q, piece)] = given.get(_piece_key(q, piece), 0) + 1
    if budget_s is None:
        budget_s = default_budget(len(pieces), float(getattr(run_code, "timeout_s", _CHILD_LIMIT_S)))
    deadline = clock() + budget_s
    devices = (gpus if gpus is not None else find_gpus()).devices if pieces else ()
    done = 0

    def run(which: _PieceKey, device: str | None) -> _Ran:
        q, piece = pieces[which]
        try:
            return run_code(q, piece, device=device)
        except CourseError as e:  # refused before anything ran: scored 0 with the reason
            return e

    def told(which: _PieceKey, _ran: _Ran) -> None:
        nonlocal done
        for _ in range(given[which]):
            done += 1
            if progress is not None:
                progress(done, len(answers))

    return run_parallel(
        run_order(list(pieces), jobs),
        run,
        jobs=jobs,
        devices=devices,
        deadline=deadline,
        clock=clock,
        done=told,
    )


# A keyword of a loop (C++), in a piece: such a piece may run until its time limit.
_LOOP = re.compile(r"\b(?:while|for|do|goto)\b")


def run_order(pieces: Sequence[_PieceKey], jobs: int) -> list[_PieceKey]:
    """The order the distinct pieces start in: learner order, and side by side, the pieces with a loop first.

    Side by side the run lasts as long as its last slot: a hang (up to the
    GPU run's limit, 20 s, with the CPU check's 10 s beside it) that starts near the end
    makes the run's tail, however many slots the rest had. Starting the
    pieces most likely to take their whole limit first (longest first, the
    classic list-scheduling rule) leaves only short pieces for the end. A
    simulation of 300 answers, 15 of them 31-s hangs and the rest 0.65 s
    each, on 16 slots: 41 s loops first, a median of 57 s (up to 67 s) in
    shuffled learner order. Serially the
    order changes nothing but which answers a spent budget leaves unrun, so
    it stays the learners' (``jobs == 1``). Outcomes never depend on it.
    """
    if jobs == 1:
        return list(pieces)
    return sorted(pieces, key=lambda key: _LOOP.search(key[2]) is None)  # stable: learner order within each


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
