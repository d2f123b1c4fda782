"""Submit on JupyterHub (course/quiz/hub.py): as the hub's user, into their own workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course.quiz import show_quiz
from course.quiz.grade import grade_submissions
from course.quiz.hub import submit_place
from course.quiz.loader import load_quiz


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def on_hub(monkeypatch, own_workspace):
    monkeypatch.setenv("JUPYTERHUB_USER", "alice")
    monkeypatch.setenv("HOME", str(own_workspace.parent))  # the workspace is in the learner's home
    return own_workspace


def test_off_a_hub_the_page_decides(tmp_path):
    place = submit_place("bob", tmp_path / "subs")
    assert (place.learner, place.folder, place.note, place.hub) == ("bob", tmp_path / "subs", "", False)


def test_on_a_hub_submit_writes_as_the_hub_user_into_their_workspace(sample_quiz, on_hub, tmp_path):
    panel = show_quiz(sample_quiz, learner_id="alice")
    panel.panels["s1"].set_response("b")
    path = panel.submit()
    assert path == on_hub / "submissions" / "day76" / "alice.json"
    assert json.loads(path.read_text())["learner"] == "alice"
    assert "as learner <b>alice</b> (your JupyterHub user name)" in panel.submit_note.value
    assert "collects this file from your JupyterHub server" in panel.status.value
    assert "upload" not in panel.status.value
    assert not (tmp_path / "checkout" / "submissions").exists()


def test_on_a_hub_another_learner_id_is_ignored_and_said_so(sample_quiz, on_hub, tmp_path):
    panel = show_quiz(sample_quiz, learner_id="bob", submissions_dir=tmp_path / "shared")
    assert panel.learner_id == "alice"
    assert "learner_id=&#x27;bob&#x27; is ignored" in panel.submit_note.value
    assert "submissions_dir is ignored" in panel.submit_note.value
    panel.panels["s1"].set_response("b")
    panel.submit_button.click()
    # Only alice's file, only in her workspace (her progress beside it); nothing in the shared folder.
    assert _files(on_hub) == [
        "progress/alice.json",
        "progress/alice.json.lock",
        "submissions/day76/alice.json",
    ]
    assert not (tmp_path / "shared").exists()
    # The grader, given what alice's server holds, scores alice and nobody else.
    report = grade_submissions(load_quiz(sample_quiz), on_hub / "submissions")
    assert [r.learner for r in report.results] == ["alice"]


def test_on_a_hub_a_user_name_that_cannot_name_a_file_saves_nothing_and_says_why(
    sample_quiz, on_hub, monkeypatch
):
    monkeypatch.setenv("JUPYTERHUB_USER", "a+b")
    panel = show_quiz(sample_quiz, learner_id="alice")
    assert panel.learner_id is None
    assert "cannot name a submission file" in panel.submit_note.value
    panel.panels["s1"].set_response("b")
    assert panel.submit() is None
    assert "Nothing was saved: your JupyterHub user name" in panel.status.value
    assert not (on_hub / "submissions").exists()


def test_on_a_hub_the_workspace_folder_given_again_is_no_news(sample_quiz, on_hub):
    panel = show_quiz(sample_quiz, submissions_dir=on_hub / "submissions")
    assert "ignored" not in panel.submit_note.value


def test_on_a_hub_a_workspace_outside_the_home_saves_nothing_and_says_why(
    sample_quiz, on_hub, monkeypatch, tmp_path
):
    monkeypatch.setenv("HOME", str(tmp_path / "home" / "alice"))
    panel = show_quiz(sample_quiz)
    assert panel.learner_id is None
    assert "outside your home folder" in panel.submit_note.value
    panel.panels["s1"].set_response("b")
    assert panel.submit() is None
    assert "Nothing was saved: your answers would be saved in" in panel.status.value
    assert not (on_hub / "submissions").exists()
