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
from ._html import escape
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

PROTOCOL_PREFIX = "@@course-sandbox "
DEFAULT_TIMEOUT_S = 20.0  # the run, after the compile: the Day 76 and 78 kernels finish in milliseconds
COMPILE_TIMEOUT_S = 300.0  # a backstop: NVRTC over libcu++ with an empty cache takes seconds, not minutes
_RESULT_GRACE_S = 10.0  # after the result line, how long the child may take to exit

OUTCOMES = ("passed", "failed-check", "compile-error", "fault", "refused", "timeout", "crashed", "not-run")

# ``python -m course try``: 0 ran and passed; 1 compiled but failed the check,
# faulted, hung, was refused or crashed; 2 this machine cannot run it (it was
# compile-checked); 3 it does not compile.
EXIT_CODES = {
    "passed": 0,
    "failed-check": 1,
    "fault": 1,
    "refused": 1,
    "timeout": 1,
    "crashed": 1,
    "not-run": 2,
    "compile-error": 3,
}


# ---------------------------------------------------------------------------
# CUDA error names, in words.
# ---------------------------------------------------------------------------
_ERROR_NAME = re.compile(r"\b(?:CUDA_ERROR_[A-Z_]+|cudaError[A-Za-z]+)\b")


def cuda_error_name(text: str) -> str | None:
    """The first CUDA error name in ``text``, as spelled there (cudaErrorIllegalAddress)."""
    m = _ERROR_NAME.search(text)
    return m.group() if m else None


def _normal(name: str) -> str:
    return name.removeprefix("CUDA_ERROR_").removeprefix("cudaError").replace("_", "").lower()


# What a running kernel did, for the sticky errors (course.compile.STICKY_ERRORS).
_FAULT_WORDS = {
    "illegaladdress": "it read or wrote an address it does not own",
    "misalignedaddress": "it read or wrote an address that is not aligned for the access "
    "(a 16-byte access at an address that is not a multiple of 16, a TMA or wgmma operand off its alignment)",
    "illegalinstruction": "it executed an instruction the GPU does not allow there (a warpgroup "
    "instruction that not all 128 threads of the warpgroup reached together, for example)",
    "invalidpc": "its program counter left the kernel's code",
    "invalidaddressspace": "an instruction for one memory space (shared, global, local) was given an "
    "address in another",
    "hardwarestackerror": "its call stack overflowed or was corrupted (deep recursion, a large local array)",
    "launchfailure": "it raised an exception the GPU reports without more detail (a trap instruction, "
    "or an access out of range)",
    "launchfailed": "it raised an exception the GPU reports without more detail (a trap instruction, "
    "or an access out of range)",
    "assert": "an assert() in the kernel failed",
    "launchtimeout": "a watchdog stopped it for running too long",
    "tensormemoryleak": "it exited without freeing the tensor memory it allocated",
    "contained": "the GPU contained an error (an invalid access to another GPU's memory, or a hardware error)",
    "externaldevice": "a device outside CUDA signalled an error",
    "mpsclientterminated": "the MPS server ended this client",
}

# Why a launch was refused before anything ran.
_REFUSED_WORDS = {
    "invalidvalue": "an argument of the launch is out of range (grid or block size, shared memory size)",
    "invalidconfiguration": "the grid, the block or the shared memory asked for is more than this GPU allows",
    "launchoutofresources": "a block needs more registers or shared memory than one SM has: use fewer "
    "threads per block, or less shared memory",
    "invaliddevicefunction": "the compiled kernel is not built for this GPU",
    "nokernelimagefordevice": "the compiled kernel is not built for this GPU",
    "nobinaryforgpu": "the compiled kernel is not built for this GPU",
    "cooperativelaunchtoolarge": "a cooperative grid is larger than can be resident at once",
    "memoryallocation": "the GPU is out of memory",
    "outofmemory": "the GPU is out of memory",
}


# ---------------------------------------------------------------------------
# Compile errors, mapped to the learner's file.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CompileProblem:
    """A compile failure in the learner's terms: their file, their line numbers."""

    path: Path
    line: int | None  # the first error's line in the learner's file
    message: str  # the first error, as NVRTC words it
    excerpt: str  # the learner's source lines the errors point at, numbered
    log: str  # the whole log, with the learner's path in place of the compiler's name


_LOG_LINE = re.compile(
    r"^(?P<file>[^\n]*?)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning|remark)"
    r"(?P<code> #[\w-]+)?: (?P<msg>[^\n]*)$",
    re.MULTILINE,
)


def map_compile_log(log: str, source: str, path: Path, program_names: Sequence[str]) -> CompileProblem:
    """NVRTC's log in the learner's terms.

    NVRTC names the program it compiled: ``tma_tile.cu(154): error: ...``
    from ``compile_offline`` (the lesson's file name), ``/tmp/tmpXXXX/kern.cu(154)``
    through CuPy. Lines of those names are the learner's lines; errors in
    included headers (libcu++) keep their own file names.
    """
    from .compile import numbered_excerpt

    names = {Path(n).name for n in program_names} | {path.name}
    shown = str(path)
    ours: list[tuple[int, str, str]] = []

    def rewrite(m: re.Match[str]) -> str:
        if Path(m.group("file").strip()).name not in names:
            return m.group()
        n = int(m.group("line"))
        ours.append((n, m.group("sev"), m.group("msg")))
        return f"{shown}:{n}: {m.group('sev')}{m.group('code') or ''}: {m.group('msg')}"

    mapped = _LOG_LINE.sub(rewrite, log.strip())
    for name in names:
        mapped = mapped.replace(f'compilation of "{name}"', f'compilation of "{shown}"')
    errors = [(n, msg) for n, sev, msg in ours if sev != "warning" and sev != "remark"]
    if errors:
        line, message = errors[0]
        excerpt = numbered_excerpt(source, "\n".join(f"x({n}): error" for n, _ in errors))
    else:
        # No error names a line of ours (ptxas, or a header): the first line that says error.
        line = None
        first = next((ln for ln in mapped.splitlines() if "error" in ln.lower()), "")
        message = first.strip() or "NVRTC refused the kernel (see the log)"
        excerpt = ""
    return CompileProblem(path, line, message, excerpt, mapped)


# ---------------------------------------------------------------------------
# The result.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TryResult:
    """What happened to a learner's version, in words, and the facts behind them."""

    lesson_id: str
    outcome: str  # one of OUTCOMES
    path: Path  # the learner's file
    headline: str  # what happened, one or two sentences
    meaning: str = ""  # what it means for their code
    detail: str = ""  # the compile log, the error, the tail of a crash's output
    output: tuple[str, ...] = ()  # the lines the run printed (GPU, compile, PASS or FAIL)
    line: int | None = None  # compile-error: the first error's line in the learner's file
    error_name: str | None = None  # fault, refused: the CUDA error name
    timeout_s: float | None = None
    seconds: float = 0.0
    compile: CompileProblem | None = field(default=None, repr=False)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def ran(self) -> bool:
        """The kernel was launched on a GPU (whatever it then did)."""
        return self.outcome in ("passed", "failed-check", "fault", "timeout")

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else str(self.path)

    def __str__(self) -> str:
        parts = [f"{self.outcome}: {self.headline}"]
        if self.meaning:
            parts.append(self.meaning)
        if self.detail:
            parts.append(self.detail)
        return "\n".join(parts)

    _COLORS = {
        "passed": "#1a7f37",
        "failed-check": "#cf222e",
        "compile-error": "#cf222e",
        "not-run": "#1f5fa8",
    }

    def _repr_html_(self) -> str:
        color = self._COLORS.get(self.outcome, "#9a6700")
        out = f"<pre>{escape(chr(10).join(self.output))}</pre>" if self.output else ""
        detail = f"<details open><summary>details</summary><pre>{escape(self.detail)}</pre></details>"
        return (
            f"<div class='course-try' style='border-left:4px solid {color};padding:4px 10px;margin:4px 0'>"
            f"<p><b>{escape(self.outcome)}</b>: {escape(self.headline)}</p>"
            + (f"<p>{escape(self.meaning)}</p>" if self.meaning else "")
            + out
            + (detail if self.detail else "")
            + "</div>"
        )


def _describe(
    lesson: Lesson,
    path: Path,
    facts: dict[str, Any],
    output: list[str],
    timeout_s: float,
    seconds: float,
    source: str,
) -> TryResult:
    """The child's facts, in words a learner understands."""
    outcome = facts.get("outcome")
    common: dict[str, Any] = {"output": tuple(output), "timeout_s": timeout_s, "seconds": seconds}
    if outcome == "passed":
        return TryResult(
            lesson.id,
            "passed",
            path,
            f"Your version ran and passed the lesson's check: {facts.get('line', '')}",
            **common,
        )
    if outcome == "failed-check":
        return TryResult(
            lesson.id,
            "failed-check",
            path,
            f"Your version ran to the end, but its output is wrong: {facts.get('line', '')}",
            "No error was raised, so the mistake is in what the kernel computes or where it writes; "
            "the first wrong element says where to look. " + str(facts.get("check", "")),
            **common,
        )
    if outcome == "compile-error":
        problem = map_compile_log(str(facts.get("log", "")), source, path, (lesson.kernel_file, "kern.cu"))
        return _compile_result(lesson, problem, common)
    if outcome in ("fault", "refused"):
        error = str(facts.get("error", ""))
        name = facts.get("error_name") or cuda_error_name(error)
        key = _normal(name) if name else ""
        if outcome == "fault":
            words = _FAULT_WORDS.get(key, "the GPU stopped it with an error")
            return TryResult(
                lesson.id,
                "fault",
                path,
                f"The kernel faulted while running: {words} ({name or 'no error name given'}).",
                "The fault is in your change: look for an index or address it can push out of range, a "
                "shared-memory layout a descriptor no longer matches, or an instruction that needs every "
                "thread of a warp or warpgroup. Such an error is sticky: the process that ran your version "
                "could not use the GPU again, so it was a separate process and it has ended; this page's "
                "GPU context was never touched, and the next run works.",
                error,
                error_name=name,
                **common,
            )
        words = _REFUSED_WORDS.get(key, "CUDA refused the launch")
        return TryResult(
            lesson.id,
            "refused",
            path,
            f"The launch was refused before it ran: {words} ({name or 'no error name given'}).",
            "None of your kernel executed: fix the launch configuration, or the resources (shared memory, "
            "registers) your version asks for. The page is unaffected.",
            error,
            error_name=name,
            **common,
        )
    if outcome == "not-run":
        return TryResult(lesson.id, "not-run", path, f"Not run here: {facts.get('reason', '')}", **common)
    if outcome == "crashed":
        return TryResult(
            lesson.id,
            "crashed",
            path,
            "The run stopped with an error that is not about your kernel's result: "
            + str(facts.get("message", "")),
            "The page is unaffected; the details below say more.",
            str(facts.get("traceback", "")),
            **common,
        )
    return TryResult(
        lesson.id,
        "crashed",
        path,
        f"The process that ran your version reported an outcome this course does not know ({outcome!r}).",
        detail=json.dumps(facts)[:2000],
        **common,
    )


def _compile_result(lesson: Lesson, problem: CompileProblem, common: dict[str, Any]) -> TryResult:
    where = f"{problem.path}:{problem.line}" if problem.line is not None else str(problem.path)
    detail = problem.log
    if problem.excerpt:
        detail = f"{problem.excerpt}\n\n{problem.log}"
    return TryResult(
        lesson.id,
        "compile-error",
        problem.path,
        f"Your version does not compile: {where}: {problem.message}",
        "Nothing ran. Fix the line NVRTC names (the numbers are your file's lines) and try again.",
        detail,
        line=problem.line,
        compile=problem,
        **common,
    )


# ---------------------------------------------------------------------------
# Without a GPU that runs the lesson: compile-check only.
# ---------------------------------------------------------------------------
def _offline(lesson: Lesson, path: Path, source: str, verdict: gate.Verdict) -> TryResult:
    from .compile import CompileError, compile_offline

    start = time.perf_counter()
    common: dict[str, Any] = {}
    try:
        compiled = compile_offline(lesson, source=source)
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
