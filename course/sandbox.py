"""Run a learner's version of a kernel in a child process, so nothing it does can break the page.

    result = run_variant(lesson, "~/hopper-course-work/<id>/<kernel file>", timeout_s=20)
    result.outcome     # "passed", "failed-check", "compile-error", "fault", "refused",
                       # "timeout", "crashed", or "not-run" (this machine cannot run the lesson)
    print(result)      # what happened and what it means for the code, in words

Why a child process: a kernel that faults (an illegal address, a misaligned
access, an illegal instruction, a trap) leaves a *sticky* error in its CUDA
context: every later CUDA call in that process fails, so in a notebook every
later GPU cell fails until the kernel is restarted (CUDA Runtime API,
cudaError_t: "the process must be terminated and relaunched"). A kernel
that hangs (a barrier that never completes) never returns at all. So the
learner's source is compiled, run and checked in ``python -m
course._sandbox_child``, with its own CUDA context, in its own process
group, under a time limit: a fault ends the child, a hang is killed with
its whole process group, and the page's own context is never touched.

The protocol: the child prints lines starting with ``@@course-sandbox ``
followed by one JSON object: ``{"event": "compiled", ...}`` when the kernel
is built (the run's time limit starts then, so a cold NVRTC compile is not
counted as a hang), ``{"event": "line", "text": ...}`` for each line the run
prints, and one ``{"event": "result", "outcome": ...}`` last. Anything else
on stdout or stderr is kept only as the tail shown for a crash. Having
written its result, the child leaves with ``os._exit``, so CuPy's module
unload after a sticky error cannot print tracebacks at exit.

On a machine that cannot run the lesson, nothing is launched: the source is
compile-checked without a GPU (``compile_offline``) and the outcome is
"not-run".
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _paths, gate
from .errors import CourseError

if TYPE_CHECKING:
    from .lesson import Lesson

__all__ = [
    "COMPILE_TIMEOUT_S",
    "DEFAULT_TIMEOUT_S",
    "EXIT_CODES",
    "OUTCOMES",
    "PROTOCOL_PREFIX",
    "DELIBERATE",
    "CompileProblem",
    "TryResult",
    "cuda_error_name",
    "deliberate_variant",
    "map_compile_log",
    "run_variant",
]

from .sandbox_result import (
    _RESULT_GRACE_S,
    COMPILE_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    EXIT_CODES,
    OUTCOMES,
    PROTOCOL_PREFIX,
    CompileProblem,
    TryResult,
    _compile_result,
    _describe,
    cuda_error_name,
    map_compile_log,
)


# ---------------------------------------------------------------------------
# Without a GPU that runs the lesson: compile-check only.
# ---------------------------------------------------------------------------
def _offline(lesson: Lesson, path: Path, source: str, verdict: gate.Verdict) -> TryResult:
    from .compile import CompileError, compile_offline

    start = time.perf_counter()
    common: dict[str, Any] = {}
    try:
        compiled = compile_offline(lesson, source=source, defines=lesson.run_defines)
    except CompileError as e:
        common["seconds"] = time.perf_counter() - start
        return _compile_result(lesson, map_compile_log(e.log, source, path, (lesson.kernel_file,)), common)
    except CourseError as e:
        return TryResult(
            lesson.id,
            "not-run",
            path,
            f"Not run here: {verdict.reason} The compile check could not run either.",
            verdict.advice,
            str(e),
        )
    return TryResult(
        lesson.id,
        "not-run",
        path,
        f"Not run here: {verdict.reason} Compile check: your version compiles ({compiled.summary()}).",
        f"{verdict.advice} On a GPU that runs {lesson.id}, the same command compiles, runs and checks it.".strip(),
        seconds=time.perf_counter() - start,
    )


# ---------------------------------------------------------------------------
# Deliberate failures: what the sandbox must survive (tools/try_gpu_check.py).
# ---------------------------------------------------------------------------
DELIBERATE = {
    # PTX ``trap``: the kernel raises an exception on its first instruction (a sticky error).
    "trap": ('asm volatile("trap;");', "fault"),
    # Every thread sleeps in a loop with no exit: the kernel never ends. (A spin on a
    # volatile local was compiled away by NVRTC; an asm volatile cannot be.)
    "spin": ('for (;;) { asm volatile("nanosleep.u32 1000;" ::: "memory"); }', "timeout"),
}


def deliberate_variant(lesson: Lesson, source: str, kind: str) -> str:
    """``source`` with ``DELIBERATE[kind]``'s statement first in the kernel's body."""
    try:
        statement, _ = DELIBERATE[kind]
    except KeyError:
        raise CourseError(f"kind must be one of {', '.join(DELIBERATE)} (got {kind!r})") from None
    for m in re.finditer(rf"__global__[^;{{]*?\b{re.escape(lesson.kernel_name)}\s*\(", source):
        depth, i = 1, m.end()
        while depth and i < len(source):  # to the parenthesis that closes the parameter list
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        body = source.find("{", i)
        if depth or body < 0 or ";" in source[i:body]:
            continue  # a declaration, not the definition
        return f"{source[: body + 1]}\n    {statement}  // deliberate: {kind}\n{source[body + 1 :]}"
    raise CourseError(
        f"no definition of the __global__ function {lesson.kernel_name}", path=lesson.kernel_path
    )


# ---------------------------------------------------------------------------
# The child process.
# ---------------------------------------------------------------------------
def child_command(lesson: Lesson, source_path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "course._sandbox_child",
        "--lesson",
        lesson.id,
        "--source",
        str(source_path),
    ]


def child_env() -> dict[str, str]:
    """The parent's environment, with the course's checkout and package made explicit."""
    env = dict(os.environ)
    package_parent = str(Path(__file__).resolve().parent.parent)
    try:
        env["COURSE_ROOT"] = str(_paths.repo_root())
    except CourseError:
        pass
    paths = [package_parent, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the child's whole process group (it leads its own session)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - not POSIX
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


def _pump(stream: Any, sink: queue.Queue[str | None] | deque[str]) -> None:
    try:
        for line in stream:
            if isinstance(sink, deque):
                sink.append(line.rstrip("\n"))
            else:
                sink.put(line.rstrip("\n"))
    except (OSError, ValueError):
        pass
    finally:
        if not isinstance(sink, deque):
            sink.put(None)


@dataclass
class _Run:
    events: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    other_stdout: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=60))
    timed_out: str | None = None  # "compiling" or "running"
    returncode: int | None = None
    seconds: float = 0.0


def _supervise(
    command: Sequence[str], timeout_s: float, compile_timeout_s: float, env: dict[str, str]
) -> _Run:
    run = _Run()
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=env,
            start_new_session=True,  # its own process group: a hang is killed with everything it started
        )
    except OSError as e:
        raise CourseError(
            f"cannot start the process that runs your version ({e.strerror}): {command[0]}"
        ) from None
    lines: queue.Queue[str | None] = queue.Queue()
    readers = [
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr, run.stderr), daemon=True),
    ]
    for t in readers:
        t.start()
    phase, deadline = "compiling", start + compile_timeout_s
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                run.timed_out = phase
                _kill_group(proc)
                break
            try:
                line = lines.get(timeout=min(remaining, 0.25))
            except queue.Empty:
                continue
            if line is None:  # stdout closed: the child is ending
                try:
                    proc.wait(timeout=max(0.1, min(deadline - time.monotonic(), _RESULT_GRACE_S)))
                except subprocess.TimeoutExpired:
                    run.timed_out = phase
                    _kill_group(proc)
                break
            if not line.startswith(PROTOCOL_PREFIX):
                run.other_stdout.append(line)
                continue
            try:
                event = json.loads(line[len(PROTOCOL_PREFIX) :])
            except json.JSONDecodeError:
                run.other_stdout.append(line)
                continue
            if not isinstance(event, dict):
                run.other_stdout.append(line)
                continue
            kind = event.get("event")
            if kind == "compiled":
                phase, deadline = "running", time.monotonic() + timeout_s
            if kind == "result":
                run.result = event
                phase, deadline = "exiting", time.monotonic() + _RESULT_GRACE_S
            run.events.append(event)
    except BaseException:
        _kill_group(proc)  # the learner interrupted the cell: leave nothing running
        raise
    finally:
        run.returncode = proc.wait()
        for t in readers:
            t.join(timeout=2)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    run.seconds = time.monotonic() - start
    return run


def _how_it_ended(returncode: int | None) -> str:
    if returncode is None:
        return "it did not end"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def run_variant(
    lesson: Lesson,
    source_path: Path | str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    compile_timeout_s: float = COMPILE_TIMEOUT_S,
    command: Sequence[str] | None = None,
) -> TryResult:
    """Compile, run and check the kernel source at ``source_path`` as ``lesson``'s kernel, in a child.

    ``timeout_s`` limits the run (launch, synchronise, check) once the kernel
    is compiled; ``compile_timeout_s`` limits the compile. ``command``
    replaces the child's command line (tests use a stand-in that needs no
    GPU); without it, a machine that cannot run the lesson only
    compile-checks the source, in this process (NVRTC, no GPU).
    """
    for name, value in (("timeout_s", timeout_s), ("compile_timeout_s", compile_timeout_s)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise CourseError(f"{name} must be a positive number of seconds (got {value!r})")
    path = Path(source_path).expanduser()
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CourseError(f"cannot read the kernel to try ({e.strerror})", path=path) from None
    except UnicodeDecodeError as e:
        raise CourseError(f"the kernel to try must be UTF-8 text ({e.reason})", path=path) from None
    if command is None:
        verdict = gate.verdict(lesson)
        if not verdict.runs:
            return _offline(lesson, path, source, verdict)
        command = child_command(lesson, path.resolve())
    run = _supervise(command, float(timeout_s), float(compile_timeout_s), child_env())
    output = [str(e.get("text", "")) for e in run.events if e.get("event") == "line"]
    common: dict[str, Any] = {"output": tuple(output), "timeout_s": float(timeout_s), "seconds": run.seconds}
    if run.timed_out == "running":
        return TryResult(
            lesson.id,
            "timeout",
            path,
            f"It hung and was stopped after {timeout_s:g} s: the kernel compiled and was launched, but "
            "never finished.",
            "A barrier that never completes is the usual cause: an expect_tx byte count the copies never "
            "reach, a thread that skips its arrive, a wait on the wrong phase; or a loop that never ends. "
            "The process that ran it was killed with everything it started; this page is unaffected.",
            **common,
        )
    if run.timed_out == "compiling":
        return TryResult(
            lesson.id,
            "timeout",
            path,
            f"Your version did not finish compiling within {compile_timeout_s:g} s, so it was stopped.",
            "NVRTC usually takes seconds; a template or constexpr loop that never ends is the likely cause.",
            "\n".join(run.stderr),
            **common,
        )
    if run.result is not None:
        return _describe(lesson, path, run.result, output, float(timeout_s), run.seconds, source)
    tail = "\n".join([*run.other_stdout, *run.stderr][-60:])
    return TryResult(
        lesson.id,
        "crashed",
        path,
        f"The process that ran your version ended without a result ({_how_it_ended(run.returncode)}).",
        "The page is unaffected. The end of what that process printed is below.",
        tail or "(it printed nothing)",
        **common,
    )
