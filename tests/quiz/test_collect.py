"""``course quiz collect`` against a hub played by a fake HTTP session (course/quiz/collect.py).

The real hub, with its proxy, servers and submissions service, is in
tests/hub; here every answer a hub can give is given on purpose: pages of
users, a pagination that does not advance, JSON of the wrong shape, a file
that is not a submission, one that names someone else, a name that cannot
be a file, a file larger than a submission, a server that answers 500 or
sends the token to a login page; and a real local server that drips its
answer a byte at a time.
"""

from __future__ import annotations

import ast
import base64
import http.server
import io
import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from course.errors import CourseError
from course.quiz import collect as collect_module
from course.quiz import hub_service
from course.quiz.collect import MAX_BYTES, collect_quiz, report_lines
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.submission import _LEARNER, Submission


def _response(status: int, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None):
    r = requests.Response()
    r.status_code = status
    data = raw if raw is not None else json.dumps(body).encode() if body is not None else b""
    r.raw = io.BytesIO(data)  # read as a stream, as requests does with stream=True
    r._content = False  # not read yet: r.json() reads it from raw
    r._content_consumed = False
    r.headers.update(headers or {})
    return r


def _server(ready: bool = True) -> dict[str, Any]:
    return {"servers": {"": {"ready": ready, "url": "/user/{name}/", "pending": None}}}


def _user(name: str, ready: bool = True) -> dict[str, Any]:
    model = json.loads(json.dumps(_server(ready)).replace("{name}", name))
    return {"name": name, **model}


class FakeHub(requests.Session):
    """The hub (users two to a page, groups), its submissions service and each user's server.

    ``kept[user]``: the service's file (bytes) for that user; ``files[user]``: the file on the
    user's server, bytes or a status. Every call is recorded with the token it carried.
    """

    def __init__(
        self,
        users: list[dict[str, Any]],
        files: dict[str, Any] | None = None,
        kept: dict[str, bytes] | None = None,
        groups: dict[str, list[str]] | None = None,
    ):
        super().__init__()
        self.user_models = users
        self.files = files or {}
        self.kept = kept or {}
        self.groups = groups or {}
        self.calls: list[tuple[str, str, str]] = []  # method, path, token
        self.urls: list[str] = []
        self.made: dict[str, str] = {}  # token -> its user
        self.deleted: list[str] = []
        self.token_status = 201

    def request(self, method: str, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        assert kwargs["allow_redirects"] is False and kwargs["timeout"]
        token = kwargs["headers"]["Authorization"].removeprefix("token ")
        parts = urlsplit(str(url))
        path = parts.path
        self.calls.append((method, path, token))
        self.urls.append(str(url))
        if path == "/hub/api/users":
            assert token == "T"
            offset = kwargs["params"]["offset"]
            page = self.user_models[offset : offset + 2]
            following = {"offset": offset + 2} if offset + 2 < len(self.user_models) else None
            return _response(200, {"items": page, "_pagination": {"next": following}})
        if path.startswith("/hub/api/groups/"):
            name = path.rsplit("/", 1)[1]
            return (
                _response(200, {"name": name, "users": self.groups[name]})
                if name in self.groups
                else _response(404, {})
            )
        if path.startswith("/hub/api/users/") and path.endswith("/tokens") and method == "POST":
            user = path.split("/")[4]
            assert kwargs["json"]["scopes"] == [f"access:servers!user={user}"]
            if self.token_status != 201:
                return _response(self.token_status, {"message": "no"})
            made = f"tok-{user}"
            self.made[made] = user
            return _response(201, {"token": made, "id": f"a{len(self.made)}"})
        if "/tokens/" in path and method == "DELETE":
            self.deleted.append(path.split("/")[4])
            return _response(204)
        if path.startswith("/services/hopper-submit/api/submissions/"):
            assert token == "T"
            rest = path.removeprefix("/services/hopper-submit/api/submissions/").split("/")
            if len(rest) == 1:
                files = {
                    u: {"bytes": len(b), "received": "2026-01-05T09:00:00+00:00"}
                    for u, b in self.kept.items()
                }
                return _response(200, {"quiz": rest[0], "files": files})
            found = self.kept.get(rest[1])
            return _response(200, raw=found) if found is not None else _response(404, {})
        user = path.split("/")[2]
        assert self.made.get(token) == user, f"{user}'s server was sent a token that is not {user}'s own"
        found = self.files.get(user, 404)
        if isinstance(found, int):
            return _response(found, {"message": "no"})
        query = parse_qs(parts.query) or kwargs.get("params", {})
        if str(query.get("content")) in ("0", "['0']"):
            return _response(200, {"type": "file", "size": len(found), "content": None})
        return _response(
            200, {"type": "file", "format": "base64", "content": base64.encodebytes(found).decode()}
        )


def _text(quiz, learner: str, s1: str = "b") -> bytes:
    sub = Submission(quiz.id, quiz.version, learner, "2025-01-01T00:00:00+00:00", {"s1": s1}, {})
    return json.dumps(sub.to_json()).encode()


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_service_runs_as_a_file_of_its_own_outside_the_course(tmp_path):
    """The hub's pod has jupyterhub and tornado but not the course: the file runs alone there."""
    tree = ast.parse(Path(hub_service.__file__).read_text())
    roots = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    roots |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level], "a relative import"
    assert roots <= {"jupyterhub", "tornado", *sys.stdlib_module_names}, roots
    copy = tmp_path / "hopper_submit.py"
    copy.write_bytes(Path(hub_service.__file__).read_bytes())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COURSE_ROOT")}
    done = subprocess.run(
        [sys.executable, "-I", str(copy), "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "--root" in done.stdout
    done = subprocess.run(
        [sys.executable, "-I", str(copy)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "give --root" in done.stderr


def test_the_service_and_the_client_agree_on_names_and_rules():
    assert hub_service.NAME == collect_module.SERVICE
    assert hub_service.SAFE.pattern == _LEARNER.pattern
    assert hub_service.MAX_BYTES == MAX_BYTES
    assert hub_service.COLLECT_SCOPE in collect_module.SERVICE_SCOPES


def test_collect_from_the_service_names_every_file_by_the_hub_user_and_says_why_for_the_rest(
    sample_quiz, tmp_path
):
    quiz = load_quiz(sample_quiz)
    names = ["alice", "bob", "mallory", "carol", "erin", "frank", "a/../b", "staff"]
    kept = {
        "alice": _text(quiz, "alice"),
        "bob": _text(quiz, "bob", s1="a"),
        "mallory": _text(quiz, "bob"),  # mallory's file says bob
        "erin": b"\xff not a submission",
        "staff": _text(quiz, "staff"),
    }
    fake = FakeHub([_user(n) for n in names], kept=kept)
    fake.kept["frank"] = b"x" * (MAX_BYTES + 1)  # the list says its size: never downloaded
    out = tmp_path / "collected"
    report = collect_quiz("http://hub.test/", "T", "day76", out, session=fake, exclude=["staff"])
    outcome = {c.user: c.outcome for c in report.items}
    assert outcome == {
        "alice": "saved",
        "bob": "saved",
        "mallory": "flagged",
        "carol": "not submitted",
        "erin": "flagged",
        "frank": "failed",
        "a/../b": "bad name",
    }
    assert ("GET", "/services/hopper-submit/api/submissions/day76/frank", "T") not in fake.calls
    assert [c for c in fake.calls if c[1].startswith("/user/")] == [], "no learner's server was asked"
    # Every file read is saved as it came, under the hub's name, 0600 in 0700 folders.
    assert sorted(p.name for p in (out / "day76").iterdir()) == [
        "alice.json",
        "bob.json",
        "erin.json",
        "mallory.json",
    ]
    assert (out / "day76" / "erin.json").read_bytes() == kept["erin"]
    assert {_mode(p) for p in (out / "day76").iterdir()} == {0o600}
    assert _mode(out) == _mode(out / "day76") == 0o700
    assert not list(tmp_path.rglob("*../b*"))
    lines = report_lines(report)
    assert any("mallory" in ln and "this file says learner 'bob'" in ln for ln in lines), lines
    assert any(
        ln.startswith("failed: frank:") and f"more than a submission's {MAX_BYTES}" in ln for ln in lines
    )
    assert report.summary().startswith(
        "quiz 'day76' from http://hub.test/ (the submissions service): 7 users, 2 saved, 2 saved and flagged"
    )
    # The grader scores alice and bob, each once; mallory's is flagged unscored, erin's skipped.
    graded = grade_submissions(quiz, out)
    assert sorted(r.learner for r in graded.results) == ["alice", "bob"]
    assert [f.path.name for f in graded.misplaced] == ["mallory.json"]
    assert [s.path.name for s in graded.skipped] == ["erin.json"]


def test_users_or_a_group_pick_the_learners(sample_quiz, tmp_path):
    quiz = load_quiz(sample_quiz)
    fake = FakeHub(
        [_user("alice"), _user("bob")],
        kept={"alice": _text(quiz, "alice")},
        groups={"learners": ["alice", "zed"]},
    )
    report = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake, group="learners")
    assert [(c.user, c.outcome) for c in report.items] == [("alice", "saved"), ("zed", "not submitted")]
    assert not [c for c in fake.calls if c[1] == "/hub/api/users"], (
        "the group is the list: no user list asked"
    )
    report = collect_quiz(
        "http://hub.test", "T", "day76", tmp_path, session=fake, users=["bob", "alice"], exclude=["alice"]
    )
    assert [(c.user, c.outcome) for c in report.items] == [("bob", "not submitted")]
    with pytest.raises(CourseError, match="the hub has no group 'staff'"):
        collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake, group="staff")


def test_a_hub_without_the_service_says_to_collect_from_the_servers(tmp_path):
    class NoService(FakeHub):
        def request(self, method: str, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
            if "/services/" in str(url):
                return _response(404, {})
            return super().request(method, url, **kwargs)

    with pytest.raises(
        CourseError, match="no submissions service 'hopper-submit' on this hub.*--from-servers"
    ):
        collect_quiz("http://hub.test", "T", "day76", tmp_path, session=NoService([_user("alice")]))


def test_from_the_servers_each_server_gets_a_token_of_its_own_learner_only(sample_quiz, tmp_path):
    quiz = load_quiz(sample_quiz)
    users = [_user("alice"), _user("bob"), _user("carol", ready=False), _user("dave"), _user("frank")]
    files = {"alice": _text(quiz, "alice"), "bob": _text(quiz, "bob", s1="a"), "frank": 302, "dave": 404}
    fake = FakeHub(users, files)
    report = collect_quiz("http://hub.test/", "T", "day76", tmp_path, session=fake, from_servers=True)
    outcome = {c.user: c.outcome for c in report.items}
    assert outcome == {
        "alice": "saved",
        "bob": "saved",
        "carol": "no server",
        "dave": "not submitted",
        "frank": "refused",
    }
    # The instructor's token went to the hub only; each server saw its own learner's token (FakeHub
    # asserts it), and each token made was deleted after.
    assert {token for _, path, token in fake.calls if path.startswith("/user/")} == {
        "tok-alice",
        "tok-bob",
        "tok-dave",
        "tok-frank",
    }
    assert sorted(fake.deleted) == ["alice", "bob", "dave", "frank"]
    # The size is asked first (content=0), then the file.
    alice = [u for u in fake.urls if "/user/alice/" in u]
    assert len(alice) == 2
    assert "hopper-course-work/submissions/day76/alice.json" in alice[0]
    assert report.summary().startswith("quiz 'day76' from http://hub.test/ (each learner's server): 5 users")


def test_from_the_servers_a_token_that_cannot_make_the_learners_tokens_says_so(sample_quiz, tmp_path):
    fake = FakeHub([_user("alice")], {"alice": _text(load_quiz(sample_quiz), "alice")})
    fake.token_status = 403
    (item,) = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake, from_servers=True).items
    assert item.outcome == "refused" and "list:users, read:users:name, read:servers, tokens" in item.detail
    assert not [c for c in fake.calls if c[1].startswith("/user/")], "no server was asked without a token"


def test_from_the_servers_a_file_too_large_is_refused_by_its_size_unread(sample_quiz, tmp_path):
    fake = FakeHub([_user("alice")], {"alice": b"{" + b" " * MAX_BYTES + b"}"})
    (item,) = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake, from_servers=True).items
    assert item.outcome == "failed" and "more than a submission's" in item.detail
    assert len([u for u in fake.urls if "/user/alice/" in u]) == 1, "only the size was asked"


def test_a_server_on_a_subdomain_is_read_at_its_full_url(sample_quiz, tmp_path):
    user = _user("alice")
    user["servers"][""]["full_url"] = "http://alice.hub.test/user/alice/"
    fake = FakeHub([user], {"alice": _text(load_quiz(sample_quiz), "alice")})
    (item,) = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake, from_servers=True).items
    assert item.outcome == "saved"
    assert fake.urls[-2].startswith("http://alice.hub.test/user/alice/api/contents/")


def test_a_token_that_may_not_see_the_servers_says_which_scope_it_lacks(tmp_path):
    fake = FakeHub([{"name": "alice"}], {})
    (item,) = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=fake, from_servers=True).items
    assert (item.outcome, item.detail) == (
        "refused",
        "the hub did not show this user's servers: the token needs the scope read:servers",
    )
    assert [c[1] for c in fake.calls] == ["/hub/api/users"]


@pytest.mark.parametrize(
    "status, message",
    [(403, "the hub refused to list its users (403): the token needs the scopes"), (500, "answered 500")],
)
def test_a_hub_that_will_not_list_its_users_is_one_message(tmp_path, status, message):
    class Refusing(FakeHub):
        def request(self, method: str, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
            return _response(status, {})

    with pytest.raises(CourseError, match=re.escape(message)):
        collect_quiz("http://hub.test", "T", "day76", tmp_path, session=Refusing([]))


@pytest.mark.parametrize(
    "page, message",
    [
        (
            {"items": [{"name": "a"}, {"name": "b"}], "_pagination": {"next": {"offset": 0}}},
            "does not advance",
        ),
        ({"items": [], "_pagination": {"next": {"offset": 5}}}, "does not advance"),
        ({"items": [{"name": "a"}], "_pagination": {"next": {"offset": "2"}}}, "not a whole number"),
        ({"items": {"name": "a"}}, "is not a list of users"),
        ({"items": ["alice"]}, "which is not a user's model"),
        ({"items": [{"name": 7}]}, "which is not a user's model"),
        ({"items": [], "_pagination": [1]}, "_pagination is"),
        ("users", "is not a list of users"),
    ],
)
def test_a_hub_answer_of_the_wrong_shape_is_one_message_not_a_loop_or_a_traceback(tmp_path, page, message):
    class Odd(FakeHub):
        def request(self, method: str, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
            self.calls.append((method, str(url), ""))
            assert len(self.calls) < 5, "asked again and again"
            return _response(200, page)

    with pytest.raises(CourseError, match=re.escape(message)):
        collect_quiz("http://hub.test", "T", "day76", tmp_path, session=Odd([]))


@pytest.mark.parametrize(
    "listing", [{"files": [1]}, {"nothing": 1}, [], {"files": {"alice": {"bytes": "9"}}}]
)
def test_a_service_list_of_the_wrong_shape_is_a_message(tmp_path, listing):
    class Odd(FakeHub):
        def request(self, method: str, url: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
            if "/services/" in str(url):
                return _response(200, listing)
            return super().request(method, url, **kwargs)

    try:
        report = collect_quiz("http://hub.test", "T", "day76", tmp_path, session=Odd([]), users=["alice"])
    except CourseError as e:
        assert "has no files object" in e.message
    else:
        (item,) = report.items
        assert item.outcome == "failed" and "not a number" in item.detail


class _Drip(http.server.BaseHTTPRequestHandler):
    """A service that lists a small file, then sends it one byte at a time, or more than it said."""

    sent: list[int] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.endswith("/day76"):
            body = json.dumps({"files": {"slow": {"bytes": 100}, "liar": {"bytes": 100}}}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        if self.path.endswith("/liar"):  # says 100 bytes in the list, sends far more, no length
            self.end_headers()
            for _ in range(40):
                self.wfile.write(b" " * 65536)
            return
        self.send_header("Content-Length", "100000")
        self.end_headers()
        import time

        for _ in range(100000):
            try:
                self.wfile.write(b" ")
                self.wfile.flush()
            except OSError:
                return
            _Drip.sent.append(1)
            time.sleep(0.02)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_dripping_or_lying_source_is_cut_at_the_deadline_and_the_bound(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Drip)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        report = collect_quiz(url, "T", "day76", tmp_path, users=["slow", "liar"], deadline_s=0.5)
    finally:
        server.shutdown()
        server.server_close()
    outcome = {c.user: (c.outcome, c.detail) for c in report.items}
    assert outcome["slow"][0] == "failed" and "did not arrive within 0.5 s" in outcome["slow"][1]
    assert len(_Drip.sent) < 100000, "the whole drip was waited for"
    assert outcome["liar"][0] == "failed" and f"is over {MAX_BYTES} bytes" in outcome["liar"][1]
    assert not (tmp_path / "day76").exists() or not list((tmp_path / "day76").iterdir())


@pytest.mark.parametrize("quiz, remote", [("../x", "{user}.json"), ("day76", "{home}/{user}.json")])
def test_a_bad_quiz_id_or_path_is_refused_before_asking_the_hub(tmp_path, quiz, remote):
    fake = FakeHub([])
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
