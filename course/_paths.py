"""Where the course's files live.

The package is installed editable from a checkout (the README's quick
start), so the lesson material (``kernels/``, ``content/``, ``evidence/``,
``notebooks/``) sits beside it. ``COURSE_ROOT`` overrides the guess.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import CourseError


def repo_root() -> Path:
    env = os.environ.get("COURSE_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parent.parent
    if not (root / "kernels").is_dir():
        raise CourseError(
            f"the course material must sit beside the package (found no kernels/ folder in {root}); "
            "install the course editable from a checkout (pip install -e .) or set COURSE_ROOT to the checkout"
        )
    return root


def kernels_dir() -> Path:
    return repo_root() / "kernels"


def content_dir() -> Path:
    return repo_root() / "content"


def evidence_dir() -> Path:
    return repo_root() / "evidence"


def notebooks_dir() -> Path:
    return repo_root() / "notebooks"
