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


def hook_pull() -> tuple[str, str, str]:
    """The repository, branch and folder (under $HOME) the start hook's gitpuller pulls."""
    words = shlex.split(start_hook())
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
