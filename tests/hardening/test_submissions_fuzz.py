"""Submissions and the grader under hostile input (course/quiz/submission.py, grade.py).

Every submission file, valid, mutated or random, is either graded with
exactly the scores a separate reference scorer (``_reference.py``) gives
its parsed responses, or skipped with a reason; the two agree on which.
No file is scored silently, none is lost, a temp file is never read, and
nothing raises out of ``grade_submissions`` or the reports. Folders also
hold symbolic links (to files, to folders, dangling) and FIFOs: each is
skipped with its reason, never followed or opened.
"""

from __future__ import annotations

import copy
import json
import math
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from course.quiz.grade import grade_submissions, item_statistics, write_reports
from course.quiz.loader import parse_quiz
from course.quiz.model import MultipleSelect, Numeric, Question, Quiz, ShortText, SingleChoice, WhichLine
from course.quiz.submission import FORMAT, SubmissionError, read_submission

from . import _reference as ref
from ._util import HOSTILE_TEXT, ROOT, assert_located, budget, fresh_dir, mutated_bytes, mutated_lines, seen

# The shipped Day 76 quiz plus questions that reach every partial-credit
# rule, every space rule, case sensitivity and a numeric tolerance.
EXTRA = """
[[questions]]
id = "x-off"
type = "multiple"
partial = "off"
points = 2
prompt = "p"
options = [{ id = "a", text = "A" }, { id = "b", text = "B" }, { id = "c", text = "C" }]
answers = ["a", "c"]
explanation = "e"
reference = "r"

[[questions]]
id = "x-coverage"
type = "multiple"
partial = "coverage"
points = 3
prompt = "p"
options = [{ id = "a", text = "A" }, { id = "b", text = "B" }, { id = "c", text = "C" }]
answers = ["b"]
explanation = "e"
reference = "r"

[[questions]]
id = "x-tol"
type = "numeric"
points = 1.5
rtol = 0.01
atol = 0.5
prompt = "p"
answer = -1e6
explanation = "e"
reference = "r"

[[questions]]
id = "x-exact"
type = "text"
case_sensitive = true
spaces = "exact"
points = 1
prompt = "p"
accept = ["Caf\\u00e9 <b>", " two  spaces "]
explanation = "e"
reference = "r"

[[questions]]
id = "x-remove"
type = "text"
spaces = "remove"
points = 1
prompt = "p"
accept = ["cp.async .bulk"]
explanation = "e"
reference = "r"
"""
KEY_TEXT = (ROOT / "content" / "quizzes" / "day76.toml").read_text("utf-8") + EXTRA
KEY: Quiz = parse_quiz(KEY_TEXT, ROOT / "content" / "quizzes" / "day76.toml")
OTHER_VERSION = parse_quiz(KEY_TEXT.replace("points = 1.5", "points = 2.5"), "other.toml").version

NUMBERS = (
    st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from((16384, 16384.0, 16384.4, -0.0, 10**400, -(10**400), 10**308, 1e308, -1e6, -1009999.0))
)


def response_for(q: Question) -> st.SearchStrategy[Any]:
    """Mostly well-formed responses, some of the wrong shape."""
    junk = st.sampled_from((None, True, 0, "", [], {}, [[[]]], "x" * 500, HOSTILE_TEXT[0]))
    if isinstance(q, SingleChoice):
        good = st.sampled_from([o.id for o in q.options])
    elif isinstance(q, MultipleSelect):
        good = st.lists(st.sampled_from([o.id for o in q.options]), unique=True)
    elif isinstance(q, Numeric):
        # Integers past float's range first: they once crashed the grader (OverflowError).
        good = st.sampled_from((10**400, -(10**400), 10**309, 2**1024)) | NUMBERS
    elif isinstance(q, ShortText):
        good = st.sampled_from(list(q.accept or ())).map(
            lambda a: a.upper() if len(a) % 2 else " " + a
        ) | st.text(max_size=30)
    elif isinstance(q, WhichLine):
        good = st.sampled_from([n for n, _ in q.listing])
    else:
        raise AssertionError(q)
    return st.one_of(good, good, good, junk)


# The grading run's time in the folder test; some submissions are dated after it.
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)  # noqa: UP017 (datetime.UTC is 3.11+)
LEARNERS = st.sampled_from(("alice", "bob", "c.d@uni.edu", "E_9-x")) | st.from_regex(
    r"[a-z][a-z0-9]{0,8}", fullmatch=True
)


@st.composite
def submission_dicts(draw: st.DrawFn, learners: st.SearchStrategy[str] = LEARNERS) -> dict[str, Any]:
    questions = draw(st.lists(st.sampled_from(KEY.questions), unique_by=lambda q: q.id))
    learner = draw(learners)
    return {
        "format": FORMAT,
        "quiz": KEY.id,
        "quiz_version": KEY.version,
        "learner": learner,
        "submitted_at": draw(
            st.sampled_from(
                (
                    "2025-01-01T10:00:00+00:00",
                    "2025-01-01T10:00:00Z",
                    "2025-06-01T23:59:59.5+05:30",
                    "2024-02-29T00:00:00-08:00",
                    "2025-03-01T12:00:01+00:00",  # one second after NOW
                    "9999-12-31T23:59:59+00:00",
                )
            )
        ),
        "responses": {q.id: draw(response_for(q)) for q in questions},
        "attempts": {q.id: draw(st.integers(0, 5)) for q in questions},
    }


_FLIPS = (None, True, 0, -1, 1.5, "", "text", [], {}, [1, "a"], {"a": {"b": []}}, 10**400, HOSTILE_TEXT[1])
# A fresh copy each draw: a shared [] or {} edited in place would tie two fields together.
_flip = st.sampled_from(_FLIPS).map(copy.deepcopy)


@st.composite
def mutated_dict(draw: st.DrawFn, learners: st.SearchStrategy[str] = LEARNERS) -> dict[str, Any]:
    data = draw(submission_dicts(learners))
    # About half the files stay valid, so the scores are compared often.
    for _ in range(draw(st.sampled_from((0, 0, 0, 1, 2, 3)))):
        kind = draw(
            st.sampled_from(("delete", "unknown", "flip", "response", "attempt", "learner", "time", "quiz"))
        )
        if kind == "delete" and data:
            del data[draw(st.sampled_from(sorted(data)))]
        elif kind == "unknown":
            data[draw(st.sampled_from(("score", "total", "grade", "Format", "responses ")))] = draw(_flip)
        elif kind == "flip" and data:
            data[draw(st.sampled_from(sorted(data)))] = draw(_flip)
        elif kind == "response" and isinstance(data.get("responses"), dict):
            qid = draw(st.sampled_from([q.id for q in KEY.questions] + ["no-such-question"]))
            data["responses"][qid] = draw(_flip | NUMBERS)
        elif kind == "attempt" and isinstance(data.get("attempts"), dict):
            qid = draw(st.sampled_from([q.id for q in KEY.questions]))
            data["attempts"][qid] = draw(st.sampled_from((-1, True, 1.0, 10**30, "2", None)))
        elif kind == "learner":
            data["learner"] = draw(
                st.sampled_from(
                    (
                        "../alice",
                        "/etc/passwd",
                        "alice\n",
                        ".hidden",
                        "a" * 65,
                        "al ice",
                        "ａlice",
                        "al\x00ice",
                    )
                )
            )
        elif kind == "time":
            data["submitted_at"] = draw(
                st.sampled_from(("2025-01-01T10:00:00", "yesterday", "", "2025-13-01T00:00:00+00:00"))
            )
        elif kind == "quiz":
            data[draw(st.sampled_from(("quiz", "quiz_version")))] = draw(
                st.sampled_from(("day78", OTHER_VERSION, ""))
            )
    return data


def as_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@st.composite
def submission_bytes(draw: st.DrawFn, learners: st.SearchStrategy[str] = LEARNERS) -> bytes:
    raw = as_bytes(draw(mutated_dict(learners)))
    text_edit = draw(
        st.sampled_from(
            ("none", "none", "none", "none", "none", "lines", "bytes", "dupkey", "nan", "deep", "utf16")
        )
    )
    if text_edit == "lines":
        raw = draw(mutated_lines(raw.decode("utf-8"), toml=False)).encode("utf-8")
    elif text_edit == "bytes":
        raw = draw(mutated_bytes(raw))
    elif text_edit == "dupkey":
        raw = raw.replace(b'"learner":', b'"learner": "mallory",\n  "learner":', 1)
    elif text_edit == "nan":
        raw = raw.replace(b'"attempts": {', b'"attempts": {"one-thread": NaN, ', 1)
    elif text_edit == "deep":
        raw = raw.replace(b'"responses": {', b'"responses": {"x": ' + b"[" * 20000 + b"]" * 20000 + b", ", 1)
    elif text_edit == "utf16":
        raw = raw.decode("utf-8").encode("utf-16")
    return raw


def expected(raw: bytes) -> dict[str, Any] | None:
    """The reference's view: the parsed submission if valid for KEY, else None."""
    try:
        data = ref.parse(raw)
        ref.fits(data, KEY)
    except ref.Invalid:
        return None
    return data


@budget("submission_mutated")
@given(raw=submission_bytes())
def test_read_submission_agrees_with_the_reference(scratch, raw: bytes):
    seen("submission_mutated")
    path = scratch / "alice.json"
    path.write_bytes(raw)
    want = expected(raw)
    try:
        got = read_submission(path, KEY)
    except SubmissionError as e:
        assert_located(e, path, SubmissionError)
        assert want is None, f"refused a submission the reference accepts: {e}"
        return
    assert want is not None, "accepted a submission the reference refuses"
    assert dict(got.responses) == want["responses"] and dict(got.attempts) == want["attempts"]
    assert got.learner == want["learner"]


@budget("submission_random")
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_random_bytes_are_refused_with_the_file(scratch, raw: bytes):
    seen("submission_random")
    path = scratch / "x.json"
    path.write_bytes(raw)
    try:
        read_submission(path, KEY)
    except SubmissionError as e:
        assert_located(e, path, SubmissionError)
    else:
        raise AssertionError("random bytes made a submission")


# File names a folder of submissions may hold; the last three are temp files
# an interrupted save can leave behind: the grader must never read them.
NAMES = (
    "day76/alice.json",
    "day76/bob.json",
    "day76/x.json",
    "a/day76/alice.json",
    "other/alice.json",
    "day76/.hidden.json",
    "a.json",
)
TEMP_NAMES = ("day76/.alice.json.k2j3.tmp", "day76/.bob.json.zz.tmp", ".x.json.tmp")
# Things that are not submissions, at places where a submission could be.
SPECIALS = ("day76/fifo.json", "day76/link.json", "linked", "day76/dangling.json")


def named_file(name: str) -> st.SearchStrategy[tuple[str, bytes]]:
    """A file at ``name`` whose learner field mostly matches its place (else it is skipped, not scored)."""
    stem = Path(name).stem
    learners = st.sampled_from((stem, stem, stem)) | LEARNERS
    return st.tuples(st.just(name), submission_bytes(learners))


def make_special(folder: Path, name: str, target: Path) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if name == "day76/fifo.json":
        os.mkfifo(path)
    elif name == "day76/link.json":
        path.symlink_to(target)  # a valid-looking submission outside the folder
    elif name == "linked":
        path.symlink_to(target.parent.parent, target_is_directory=True)
    else:
        path.symlink_to(folder / "no-such-file.json")


@budget("grader_folder")
@given(
    files=st.lists(st.sampled_from(NAMES).flatmap(named_file), max_size=6, unique_by=lambda f: f[0]),
    temps=st.lists(st.sampled_from(TEMP_NAMES), unique=True),
    specials=st.lists(st.sampled_from(SPECIALS if hasattr(os, "mkfifo") else SPECIALS[1:]), unique=True),
)
def test_grader_scores_like_the_reference_or_skips_with_a_reason(scratch, files, temps, specials):
    seen("grader_folder")
    base = fresh_dir(scratch)
    try:
        grade_and_compare(base, files, temps, specials)
    finally:
        shutil.rmtree(base)


def grade_and_compare(base: Path, files, temps, specials) -> None:  # type: ignore[no-untyped-def]
    folder = base / "subs"
    folder.mkdir()
    for name, raw in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(raw)
    for name in temps:  # a half-written save: valid-looking start, cut off
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b'{"format": "' + FORMAT.encode() + b'", "score": 100')
    outside = base / "elsewhere" / "day76" / "mallory.json"
    outside.parent.mkdir(parents=True)
    outside.write_bytes(as_bytes({**ref_valid(), "learner": "mallory"}))
    for name in specials:
        make_special(folder, name, outside)

    report = grade_submissions(KEY, folder, now=NOW)

    graded = {r.path: r for r in report.results}
    # Not graded, with why: skipped, or (naming another learner than its place) flagged unscored.
    skipped = {s.path: s.reason for s in report.skipped} | {f.path: f.reason for f in report.misplaced}
    assert len(skipped) == len(report.skipped) + len(report.misplaced)
    every = {folder / name for name, _ in files} | {folder / name for name in specials}
    temp_files = {folder / name for name in temps}
    # A folder beside day76/ that holds no day76/ is another quiz's: listed once, its files unread.
    others = {p for p in skipped if p.is_dir() and not p.is_symlink()}
    assert all("a folder of another quiz" in skipped[p] and p.parent == folder for p in others)
    inside = {p for p in every | temp_files if any(o in p.parents for o in others)}
    assert set(graded) | (set(skipped) - others) | inside == every | temp_files, (
        "a file was lost, or passed over in silence"
    )
    for temp in (
        temp_files - inside
    ):  # a save that never finished: listed with why, never read as a submission
        assert "temporary file" in skipped[temp], skipped[temp]
    assert not set(graded) & set(skipped)
    assert all(reason.strip() for reason in skipped.values())
    for name in specials:
        assert folder / name in skipped or folder / name in inside, f"{name} was graded"

    # The reference's verdict: valid files at their place, the latest per
    # learner graded, a time after NOW never preferred over one before it.
    latest: dict[str, tuple[Any, Path, dict[str, Any]]] = {}
    for path in sorted(folder / name for name, _ in files):
        data = expected(path.read_bytes())
        if data is None or not ref.placed(path, data, KEY):
            assert path in skipped or path in inside, f"{path} was graded but the reference refuses it"
            continue
        stamp = ref.stamp(data["submitted_at"])
        rank = (stamp <= NOW, stamp)
        earlier = latest.get(data["learner"])
        if earlier is None or rank >= earlier[0]:
            latest[data["learner"]] = (rank, path, data)
    assert set(graded) == {path for _, path, _ in latest.values()}
    for rank, path, data in latest.values():
        items = graded[path].items
        want = ref.scores(data, KEY)
        got = [i.score for i in items]
        assert all(
            math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-12) for g, w in zip(got, want, strict=True)
        ), (
            path,
            got,
            want,
        )
        assert [i.response for i in items] == [data["responses"].get(q.id) for q in KEY.questions]
        assert bool(graded[path].flags) == (not rank[0]), "a future time must be flagged, and only that"
    # The reports are written for whatever was graded, whatever the responses.
    stats = item_statistics(report)
    assert len(stats) == len(KEY.questions)
    write_reports(report, base / "out")


def ref_valid() -> dict[str, Any]:
    return {
        "format": FORMAT,
        "quiz": KEY.id,
        "quiz_version": KEY.version,
        "learner": "alice",
        "submitted_at": "2025-01-01T10:00:00+00:00",
        "responses": {},
        "attempts": {},
    }


def test_a_number_too_big_for_a_float_scores_zero_and_reports(tmp_path):
    # JSON allows any integer; float(10**400) raises OverflowError. The grader
    # must score it (0: it is no closer than infinity) and write its reports.
    data = {
        "format": FORMAT,
        "quiz": KEY.id,
        "quiz_version": KEY.version,
        "learner": "alice",
        "submitted_at": "2025-01-01T10:00:00+00:00",
        "responses": {"expect-bytes": 10**400, "x-tol": -(10**400), "one-thread": "one"},
        "attempts": {},
    }
    (tmp_path / "day76").mkdir()
    (tmp_path / "day76" / "alice.json").write_bytes(as_bytes(data))
    report = grade_submissions(KEY, tmp_path)
    assert report.skipped == ()
    (alice,) = report.results
    assert alice.total == 1.0
    written = write_reports(report, tmp_path / "out")
    assert "1" + "0" * 400 in written["long"].read_text()
