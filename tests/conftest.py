"""Shared test fixtures: the GPU gate used as ``skipif`` with a reason.

A GPU test on a machine that cannot run the lesson is a skip that says
why ("no-gpu: There is no NVIDIA driver ..."), never a pass. With
COURSE_REQUIRE_GPU=1 (the Hopper test run) the same situation is a
failure, so a GPU run cannot pass by skipping.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.kernel import gate
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


@pytest.fixture
def unwritable(monkeypatch: pytest.MonkeyPatch):
    """``unwritable(folder, errno.EROFS)``: from now on every write under ``folder`` fails with that error.

    A read-only or a full workspace, as the operating system reports it
    (EROFS, ENOSPC), in this process: chmod cannot make one where the tests
    run as root, and no test may need a mount. Reading is untouched; making,
    renaming, linking, removing or opening a file for writing under ``folder``
    raises ``OSError(code, ..., path)``, as the system call would.
    """
    import builtins
    import errno as errno_module
    import io
    import os

    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    blocked: list[tuple[str, int]] = []

    def refused(path: object) -> int | None:
        try:
            name = os.path.abspath(os.fsdecode(path))  # type: ignore[arg-type]
        except TypeError:  # a file descriptor
            return None
        for folder, code in blocked:
            if name == folder or name.startswith(folder + os.sep):
                return code
        return None

    def fail(code: int, path: object) -> None:
        raise OSError(code, os.strerror(code), os.fsdecode(path))  # type: ignore[arg-type]

    real_open = os.open

    def fake_open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        code = refused(path)
        if code is not None and flags & write_flags:
            fail(code, path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    real_io_open = io.open

    def fake_io_open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        code = refused(file)
        if code is not None and any(c in mode for c in "wxa+"):
            fail(code, file)
        return real_io_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", fake_io_open)
    monkeypatch.setattr(builtins, "open", fake_io_open)
    for name, args in (
        ("mkdir", 1),
        ("rmdir", 1),
        ("unlink", 1),
        ("remove", 1),
        ("link", 2),
        ("symlink", 2),
        ("rename", 2),
        ("replace", 2),
        ("mkfifo", 1),
        ("chmod", 1),
    ):
        real = getattr(os, name)

        def fake(*a, _real=real, _args=args, **kw):  # type: ignore[no-untyped-def]
            for path in a[:_args]:
                code = refused(path)
                if code is not None:
                    fail(code, path)
            return _real(*a, **kw)

        monkeypatch.setattr(os, name, fake)

    def make(folder: Path, code: int = errno_module.EROFS) -> Path:
        blocked.append((os.path.abspath(folder), code))
        return folder

    return make


@pytest.fixture
def bounded_course():
    """``bounded_course(*args, workspace=..., timeout=120)``: ``python -m course ARGS`` in a child, bounded.

    For a file that must be refused, not waited on or read whole (a FIFO,
    /dev/zero): the child gets 2 GiB of address space and a generous time
    limit, so a regression fails the test (TimeoutExpired, or a MemoryError)
    instead of hanging the suite or filling the machine's memory.
    """
    import os
    import resource
    import subprocess
    import sys

    limit = 2 * 1024**3

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    def run(*args: str, workspace: Path, timeout: float = 120, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        full = dict(os.environ, COURSE_WORKSPACE=str(workspace), **(env or {}))
        return subprocess.run(
            [sys.executable, "-m", "course", *args],
            capture_output=True,
            text=True,
            env=full,
            timeout=timeout,
            preexec_fn=cap,
            stdin=subprocess.DEVNULL,
        )

    return run


@pytest.fixture(autouse=True)
def _pictures_drawn_here(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path_factory
) -> None:
    """A test of a figure tests its drawing: the renderings kept with the evidence (course._kept)
    are shown only in a test marked ``kept_renderings``, which checks them against the drawing."""
    if request.node.get_closest_marker("kept_renderings") is None:
        # heavy: the course's picture machinery, only for the tests (conftest imports stay light)
        from course import _kept

        nowhere = tmp_path_factory.getbasetemp() / "no-kept-renderings"
        monkeypatch.setattr(_kept, "renderings_dir", lambda: nowhere)
