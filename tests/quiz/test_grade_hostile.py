"""The grader against a hostile submissions folder (issue 10, "What hostile input found in grading").

Each case was a real hole: a FIFO named ``x.json`` hung the grader; a
symbolic link was followed out of the folder and graded; a file that named
another learner replaced that learner's own submission, and a time in year
9999 always won; a 5 MB value was echoed whole into the terminal and
``skipped.csv``; two gradebook rows with one ``SIS Login ID`` were both
filled without a word.
"""

from __future__ import annotations

import csv
import io
import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest

from course.cli import main
from course.quiz.canvas import export_canvas
from course.quiz.grade import grade_submissions, write_reports
from course.quiz.loader import load_quiz
from course.quiz.submission import Submission

PERFECT = {"s1": "b", "m1": ["a", "b"], "n1": 16384, "t1": "secret answer TWO", "l1": 5}
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)  # noqa: UP017 (datetime.UTC is 3.11+)
# No message or CSV cell the grader writes about a submission is longer than this.
MESSAGE_LIMIT = 400


@pytest.fixture
def key(sample_quiz):
    return load_quiz(sample_quiz)


@pytest.fixture
def subs(tmp_path) -> Path:
    return tmp_path / "subs"


def submission(key, learner: str, responses: dict, when: str = "2025-01-01T10:00:00+00:00") -> dict:
    return Submission(key.id, key.version, learner, when, responses, {}).to_json()


def put(folder: Path, relative: str, data: dict | str | bytes) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, dict):
        data = json.dumps(data)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def grade_within(seconds: float, key, folder: Path, **kwargs):
    """grade_submissions in a thread; fail (instead of hanging the suite) if it blocks."""
    result: dict[str, object] = {}

    def work() -> None:
        try:
            result["report"] = grade_submissions(key, folder, **kwargs)
        except BaseException as e:  # pragma: no cover - reported below
            result["error"] = e

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"the grader blocked for more than {seconds} s")
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return result["report"]


# ---- 1. anything that is not a regular file ---------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_is_skipped_with_its_reason_and_never_opened(key, subs):
    put(subs, "day76/alice.json", submission(key, "alice", PERFECT))
    fifo = subs / "day76" / "x.json"
    os.mkfifo(fifo)
    try:
        report = grade_within(10, key, subs, now=NOW)
    finally:
        # Unblock a reader stuck in open() (the bug), so the thread can end.
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert [r.learner for r in report.results] == ["alice"]
    reasons = {s.path: s.reason for s in report.skipped}
    assert "not a regular file" in reasons[fifo] and "named pipe" in reasons[fifo]


# ---- 2. symbolic links ------------------------------------------------------------


def test_symbolic_links_are_skipped_with_their_reason(key, subs, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    outside = put(elsewhere, "day76/mallory.json", submission(key, "mallory", PERFECT))
    put(subs, "day76/alice.json", submission(key, "alice", {}))
    file_link = subs / "day76" / "mallory.json"
    file_link.symlink_to(outside)
    folder_link = subs / "linked"
    folder_link.symlink_to(elsewhere, target_is_directory=True)
    dangling = subs / "day76" / "gone.json"
    dangling.symlink_to(tmp_path / "no-such-file.json")

    report = grade_within(10, key, subs, now=NOW)

    assert [r.learner for r in report.results] == ["alice"], "a link was followed and graded"
    reasons = {s.path: s.reason for s in report.skipped}
    for link in (file_link, folder_link, dangling):
        assert "symbolic link" in reasons[link], (link, reasons.get(link))
    assert "not followed" in reasons[folder_link]


# ---- 3. identity comes from the file's place --------------------------------------


def test_a_submission_naming_another_learner_is_flagged_not_graded_and_replaces_nobody(key, subs):
    bob = put(subs, "day76/bob.json", submission(key, "bob", {"s1": "a"}))
    mismatch = put(
        subs, "day76/mismatch.json", submission(key, "bob", PERFECT, when="2025-02-01T10:00:00+00:00")
    )
    stray = put(subs, "day76/other/carol.json", submission(key, "carol", PERFECT))
    loose = put(subs, "dave.json", submission(key, "dave", PERFECT))
    put(subs, "day78/erin.json", submission(key, "erin", PERFECT))  # another quiz's folder

    report = grade_submissions(key, subs, now=NOW)

    assert [(r.learner, r.path, r.total) for r in report.results] == [("bob", bob, 0.0)]
    reasons = {s.path: s.reason for s in report.skipped}
    assert mismatch not in reasons, "a misplaced file is flagged (flagged.csv), not skipped"
    (flag,) = [f for f in report.flagged if f.path == mismatch]
    assert flag.learner == "mismatch" and flag.reason.startswith("not graded: ")
    assert "says learner 'bob'" in flag.reason and "ask 'mismatch' to submit again" in flag.reason
    assert report.misplaced == (flag,)
    assert "folder 'other'" in reasons[stray] and "'day76'" in reasons[stray]
    assert "'day76'" in reasons[loose]
    # Grading day76 does not read day78's folder: one line for it, none per file in it.
    assert "a folder of another quiz, not read" in reasons[subs / "day78"]
    assert not [p for p in reasons if "day78" in p.parts and p != subs / "day78"]
    # A section's folder that holds a day76/ is read (a/day76/...); given the quiz's own folder, only it.
    assert grade_submissions(key, subs, now=NOW).results == report.results
    assert [r.learner for r in grade_submissions(key, subs / "day76", now=NOW).results] == ["bob"]


def test_a_time_after_the_grading_run_is_flagged_and_not_preferred(key, subs):
    honest = put(subs, "a/day76/bob.json", submission(key, "bob", {"s1": "a"}))
    future = put(subs, "b/day76/bob.json", submission(key, "bob", PERFECT, when="9999-12-31T23:59:59+00:00"))
    lone = put(
        subs, "a/day76/carol.json", submission(key, "carol", PERFECT, when="2025-03-01T12:30:00+00:00")
    )

    report = grade_submissions(key, subs, now=NOW)

    graded = {r.learner: r for r in report.results}
    assert graded["bob"].path == honest, "a time in year 9999 won over a real submission"
    reasons = {s.path: s.reason for s in report.skipped}
    assert "later than this grading run" in reasons[future]
    # A learner whose only submission is dated in the future is graded, and flagged.
    assert graded["carol"].path == lone and graded["carol"].total == 6.0
    assert graded["carol"].flags and "later than this grading run" in graded["carol"].flags[0]
    assert not graded["bob"].flags
    assert [(f.path, f.learner) for f in report.flagged] == [(lone, "carol")]


def test_the_flag_reaches_the_reports_and_the_terminal(sample_quiz, key, subs, tmp_path, capsys):
    put(subs, "day76/carol.json", submission(key, "carol", PERFECT, when="9999-01-01T00:00:00+00:00"))
    written = write_reports(grade_submissions(key, subs, now=NOW), tmp_path / "out")
    with written["flagged"].open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["learner"] for r in rows] == ["carol"] and "later than" in rows[0]["reason"]
    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(tmp_path / "o2")]) == 0
    assert "flagged" in capsys.readouterr().err


# ---- 4. long values are cut ---------------------------------------------------------


def test_long_values_are_cut_in_messages_and_in_skipped_csv(sample_quiz, key, subs, tmp_path, capsys):
    long_value = "x" * 200_000
    cases = {
        "day76/alice.json": submission(key, "alice", {"s1": long_value}),  # not an option id
        "day76/bob.json": {**submission(key, "bob", {}), "quiz": long_value},
        "day76/carol.json": {**submission(key, "carol", {}), long_value: 1},  # an unknown field
        "day76/dave.json": {**submission(key, "dave", {}), "learner": long_value},
        "day76/erin.json": {**submission(key, "erin", {}), "submitted_at": long_value},
        "day76/fay.json": submission(key, "fay", {long_value: 1}),  # an unknown question
    }
    for name, data in cases.items():
        put(subs, name, data)
    put(subs, "day76/huge.json", b'{"responses": "' + b"y" * (5 * 1024 * 1024) + b'"}')

    report = grade_submissions(key, subs, now=NOW)
    assert report.results == ()
    assert len(report.skipped) == len(cases) + 1
    for skipped in report.skipped:
        assert len(skipped.reason) <= MESSAGE_LIMIT, (skipped.path.name, len(skipped.reason))
        assert "xxxxxxxxxx" in skipped.reason or "y" * 10 not in skipped.reason
    huge = next(s for s in report.skipped if s.path.name == "huge.json")
    assert "larger than" in huge.reason

    written = write_reports(report, tmp_path / "out")
    assert written["skipped"].stat().st_size < 10 * MESSAGE_LIMIT
    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(tmp_path / "o2")]) == 0
    err = capsys.readouterr().err
    assert len(err) < 20 * MESSAGE_LIMIT and max(len(line) for line in err.splitlines()) <= 2 * MESSAGE_LIMIT


# ---- 5. two gradebook rows with one SIS Login ID ------------------------------------

GRADEBOOK = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Day 76 quiz (1234)\r\n"
    "    Points Possible,,,,,6.00\r\n"
    '"Doe, Alice",101,s101,alice,A,\r\n'
    '"Roe, Bob",102,s102,bob,A,\r\n'
    '"Doe, Alice (2)",105,s105,alice,B,4\r\n'
    '"Student, Test",103,,,,\r\n'
    '"Test, Other",104,,,,\r\n'
)


def test_two_gradebook_rows_with_one_login_are_warned_about_and_named(
    sample_quiz, key, subs, tmp_path, capsys
):
    put(subs, "day76/alice.json", submission(key, "alice", PERFECT))
    put(subs, "day76/bob.json", submission(key, "bob", {"s1": "b"}))
    book = tmp_path / "gradebook.csv"
    book.write_text(GRADEBOOK, encoding="utf-8")
    report = grade_submissions(key, subs, now=NOW)
    result = export_canvas(report, book, "Day 76 quiz (1234)", tmp_path / "out.csv")
    assert result.duplicates == (("alice", (3, 5)),)
    rows = list(csv.reader(result.path.read_text(encoding="utf-8").splitlines()))
    # Neither of the two rows is filled: which one is alice is the instructor's call.
    assert rows[2][5] == "" and rows[4][5] == "4"
    assert rows[3][5] == "1" and result.filled == 1
    assert "alice" not in result.not_in_gradebook

    code = main(
        [
            "quiz", "grade", str(sample_quiz), str(subs), "-o", str(tmp_path / "o"),
            "--canvas", str(book), "--canvas-column", "Day 76 quiz (1234)",
        ]
    )  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "'alice'" in err and "rows 3 and 5" in err and "SIS Login ID" in err


# ---- 6. issue 24: text that is not text, names that are not text, reports that stay whole ----


def _dicts(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def _write_json_text(folder: Path, relative: str, text: str) -> Path:
    """A submission written as JSON text as given (``"\\ud800"`` stays an escape, as a learner's tool writes it)."""
    return put(folder, relative, text.encode("ascii"))


def test_a_lone_surrogate_in_a_text_response_scores_zero_with_a_reason_and_every_report_is_written(
    sample_quiz, key, subs, tmp_path, capsys
):
    data = json.dumps(submission(key, "alice", {**PERFECT, "t1": "PLACEHOLDER"}))
    _write_json_text(subs, "day76/alice.json", data.replace("PLACEHOLDER", "secret\\ud800two"))
    put(subs, "day76/bob.json", submission(key, "bob", PERFECT))
    out = tmp_path / "out"
    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(out)]) == 0
    long = list(_dicts(out / "long.csv"))
    alice = next(r for r in long if r["learner"] == "alice" and r["question"] == "t1")
    assert alice["score"] == "0" and "lone surrogate" in alice["note"] and "\\ud800" in alice["note"]
    assert alice["response"] == "secret\\ud800two"  # its escape: UTF-8 cannot hold the surrogate itself
    wide = {r["learner"]: r["total"] for r in _dicts(out / "wide.csv")}
    assert wide == {"alice": "5", "bob": "6"}  # the other answers of alice's are scored as ever
    flagged = list(_dicts(out / "flagged.csv"))
    assert [f["learner"] for f in flagged] == ["alice"] and "'t1'" in flagged[0]["reason"]
    json.loads((out / "items.json").read_text(encoding="utf-8"))  # whole, valid JSON
    assert "flagged" in capsys.readouterr().err


def _names_supported(folder: Path) -> bool:
    try:
        (folder / os.fsdecode(b"\xff-probe")).touch()
    except (OSError, UnicodeEncodeError):
        return False
    (folder / os.fsdecode(b"\xff-probe")).unlink()
    return True


def test_names_that_are_not_utf8_are_listed_escaped_and_every_report_is_new(
    sample_quiz, key, subs, tmp_path, capsys
):
    put(subs, "day76/alice.json", submission(key, "alice", PERFECT))
    if not _names_supported(subs):
        pytest.skip("this file system refuses names that are not UTF-8")
    out = tmp_path / "out"
    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(out)]) == 0  # the old reports
    put(subs, "day76/bob.json", submission(key, "bob", {"s1": "b"}))
    odd_file = subs / "day76" / os.fsdecode(b"caf\xe9.json")
    odd_file.write_bytes(b"{}")
    odd_folder = subs / os.fsdecode(b"\xfe\xff") / "day76"
    odd_folder.mkdir(parents=True)
    (odd_folder / "carol.json").write_text(json.dumps(submission(key, "dave", PERFECT)), encoding="utf-8")
    capsys.readouterr()

    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(out)]) == 0

    err = capsys.readouterr().err
    assert "caf\\xe9.json" in err and "\\xfe\\xff" in err
    skipped = list(_dicts(out / "skipped.csv"))
    files = sorted(r["file"] for r in skipped)
    assert files == [str(subs / "day76") + "/caf\\xe9.json"]
    # carol.json names dave: flagged, not graded, its folder's name escaped there too.
    flagged = [r["file"] for r in _dicts(out / "flagged.csv")]
    assert flagged == [str(subs) + "/\\xfe\\xff/day76/carol.json"]
    # Every report is of this run, none stale: bob is graded in each.
    wide = {r["learner"] for r in _dicts(out / "wide.csv")}
    assert wide == {"alice", "bob"}
    assert json.loads((out / "items.json").read_text(encoding="utf-8"))["graded"] == 2


def test_names_reach_the_terminal_escaped_and_the_csv_files_without_a_formula(
    sample_quiz, key, subs, tmp_path, capsys, monkeypatch
):
    put(subs, "day76/alice.json", submission(key, "alice", PERFECT))
    fake = "x\nskipped nothing: 0 files skipped\x1b[2J\u202e.json"
    put(subs, f"day76/{fake}", b"{}")
    put(subs, "=HYPERLINK(1)/day76/bob.json", submission(key, "mallory", PERFECT))
    put(subs, "-2+3/day76/bob.json", b"not json")
    monkeypatch.chdir(subs)
    out = tmp_path / "out"
    assert main(["quiz", "grade", str(sample_quiz), ".", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err
    assert not any(line.startswith("skipped nothing") for line in err.splitlines()), (
        "a name printed a fake line"
    )
    assert "x\\nskipped nothing: 0 files skipped\\x1b[2J\\u202e.json" in err
    rows = [
        row
        for report in ("skipped.csv", "flagged.csv")  # mallory's file names bob's place: flagged
        for row in list(csv.reader(io.StringIO((out / report).read_text(encoding="utf-8"), newline="")))[1:]
    ]
    cells = [cell for row in rows for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in cells), cells
    assert {row[0] for row in rows} >= {"'=HYPERLINK(1)/day76/bob.json", "'-2+3/day76/bob.json"}


def test_every_file_that_is_not_a_json_submission_is_listed_with_its_reason(key, subs):
    put(subs, "day76/alice.json", submission(key, "alice", PERFECT))
    names = {
        "day76/Bob.JSON": "the case matters",
        "day76/x.json.txt": "holds '.json' but does not end in it",
        "day76/x.json ": "blank after '.json'",
        "day76/notes.txt": "does not end in '.json'",
        "README": "does not end in '.json'",
        "day76/.alice.json.k2j3.tmp": "temporary file",
    }
    for name in names:
        put(subs, name, submission(key, "bob", PERFECT))
    os.symlink(subs / "README", subs / "day76" / "link-to-readme")
    report = grade_submissions(key, subs, now=NOW)
    assert [r.learner for r in report.results] == ["alice"]
    reasons = {s.path: s.reason for s in report.skipped}
    for name, words in names.items():
        assert words in reasons[subs / name], (name, reasons.get(subs / name))
    assert "symbolic link" in reasons[subs / "day76" / "link-to-readme"]
    assert len(reasons) == len(names) + 1


def test_folders_nested_1100_deep_are_walked_without_running_out_of_stack(key, subs):
    levels = [str(subs)]
    subs.mkdir()
    try:
        for _ in range(1100):  # one folder at a time: os.makedirs itself recurses once per level
            levels.append(os.path.join(levels[-1], "d"))
            os.mkdir(levels[-1])
        levels.append(os.path.join(levels[-1], "day76"))
        os.mkdir(levels[-1])
        put(Path(levels[-1]), "alice.json", submission(key, "alice", PERFECT))
        put(Path(levels[-1]), "note.txt", b"")
        report = grade_submissions(key, subs, now=NOW)
        assert [(r.learner, r.total) for r in report.results] == [("alice", 6.0)]
        assert [s.path.name for s in report.skipped] == ["note.txt"]
    finally:  # shutil.rmtree (pytest's clean-up) recurses too: take it down level by level
        for name in ("alice.json", "note.txt"):
            Path(levels[-1], name).unlink(missing_ok=True)
        for level in reversed(levels[1:]):
            if os.path.isdir(level):
                os.rmdir(level)


def test_a_write_that_fails_halfway_leaves_every_old_report_as_it_was(
    sample_quiz, key, subs, tmp_path, monkeypatch, capsys
):
    put(subs, "day76/alice.json", submission(key, "alice", PERFECT))
    out = tmp_path / "out"
    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(out)]) == 0
    (out / "mine.txt").write_text("the instructor's own file", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    put(subs, "day76/bob.json", submission(key, "bob", PERFECT))
    # The disk fills up from the fourth fsync on: a few reports are whole, the next is not.
    calls = {"n": 0}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] >= 4:
            raise OSError(28, os.strerror(28))  # ENOSPC
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    capsys.readouterr()
    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(out)]) == 2
    monkeypatch.setattr(os, "fsync", real_fsync)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after == before, "some reports are of the new run, others of the old"
    assert "none was changed" in capsys.readouterr().err


def test_a_gradebook_that_cannot_be_filled_leaves_every_report_as_it_was(sample_quiz, key, subs, tmp_path):
    put(subs, "day76/alice.json", submission(key, "alice", PERFECT))
    out = tmp_path / "out"
    assert main(["quiz", "grade", str(sample_quiz), str(subs), "-o", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    put(subs, "day76/bob.json", submission(key, "bob", PERFECT))
    book = tmp_path / "gradebook.csv"
    book.write_text(GRADEBOOK, encoding="utf-8")
    args = ["quiz", "grade", str(sample_quiz), str(subs), "-o", str(out), "--canvas", str(book)]
    assert main([*args, "--canvas-column", "No such column"]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert main([*args, "--canvas-column", "Day 76 quiz (1234)"]) == 0
    assert {p.name for p in out.iterdir()} == {*before, "canvas.csv"}
    assert not list(tmp_path.glob(".out.*")), "a temp folder was left beside the reports"


CODE_QUIZ = """\
[quiz]
id = "day78-graded"
title = "Day 78, graded"
lesson = "day78"

[[questions]]
id = "code1"
type = "code"
prompt = "Write coreOffset."
points = 4
reference = "PTX ISA, Canonical Layouts"
exercise = "core-offset"
explanation = "Cores along K first."
"""


def test_a_lone_surrogate_in_a_code_answer_is_refused_before_anything_runs(tmp_path):
    path = tmp_path / "key.toml"
    path.write_text(CODE_QUIZ, encoding="utf-8")
    code_key = load_quiz(path)
    data = json.dumps(submission(code_key, "alice", {"code1": "PLACEHOLDER"}))
    folder = tmp_path / "subs"
    _write_json_text(folder, "day78-graded/alice.json", data.replace("PLACEHOLDER", "return 0;\\udc80"))

    def run_code(question, piece, device=None):  # type: ignore[no-untyped-def]
        raise AssertionError("a piece that is not text was handed to the runner")

    report = grade_submissions(code_key, folder, now=NOW, run_code=run_code)
    (alice,) = report.results
    (item,) = alice.items
    assert (item.score, item.outcome) == (0.0, "refused") and "lone surrogate" in item.note
    assert report.flagged and "'code1'" in report.flagged[0].reason
    written = write_reports(report, tmp_path / "out")
    assert "return 0;\\udc80" in written["long"].read_text(encoding="utf-8")
