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
course.tryout._child``, with its own CUDA context, in its own process
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
compile-checked without a GPU (``compile_offline``), in a child of its own
with the compile's time limit (a macro that expands for ever is stopped, not
the notebook's kernel), and the outcome is "not-run".

Every child starts through ``course._confine``: its own session and
process group, killed as a group at its limit and after it ends, stdin
from /dev/null, a scrubbed environment, a throwaway home and folder,
resource limits set by a keeper process between it and this one (so a child
that kills or stops its parent stops the keeper, not the page or the
grader), and output read up to a bound. Where bubblewrap works, both the
compile check without a GPU and the GPU child run inside it
(``child_readable``: the system, the Python, the course and the one source
file's folder, read-only; the GPU child gets the NVIDIA device files too).
Before any compile, an ``#include`` the lesson's own kernel does not make is
refused (``course.kernel.includes``), so NVRTC reads no other file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import site
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _confine, _paths
from .._data import read_text
from .._files import MAX_KERNEL_BYTES
from ..errors import CourseError
from ..kernel import gate
from ..kernel.compile import CACHE_ENV, _cache_dir, compile_cache_dir
from ..kernel.includes import foreign_include

if TYPE_CHECKING:
    from ..lesson import Lesson

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

from .outcome import (
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
# Without a GPU that runs the lesson: compile-check only, in a child with the compile's time limit.
# ---------------------------------------------------------------------------
def _offline(
    lesson: Lesson, path: Path, source: str, verdict: gate.Verdict, compile_timeout_s: float
) -> TryResult:
    run = _supervise(
        child_command(lesson, path.resolve(), offline=True),
        1.0,
        compile_timeout_s,
        offline=True,
        source=path,
    )
    facts = run.result or {}
    common: dict[str, Any] = {"seconds": run.seconds}
    if run.timed_out:
        return TryResult(
            lesson.id,
            "timeout",
            path,
            f"Not run here: {verdict.reason} The compile check did not finish within {compile_timeout_s:g} s, "
            "so it was stopped.",
            "NVRTC usually takes seconds; a macro, template or constexpr loop that never ends is the likely cause.",
            **common,
        )
    if facts.get("outcome") == "compile-error":
        problem = map_compile_log(str(facts.get("log", "")), source, path, (lesson.kernel_file,))
        return _compile_result(lesson, problem, common)
    if facts.get("outcome") == "not-run" and facts.get("compiled"):
        return TryResult(
            lesson.id,
            "not-run",
            path,
            f"Not run here: {verdict.reason} Compile check: your version compiles ({facts['compiled']}).",
            f"{verdict.advice} On a GPU that runs {lesson.id}, the same command compiles, runs and checks it.".strip(),
            **common,
        )
    why = str(facts.get("message", "")) or run.describe_end()
    return TryResult(
        lesson.id,
        "not-run",
        path,
        f"Not run here: {verdict.reason} The compile check could not run either.",
        verdict.advice,
        why,
        **common,
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
def child_command(
    lesson: Lesson, source_path: Path, *, offline: bool = False, lesson_constants: bool = False
) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "course.tryout._child",
        "--lesson",
        lesson.id,
        "--source",
        str(source_path),
    ]
    return command + (["--offline"] if offline else []) + (["--lesson-constants"] if lesson_constants else [])


def child_readable(source: Path | None = None, command: Sequence[str] = ()) -> tuple[Path, ...]:
    """What a child of the sandbox reads besides the system and the Python (read-only in bubblewrap):
    the course (its package and checkout), the CUDA toolkit named by the environment, the folder
    of the one source file it is given, and the folder of each file its command line names (a
    stand-in child's script)."""
    places = [Path(__file__).resolve().parents[2]]
    places += [Path(arg).parent for arg in command if os.path.isabs(arg) and os.path.isfile(arg)]
    with contextlib.suppress(CourseError):
        places.append(_paths.repo_root())
    places += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    places += [Path(os.environ[v]) for v in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(v)]
    if site.ENABLE_USER_SITE and site.USER_BASE:
        places.append(Path(site.USER_BASE))
    if source is not None:
        places.append(source.resolve().parent)
    return tuple(dict.fromkeys(p.resolve() for p in places if p.is_absolute()))


def child_env(folder: Path, device: str | None = None) -> dict[str, str]:
    """A scrubbed environment (``course._confine``) with the course's checkout, package and caches explicit.

    The caches are named by their real place, since the child's ``HOME`` is a throwaway folder.
    ``device``, when given, is the child's ``CUDA_VISIBLE_DEVICES`` (the grader's one GPU per child).
    """

    package_parent = str(Path(__file__).resolve().parents[2])
    extra = {"PYTHONUNBUFFERED": "1", "CUPY_CACHE_DIR": str(_cache_dir())}
    try:
        extra["COURSE_ROOT"] = str(_paths.repo_root())
    except CourseError:
        pass
    cache = compile_cache_dir()
    extra[CACHE_ENV] = str(cache) if cache is not None else "off"
    if site.ENABLE_USER_SITE and site.USER_BASE:  # packages installed with --user, found without HOME
        extra["PYTHONUSERBASE"] = site.USER_BASE
    paths = [package_parent, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    extra["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    if device is not None:
        extra["CUDA_VISIBLE_DEVICES"] = device
    return _confine.child_env(folder, extra)


@dataclass
class _Run:
    events: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    other_stdout: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    stderr: list[str] = field(default_factory=list)
    timed_out: str | None = None  # "compiling" or "running"
    returncode: int | None = None
    overflow: str | None = None
    seconds: float = 0.0
    phase: str = "compiling"  # then "running" (compiled), then "exiting" (the result is in)
    request: Any = None  # a worker's request id: its events carry it, any other line is not this run's

    def describe_end(self) -> str:
        if self.overflow:
            return f"it printed more than {MAX_OUTPUT_BYTES // (1 << 20)} MiB and was stopped"
        return _confine.how_it_ended(self.returncode)

    def answered(self) -> bool:
        return self.result is not None

    def on_line(self, line: str, timeout_s: float) -> float | None:
        """One line of the child's stdout: a protocol event moves the deadline (compile, run, exit)."""
        if not line.startswith(PROTOCOL_PREFIX):
            self.other_stdout.append(line)
            return None
        try:
            event = json.loads(line[len(PROTOCOL_PREFIX) :])
        except json.JSONDecodeError:
            event = None
        if not isinstance(event, dict) or event.get("request") != self.request:
            self.other_stdout.append(line)
            return None
        self.events.append(event)
        if event.get("event") == "compiled" and self.phase == "compiling":
            self.phase = "running"
            return timeout_s
        if event.get("event") == "result" and self.result is None:
            self.result = event
            self.phase = "exiting"
            return _RESULT_GRACE_S
        return None

    def ended(
        self, stderr: str, returncode: int | None, overflow: str | None, seconds: float, timed_out: bool
    ) -> None:
        self.stderr = stderr.splitlines()[-60:]
        self.returncode = returncode
        self.overflow = overflow
        self.seconds = seconds
        if timed_out and self.result is None:
            self.timed_out = self.phase if self.phase != "exiting" else None


MAX_OUTPUT_BYTES = 8 << 20
OFFLINE_MEMORY = 4 << 30  # NVRTC compiling a lesson peaks near 0.6 GiB of address space


def _supervise(
    command: Sequence[str],
    timeout_s: float,
    compile_timeout_s: float,
    offline: bool = False,
    device: str | None = None,
    source: Path | None = None,
) -> _Run:
    """Run the child through ``course._confine``; its protocol lines move the deadline (compile, run, exit).
    ``source`` is the file it is given (its folder is bound in, read-only)."""
    run = _Run()
    cpu = compile_timeout_s + (0 if offline else timeout_s) + 30
    with _confine.child_folder("course-try-") as folder:
        done = _confine.run_child(
            command,
            folder=folder,
            timeout_s=compile_timeout_s,
            # Bubblewrap where it works; the GPU child with the driver's device files, and no
            # address-space limit (CUDA reserves tens of GiB).
            limits=_confine.Limits(
                cpu_s=cpu, memory=OFFLINE_MEMORY if offline else None, file_size=256 << 20
            ),
            binds="system" if offline else "gpu",
            readable=child_readable(source, command),
            writable=child_writable(),
            env=child_env(folder, device),
            stdout_limit=MAX_OUTPUT_BYTES,
            stderr_limit=256 << 10,
            on_line=lambda line: run.on_line(line, timeout_s),
        )
    run.ended(done.err(), done.returncode, done.overflow, done.seconds, done.timed_out)
    return run


def compile_cache_dir_for_child() -> Path | None:
    """The NVRTC compile cache, made if missing, for the offline child to write (None: off or unusable)."""

    folder = compile_cache_dir()
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder.resolve()


def child_writable() -> tuple[Path, ...]:
    """What a child may write besides its throwaway folder (bound in bubblewrap): the course's NVRTC
    cache and CuPy's kernel cache (``CUPY_CACHE_DIR``, named in its environment), each made if missing."""
    places = [compile_cache_dir_for_child()]
    with contextlib.suppress(OSError):
        cupy_cache = _cache_dir()
        cupy_cache.mkdir(parents=True, exist_ok=True)
        places.append(cupy_cache.resolve())
    return tuple(p for p in places if p is not None)


def run_variant(
    lesson: Lesson,
    source_path: Path | str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    compile_timeout_s: float = COMPILE_TIMEOUT_S,
    command: Sequence[str] | None = None,
    lesson_constants: bool = False,
    device: str | None = None,
) -> TryResult:
    """Compile, run and check the kernel source at ``source_path`` as ``lesson``'s kernel, in a child.

    ``timeout_s`` limits the run (launch, synchronise, check) once the kernel
    is compiled; ``compile_timeout_s`` limits the compile. ``command``
    replaces the child's command line (tests use a stand-in that needs no
    GPU); without it, a machine that cannot run the lesson only
    compile-checks the source, in a child with the compile's time limit
    (NVRTC, no GPU). ``lesson_constants`` makes the launch and the check use
    the lesson's own kernel's constants, not those of the source (a coding
    exercise's piece, spliced into the lesson's kernel, must not change them).
    ``device`` is the child's ``CUDA_VISIBLE_DEVICES`` (None: this process's).
    """
    for name, value in (("timeout_s", timeout_s), ("compile_timeout_s", compile_timeout_s)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise CourseError(f"{name} must be a positive number of seconds (got {value!r})")
    path = Path(source_path).expanduser()
    # The one reader of named files: a FIFO or a device is refused, never waited on or read whole.
    source = read_text(path, "the kernel to try", limit=MAX_KERNEL_BYTES)
    if (refused := refused_include(lesson, path, source)) is not None:
        return refused
    if command is None:
        verdict = gate.verdict(lesson)
        if not verdict.runs:
            return _offline(lesson, path, source, verdict, float(compile_timeout_s))
        command = child_command(lesson, path.resolve(), lesson_constants=lesson_constants)
    run = _supervise(command, float(timeout_s), float(compile_timeout_s), device=device, source=path)
    return run_result(lesson, path, source, run, float(timeout_s), float(compile_timeout_s))


def refused_include(lesson: Lesson, path: Path, source: str) -> TryResult | None:
    """A compile error, before anything compiles, for an ``#include`` the lesson's kernel does not make."""
    found = foreign_include(source, lesson.kernel_path.read_text("utf-8"))
    if found is None:
        return None
    line, directive = found
    return TryResult(
        lesson.id,
        "compile-error",
        path,
        f"Line {line}: #{directive} is not one of the lesson kernel's own includes, so it was not compiled.",
        "A version of the kernel may include only what the lesson's kernel includes (NVRTC would read any "
        "file it names); remove that line, or the comment that mentions it.",
        line=line,
    )


def run_result(
    lesson: Lesson, path: Path, source: str, run: _Run, timeout_s: float, compile_timeout_s: float
) -> TryResult:
    """What a GPU child's run of ``path`` (a one-off child, or a worker's request) means, in words."""
    output = [str(e.get("text", "")) for e in run.events if e.get("event") == "line"]
    common: dict[str, Any] = {"output": tuple(output), "timeout_s": timeout_s, "seconds": run.seconds}
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
        f"The process that ran your version ended without a result ({run.describe_end()}).",
        "The page is unaffected. The end of what that process printed is below.",
        tail or "(it printed nothing)",
        **common,
    )
