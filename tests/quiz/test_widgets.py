"""The quiz as widgets, driven headless (course/quiz/widgets.py)."""

from __future__ import annotations

import json
from pathlib import Path

import ipywidgets as widgets
import pytest

from course.errors import CourseError
from course.quiz import show_quiz
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.release import release_quiz
from course.quiz.widgets import QuizPanel

from ._data import KEY_SENTINELS, SAMPLE_QUIZ

PERFECT = {"s1": "b", "m1": ["a", "b"], "n1": "16384", "t1": "Secret Answer Two", "l1": 5}


def tree(widget: widgets.Widget) -> list[widgets.Widget]:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += tree(child)
    return found


def all_state(panel: QuizPanel) -> str:
    """Every trait of every widget on the page, as one JSON string."""
    return json.dumps([w.get_state() for w in tree(panel)], default=str)


def html_values(panel: QuizPanel) -> list[str]:
    return [w.value for w in tree(panel) if isinstance(w, widgets.HTML)]


@pytest.fixture
def practice(sample_quiz, tmp_path) -> QuizPanel:
    return show_quiz(sample_quiz, learner_id="alice", submissions_dir=tmp_path / "subs")


def test_show_quiz_returns_a_widget_with_one_panel_per_question(practice):
    assert isinstance(practice, widgets.VBox)
    assert list(practice.panels) == ["s1", "m1", "n1", "t1", "l1"]
    assert all(p.check_button is not None for p in practice.panels.values())


def test_text_plain_output_is_short_and_stable(practice):
    bundle = practice._repr_mimebundle_()
    assert bundle["text/plain"] == "QuizPanel(quiz='day76', mode='practice', questions=5)"


def test_check_shows_right_with_the_explanation(practice):
    panel = practice.panels["s1"]
    panel.input.value = "b"
    panel.check_button.click()
    assert "Right." in panel.feedback.value and "EXPLAIN-S1 because b." in panel.feedback.value
    assert "REF-S1" in panel.feedback.value
    assert panel.attempts == 1


def test_check_shows_wrong_and_partial(practice):
    single = practice.panels["s1"]
    single.input.value = "a"
    single.check_button.click()
    assert "Not right." in single.feedback.value
    multi = practice.panels["m1"]
    multi.checkboxes["a"].value = True
    multi.check_button.click()
    assert "Partly right: 1 of 2 points." in multi.feedback.value


def test_every_question_type_can_be_answered_headless(practice):
    for qid, response in PERFECT.items():
        panel = practice.panels[qid]
        panel.set_response(response)
        panel.check_button.click()
        assert "Right." in panel.feedback.value, qid


def test_check_with_no_answer_or_a_non_number_counts_no_attempt(practice):
    panel = practice.panels["n1"]
    panel.check_button.click()
    assert "answer first" in panel.feedback.value
    panel.text.value = "sixteen k"
    panel.check_button.click()
    assert "is not a number" in panel.feedback.value
    panel.text.value = "inf"
    panel.check_button.click()
    assert "not a finite number" in panel.feedback.value
    assert panel.attempts == 0
    panel.text.value = "1.6384e4"
    panel.check_button.click()
    assert "Right." in panel.feedback.value and panel.attempts == 1


def test_a_hex_or_binary_answer_is_accepted_where_the_question_declares_it(write_quiz, tmp_path):
    text = SAMPLE_QUIZ.replace('unit = "bytes"', 'unit = "bytes"\ninteger_forms = ["hex", "bin"]')
    panel = show_quiz(write_quiz(text, "day76.toml"), learner_id="alice", submissions_dir=tmp_path)
    n1 = panel.panels["n1"]
    for typed in ("0x4000", "0b100000000000000", "16384"):
        n1.text.value = typed
        n1.check_button.click()
        assert "Right." in n1.feedback.value, typed
    assert panel.responses()["n1"] == 16384
    # Where the question does not declare it, the learner is told to type decimal.
    plain = show_quiz(write_quiz(SAMPLE_QUIZ, "plain.toml"), submissions_dir=tmp_path)
    plain.panels["n1"].text.value = "0x4000"
    plain.panels["n1"].check_button.click()
    assert "decimal" in plain.panels["n1"].feedback.value


def test_practice_page_holds_no_explanation_before_a_check(practice):
    state = all_state(practice)
    assert "EXPLAIN-" not in state and "SECRET-ANSWER" not in state


def test_graded_mode_holds_no_key_in_any_widget(sample_quiz, tmp_path):
    panel = show_quiz(sample_quiz, mode="graded", learner_id="alice", submissions_dir=tmp_path)
    assert panel.quiz.released
    assert all(p.check_button is None for p in panel.panels.values())
    for qid, response in PERFECT.items():
        panel.panels[qid].set_response(response)
    state = all_state(panel)
    for sentinel in KEY_SENTINELS:
        if sentinel == "barrier_arrive_tx(bar, 1":
            continue  # the listing shows every line of the snippet, by design
        assert sentinel not in state, sentinel
    assert not [w for w in tree(panel) if isinstance(w, widgets.Button) and w.description == "Check"]


def test_graded_mode_from_a_released_copy(sample_quiz, tmp_path):
    learner = tmp_path / "learner.toml"
    release_quiz(sample_quiz, learner)
    panel = show_quiz(learner, mode="graded", learner_id="bob", submissions_dir=tmp_path / "subs")
    for qid, response in PERFECT.items():
        panel.panels[qid].set_response(response)
    panel.submit_button.click()
    report = grade_submissions(load_quiz(sample_quiz), tmp_path / "subs")
    assert report.results[0].total == 6.0
    assert report.results[0].items[0].attempts == 1  # graded attempts count submits


def test_practice_mode_refuses_a_released_copy(sample_quiz, tmp_path):
    learner = tmp_path / "learner.toml"
    release_quiz(sample_quiz, learner)
    with pytest.raises(CourseError, match="practice mode .* needs the key"):
        show_quiz(learner)


def test_quiz_text_is_escaped_in_every_html_widget(write_quiz, tmp_path):
    evil = "<script>alert(1)</script>"
    text = (
        SAMPLE_QUIZ.replace("Pick `b`.", f"Pick {evil} `<b>`")
        .replace("EXPLAIN-S1 because b.", f"{evil} <img src=x onerror=alert(2)>")
        .replace("Sample quiz", f"Title {evil}")
        .replace("REF-S1", evil)
    )
    panel = show_quiz(write_quiz(text, "day76.toml"), submissions_dir=tmp_path)
    s1 = panel.panels["s1"]
    s1.input.value = "b"
    s1.check_button.click()
    joined = "\n".join(html_values(panel))
    assert "<script" not in joined and "<img" not in joined
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in joined
    assert "<code>&lt;b&gt;</code>" in joined  # backticks become code, after escaping


def test_submit_writes_responses_never_a_score(practice, sample_quiz, tmp_path, monkeypatch):
    monkeypatch.setattr("course.quiz.widgets._now", lambda: "2025-02-03T04:05:06+00:00")
    for qid, response in PERFECT.items():
        practice.panels[qid].set_response(response)
    practice.panels["s1"].check_button.click()
    practice.panels["s1"].check_button.click()
    path = practice.submit()
    assert path == tmp_path / "subs" / "day76" / "alice.json"
    data = json.loads(path.read_text())
    assert set(data) == {"format", "quiz", "quiz_version", "learner", "submitted_at", "responses", "attempts"}
    assert data["quiz_version"] == load_quiz(sample_quiz).version
    assert data["responses"] == {**PERFECT, "n1": 16384}
    assert data["attempts"] == {"s1": 2, "m1": 0, "n1": 0, "t1": 0, "l1": 0}
    assert data["submitted_at"] == "2025-02-03T04:05:06+00:00"
    assert [p.name for p in path.parent.iterdir()] == ["alice.json"]  # no temp file left behind
    assert "Saved 5 of 5 answers" in practice.status.value


def test_submitting_again_replaces_the_file(practice):
    practice.panels["s1"].set_response("a")
    first = practice.submit()
    practice.panels["s1"].set_response("b")
    practice.submit_button.click()
    assert json.loads(first.read_text())["responses"] == {"s1": "b"}


def test_submit_refuses_an_unreadable_number_and_writes_nothing(practice, tmp_path):
    practice.panels["n1"].text.value = "12 bytes"
    assert practice.submit() is None
    assert "Nothing was saved" in practice.status.value and "&#x27;n1&#x27;" in practice.status.value
    assert not (tmp_path / "subs").exists()


def test_submit_without_a_learner_id_saves_nothing(sample_quiz, tmp_path):
    panel = show_quiz(sample_quiz, submissions_dir=tmp_path / "subs")
    panel.submit_button.click()
    assert "needs a learner id" in panel.status.value
    assert not (tmp_path / "subs").exists()


@pytest.mark.parametrize(
    "bad", ["../evil", "/etc/passwd", ".hidden", "a/b", "a\\b", "", "x" * 65, "al ice", 7]
)
def test_a_learner_id_cannot_leave_the_submissions_folder(sample_quiz, tmp_path, bad):
    with pytest.raises(CourseError, match="a learner id must be"):
        show_quiz(sample_quiz, learner_id=bad, submissions_dir=tmp_path / "subs")
    assert not (tmp_path / "subs").exists()


def test_bad_mode_is_refused(sample_quiz):
    with pytest.raises(CourseError, match="mode must be one of practice, graded"):
        show_quiz(sample_quiz, mode="exam")


def test_lesson_id_finds_the_quiz_and_the_default_submissions_folder(sample_quiz, course_root):
    panel = show_quiz("day76")
    assert panel.quiz.path == sample_quiz
    assert panel.submissions_dir == course_root / "submissions"


def test_line_question_lists_the_snippet_with_file_line_numbers(practice):
    panel = practice.panels["l1"]
    values = [value for _, value in panel.input.options]
    assert values == [3, 4, 5, 6, 7, 8]
    listing = next(w.value for w in panel.box.children if isinstance(w, widgets.HTML) and "<pre>" in w.value)
    assert "   5  " in listing and "barrier_arrive_tx" in listing


def test_the_shipped_quizzes_render(monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(Path(__file__).resolve().parents[2]))
    for lesson_id in ("day76", "day78"):
        panel = show_quiz(lesson_id)
        assert len(panel.panels) >= 10
