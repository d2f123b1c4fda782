"""The wheel carries the lesson material as package data: ``course/_material/``.

A checkout keeps ``kernels/``, ``content/``, ``evidence/`` and ``notebooks/``
beside the package (an editable install reads them there). A wheel has no
checkout, so building one copies those four folders into the built package
as ``course/_material/<folder>``, where ``course._paths`` finds them with
``importlib.resources``. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# The lesson material and what of it ships: sources, text, recorded evidence; no build outputs.
MATERIAL = {
    "kernels": ("*.cu", "*.cuh", "*.h", "*.md"),
    "content": ("*.toml", "*.md"),
    "evidence": ("*.json", "*.jsonl", "*.png", "*.txt", "*.log", "*.md", "*.sh"),
    "notebooks": ("*.ipynb",),
}
# evidence/gemm_dev/ is the record of how the kernels were made (its README), not course material.
SKIP = (".ipynb_checkpoints", "__pycache__", "gemm_dev")
# A graded quiz ships only as its released copy (course/quiz/graded.py): a file there without
# `released = true` is a key, and the build stops rather than put it in every learner's image.
GRADED = ("content", "quizzes", "graded")
RELEASED = re.compile(r"^released\s*=\s*true\s*(#.*)?$", re.MULTILINE)


def refuse_graded_keys(files: list[Path]) -> None:
    for rel in files:
        if rel.parts[:-1] == GRADED and rel.suffix == ".toml":
            if not RELEASED.search((HERE / rel).read_text(encoding="utf-8", errors="replace")):
                raise SystemExit(
                    f"{rel} is in content/quizzes/graded/ without `released = true`: a graded quiz's key "
                    "must stay in the instructor's folder (~/hopper-course-keys); put its released copy "
                    "here (python -m course quiz release KEY.toml -o ...)"
                )


def material_files() -> list[Path]:
    """Every file of the material that ships, relative to the checkout."""
    out = []
    for folder, patterns in MATERIAL.items():
        for path in sorted((HERE / folder).rglob("*")):
            rel = path.relative_to(HERE)
            if path.is_file() and not set(rel.parts) & set(SKIP):
                if any(fnmatch.fnmatch(path.name, p) for p in patterns):
                    out.append(rel)
    refuse_graded_keys(out)
    return out


class build_py_with_material(build_py):
    """build_py, then the material copied into the built package (not in an editable install)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout itself
        target = Path(self.build_lib) / "course" / "_material"
        if target.exists():
            shutil.rmtree(target)
        for rel in material_files():
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(HERE / rel, dest)


setup(cmdclass={"build_py": build_py_with_material})
