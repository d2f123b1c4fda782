"""Run learners' code responses for the grader: each in child processes, each with a time limit.

``python -m course quiz grade`` scores a code question (``course.quiz.model.Code``)
by handing its response, the piece, to ``CodeRunner``: the piece is checked by
``course.exercises.coding_check.check_piece`` in a fresh temporary folder. On a machine
whose GPU runs the lesson, the sandbox's child process compiles, runs and
checks it with the lesson's own check (a fault or a hang ends only that child);
elsewhere the CPU check runs it as a compiled program in a child process. The
grader's own process never compiles or runs a learner's code, and one
submission's failure never stops the others: a piece that could leave its
function is refused before anything compiles it (``course.exercises.coding_piece``),
every child runs confined and limited (``course._confine``), and an
unexpected error of the check itself scores that piece 0 ("crashed") with
the reason. Identical pieces are run once.

Code is graded only inside a sandbox that works (``course._confine``:
bubblewrap, CPU and GPU children alike): where none does, each call raises
``NoSandbox`` (why, and how to get one) before anything compiles, and the
grader scores that answer 0, "not-run", and flags it. ``unconfined=True``
(``quiz grade --unconfined``) is the instructor's explicit choice to run
learners' code with the grader's own rights; every result then says so
(``UNCONFINED_NOTE`` leads its headline), and the grader flags every
learner whose code ran that way. Calls may come from several
threads at once (``course.quiz.parallel``); each hands its GPU child the
``CUDA_VISIBLE_DEVICES`` it is given (``device``).

On the GPU each call borrows a worker (``course.tryout.worker.GpuWorker``) of
its lesson and device, one per slot at a time: the worker's Python, imports
and CUDA context are paid once, not per piece, and each piece still gets
its own module, buffers and limits; a worker whose piece faulted or hung
is replaced for the next piece. ``close()`` (or ``with``) ends them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .. import _confine
from ..errors import CourseError
from ..exercises.coding import get_exercise
from ..exercises.coding_check import CodingResult, check_piece
from ..kernel import gate
from ..lessons import get_lesson
from ..tryout.sandbox import DEFAULT_TIMEOUT_S
from ..tryout.worker import GpuWorker

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..lesson import Lesson
    from .model import Code

__all__ = ["UNCONFINED_NOTE", "CodeRunner"]

UNCONFINED_NOTE = "UNCONFINED (graded with --unconfined: no sandbox, the grader's own rights):"


class CodeRunner:
    """Callable ``(question, piece) -> CodingResult``, as ``grade_submissions(run_code=...)`` wants."""

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        use_gpu: bool | None = None,
        command: Sequence[str] | None = None,
        workers: bool = True,
        worker_command: Sequence[str] | None = None,
        unconfined: bool = False,
    ) -> None:
        self.timeout_s = timeout_s
        self.unconfined = unconfined  # run code even where no sandbox works: the instructor's explicit choice
        self.use_gpu = use_gpu
        self.command = command  # tests: a stand-in for the sandbox's one-off child (no workers then)
        self.workers = workers and command is None
        self.worker_command = worker_command  # tests: a stand-in for the worker
        self.runs = 0
        self._seen: dict[tuple[str, str, str], CodingResult] = {}
        self._lock = threading.Lock()  # the registry, the gate's probe and the counts, one thread at a time
        self._idle: dict[tuple[str, str | None], list[GpuWorker]] = {}  # by lesson and device
        self._all: list[GpuWorker] = []

    @property
    def workers_started(self) -> int:
        """How many worker processes this runner has started (each restart after a fault or hang counts)."""
        with self._lock:
            return sum(w.started for w in self._all)

    def close(self) -> None:
        """End every worker child (each leaves at the end of its input); the counts stay."""
        with self._lock:
            workers, self._idle = list(self._all), {}
        for worker in workers:
            worker.close()

    def __enter__(self) -> CodeRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take(self, lesson: Lesson, device: str | None) -> GpuWorker:
        """An idle worker of this lesson on this device, or a new one (started at its first piece)."""
        idle = self._idle.setdefault((lesson.id, device), [])
        if idle:
            return idle.pop()
        worker = GpuWorker(lesson, device=device, command=self.worker_command)
        self._all.append(worker)
        return worker

    def sandbox(self) -> str:
        """How code runs here, in words; raises ``NoSandbox`` where none works and ``unconfined`` is off."""
        try:
            return f"inside bubblewrap ({_confine.require_sandbox().detail})"
        except _confine.NoSandbox as e:
            if not self.unconfined:
                raise
            return f"{UNCONFINED_NOTE} {e.message}"

    def __call__(self, question: Code, piece: str, *, device: str | None = None) -> CodingResult:
        how = self.sandbox()  # before anything compiles: no sandbox, no run (unless unconfined)
        with self._lock:
            lesson = get_lesson(question.lesson)
            exercise = get_exercise(lesson, question.exercise)
            key = (lesson.id, exercise.id, hashlib.sha256(piece.encode("utf-8", "surrogatepass")).hexdigest())
            if key in self._seen:
                return self._seen[key]
            use_gpu = gate.verdict(lesson).runs if self.use_gpu is None else self.use_gpu
            worker = self._take(lesson, device) if use_gpu and self.workers else None
        with tempfile.TemporaryDirectory(prefix="course-grade-") as tmp:
            try:
                result = check_piece(
                    lesson,
                    exercise,
                    piece,
                    timeout_s=self.timeout_s,
                    use_gpu=use_gpu,
                    compile_check=False,  # without the GPU the CPU check decides; NVRTC would add seconds each
                    source_path=Path(tmp) / lesson.kernel_file,
                    command=self.command,
                    device=device,
                    worker=worker,
                )
            except CourseError:
                raise  # refused before anything ran (the grader scores it 0 with the reason)
            except Exception as e:  # noqa: BLE001 - one submission never stops the grading of the others
                result = CodingResult(
                    lesson.id,
                    exercise.id,
                    "crashed",
                    "none",
                    f"The grader could not check this code ({type(e).__name__}: {e}); it scored 0. "
                    "Grade it again, and tell the course's authors if this repeats.",
                )
            finally:
                if worker is not None:
                    with self._lock:
                        self._idle.setdefault((lesson.id, device), []).append(worker)
        if how.startswith(UNCONFINED_NOTE):
            result = dataclasses.replace(result, headline=f"{UNCONFINED_NOTE} {result.headline}")
        with self._lock:
            self.runs += 1
            self._seen[key] = result
        return result
