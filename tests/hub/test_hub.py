"""A class on a real JupyterHub: two learners, real Unix users with private homes, submit through the hub's service.

JupyterHub (pip) and configurable-http-proxy (npm) on 127.0.0.1, the
DummyAuthenticator and the LocalProcessSpawner, each learner a Unix user of
their own with a 0700 home, the course's submissions service run by the hub
(``_hub.py``). Each learner's browser is played by their own hub token,
through the proxy, as JupyterLab works: the Day 78 page is saved into their
home and opened through their server's contents API, a session starts its
kernel, and every code cell runs in order over the kernel's websocket (its
widgets' messages come as binary frames, and are read as messages). Then:

- alice answers the first single-choice question right and bob wrong, and
  each presses Submit: the file is kept in their own workspace (0600 in
  0700 folders; an audit hook sees nothing written outside the home) and
  sent to the service with the server's own token, which keeps it under
  the name the hub authenticated; alice's kernel asking for
  ``learner_id="bob"`` is told the argument is ignored;
- from bob's kernel, every token in its environment is tried on alice's
  work (the service's copy, the list, her server's file) and alice's file
  on disk is opened: every try is refused (0 tokens that reach another
  learner's work);
- the servers are stopped (as the culler does); ``course quiz collect
  --group`` reads the service and saves one file per learner, and ``course
  quiz grade`` scores alice 1 and bob 0; alice sends a file naming bob: it is
  saved as hers, flagged, in ``flagged.csv`` and never scored;
- ``collect --from-servers`` (a hub without the service) makes each learner
  a token for their own server only, deletes it after, and says why for a
  server not running, nothing submitted, a token without ``tokens``;
- ``COURSE_HUB_LEARNERS`` synthetic learners (default 40; 300 for the
  issue's measure) submit with their own tokens, and collect takes them all
  from the service with no server running; the time is printed.

Without jupyterhub, configurable-http-proxy, root or useradd the tests skip
with the reason, unless COURSE_REQUIRE_HUB=1 (CI sets it), which makes that
a failure. The hub, everything it started and the Unix users are removed
when the module ends.
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.quiz.loader import load_quiz
from course.quiz.model import SingleChoice
from course.quiz.submission import Submission

from . import _hub

ROOT = Path(__file__).resolve().parents[2]
KEY = ROOT / "content" / "quizzes" / "day78.toml"
PAGE = ROOT / "notebooks" / "day78_wgmma.ipynb"
SUBMITTED = "hopper-course-work/submissions/day78/{user}.json"
# Unix users made for this run: a suffix keeps them apart from any account the machine has.
_TAG = secrets.token_hex(2)
ALICE, BOB, DAVE, CAROL = (f"{n}-{_TAG}" for n in ("alice", "bob", "dave", "carol"))
SYNTHETIC = int(os.environ.get("COURSE_HUB_LEARNERS", "40"))

pytestmark = [pytest.mark.hub, pytest.mark.slow]


def _required() -> bool:
    return os.environ.get("COURSE_REQUIRE_HUB", "").strip().lower() in {"1", "true", "yes", "on"}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory):
    reason = _hub.missing()
    if reason is not None:
        if _required():
            pytest.fail(f"COURSE_REQUIRE_HUB is set, but {reason}")
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("hub")
    # The learners' kernels import this checkout's course package (as an installed course would be).
    with _hub.running_hub(folder, {}, [ALICE, BOB, DAVE]) as running:
        yield running


# Run in the learner's kernel after the page: every file Submit opens for writing, renames or makes.
_WATCH = """
import os, sys
_written = []
_watching = [False]

def _watch(event, args):
    if not _watching[0]:
        return
    if event == "open":
        path, mode, flags = args
        writes = (mode is not None and any(c in str(mode) for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        )
        if writes and isinstance(path, (str, bytes, os.PathLike)):
            _written.append(os.path.abspath(os.fsdecode(path)))
    elif event in ("os.rename", "os.mkdir", "os.symlink", "os.link"):
        _written.extend(os.path.abspath(os.fsdecode(p)) for p in args[:2] if isinstance(p, (str, bytes)))

sys.addaudithook(_watch)
"""

_SUBMIT = """
quiz = {quiz}
quiz.panels[{qid!r}].set_response({response!r})
_watching[0] = True
quiz.submit_button.click()
_watching[0] = False
import json
print(json.dumps({{"written": _written, "status": quiz.status.value, "note": quiz.submit_note.value,
                   "learner": quiz.learner_id}}))
_written.clear()
"""

# Run in bob's kernel: every token its environment holds, tried on alice's work; and her file on disk.
_REACH = """
import json, os, re, requests
base, alice, path = {base!r}, {alice!r}, {path!r}
tried = []
tokens = {{k: v for k, v in os.environ.items() if re.fullmatch(r"[0-9a-f]{{32,}}|[A-Za-z0-9_-]{{40,}}", v)}}
for name, token in tokens.items():
    h = {{"Authorization": "token " + token}}
    for url in (
        base + "/services/hopper-submit/api/submissions/day78/" + alice,
        base + "/services/hopper-submit/api/submissions/day78",
        base + "/user/" + alice + "/api/contents/" + path,
        base + "/hub/api/users/" + alice + "/tokens",
    ):
        r = requests.get(url, headers=h, allow_redirects=False, timeout=30)
        tried.append([name, url, r.status_code])
try:
    open(os.path.join({home!r}, path)).read()
    disk = "read"
except PermissionError:
    disk = "refused"
print(json.dumps({{"tried": tried, "disk": disk, "tokens": sorted(tokens)}}))
"""


def _submit(kernel: _hub.Kernel, quiz: str, qid: str, response: str) -> dict:
    return json.loads(
        kernel.run(_SUBMIT.format(quiz=quiz, qid=qid, response=response)).strip().splitlines()[-1]
    )


def _course(*args: str, token: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JUPYTERHUB_API_TOKEN": token, "PYTHONPATH": str(ROOT)}
    env.pop("JUPYTERHUB_USER", None)
    return subprocess.run(
        [sys.executable, "-m", "course", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _collect(
    hub: _hub.Hub, out: Path, token: str, *more: str, quiz: str = "day78"
) -> subprocess.CompletedProcess[str]:
    """``course quiz collect`` as the instructor runs it, with ``token`` in the environment."""
    return _course(
        "quiz", "collect", quiz, "--hub-url", hub.url, "-o", str(out), *more, token=token, cwd=out.parent
    )


def _grade(out: Path, graded: Path) -> subprocess.CompletedProcess[str]:
    return _course("quiz", "grade", str(KEY), str(out), "-o", str(graded), token="", cwd=out.parent)


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _totals(out: Path) -> dict[str, str]:
    return {row["learner"]: row["total"] for row in _rows(out / "wide.csv")}


def _files(folder: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else {}


def _outside(home: Path, paths: list[str]) -> list[str]:
    return [p for p in paths if not Path(p).resolve().is_relative_to(home.resolve())]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _entry(quiz, learner: str, qid: str, response: str) -> bytes:
    sub = Submission(quiz.id, quiz.version, learner, "2026-01-05T09:00:00+00:00", {qid: response}, {})
    return json.dumps(sub.to_json()).encode()


def _send(hub: _hub.Hub, token: str, data: bytes) -> int:
    import requests

    r = requests.put(
        f"{hub.service_url}api/submissions/day78",
        data=data,
        headers={"Authorization": f"token {token}"},
        timeout=_hub.CALL_S,
    )
    return r.status_code


def _service_get(hub: _hub.Hub, token: str, path: str):
    import requests

    return requests.get(
        f"{hub.service_url}api/submissions/{path}",
        headers={"Authorization": f"token {token}"},
        timeout=_hub.CALL_S,
        allow_redirects=False,
    )


def test_a_binary_frame_is_read_as_its_message() -> None:
    from jupyter_server.services.kernels.connection.base import serialize_binary_message

    msg = {
        "header": {"msg_type": "comm_msg"},
        "content": {"data": {"x": 1}},
        "buffers": [b"\x00\xff", b"abc"],
    }
    decoded = _hub.decode_frame(serialize_binary_message(msg))
    assert decoded["content"] == {"data": {"x": 1}} and decoded["buffers"] == [b"\x00\xff", b"abc"]
    assert _hub.decode_frame(json.dumps({"a": 1})) == {"a": 1}
    with pytest.raises(_hub.HubError, match="parts"):
        _hub.decode_frame(b"\x00\x00\x00\x09" + b"\x00" * 8)


def test_two_learners_submit_through_the_hub_and_are_collected_after_their_servers_stop(
    hub: _hub.Hub, tmp_path: Path
) -> None:
    key = load_quiz(KEY)
    question = next(q for q in key.questions if isinstance(q, SingleChoice))
    right = question.answer
    wrong = next(o.id for o in question.options if o.id != right)
    kernels: dict[str, _hub.Kernel] = {}
    checkout_before = _files(ROOT / "submissions")  # off a hub, Submit's default folder
    try:
        tokens = hub.add_learners(ALICE, BOB)
        for name, token in tokens.items():
            # The page in the learner's home (where the course's pages are put for them), opened
            # and run through the proxy: every code cell in order, as Run All runs them.
            _hub.put_file(hub, name, token, PAGE.name, PAGE.read_text(encoding="utf-8"), fmt="json")
            kernels[name] = kernel = _hub.Kernel(hub, name, token, PAGE.name)
            assert len(kernel.code_cells()) > 5
            for cell in kernel.code_cells():
                kernel.run(cell)
            # Day 78's widgets send messages with buffers: binary frames, read as messages.
            assert kernel.binary_frames > 0, "no binary frame came: the decoding went untried"
            kernel.run(_WATCH)
        # The page's own quiz, as a learner answers it and presses Submit.
        said = {
            ALICE: _submit(kernels[ALICE], "page.quiz()", question.id, right),
            BOB: _submit(kernels[BOB], "page.quiz()", question.id, wrong),
        }
        # alice's kernel asks to submit as bob, every answer right: it is alice's file, and said so.
        said["as bob"] = _submit(
            kernels[ALICE],
            f'__import__("course.quiz", fromlist=["show_quiz"]).show_quiz("day78", learner_id="{BOB}")',
            question.id,
            right,
        )
        path = SUBMITTED.format(user=ALICE)
        reach = json.loads(
            kernels[BOB]
            .run(_REACH.format(base=hub.url, alice=ALICE, path=path, home=str(hub.home(ALICE))))
            .strip()
            .splitlines()[-1]
        )
        scopes = hub.api("GET", "/user", token=tokens[BOB]).json()  # bob's browser's own token
        server_scopes = kernels[BOB].run(
            "import os, requests, json\n"
            "r = requests.get(os.environ['JUPYTERHUB_API_URL'] + '/user', timeout=30, "
            "headers={'Authorization': 'token ' + os.environ['JUPYTERHUB_API_TOKEN']})\n"
            "print(json.dumps(r.json()['scopes']))"
        )
    finally:
        for kernel in kernels.values():
            kernel.close()
    for name, who in ((ALICE, ALICE), (BOB, BOB), ("as bob", ALICE)):
        assert said[name]["learner"] == who
        assert f"as learner <b>{who}</b> (your JupyterHub user name)" in said[name]["note"]
        assert "Saved 1 of" in said[name]["status"], said[name]["status"]
        assert "Sent to your instructor through JupyterHub" in said[name]["status"], said[name]["status"]
        # The hook saw the submission itself written (so it watches), and nothing outside the home.
        target = (hub.home(who) / SUBMITTED.format(user=who)).resolve()
        assert target in {Path(p).resolve() for p in said[name]["written"]}, said[name]["written"]
        assert _outside(hub.home(who), said[name]["written"]) == [], "Submit wrote outside the home"
        # Private on the learner's side: the home, the workspace, the file.
        assert _mode(hub.home(who)) == 0o700 and _mode(hub.home(who) / "hopper-course-work") == 0o700
        assert _mode(target) == 0o600
    assert f"learner_id=&#x27;{BOB}&#x27; is ignored" in said["as bob"]["note"]
    assert not (hub.home(ALICE) / SUBMITTED.format(user=BOB)).exists()
    assert _files(ROOT / "submissions") == checkout_before, "Submit wrote into the course checkout"
    # The service keeps each file under the hub's name, 0600 in 0700 folders.
    kept = hub.submissions / "day78"
    assert sorted(p.name for p in kept.iterdir()) == sorted([f"{ALICE}.json", f"{BOB}.json"])
    assert {_mode(p) for p in kept.iterdir()} == {0o600}
    assert _mode(kept) == _mode(hub.submissions) == 0o700
    # From bob's kernel nothing of alice's is reached: 0 tokens that read another learner's work.
    # (JPY_API_TOKEN is JupyterHub's older name for the server's token.)
    assert set(reach["tokens"]) <= {"JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN"}, reach["tokens"]
    assert "JUPYTERHUB_API_TOKEN" in reach["tokens"]
    assert len(reach["tried"]) == 4 * len(reach["tokens"]), reach
    assert all(code in (403, 404) for _, _, code in reach["tried"]), reach
    assert {code for _, url, code in reach["tried"] if url.endswith(ALICE)} == {403}
    assert reach["disk"] == "refused"
    served = set(json.loads(server_scopes.strip().splitlines()[-1]))
    assert "access:services!service=hopper-submit" in served
    assert all(BOB in s or s == "access:services!service=hopper-submit" for s in served), served
    assert all(ALICE not in s for s in set(scopes["scopes"]) | served)

    # The servers stop (the culler's 30 idle minutes, after a deadline); collect reads the service.
    hub.stop(ALICE, BOB)
    assert hub.api("POST", "/groups/learners", json={"users": [ALICE, BOB]}).status_code in (201, 409)
    collected, graded = tmp_path / "collected", tmp_path / "graded"
    done = _collect(hub, collected, hub.tokens["collector"], "--group", "learners")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (collected / "day78").iterdir()) == sorted([f"{ALICE}.json", f"{BOB}.json"])
    assert "2 saved" in done.stdout and "(the submissions service)" in done.stdout
    assert _mode(collected) == _mode(collected / "day78") == 0o700
    assert {_mode(p) for p in (collected / "day78").iterdir()} == {0o600}
    done = _grade(collected, graded)
    assert done.returncode == 0, done.stdout + done.stderr
    points = f"{question.points:g}"
    assert _totals(graded) == {ALICE: points, BOB: "0"}  # nobody scored under another's name
    assert _mode(graded) == 0o700

    # alice sends a file naming bob (her token, her server stopped): kept as hers, flagged, never bob's.
    forged = json.loads((collected / "day78" / f"{ALICE}.json").read_text())
    forged["learner"] = BOB
    assert _send(hub, tokens[ALICE], json.dumps(forged).encode()) == 201
    done = _collect(hub, collected, hub.tokens["collector"], "--group", "learners")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 saved, 1 saved and flagged" in done.stdout
    assert f"this file says learner '{BOB}', but its place names learner '{ALICE}'" in done.stdout
    done = _grade(collected, graded)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _totals(graded) == {BOB: "0"}
    flagged = _rows(graded / "flagged.csv")
    assert [row["learner"] for row in flagged] == [ALICE] and "not graded" in flagged[0]["reason"]
    assert _rows(graded / "skipped.csv") == []


def test_collect_from_the_learners_servers_with_a_token_of_each_ones_own(
    hub: _hub.Hub, tmp_path: Path
) -> None:
    key = load_quiz(KEY)
    question = next(q for q in key.questions if isinstance(q, SingleChoice))
    dave = hub.add_learners(DAVE)[DAVE]  # a running server
    hub.add_users(CAROL)  # never started
    collected = tmp_path / "collected"
    learners = f"{DAVE},{CAROL}"
    done = _collect(hub, collected, hub.tokens["server-collector"], "--from-servers", "--users", learners)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(
        line.startswith(f"server not running: {CAROL}: the server is not running") for line in lines
    ), lines
    assert any(
        line.startswith(f"not submitted: {DAVE}: no hopper-course-work/submissions/day78/{DAVE}.json")
        for line in lines
    ), lines
    path = SUBMITTED.format(user=DAVE)
    _hub.put_file(hub, DAVE, dave, path, _entry(key, DAVE, question.id, question.answer).decode())
    done = _collect(hub, collected, hub.tokens["server-collector"], "--from-servers", "--users", DAVE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 saved" in done.stdout and (collected / "day78" / f"{DAVE}.json").is_file()
    # The token collect made was dave's own, for his server only, and is gone.
    left = hub.api("GET", f"/users/{DAVE}/tokens").json()
    assert not [t for t in left.get("api_tokens", left) if "course quiz collect" in str(t.get("note"))]
    # A token that may list the users but not make theirs: refused, with the scopes it needs.
    done = _collect(hub, collected, hub.tokens["lister"], "--from-servers", "--users", DAVE)
    assert done.returncode == 1
    assert f"refused: {DAVE}:" in done.stdout and "tokens" in done.stdout, done.stdout
    # From the service: nothing of either, so their work is missing (3), not an error.
    done = _collect(hub, collected, hub.tokens["collector"], "--users", learners)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"2 learners have not submitted quiz 'day78': {CAROL}, {DAVE}" in done.stderr
    # A learner's own token may not list the users: one message, exit 2.
    done = _collect(hub, collected, dave)
    assert done.returncode == 2
    assert "the hub refused to list its users (403)" in done.stderr


def test_synthetic_learners_are_collected_from_the_service_with_no_server_running(
    hub: _hub.Hub, tmp_path: Path
) -> None:
    key = load_quiz(KEY)
    question = next(q for q in key.questions if isinstance(q, SingleChoice))
    names = [f"learner{i:03d}-{_TAG}" for i in range(SYNTHETIC)]
    hub.add_users(*names)
    assert hub.api("POST", "/groups/synthetic", json={"users": names}).status_code == 201
    tokens = {}
    for name in names:
        tokens[name] = token = hub.token_for(name, scopes=["access:services!service=hopper-submit"])
        assert _send(hub, token, _entry(key, name, question.id, question.answer)) == 201
    # What the service refuses, and says why; a learner reads back their own file only.
    first, second = names[0], names[1]
    assert _send(hub, tokens[first], b"not json") == 400
    assert _send(hub, tokens[first], b"[" + b" " * (1024 * 1024) + b"]") == 413
    assert _send(hub, hub.tokens["collector"], b"{}") == 403  # a service has no submission
    own = _service_get(hub, tokens[first], f"day78/{first}")
    assert own.status_code == 200 and json.loads(own.content)["learner"] == first
    assert _service_get(hub, tokens[first], f"day78/{second}").status_code == 403
    assert _service_get(hub, tokens[first], "day78").status_code == 403
    assert all(
        not u.get("server")
        for u in hub.api("GET", "/users", params={"limit": 1000}).json()
        if u["name"] in names
    )
    collected = tmp_path / "collected"
    started = time.monotonic()
    done = _collect(hub, collected, hub.tokens["collector"], "--group", "synthetic")
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{SYNTHETIC} users, {SYNTHETIC} saved" in done.stdout
    assert sorted(p.stem for p in (collected / "day78").iterdir()) == names
    print(f"collect of {SYNTHETIC} synthetic learners from the service, no server running: {took:.1f} s")
