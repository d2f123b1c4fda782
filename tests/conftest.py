"""Shared test fixtures: the GPU gate used as ``skipif`` with a reason.

A GPU test on a machine that cannot run the lesson is a skip that says
why ("no-gpu: There is no NVIDIA driver ..."), never a pass. With
COURSE_REQUIRE_GPU=1 (the Hopper test run) the same situation is a
failure, so a GPU run cannot pass by skipping.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course import gate
from course.lessons import get_lesson


def require_lesson_gpu(lesson_id: str) -> None:
    reason = gate.skip_reason(get_lesson(lesson_id))
    if reason is None:
        return
    if gate.gpu_required():
        pytest.fail(f"{gate.REQUIRE_GPU_ENV} is set, but {lesson_id} cannot run here: {reason}")
    pytest.skip(reason)


@pytest.fixture
def gpu_for():
    """``gpu_for(lesson_id)``: skip with the gate's reason (fail under COURSE_REQUIRE_GPU) unless it runs here."""
    return require_lesson_gpu


@pytest.fixture
def day76_gpu() -> None:
    require_lesson_gpu("day76")


@pytest.fixture
def day78_gpu() -> None:
    require_lesson_gpu("day78")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace of the test's own, and the learner its default, "default".

    The default learner when COURSE_LEARNER is unset is JUPYTERHUB_USER, else the
    login name (getpass reads LOGNAME first): "default" here, in this process and
    the ones it starts.
    """
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    monkeypatch.setenv("LOGNAME", "default")
    work = tmp_path / "workspace"
    monkeypatch.setenv("COURSE_WORKSPACE", str(work))
    monkeypatch.delenv("COURSE_LEARNER", raising=False)
    return work
