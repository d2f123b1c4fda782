"""Fixtures for the quiz tests: a small course checkout with known kernels.

``course_root`` makes a temporary checkout (``COURSE_ROOT``) whose kernels
carry the snippet regions the lesson registry names, with line numbers the
tests can state exactly; ``sample_quiz`` writes a quiz with one question of
each type into it. Every test gets its own empty workspace (``own_workspace``),
so progress one test saves is never restored into another's quiz.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ._data import KERNEL_76, KERNEL_78, SAMPLE_QUIZ


@pytest.fixture(autouse=True)
def own_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "workspace"
    monkeypatch.setenv("COURSE_WORKSPACE", str(work))
    monkeypatch.delenv("COURSE_LEARNER", raising=False)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)  # off a hub unless a test says otherwise
    return work


@pytest.fixture
def course_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "checkout"
    (root / "kernels").mkdir(parents=True)
    (root / "content" / "quizzes").mkdir(parents=True)
    (root / "kernels" / "tma_tile.cu").write_text(KERNEL_76, encoding="utf-8")
    (root / "kernels" / "wgmma_gemm.cu").write_text(KERNEL_78, encoding="utf-8")
    monkeypatch.setenv("COURSE_ROOT", str(root))
    return root


@pytest.fixture
def write_quiz(course_root: Path):
    """Write quiz text (dedented) to a file in the checkout; return its path."""

    def write(text: str, name: str = "quiz.toml") -> Path:
        path = course_root / "content" / "quizzes" / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def sample_quiz(write_quiz) -> Path:
    return write_quiz(SAMPLE_QUIZ, "day76.toml")
