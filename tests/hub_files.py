"""What the class deployment's files say, read once for the tests that check them:
deploy/z2jh-values.yaml's start hook and start page, and the nbgitpuller link of book/instructors/jupyterhub.md."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]
HUB_PAGE = ROOT / "book" / "instructors" / "jupyterhub.md"  # the instructors' page: the nbgitpuller link
VALUES = ROOT / "deploy" / "z2jh-values.yaml"
LINK = re.compile(r"https://[^\s`)]*/hub/user-redirect/git-pull\?[^\s`)]+")


def values() -> dict[str, Any]:
    return yaml.safe_load(VALUES.read_text())


def start_hook() -> str:
    """The shell line of the values file's postStart hook (``sh -c LINE``)."""
    command = values()["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert command[:2] == ["sh", "-c"] and len(command) == 3, command
    return str(command[2])


def hook_limit() -> int:
    """The seconds the start hook's pull may take (``timeout N gitpuller ...``)."""
    words = shlex.split(start_hook())
    assert words[0] == "timeout" and words[1].isdigit(), words
    return int(words[1])


def hook_pull() -> tuple[str, str, str]:
    """The repository, branch and folder (under $HOME) the start hook's gitpuller pulls."""
    words = shlex.split(start_hook())
    words = words[2:] if words[0] == "timeout" else words
    assert words[0] == "gitpuller", words
    repo, branch, folder = words[1:4]
    assert folder.startswith("$HOME/"), folder
    return repo, branch, folder.removeprefix("$HOME/")


def readme_links() -> list[dict[str, str]]:
    """The parameters of every nbgitpuller link the instructors' JupyterHub page gives."""
    links = LINK.findall(HUB_PAGE.read_text())
    return [
        {k: v for k, (v,) in parse_qs(urlsplit(link).query, strict_parsing=True).items()} for link in links
    ]


# A graded quiz for the tests that look for its key where learners reach (the wheel, the pulled
# pages): its key carries text found nowhere else, so finding that text anywhere is a leak.
GRADED_ID = "day76-graded"
# Made from two pieces, so this file (which learners pull with the rest of the course) does not
# hold the text itself: only a key written from it does.
KEY_ONLY = "KEY-ONLY-" + "3f9c1e: the answer is b because the instructor says so"
GRADED_KEY = f"""\
[quiz]
id = "{GRADED_ID}"
title = "Day 76, graded"
lesson = "day76"

[[questions]]
id = "g1"
type = "single"
points = 1
prompt = "Which option is the graded one?"
options = [
  {{ id = "a", text = "The first option" }},
  {{ id = "b", text = "The second option" }},
  {{ id = "c", text = "The third option" }},
]
answer = "b"
explanation = "{KEY_ONLY}"
reference = "tests/hub_files.py, a quiz made for the tests"
"""


def release_graded(keys: Path, tree: Path) -> Path:
    """Write the graded quiz's key into the instructor's folder ``keys``, and its released copy into
    ``tree``'s content/quizzes/graded/, as the README says; return the released copy's path."""
    from course.quiz.release import release_quiz

    keys.mkdir(parents=True, exist_ok=True)
    key = keys / f"{GRADED_ID}.toml"
    key.write_text(GRADED_KEY, encoding="utf-8")
    released = tree / "content" / "quizzes" / "graded" / f"{GRADED_ID}.toml"
    released.parent.mkdir(parents=True, exist_ok=True)
    release_quiz(key, released)
    return released


def files_holding(tree: Path, text: str) -> list[Path]:
    """Every file under ``tree`` whose bytes hold ``text``."""
    needle = text.encode()
    return [
        p for p in sorted(tree.rglob("*")) if p.is_file() and not p.is_symlink() and needle in p.read_bytes()
    ]
