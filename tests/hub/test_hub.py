"""A class on a real JupyterHub: two learners submit, one tries to submit as the other, the instructor collects and grades.

JupyterHub (pip) and configurable-http-proxy (npm) on 127.0.0.1, the
DummyAuthenticator and the SimpleLocalProcessSpawner, each learner's server
with a home of its own (``_hub.py``). Each learner's browser is played by
their own hub token, through the proxy, as JupyterLab works: the Day 76
page is saved into their home and opened through their server's contents
API, a session starts its kernel, and every code cell runs in order over
the kernel's websocket. Then:

- alice answers the first single-choice question right and bob wrong, and
  each presses Submit: while Submit runs, an audit hook in the kernel
  records every file opened for writing, renamed or made, and every one is
  inside that learner's home (0 outside);
- alice's kernel asks for ``learner_id="bob"``: the page says the argument
  is ignored and the file is alice's;
- ``course quiz collect`` with a token of the documented scopes saves one
  file per hub user, and ``course quiz grade`` scores alice 1 and bob 0
  (0 submissions under another learner's name);
- alice edits her file to say ``"learner": "bob"`` (a learner can edit
  anything in her home): collect flags it, and the grader skips it, so bob
  keeps his own score and nobody is scored as bob twice;
- collect's lines for a server that is not running, nothing submitted, and
  a token without ``access:servers``.

Without jupyterhub or configurable-http-proxy the tests skip with the
reason, unless COURSE_REQUIRE_HUB=1 (CI sets it), which makes that a
failure. The hub and everything it started are stopped when the module ends.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.quiz.loader import load_quiz
from course.quiz.model import SingleChoice

from . import _hub

ROOT = Path(__file__).resolve().parents[2]
KEY = ROOT / "content" / "quizzes" / "day76.toml"
PAGE = ROOT / "notebooks" / "day76_tma.ipynb"
SUBMITTED = "hopper-course-work/submissions/day76/{user}.json"

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
    with _hub.running_hub(folder, {"PYTHONPATH": str(ROOT)}) as running:
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


def _submit(kernel: _hub.Kernel, quiz: str, qid: str, response: str) -> dict:
    return json.loads(
        kernel.run(_SUBMIT.format(quiz=quiz, qid=qid, response=response)).strip().splitlines()[-1]
    )


def _course(*args: str, token: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JUPYTERHUB_API_TOKEN": token, "PYTHONPATH": str(ROOT)}
    env.pop("JUPYTERHUB_USER", None)
    return subprocess.run(
        [sys.executable, "-m", "course", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _collect(hub: _hub.Hub, out: Path, token: str) -> subprocess.CompletedProcess[str]:
    """``course quiz collect day76`` as the instructor runs it, with ``token`` in the environment."""
    return _course(
        "quiz", "collect", "day76", "--hub-url", hub.url, "-o", str(out), token=token, cwd=out.parent
    )


def _totals(out: Path) -> dict[str, str]:
    with open(out / "wide.csv", newline="", encoding="utf-8") as f:
        return {row["learner"]: row["total"] for row in csv.DictReader(f)}


def _files(folder: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else {}


def _outside(home: Path, paths: list[str]) -> list[str]:
    return [p for p in paths if not Path(p).resolve().is_relative_to(home.resolve())]


def test_two_learners_submit_collect_and_grade_by_hub_identity(hub: _hub.Hub, tmp_path: Path) -> None:
    key = load_quiz(KEY)
    question = next(q for q in key.questions if isinstance(q, SingleChoice))
    right = question.answer
    wrong = next(o.id for o in question.options if o.id != right)
    kernels: dict[str, _hub.Kernel] = {}
    checkout_before = _files(ROOT / "submissions")  # off a hub, Submit's default folder
    try:
        tokens = hub.add_learners("alice", "bob")
        for name, token in tokens.items():
            # The page in the learner's home (where the course's pages are put for them), opened
            # and run through the proxy: every code cell in order, as Run All runs them.
            _hub.put_file(hub, name, token, PAGE.name, PAGE.read_text(encoding="utf-8"), fmt="json")
            kernels[name] = kernel = _hub.Kernel(hub, name, token, PAGE.name)
            assert len(kernel.code_cells()) > 5
            for cell in kernel.code_cells():
                kernel.run(cell)
            kernel.run(_WATCH)
        # The page's own quiz, as a learner answers it and presses Submit.
        said = {
            "alice": _submit(kernels["alice"], "page.quiz()", question.id, right),
            "bob": _submit(kernels["bob"], "page.quiz()", question.id, wrong),
        }
        # alice's kernel asks to submit as bob, every answer right: it is alice's file, and said so.
        said["as bob"] = _submit(
            kernels["alice"],
            '__import__("course.quiz", fromlist=["show_quiz"]).show_quiz("day76", learner_id="bob")',
            question.id,
            right,
        )
    finally:
        for kernel in kernels.values():
            kernel.close()
    for name, who in (("alice", "alice"), ("bob", "bob"), ("as bob", "alice")):
        assert said[name]["learner"] == who
        assert f"as learner <b>{who}</b> (your JupyterHub user name)" in said[name]["note"]
        assert "Saved 1 of" in said[name]["status"], said[name]["status"]
        assert "collects this file from your JupyterHub server" in said[name]["status"]
        # The hook saw the submission itself written (so it watches), and nothing outside the home.
        target = (hub.home(who) / SUBMITTED.format(user=who)).resolve()
        assert target in {Path(p).resolve() for p in said[name]["written"]}, said[name]["written"]
        assert _outside(hub.home(who), said[name]["written"]) == [], "Submit wrote outside the home"
    assert "learner_id=&#x27;bob&#x27; is ignored" in said["as bob"]["note"]
    assert not (hub.home("alice") / SUBMITTED.format(user="bob")).exists()
    assert _files(ROOT / "submissions") == checkout_before, "Submit wrote into the course checkout"

    # The instructor: collect with the collector's token, grade the collected folder.
    collected, graded = tmp_path / "collected", tmp_path / "graded"
    done = _collect(hub, collected, hub.collector_token)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (collected / "day76").iterdir()) == ["alice.json", "bob.json"]
    assert "2 saved" in done.stdout
    done = _course("quiz", "grade", str(KEY), str(collected), "-o", str(graded), token="", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    points = f"{question.points:g}"
    assert _totals(graded) == {"alice": points, "bob": "0"}  # nobody scored under another's name

    # alice edits her file to name bob: saved under her hub name, flagged, and never scored as bob.
    path = SUBMITTED.format(user="alice")
    data = json.loads((collected / "day76" / "alice.json").read_text())
    data["learner"] = "bob"
    _hub.put_file(hub, "alice", tokens["alice"], path, json.dumps(data))
    done = _collect(hub, collected, hub.collector_token)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 saved, 1 saved and flagged" in done.stdout
    assert "this file says learner 'bob', but its place names learner 'alice'" in done.stdout
    done = _course("quiz", "grade", str(KEY), str(collected), "-o", str(graded), token="", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _totals(graded) == {"bob": "0"}
    assert "alice.json: this file says learner 'bob'" in done.stderr


def test_collect_says_why_a_file_was_not_read(hub: _hub.Hub, tmp_path: Path) -> None:
    dave = hub.add_learners("dave")["dave"]  # a running server, nothing submitted
    assert hub.api("POST", "/users/carol").status_code == 201  # never started
    collected = tmp_path / "collected"
    done = _collect(hub, collected, hub.collector_token)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("server not running: carol: the server is not running") for line in lines), (
        lines
    )
    assert any(
        line.startswith("not submitted: dave: no file at hopper-course-work/submissions/day76/dave.json")
        for line in lines
    ), lines
    assert "1 users' servers could not be read" in done.stderr
    # A token that may list the users but not open their servers: refused, with the scope it lacks.
    done = _collect(hub, collected, hub.lister_token)
    assert done.returncode == 1
    assert any(
        line.startswith("refused by the server: dave:") and "it needs the scope access:servers" in line
        for line in done.stdout.splitlines()
    ), done.stdout
    # A learner's own token may not list the users: one message, exit 2.
    done = _collect(hub, collected, dave)
    assert done.returncode == 2
    assert "the hub refused to list its users (403)" in done.stderr
