"""Submit on JupyterHub (course/quiz/hub.py): as the hub's user, into their own workspace."""

from __future__ import annotations

import http.server
import json
import socket
import threading
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


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_on_a_hub_the_submission_and_the_workspace_are_the_learners_alone(sample_quiz, on_hub):
    panel = show_quiz(sample_quiz)
    panel.panels["s1"].set_response("b")
    path = panel.submit()
    assert path is not None and _mode(path) == 0o600
    assert _mode(path.parent) == 0o700 and _mode(on_hub) == 0o700


class _Service(http.server.BaseHTTPRequestHandler):
    got: list[tuple[str, str, bytes]] = []

    def do_PUT(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Service.got.append((self.path, self.headers["Authorization"], body))
        answer = json.dumps({"quiz": "day76", "user": "alice", "bytes": len(body)}).encode()
        self.send_response(201)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


def test_on_a_hub_with_the_service_submit_sends_the_file_with_the_servers_own_token(
    sample_quiz, on_hub, monkeypatch
):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv(
            "COURSE_SUBMIT_URL", f"http://127.0.0.1:{server.server_address[1]}/services/hopper-submit/"
        )
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "alices-server-token")
        panel = show_quiz(sample_quiz)
        panel.panels["s1"].set_response("b")
        path = panel.submit()
    finally:
        server.shutdown()
        server.server_close()
    assert path is not None
    assert _Service.got == [
        ("/services/hopper-submit/api/submissions/day76", "token alices-server-token", path.read_bytes())
    ]
    assert "Sent to your instructor through JupyterHub" in panel.status.value


@pytest.mark.parametrize("token", ["", "t"])
def test_on_a_hub_a_service_that_cannot_take_it_keeps_the_file_and_says_so(
    sample_quiz, on_hub, monkeypatch, token
):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # nothing listens here once the socket is closed
    monkeypatch.setenv("COURSE_SUBMIT_URL", f"http://127.0.0.1:{closed}/services/hopper-submit/")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", token)
    panel = show_quiz(sample_quiz)
    panel.panels["s1"].set_response("b")
    path = panel.submit()
    assert path is not None and path.is_file()  # kept in the learner's folder all the same
    assert "<b>It was not sent to your instructor</b>" in panel.status.value
    why = "has no JUPYTERHUB_API_TOKEN" if not token else "did not answer (ConnectionError)"
    assert why in panel.status.value, panel.status.value
