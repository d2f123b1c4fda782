"""Getting the course into a learner's home on a hub: nbgitpuller, pulled again and again, keeps their edits.

The pull is nbgitpuller's own (``nbgitpuller.pull.GitPuller``, what its link
and its ``gitpuller`` command run) from a local repository that stands in for
the course's; the start hook of deploy/z2jh-values.yaml is run as written, and
the link of book/instructors/jupyterhub.md is followed through a Jupyter server with nbgitpuller's
extension, as a learner's server on a hub has it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hub_files import (
    GRADED_ID,
    KEY_ONLY,
    ROOT,
    files_holding,
    hook_pull,
    readme_links,
    release_graded,
    start_hook,
)
from nbgitpuller.pull import GitPuller

from course.quiz.graded import key_leaks
from course.quiz.loader import load_quiz
from course.tryout.workspace import DEFAULT_WORKSPACE, WORKSPACE_ENV, jupyterlab_link, workspace_root

# nbgitpuller's execute_cmd (nbgitpuller/pull.py) leaves each git process's stdout pipe for the
# garbage collector to close: its ResourceWarning, not ours, which pytest reports when the pipe is
# collected. Only that warning is let through.
pytestmark = [
    pytest.mark.filterwarnings("ignore:unclosed file <_io.BufferedReader:ResourceWarning"),
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <_io.FileIO:pytest.PytestUnraisableExceptionWarning"
    ),
]

PAGES = ("00_start.ipynb", "day76_tma.ipynb")
TITLE = "# Day 76: load a tile with the Tensor Memory Accelerator"  # the page's first line of prose


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A learner's home on a hub: HOME, and no git configuration of the machine's."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv(WORKSPACE_ENV, raising=False)
    for var in ("NAME", "EMAIL"):
        monkeypatch.setenv(f"GIT_AUTHOR_{var}", "instructor" if var == "NAME" else "instructor@example.org")
        monkeypatch.setenv(
            f"GIT_COMMITTER_{var}", "instructor" if var == "NAME" else "instructor@example.org"
        )
    return home


@pytest.fixture
def upstream(tmp_path, home) -> Path:
    """The course's repository: two of its real pages on branch main."""
    repo = tmp_path / "upstream" / "hopper-course"
    (repo / "notebooks").mkdir(parents=True)
    for page in PAGES:
        shutil.copy(ROOT / "notebooks" / page, repo / "notebooks" / page)
    assert TITLE in (repo / "notebooks" / "day76_tma.ipynb").read_text()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the course")
    return repo


def test_the_learners_pulled_tree_holds_no_key_of_a_graded_quiz(tmp_path, home):
    """The whole course as the link pulls it (every tracked file), with a graded quiz added as the
    README says: the learner's copy has its released copy and no key of it."""
    repo = tmp_path / "upstream" / "hopper-course"
    tracked = _git(ROOT, "ls-files", "-z").split("\0")
    if not [t for t in tracked if t]:
        pytest.skip("not a git checkout: the tracked files are unknown")
    for rel in filter(None, tracked):
        if (ROOT / rel).is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, repo / rel)
    release_graded(home / "instructor-keys", repo)  # the key: the instructor's folder, not the repository
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the course, with a graded quiz")
    course = home / "hopper-course"
    _pull(repo, course)
    assert load_quiz(course / "content" / "quizzes" / "graded" / f"{GRADED_ID}.toml").released
    assert key_leaks(course) == []
    assert files_holding(course, KEY_ONLY) == []
    assert files_holding(home / "instructor-keys", KEY_ONLY)  # the search finds the key where it is


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def _instructor_update(upstream: Path) -> None:
    """A new version of the course: a page the learner edited changes in the learner's line and in
    another, an untouched page changes, a new page appears."""
    day76 = upstream / "notebooks" / "day76_tma.ipynb"
    _edit(day76, TITLE, "# Day 76: loading a tile with the Tensor Memory Accelerator")
    _edit(day76, '"nbformat": 4', '"course_version": 2,\n "nbformat": 4')  # the file's other end
    _edit(upstream / "notebooks" / "00_start.ipynb", '"nbformat": 4', '"course_version": 2,\n "nbformat": 4')
    shutil.copy(ROOT / "notebooks" / "day78_wgmma.ipynb", upstream / "notebooks" / "day78_wgmma.ipynb")
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-q", "-m", "the course, version 2")


def _pull(upstream: Path, into: Path) -> str:
    return "".join(GitPuller(f"file://{upstream}", str(into), branch="main").pull())


def test_a_second_pull_brings_the_new_course_and_keeps_the_learners_edits(upstream, home):
    course = home / "hopper-course"
    _pull(upstream, course)  # the first click of the link: a clone
    for page in PAGES:
        assert (course / "notebooks" / page).read_bytes() == (ROOT / "notebooks" / page).read_bytes()

    day76 = course / "notebooks" / "day76_tma.ipynb"
    _edit(day76, TITLE, "# Day 76: load a tile with the TMA (my notes: read twice)")
    (course / "notebooks" / "my_scratch.ipynb").write_text('{"cells": []}')
    _instructor_update(upstream)

    said = _pull(upstream, course)  # the next start, or the link clicked again: a merge
    mine = day76.read_text()
    # Where both changed the same line, the learner's wins (nbgitpuller merges with -Xours) ...
    assert "# Day 76: load a tile with the TMA (my notes: read twice)" in mine
    assert "loading a tile" not in mine
    # ... and everything else of the new version arrives.
    assert '"course_version": 2' in mine
    assert '"course_version": 2' in (course / "notebooks" / "00_start.ipynb").read_text()
    assert (course / "notebooks" / "day78_wgmma.ipynb").is_file()
    assert (course / "notebooks" / "my_scratch.ipynb").read_text() == '{"cells": []}'
    assert "Automatic commit by nbgitpuller" in _git(course, "log", "--format=%s")
    assert "merge" in said

    # A page the learner deleted comes back fresh on the next pull; their edits stay.
    (course / "notebooks" / "00_start.ipynb").unlink()
    _pull(upstream, course)
    assert (course / "notebooks" / "00_start.ipynb").is_file()
    assert "my notes: read twice" in day76.read_text()


def _start_hook(upstream_url: str) -> str:
    """deploy/z2jh-values.yaml's postStart command, pulling from ``upstream_url`` instead."""
    repo, _, _ = hook_pull()
    return start_hook().replace(repo, upstream_url)


def _run_hook(hook: str, home: Path) -> subprocess.CompletedProcess[str]:
    # gitpuller is nbgitpuller's command, installed beside this Python (the image has it on PATH).
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["sh", "-c", hook],
        cwd="/",
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_start_hook_clones_then_merges_and_never_keeps_a_server_from_starting(upstream, home):
    course = home / "hopper-course"
    log = home / ".hopper-course-pull.log"
    hook = _start_hook(f"file://{upstream}")
    assert _run_hook(hook, home).returncode == 0
    assert (course / "notebooks" / "day76_tma.ipynb").is_file()  # in the home, whatever the hook's folder
    _edit(course / "notebooks" / "day76_tma.ipynb", TITLE, "# Day 76, with my notes")
    _instructor_update(upstream)
    assert _run_hook(hook, home).returncode == 0
    assert "# Day 76, with my notes" in (course / "notebooks" / "day76_tma.ipynb").read_text()
    assert (course / "notebooks" / "day78_wgmma.ipynb").is_file()
    assert "not updated" not in log.read_text()

    # The repository unreachable: the server still starts, with the learner's copy, and the log says so.
    gone = _start_hook(f"file://{upstream.parent}/no-such-repository")
    assert _run_hook(gone, home).returncode == 0
    assert "The course's pages were not updated (see above)." in log.read_text()
    assert "# Day 76, with my notes" in (course / "notebooks" / "day76_tma.ipynb").read_text()


def test_the_home_serves_both_the_pages_and_the_workspace(home):
    # On a hub the learner's server serves their home (JupyterHub's and the chart's default), so
    # nbgitpuller's folder and the default workspace are both inside it, and the pages' links to
    # the learner's own files (copies, progress, submissions) open in JupyterLab.
    assert DEFAULT_WORKSPACE == "~/hopper-course-work"
    workspace = workspace_root()
    assert workspace == (home / "hopper-course-work").resolve()
    server = {"root_dir": str(home), "base_url": "/user/alice/"}
    page = home / "hopper-course" / "notebooks" / "day76_tma.ipynb"
    copy = workspace / "day76" / "tma_tile.cu"
    assert jupyterlab_link(page, [server]) == "/user/alice/lab/tree/hopper-course/notebooks/day76_tma.ipynb"
    assert jupyterlab_link(copy, [server]) == "/user/alice/lab/tree/hopper-course-work/day76/tma_tile.cu"
    # A workspace moved out of the home (COURSE_WORKSPACE) is out of the server's reach: the
    # pages then say to open the file in another editor.
    assert jupyterlab_link(home.parent / "elsewhere" / "x.cu", [server]) is None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SERVER_START_S = 90  # a bound for a busy 2-core machine, not what is tested


@pytest.fixture
def learner_server(home, tmp_path) -> Iterator[tuple[str, str]]:
    """A Jupyter server as a hub starts one: serving the learner's home, with nbgitpuller's extension."""
    port, token = _free_port(), os.urandom(16).hex()
    jupyter = tmp_path / "jupyter"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(jupyter / "config"),
        "JUPYTER_DATA_DIR": str(jupyter / "data"),
        "JUPYTER_RUNTIME_DIR": str(jupyter / "runtime"),
        "PYTHONWARNINGS": "ignore",
    }
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                "--no-browser",
                "--allow-root",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={home}",
            ],
            cwd=home,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert server.poll() is None, f"the server exited; log:\n{log_path.read_text()[-3000:]}"
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            assert time.monotonic() < deadline, (
                f"no answer in {SERVER_START_S} s; log:\n{log_path.read_text()[-3000:]}"
            )
            time.sleep(0.25)
        yield base, token
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # its own session: the server and nothing else
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


@pytest.mark.slow  # starts a Jupyter server
def test_the_readme_link_pulls_into_the_server_root_and_opens_the_start_page(upstream, home, learner_server):
    base, token = learner_server
    (link,) = readme_links()
    query = {**link, "repo": f"file://{upstream}"}  # the course's repository, here a local one
    auth = {"Authorization": f"token {token}"}
    # The link's page: it pulls (through the api below) and then sends the learner to urlpath.
    with urllib.request.urlopen(
        urllib.request.Request(f"{base}/git-pull?{urlencode(query)}", headers=auth), timeout=60
    ) as r:
        page = r.read().decode()
    assert query["urlpath"] in page
    with urllib.request.urlopen(
        urllib.request.Request(f"{base}/git-pull/api?{urlencode(query)}", headers=auth), timeout=120
    ) as r:
        events = r.read().decode()
    assert '"phase": "finished"' in events, events[-2000:]
    # Into the server's root (the home), under targetpath; urlpath names a page that is there.
    assert (home / query["targetpath"] / "notebooks" / "day76_tma.ipynb").is_file()
    assert (home / query["urlpath"].removeprefix("lab/tree/")).is_file()
