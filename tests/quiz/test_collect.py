"""``course quiz collect`` against a hub played by a fake HTTP session (course/quiz/collect.py).

The real hub, with its proxy and servers, is in tests/hub; here every answer
a hub can give is given on purpose: pages of users, a file that is not a
submission, one that names someone else, a name that cannot be a file, a
server that answers 500 or sends the token to a login page.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from course.errors import CourseError
from course.quiz.collect import collect_quiz, report_lines
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.submission import Submission


def _response(status: int, body: Any = None, headers: dict[str, str] | None = None) -> requests.Response:
    r = requests.Response()
    r.status_code = status
    r._content = json.dumps(body).encode() if body is not None else b""
    r.headers.update(headers or {})
    return r


def _server(ready: bool = True) -> dict[str, Any]:
    return {"servers": {"": {"ready": ready, "url": "/user/{name}/", "pending": None}}}


class FakeHub(requests.Session):
    """The hub's users (two to a page) and each server's files: ``files[user] = status or bytes``."""

    def __init__(self, users: list[dict[str, Any]], files: dict[str, Any]):
        super().__init__()
        self.user_models = users
        self.files = files
        self.calls: list[str] = []
        self.urls: list[str] = []

    def get(self, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        assert kwargs["allow_redirects"] is False and kwargs["timeout"]
        assert self.headers["Authorization"] == "token T"
        path = urlsplit(str(url)).path
        self.calls.append(path)
        self.urls.append(str(url))
        if path == "/hub/api/users":
            offset = kwargs["params"]["offset"]
            page = self.user_models[offset : offset + 2]
            following = {"offset": offset + 2} if offset + 2 < len(self.user_models) else None
            return _response(200, {"items": page, "_pagination": {"next": following}})
        user = path.split("/")[2]
        found = self.files.get(user, 404)
        if isinstance(found, int):
            return _response(found, {"message": "no"})
        return _response(
            200, {"type": "file", "format": "base64", "content": base64.encodebytes(found).decode()}
        )


def _user(name: str, ready: bool = True) -> dict[str, Any]:
    model = json.loads(json.dumps(_server(ready)).replace("{name}", name))
    return {"name": name, **model}


def _text(quiz, learner: str, s1: str = "b") -> bytes:
    sub = Submission(quiz.id, quiz.version, learner, "2025-01-01T00:00:00+00:00", {"s1": s1}, {})
    return json.dumps(sub.to_json()).encode()


def test_collect_names_every_file_by_the_hub_user_and_says_why_for_the_rest(sample_quiz, tmp_path):
    quiz = load_quiz(sample_quiz)
    users = [
        _user("alice"),
        _user("bob"),
        _user("mallory"),
        _user("carol", ready=False),
        _user("dave"),
        _user("erin"),
        _user("frank"),
        {"name": "a/../b", **_server()},
    ]
    files = {
        "alice": _text(quiz, "alice"),
        "bob": _text(quiz, "bob", s1="a"),
        "mallory": _text(quiz, "bob"),  # mallory's file says bob
        "erin": b"\xff not a submission",
        "frank": 403,
        "dave": 404,
    }
    fake = FakeHub(users, files)
    out = tmp_path / "collected"
    report = collect_quiz("http://hub.test/", "T", "day76", out, session=fake)
    outcome = {c.user: c.outcome for c in report.items}
    assert outcome == {
        "alice": "saved",
        "bob": "saved",
        "mallory": "flagged",
        "carol": "no server",
        "dave": "not submitted",
        "erin": "flagged",
        "frank": "refused",
        "a/../b": "bad name",
    }
    assert fake.calls.count("/hub/api/users") == 4  # four pages of two
    assert "/user/alice/api/contents/hopper-course-work/submissions/day76/alice.json" in fake.calls
    # Every file read is saved as it came, under the hub's name; nothing else is written.
    assert sorted(p.name for p in (out / "day76").iterdir()) == [
        "alice.json",
        "bob.json",
        "erin.json",
        "mallory.json",
    ]
    assert (out / "day76" / "erin.json").read_bytes() == files["erin"]
    assert not list(tmp_path.rglob("*../b*"))
    lines = report_lines(report)
    assert any("mallory" in ln and "this file says learner 'bob'" in ln for ln in lines), lines
    assert any(ln.startswith("refused by the server: frank:") and "access:servers" in ln for ln in lines)
    assert any(ln.startswith("server not running: carol:") for ln in lines)
    assert report.summary().startswith(
        "quiz 'day76' from http://hub.test/: 8 users, 2 saved, 2 saved and flagged"
    )
    # The grader scores alice and bob, each once, and skips mallory's and erin's files.
    graded = grade_submissions(quiz, out)
    assert sorted(r.learner for r in graded.results) == ["alice", "bob"]
    assert sorted(s.path.name for s in graded.skipped) == ["erin.json", "mallory.json"]


def test_a_server_on_a_subdomain_is_read_at_its_full_url(sample_quiz, tmp_path):
    user = _user("alice")
    user["servers"][""]["full_url"] = "http://alice.hub.test/user/alice/"
    fake = FakeHub([user], {"alice": _text(load_quiz(sample_quiz), "alice")})
    (item,) = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake).items
    assert item.outcome == "saved"
    assert fake.urls[-1].startswith("http://alice.hub.test/user/alice/api/contents/")


def test_a_token_that_may_not_see_the_servers_says_which_scope_it_lacks(tmp_path):
    fake = FakeHub([{"name": "alice"}], {})
    (item,) = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake).items
    assert (item.outcome, item.detail) == (
        "refused",
        "the hub did not show this user's servers: the token needs the scope read:servers",
    )
    assert fake.calls == ["/hub/api/users"]


def test_a_server_that_sends_the_token_to_a_login_page_is_refused_not_read(sample_quiz, tmp_path):
    fake = FakeHub([_user("alice")], {"alice": 302})
    report = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake)
    assert [c.outcome for c in report.items] == ["refused"]
    assert not (tmp_path / "day76").exists()


@pytest.mark.parametrize(
    "status, message",
    [(403, "the hub refused to list its users (403): the token needs the scopes"), (404, "answered 404")],
)
def test_a_hub_that_will_not_list_its_users_is_one_message(tmp_path, status, message):
    class Refusing(FakeHub):
        def get(self, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
            return _response(status, {})

    with pytest.raises(CourseError, match=re.escape(message)):
        collect_quiz("http://hub.test", "T", "day76", tmp_path, session=Refusing([], {}))


@pytest.mark.parametrize("quiz, remote", [("../x", "{user}.json"), ("day76", "{home}/{user}.json")])
def test_a_bad_quiz_id_or_path_is_refused_before_asking_the_hub(tmp_path, quiz, remote):
    fake = FakeHub([], {})
    with pytest.raises(CourseError):
        collect_quiz("http://hub.test", "T", quiz, tmp_path, remote=remote, session=fake)
    assert fake.calls == []


def test_the_collect_command_needs_a_token(tmp_path, monkeypatch, capsys):
    from course.cli import main

    monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
    assert main(["quiz", "collect", "day76", "--hub-url", "http://hub.test", "-o", str(tmp_path)]) == 2
    assert "set JUPYTERHUB_API_TOKEN or give --token-file" in capsys.readouterr().err
    empty = tmp_path / "token"
    empty.write_text("\n")
    args = ["quiz", "collect", "day76", "--hub-url", "http://hub.test", "-o", str(tmp_path)]
    assert main([*args, "--token-file", str(empty)]) == 2
    assert "the token file is empty" in capsys.readouterr().err
