"""Grading, overrides, statistics and the Canvas export (course/quiz/grade.py)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from course.errors import CourseError
from course.quiz.canvas import export_canvas
from course.quiz.grade import grade_submissions, item_statistics, load_overrides, write_reports
from course.quiz.loader import load_quiz
from course.quiz.release import release_quiz
from course.quiz.submission import Submission, write_submission

PERFECT = {"s1": "b", "m1": ["a", "b"], "n1": 16384, "t1": "secret answer TWO", "l1": 5}


def submit(
    folder: Path,
    quiz,
    learner: str,
    responses: dict,
    *,
    when: str = "2025-01-01T10:00:00+00:00",
    attempts: dict | None = None,
    version: str | None = None,
) -> Path:
    return write_submission(
        Submission(quiz.id, version or quiz.version, learner, when, responses, attempts or {}), folder
    )


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def key(sample_quiz):
    return load_quiz(sample_quiz)


@pytest.fixture
def subs(tmp_path) -> Path:
    return tmp_path / "subs"


def test_scores_come_from_responses_and_key(key, subs):
    submit(subs, key, "alice", PERFECT, attempts={"s1": 2})
    submit(subs, key, "bob", {"s1": "a", "m1": ["a", "c"], "n1": 16384.4, "t1": "nope"})
    submit(subs, key, "carol", {})
    report = grade_submissions(key, subs)
    totals = {r.learner: r.total for r in report.results}
    assert totals == {"alice": 6.0, "bob": 1.0, "carol": 0.0}  # bob: n1 within atol 0.5; m1 net-correct 0
    alice = report.results[0]
    assert [i.attempts for i in alice.items][:2] == [2, 0]
    assert report.skipped == ()


def test_reports_long_wide_items_and_skipped(key, subs, tmp_path):
    submit(subs, key, "alice", PERFECT)
    submit(subs, key, "bob", {"s1": "a", "m1": ["a"], "t1": 'has, a "comma"\nand a newline'})
    (subs / "day76" / "broken.json").write_text("{not json")
    written = write_reports(grade_submissions(key, subs), tmp_path / "out")
    long = read_csv(written["long"])
    assert len(long) == 2 * 5
    assert long[0].keys() == {"learner", "question", "response", "score", "max", "attempts", "note"}
    bob_t1 = next(r for r in long if r["learner"] == "bob" and r["question"] == "t1")
    assert bob_t1["response"] == 'has, a "comma"\nand a newline'  # csv quoting round-trips
    bob_m1 = next(r for r in long if r["learner"] == "bob" and r["question"] == "m1")
    assert (bob_m1["response"], bob_m1["score"], bob_m1["max"]) == ("a", "1", "2")
    wide = read_csv(written["wide"])
    assert list(wide[0]) == ["learner", "s1", "m1", "n1", "t1", "l1", "total"]
    assert wide[0] == {
        "learner": "alice",
        "s1": "1",
        "m1": "2",
        "n1": "1",
        "t1": "1",
        "l1": "1",
        "total": "6",
    }
    assert wide[1]["total"] == "1"
    items = {row["question"]: row for row in read_csv(written["items_csv"])}
    assert items["s1"]["percent_correct"] == "50.0"
    assert json.loads(items["s1"]["distribution"]) == {"a": 1, "b": 1, "c": 0}
    summary = json.loads(written["items_json"].read_text())
    assert summary["graded"] == 2 and summary["skipped"] == 1
    skipped = read_csv(written["skipped"])
    assert len(skipped) == 1 and skipped[0]["file"].endswith("broken.json")
    assert "not valid JSON" in skipped[0]["reason"]


def test_item_statistics_distributions(key, subs):
    submit(subs, key, "a1", {"m1": ["a", "b"], "n1": 16384, "t1": " Secret  Answer two"})
    submit(subs, key, "a2", {"m1": ["a", "c"], "n1": 1, "t1": "secret answer two"})
    submit(subs, key, "a3", {"m1": []})
    stats = {s.question: s for s in item_statistics(grade_submissions(key, subs))}
    assert stats["m1"].distribution == {"a": 2, "b": 1, "c": 1, "d": 0, "(none selected)": 1}
    assert stats["m1"].answered == 3 and stats["m1"].percent_correct == pytest.approx(100 / 3, abs=0.01)
    assert stats["m1"].mean_score == pytest.approx((2 + 0 + 0) / 3, abs=1e-4)
    assert stats["t1"].distribution == {"secret answer two": 2, "(blank)": 1}
    assert stats["n1"].distribution == {"16384": 1, "1": 1, "(blank)": 1}
    assert stats["s1"].answered == 0 and stats["s1"].percent_correct == 0.0


def test_a_text_response_cannot_become_a_spreadsheet_formula(key, subs, tmp_path):
    submit(subs, key, "alice", {"t1": '=HYPERLINK("http://x","y")', "n1": -3})
    written = write_reports(grade_submissions(key, subs), tmp_path / "out")
    rows = {r["question"]: r["response"] for r in read_csv(written["long"])}
    assert rows["t1"] == '\'=HYPERLINK("http://x","y")'
    assert rows["n1"] == "-3"  # a number stays a number


def _good(key, learner="mallory", **over) -> dict:
    data = Submission(key.id, key.version, learner, "2025-01-01T10:00:00+00:00", dict(PERFECT), {}).to_json()
    data.update(over)
    return data


def test_malformed_submissions_are_reported_by_name_and_never_scored(key, subs):
    submit(subs, key, "alice", PERFECT)
    folder = subs / "day76"
    cases = {
        "not-json.json": ("{", "not valid JSON"),
        "array.json": ("[]", "must be a JSON object"),
        "nan.json": (json.dumps(_good(key)).replace("16384", "NaN"), "not a number JSON allows"),
        "dup-key.json": ('{"quiz": "day76", "quiz": "day76"}', "appears twice"),
        "score-field.json": (json.dumps({**_good(key, responses={}), "score": 6}), "unknown field 'score'"),
        "missing.json": (
            json.dumps({k: v for k, v in _good(key).items() if k != "responses"}),
            "missing field",
        ),
        "other-quiz.json": (json.dumps(_good(key, quiz="day78")), "for quiz 'day78'"),
        "old-version.json": (json.dumps(_good(key, quiz_version="sha256:0000")), "another version"),
        "unknown-question.json": (json.dumps(_good(key, responses={"zz": 1})), "question 'zz'"),
        "bad-numeric.json": (json.dumps(_good(key, responses={"n1": "16384"})), "must be a number"),
        "bad-option.json": (json.dumps(_good(key, responses={"s1": "z"})), "one option id"),
        "bad-learner.json": (json.dumps(_good(key, learner="../../etc")), "a learner id must be"),
        "bad-line.json": (json.dumps(_good(key, responses={"l1": 99})), "line number of snippet"),
        "naive-time.json": (json.dumps(_good(key, submitted_at="2025-01-01T10:00:00")), "UTC offset"),
        "bad-attempts.json": (json.dumps(_good(key, attempts={"s1": -1})), "whole number 0 or more"),
    }
    for name, (text, _) in cases.items():
        (folder / name).write_text(text, encoding="utf-8")
    report = grade_submissions(key, subs)
    assert [r.learner for r in report.results] == ["alice"]
    reasons = {s.path.name: s.reason for s in report.skipped}
    for name, (_, words) in cases.items():
        assert words in reasons[name], (name, reasons[name])


def test_a_submission_made_from_the_released_copy_grades_against_the_key(sample_quiz, key, subs, tmp_path):
    learner = release_quiz(sample_quiz, tmp_path / "learner.toml")
    submit(subs, learner, "dana", PERFECT)
    assert grade_submissions(key, subs).results[0].total == 6.0


def test_grading_needs_the_key(sample_quiz, subs, tmp_path):
    learner = release_quiz(sample_quiz, tmp_path / "learner.toml")
    subs.mkdir()
    with pytest.raises(CourseError, match="needs the instructor's key"):
        grade_submissions(learner, subs)
    with pytest.raises(CourseError, match="does not exist"):
        grade_submissions(load_quiz(sample_quiz), tmp_path / "nowhere")


def test_the_latest_submission_of_a_learner_wins(key, subs):
    old = submit(subs / "a", key, "erin", PERFECT, when="2025-01-01T10:00:00+00:00")
    submit(subs / "b", key, "erin", {"s1": "a"}, when="2025-01-02T09:00:00+01:00")
    report = grade_submissions(key, subs)
    assert [(r.learner, r.total) for r in report.results] == [("erin", 0.0)]
    assert [s.path for s in report.skipped] == [old]
    assert "superseded" in report.skipped[0].reason


# ---- overrides -----------------------------------------------------------------


def test_overrides_from_csv_and_toml(key, subs, tmp_path):
    submit(subs, key, "alice", {"s1": "a"})
    submit(subs, key, "bob", {"s1": "a"})
    csv_file = tmp_path / "over.csv"
    csv_file.write_text('learner,question,score,reason\nalice,s1,1,"key allowed a, regraded"\n')
    toml_file = tmp_path / "over.toml"
    toml_file.write_text('[[override]]\nlearner = "bob"\nquestion = "m1"\nscore = 1.5\nreason = "appeal"\n')
    report = grade_submissions(key, subs, overrides=csv_file)
    alice = report.results[0]
    assert alice.total == 1.0 and alice.items[0].note == "override: key allowed a, regraded"
    report = grade_submissions(key, subs, overrides=toml_file)
    assert report.results[1].items[1].score == 1.5 and report.results[0].total == 0.0


@pytest.mark.parametrize(
    ("content", "suffix", "words"),
    [
        ("learner,question,score,reason\nzed,s1,1,x\n", ".csv", "learner 'zed' has no graded submission"),
        ("learner,question,score,reason\nalice,zz,1,x\n", ".csv", "no question 'zz'"),
        ("learner,question,score,reason\nalice,s1,2,x\n", ".csv", "from 0 to 1"),
        ("learner,question,score,reason\nalice,s1,abc,x\n", ".csv", "from 0 to 1"),
        ("learner,question,score,reason\nalice,s1,1,\n", ".csv", "reason must be non-empty"),
        ("learner,question,score,reason\nalice,s1,1,x\nalice,s1,0,y\n", ".csv", "a second override"),
        ("learner,question,points\nalice,s1,1\n", ".csv", "exactly the header"),
        (
            '[[override]]\nlearner = "alice"\nquestion = "s1"\nscore = true\nreason = "x"\n',
            ".toml",
            "from 0 to 1",
        ),
        ("[x]\n", ".toml", "only [[override]]"),
        ("a", ".txt", "must end in .csv or .toml"),
    ],
)
def test_bad_overrides_stop_the_run_with_a_located_message(key, subs, tmp_path, content, suffix, words):
    submit(subs, key, "alice", {})
    path = tmp_path / f"over{suffix}"
    path.write_text(content)
    with pytest.raises(CourseError, match=words.replace("(", r"\(").replace("[", r"\[")):
        grade_submissions(key, subs, overrides=path)


def test_override_messages_carry_the_csv_line(key, subs, tmp_path):
    submit(subs, key, "alice", {})
    path = tmp_path / "over.csv"
    path.write_text("learner,question,score,reason\nalice,s1,1,ok\nalice,m1,9,too much\n")
    with pytest.raises(CourseError, match=rf"{path}:3: score"):
        load_overrides(path, key)


# ---- Canvas --------------------------------------------------------------------

GRADEBOOK = (
    '\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,"Day 76 quiz (1234)","Essay, long (99)"\r\n'
    "    Points Possible,,,,,6.00,10.00\r\n"
    '"Doe, Alice",101,s101,alice,A,,8\r\n'
    '"Roe, Bob",102,s102,bob,A,3,\r\n'
    '"Student, Test",103,,,,,\r\n'
)


def test_canvas_export_fills_one_column_and_keeps_the_rest(key, subs, tmp_path):
    submit(subs, key, "alice", PERFECT)
    submit(subs, key, "zoe", {"s1": "b"})
    book = tmp_path / "gradebook.csv"
    book.write_text(GRADEBOOK, encoding="utf-8")
    report = grade_submissions(key, subs)
    result = export_canvas(report, book, "Day 76 quiz (1234)", tmp_path / "out.csv")
    rows = list(csv.reader(io.StringIO(result.path.read_text(encoding="utf-8"))))
    original = list(csv.reader(io.StringIO(GRADEBOOK.lstrip("\ufeff"))))
    assert rows[0] == original[0]
    assert rows[1][5] == "6" and rows[1][6] == "10.00"  # Points Possible row: the quiz maximum
    assert rows[2] == ["Doe, Alice", "101", "s101", "alice", "A", "6", "8"]
    assert rows[3] == original[3]  # bob has no submission: his cell stays as it was
    assert rows[4] == original[4]
    assert result.filled == 1 and result.not_in_gradebook == ("zoe",) and result.without_submission == 1


def test_canvas_export_refuses_a_missing_column(key, subs, tmp_path):
    submit(subs, key, "alice", PERFECT)
    book = tmp_path / "gradebook.csv"
    book.write_text(GRADEBOOK, encoding="utf-8")
    with pytest.raises(CourseError, match="no column 'Day 77 quiz'"):
        export_canvas(grade_submissions(key, subs), book, "Day 77 quiz", tmp_path / "out.csv")
    with pytest.raises(CourseError, match="no column 'Email'"):
        export_canvas(
            grade_submissions(key, subs), book, "Day 76 quiz (1234)", tmp_path / "o.csv", match_column="Email"
        )
    assert not (tmp_path / "out.csv").exists()


def test_a_final_z_means_utc_on_every_python():
    from datetime import timedelta

    from course.quiz.submission import parse_time

    assert parse_time("2025-01-01T10:00:00Z") == parse_time("2025-01-01T10:00:00+00:00")
    assert parse_time("2025-01-01T10:00:00Z").utcoffset() == timedelta(0)
    assert parse_time("2025-01-01T11:00:00+01:00") == parse_time("2025-01-01T10:00:00z")
