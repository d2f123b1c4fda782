"""A learner's submission: responses only, never a score.

A submission is one JSON file per learner and quiz,
``<submissions>/<quiz id>/<learner id>.json``, written atomically. It holds
the quiz id, the quiz version (``Quiz.version``), the learner id, the time,
the responses and how many times each question was checked or submitted.
It never holds a score: anything written on the learner's side can be
edited, so the grader scores the responses itself, and a file with any
field beyond these is refused as tampered or malformed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .._files import read_regular
from ..errors import CourseError
from ._io import encoded, write_private
from .model import Quiz, Response, ResponseError, brief

FORMAT = "hopper-course/quiz-submission/1"
_FIELDS = ("format", "quiz", "quiz_version", "learner", "submitted_at", "responses", "attempts")

# A learner id becomes a file name: letters, digits and . _ @ - only, no
# leading dot, at most 64 characters. Nothing here can name a parent folder
# or an absolute path.
_LEARNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}\Z")  # \Z: `$` would accept a final newline


class SubmissionError(CourseError):
    """A submission file is malformed, or does not fit its quiz."""


def validate_learner_id(learner_id: object) -> str:
    """Return ``learner_id`` if it is safe as a file name; raise otherwise."""
    if not isinstance(learner_id, str) or not _LEARNER.match(learner_id):
        raise SubmissionError(
            "a learner id must be 1-64 characters: letters, digits, '.', '_', '@' or '-', "
            f"starting with a letter or digit (got {brief(learner_id)}); it names the submission file, "
            "so it cannot contain '/' or start with '.'"
        )
    return learner_id


@dataclass(frozen=True)
class Submission:
    quiz: str
    quiz_version: str
    learner: str
    submitted_at: str  # ISO 8601 with a UTC offset
    responses: Mapping[str, Response]
    attempts: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "quiz": self.quiz,
            "quiz_version": self.quiz_version,
            "learner": self.learner,
            "submitted_at": self.submitted_at,
            "responses": dict(self.responses),
            "attempts": dict(self.attempts),
        }


def parse_time(text: str) -> datetime:
    """An ISO 8601 time; a final ``Z`` means UTC on every Python (3.10's fromisoformat refuses it)."""
    return datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)


def submission_path(folder: Path, quiz_id: str, learner_id: str) -> Path:
    """Where ``learner_id``'s submission of ``quiz_id`` lives under ``folder``."""
    folder = Path(folder)
    path = folder / quiz_id / f"{validate_learner_id(learner_id)}.json"
    # Belt and braces: the id rules already keep the path inside the folder.
    if path.resolve().parent != (folder / quiz_id).resolve():
        raise SubmissionError(f"learner id {brief(learner_id)} would write outside {folder}")
    return path


def write_submission(submission: Submission, folder: Path) -> Path:
    """Write atomically to ``folder/<quiz>/<learner>.json`` (0600, the quiz's folder 0700); return the path."""
    path = submission_path(folder, submission.quiz, submission.learner)
    text = json.dumps(submission.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return write_private(path, encoded(text))  # 0600 in a 0700 folder: the learner's alone


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {brief(key)} appears twice")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_submission(text: str | bytes) -> Submission:
    """Parse and structurally check one submission; raise SubmissionError."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except (ValueError, UnicodeDecodeError) as e:
        raise SubmissionError(f"not valid JSON ({e})") from None
    except RecursionError:
        raise SubmissionError("not valid JSON here: arrays or objects nest too deeply") from None
    if not isinstance(data, dict):
        raise SubmissionError(f"a submission must be a JSON object (got {type(data).__name__})")
    extra = [k for k in data if k not in _FIELDS]
    if extra:
        raise SubmissionError(
            f"unknown field {brief(extra[0])} (a submission holds only {', '.join(_FIELDS)}; "
            "scores are computed by the grader, never read from a submission)"
        )
    missing = [k for k in _FIELDS if k not in data]
    if missing:
        raise SubmissionError(f"missing field {missing[0]!r}")
    if data["format"] != FORMAT:
        raise SubmissionError(f"format must be {FORMAT!r} (got {brief(data['format'])})")
    for name in ("quiz", "quiz_version", "submitted_at"):
        if not isinstance(data[name], str) or not data[name]:
            raise SubmissionError(f"{name} must be non-empty text (got {brief(data[name])})")
    learner = validate_learner_id(data["learner"])
    try:
        stamp = parse_time(data["submitted_at"])
    except ValueError:
        raise SubmissionError(
            f"submitted_at must be an ISO 8601 time (got {brief(data['submitted_at'])})"
        ) from None
    if stamp.tzinfo is None:
        raise SubmissionError(f"submitted_at must carry a UTC offset (got {brief(data['submitted_at'])})")
    responses, attempts = data["responses"], data["attempts"]
    if not isinstance(responses, dict):
        raise SubmissionError(f"responses must be an object (got {type(responses).__name__})")
    if not isinstance(attempts, dict):
        raise SubmissionError(f"attempts must be an object (got {type(attempts).__name__})")
    for qid, count in attempts.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise SubmissionError(
                f"attempts[{brief(qid)}] must be a whole number 0 or more (got {brief(count)})"
            )
    return Submission(
        quiz=data["quiz"],
        quiz_version=data["quiz_version"],
        learner=learner,
        submitted_at=data["submitted_at"],
        responses=responses,
        attempts=attempts,
    )


def check_fits(submission: Submission, quiz: Quiz) -> None:
    """Raise SubmissionError unless ``submission`` answers this quiz version."""
    if submission.quiz != quiz.id:
        raise SubmissionError(f"this submission is for quiz {brief(submission.quiz)}, not {quiz.id!r}")
    if submission.quiz_version != quiz.version:
        raise SubmissionError(
            f"this submission was made against another version of quiz {quiz.id!r} "
            f"({submission.quiz_version[:19]}..., the key is {quiz.version[:19]}...); "
            "a question, an option or a listed kernel line changed since"
        )
    ids = {q.id for q in quiz.questions}
    for name, mapping in (("responses", submission.responses), ("attempts", submission.attempts)):
        unknown = [k for k in mapping if k not in ids]
        if unknown:
            raise SubmissionError(
                f"{name} names question {brief(unknown[0])}, which quiz {quiz.id!r} does not have"
            )
    for question in quiz.questions:
        try:
            question.check_response(submission.responses.get(question.id))
        except ResponseError as e:
            raise SubmissionError(e.message) from None


def check_place(path: Path, submission: Submission) -> None:
    """Raise SubmissionError unless ``path`` is ``.../<quiz>/<learner>.json`` for this submission.

    The ``learner`` field is written on the learner's side and says nothing
    by itself; the file's place is set by whoever collected it (the
    instructor, from the LMS that authenticated the upload). A file that
    names someone other than its place is refused, so it cannot replace
    another learner's submission.
    """
    path = Path(path)
    if path.parent.name != submission.quiz:
        raise SubmissionError(
            f"a submission of quiz {submission.quiz!r} must sit in a folder named {submission.quiz!r} "
            f"(it is in folder {brief(path.parent.name)}); the grader reads <quiz>/<learner>.json"
        )
    if path.name != f"{submission.learner}.json":
        raise SubmissionError(
            f"this file says learner {submission.learner!r}, but its place names learner "
            f"{brief(path.stem)}; identity comes from the file's place (<quiz>/<learner>.json), so it "
            f"is nobody's grade: collected from a hub, the place is the hub user who submitted it, so "
            f"this is {brief(path.stem)}'s file edited to name another (ask {brief(path.stem)} to submit "
            "again); from an LMS, move it only where the LMS shows who uploaded it"
        )


# A submission is a few kilobytes; anything far larger is not one, and is
# refused before it is read whole.
MAX_BYTES = 1024 * 1024


def read_submission(path: Path, quiz: Quiz | None = None) -> Submission:
    """Read, parse and (given ``quiz``) check one file; errors name the file.

    Only a regular file of at most ``MAX_BYTES`` is read: a symbolic link, a
    FIFO or a device is refused without reading (or waiting on) it.
    """
    path = Path(path)
    # The one reader of named files (course._files): no link followed, never blocks on a FIFO.
    raw = read_regular(path, "the submission", limit=MAX_BYTES, follow_links=False, error=SubmissionError)
    try:
        submission = parse_submission(raw)
        if quiz is not None:
            check_fits(submission, quiz)
    except SubmissionError as e:
        raise SubmissionError(e.message, path=path) from None
    return submission
