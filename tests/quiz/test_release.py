"""Learner copies without key material (course/quiz/release.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from course.errors import CourseError
from course.lessons import LESSONS
from course.quiz._markup import plain
from course.quiz.loader import load_quiz, parse_quiz
from course.quiz.model import QUESTION_CLASSES, Option, SingleChoice
from course.quiz.release import dumps_quiz, release_quiz

from ._data import KEY_SENTINELS

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
KEY_FIELD_NAMES = {name for cls in QUESTION_CLASSES.values() for name in cls.KEY_FIELDS}


def assert_no_key(path: Path) -> None:
    """Fails if a released file still carries any key field."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["quiz"]["released"] is True
    for question in data["questions"]:
        leaked = KEY_FIELD_NAMES & set(question)
        assert not leaked, f"question {question['id']!r} still carries {sorted(leaked)}"
        for option in question.get("options", []):
            assert set(option) == {"id", "text"}


def test_release_writes_a_learner_copy_with_no_key(sample_quiz, tmp_path):
    out = tmp_path / "learner.toml"
    learner = release_quiz(sample_quiz, out)
    assert_no_key(out)
    text = out.read_text(encoding="utf-8")
    for sentinel in KEY_SENTINELS:
        assert sentinel not in text
    assert learner.released and not any(q.has_key for q in learner.questions)


def test_release_keeps_everything_the_learner_sees(sample_quiz, tmp_path):
    key = load_quiz(sample_quiz)
    learner = release_quiz(sample_quiz, tmp_path / "learner.toml")
    assert learner.version == key.version
    assert learner.view() == key.view()
    assert load_quiz(tmp_path / "learner.toml").version == key.version
    assert learner.question("l1").listing == key.question("l1").listing


def test_assert_no_key_catches_a_leaked_field(sample_quiz, tmp_path):
    out = tmp_path / "learner.toml"
    release_quiz(sample_quiz, out)
    out.write_text(out.read_text().replace('type = "numeric"', 'type = "numeric"\nanswer = 16384'))
    with pytest.raises(AssertionError, match="still carries"):
        assert_no_key(out)


def test_release_refuses_a_learner_copy_and_overwriting_the_key(sample_quiz, tmp_path):
    out = tmp_path / "learner.toml"
    release_quiz(sample_quiz, out)
    with pytest.raises(CourseError, match="already a learner copy"):
        release_quiz(out, tmp_path / "again.toml")
    before = sample_quiz.read_text()
    with pytest.raises(CourseError, match="must not overwrite the key"):
        release_quiz(sample_quiz, sample_quiz)
    assert sample_quiz.read_text() == before


def test_release_of_a_bad_quiz_writes_nothing(write_quiz, tmp_path):
    bad = write_quiz('[quiz]\nid = "x"\n')
    with pytest.raises(CourseError):
        release_quiz(bad, tmp_path / "out.toml")
    assert not (tmp_path / "out.toml").exists()


@pytest.mark.parametrize("lesson_id", ["day76", "day78"])
def test_shipped_quizzes_release_without_key(lesson_id, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    key_path = LESSONS[lesson_id].quiz_path
    out = tmp_path / f"{lesson_id}.toml"
    learner = release_quiz(key_path, out)
    assert_no_key(out)
    key = load_quiz(key_path)
    text = out.read_text(encoding="utf-8")
    for q in key.questions:
        assert q.explanation not in text
    assert learner.version == key.version and len(learner.questions) == len(key.questions)


def test_dumps_with_key_round_trips(sample_quiz):
    key = load_quiz(sample_quiz)
    again = parse_quiz(dumps_quiz(key, include_key=True), sample_quiz)
    assert again.questions == key.questions
    assert again.version == key.version


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda s: s.strip()
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=_TEXT, option=_TEXT, explanation=_TEXT)
def test_any_text_survives_the_toml_writer(course_root, prompt, option, explanation):
    from course.quiz.model import Quiz

    # Two options that read the same are refused by design (test_schema_errors_name_question_field_and_line);
    # this test is about the writer, so the generated option must read differently.
    assume(" ".join(plain(option).split()) != "other")
    q = SingleChoice(
        id="q",
        prompt=prompt,
        points=1.5,
        reference="r",
        explanation=explanation,
        options=(Option("a", option), Option("b", "other")),
        answer="a",
    )
    quiz = Quiz(id="x", title='t"\\\x7f', lesson="day76", questions=(q,), released=False)
    again = parse_quiz(dumps_quiz(quiz, include_key=True))
    assert again.questions == (q,)
    assert again.title == quiz.title
    learner = parse_quiz(dumps_quiz(quiz))
    assert learner.released and learner.questions[0].prompt == prompt


def test_a_graded_quiz_is_shown_from_its_released_copy_and_a_key_there_is_refused(
    course_root, tmp_path, capsys
):
    from hub_files import GRADED_ID, KEY_ONLY, release_graded

    from course.cli import main
    from course.quiz.widgets import show_quiz

    released = release_graded(tmp_path / "hopper-course-keys", course_root)
    panel = show_quiz(GRADED_ID, mode="graded")
    assert panel.quiz.released and panel.quiz.path == released
    assert main(["quiz", "validate", str(released)]) == 0
    # The key put where the released copy belongs: validate refuses it, and says where keys live.
    released.write_text((tmp_path / "hopper-course-keys" / f"{GRADED_ID}.toml").read_text())
    assert KEY_ONLY in released.read_text()
    capsys.readouterr()
    assert main(["quiz", "validate", str(released)]) == 1
    assert "keep a graded quiz's key in ~/hopper-course-keys/" in capsys.readouterr().err
