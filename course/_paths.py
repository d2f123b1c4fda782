"""Where the course's files live.

Two layouts, one answer:

- a checkout (the README's quick start installs the course editable from
  it): the lesson material (``kernels/``, ``content/``, ``evidence/``,
  ``notebooks/``) sits beside the package;
- an installed wheel (built with ``python -m build --wheel``, then installed with pip): the same four folders
  are package data, ``course/_material/`` (setup.py copies them in when the
  wheel is built), found with ``importlib.resources``.

``COURSE_ROOT`` overrides both. ``python -m course pages DEST`` copies the
pages out of either into a folder of the learner's.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from .errors import CourseError

MATERIAL = "_material"  # the package-data folder of an installed wheel


def _has_material(root: Path) -> bool:
    return (root / "kernels").is_dir()


def repo_root() -> Path:
    """The folder holding kernels/, content/, evidence/ and notebooks/."""
    env = os.environ.get("COURSE_ROOT")
    if env:
        root = Path(env)
        if not _has_material(root):
            raise CourseError(
                f"COURSE_ROOT must name a folder with the course material (found no kernels/ folder in {root})"
            )
        return root
    checkout = Path(__file__).resolve().parent.parent
    if _has_material(checkout):
        return checkout
    # An installed wheel unpacks the package as files, so the Traversable is a real folder.
    installed = Path(str(resources.files(__package__ or "course").joinpath(MATERIAL)))
    if _has_material(installed):
        return installed
    raise CourseError(
        f"the course material is missing: no kernels/ folder beside the package ({checkout}) nor in its "
        f"package data ({installed}); install the course from a wheel (pip install hopper-course) or editable "
        "from a checkout (pip install -e .), or set COURSE_ROOT to a checkout"
    )


def kernels_dir() -> Path:
    return repo_root() / "kernels"


def content_dir() -> Path:
    return repo_root() / "content"


def evidence_dir() -> Path:
    return repo_root() / "evidence"


def notebooks_dir() -> Path:
    return repo_root() / "notebooks"
