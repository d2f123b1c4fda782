"""A GPU worker: one child process that runs many pieces in turn, each as the sandbox's child would.

    with GpuWorker(lesson, device="0") as worker:
        result = worker.run(path_of_a_spliced_kernel, timeout_s=20)   # a TryResult, as run_variant's

The grader (``course.quiz.code_runner``) runs hundreds of learners' pieces. A
fresh sandbox child for each (``course.tryout.sandbox.run_variant``) pays
Python's start, the course's and CuPy's imports and a new CUDA context every
time; a worker pays them once and then, for each request, compiles the
piece's kernel (NVRTC), loads it as a module of its own, fills new buffers
(the inputs drawn afresh, the output poisoned), launches, synchronises and
checks, exactly as the one-off child does (``course.tryout._child.serve``),
then frees those buffers. Each request has the one-off child's limits: the
compile's, then the run's from the moment it compiled.

What one piece can do to the next: the requests of one worker share its CUDA
context and nothing else a piece's code can reach. A piece is device code
inside the lesson's kernel; its module, its inputs and its output are its
own and are written before it runs, so what an earlier piece left in GPU
memory is overwritten before it can be read. Where that sharing could
change an outcome, the worker is not reused:

- a result other than a pass, a failed check or a compile error (a fault
  leaves a *sticky* error in the context; a crash leaves it in doubt): the
  worker leaves after sending it (its ``leaving`` flag), and the next
  request gets a new one;
- a hang: the worker is killed with its whole process group at the run's
  limit (that piece's outcome is "timeout", as in a one-off child);
- a worker that ended without answering a request it had barely begun (no
  event of it at all), having served others before: that request is run
  again in a new worker, once, so a worker's death is never blamed on the
  next piece;
- before its CPU time nears the keeper's limit (``RECYCLE_CPU_S``), so no
  piece runs out of the CPU time a one-off child would have had.

Waiting for the GPU, a worker sleeps rather than spins (``_child.blocking_sync``):
a hung kernel holds its worker's slot for the time limit, not a core.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from .. import _confine
from .._data import read_text
from .._files import MAX_KERNEL_BYTES
from ..errors import CourseError
from .outcome import COMPILE_TIMEOUT_S, DEFAULT_TIMEOUT_S, TryResult
from .sandbox import (
    MAX_OUTPUT_BYTES,
    _Run,
    child_env,
    child_readable,
    child_writable,
    refused_include,
    run_result,
)

if TYPE_CHECKING:
    from ..lesson import Lesson

__all__ = ["RECYCLE_CPU_S", "GpuWorker", "serve_command"]

RECYCLE_CPU_S = 120.0  # a worker that has used this much CPU time is replaced before its next request


def serve_command(lesson: Lesson) -> list[str]:
    """The worker's command line: the sandbox's child, serving requests on its stdin."""
    return [sys.executable, "-m", "course.tryout._child", "--lesson", lesson.id, "--serve"]


class GpuWorker:
    """Runs pieces of one lesson in turn in a worker child on ``device``; see the module's docstring.

    ``command`` replaces the worker's command line (tests: a stand-in that
    speaks the protocol without a GPU). ``started`` counts the worker
    processes started, ``served`` the requests answered. Not for use by two
    threads at once: the grader gives each slot its own.
    """

    def __init__(
        self,
        lesson: Lesson,
        *,
        device: str | None = None,
        command: Sequence[str] | None = None,
        recycle_cpu_s: float = RECYCLE_CPU_S,
    ) -> None:
        self.lesson = lesson
        self.device = device
        self.command = list(command) if command is not None else serve_command(lesson)
        self.recycle_cpu_s = recycle_cpu_s
        self.started = 0
        self.served = 0
        self._session: _confine.Session | None = None
        self._folder: contextlib.ExitStack | None = None
        self._inbox: Path | None = None  # where each request's source is copied (the child sees only it)
        self._session_served = 0
        self._cpu_s = 0.0
        self._requests = 0

    def __enter__(self) -> GpuWorker:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the worker child, if one is running (it leaves at the end of its input)."""
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._folder is not None:
            self._folder.close()
            self._folder = None

    def _start(self, timeout_s: float, compile_timeout_s: float) -> _confine.Session:
        self.close()
        stack = contextlib.ExitStack()
        folder = stack.enter_context(_confine.child_folder("course-worker-"))
        self._inbox = folder / "inbox"
        self._inbox.mkdir()
        try:
            self._session = _confine.Session(
                self.command,
                folder=folder,
                # A one-off child's CPU time for its one piece, on top of what the worker may use before
                # it is replaced: every request starts with at least a one-off child's allowance left.
                limits=_confine.Limits(
                    cpu_s=self.recycle_cpu_s + compile_timeout_s + timeout_s + 30, file_size=256 << 20
                ),
                writable=child_writable(),
                readable=child_readable(command=self.command),
                env=child_env(folder, self.device),
                stdout_limit=MAX_OUTPUT_BYTES,
                stderr_limit=256 << 10,
            )
        except BaseException:
            stack.close()
            raise
        self._folder = stack
        self.started += 1
        self._session_served = 0
        self._cpu_s = 0.0
        return self._session

    def run(
        self,
        source_path: Path | str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        compile_timeout_s: float = COMPILE_TIMEOUT_S,
    ) -> TryResult:
        """Compile, run and check the kernel at ``source_path`` with the lesson's constants, in the worker."""
        for name, value in (("timeout_s", timeout_s), ("compile_timeout_s", compile_timeout_s)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise CourseError(f"{name} must be a positive number of seconds (got {value!r})")
        path = Path(source_path).expanduser()
        source = read_text(path, "the kernel to try", limit=MAX_KERNEL_BYTES)
        if (refused := refused_include(self.lesson, path, source)) is not None:
            return refused
        for _attempt in range(2):
            fresh = self._session is None or not self._session.alive or self._cpu_s >= self.recycle_cpu_s
            session = self._start(timeout_s, compile_timeout_s) if fresh else self._session
            assert session is not None
            served_before = self._session_served
            self._requests += 1
            run = _Run(request=self._requests)
            assert self._inbox is not None
            given = self._inbox / path.name  # the same name: the compile log's lines map to it
            given.write_text(source, encoding="utf-8")
            answer = session.ask(
                json.dumps({"id": self._requests, "source": str(given)}),
                float(compile_timeout_s),
                functools.partial(run.on_line, timeout_s=float(timeout_s)),
                run.answered,
            )
            run.ended(
                answer.stderr.decode("utf-8", "replace"),
                answer.returncode,
                answer.overflow,
                answer.seconds,
                answer.timed_out,
            )
            if not answer.answered and not run.events and served_before and not answer.timed_out:
                continue  # the worker ended before this request began: run it again in a new one
            break
        if run.result is not None:
            self.served += 1
            self._session_served += 1
            self._cpu_s = float(run.result.get("cpu_s") or 0.0)
            if run.result.get("leaving"):
                self.close()  # it leaves after this result: the next request gets a new worker
        if self._session is not None and not self._session.alive:
            self.close()
        return run_result(self.lesson, path, source, run, float(timeout_s), float(compile_timeout_s))
