"""What a learner's run came to, in words: CUDA error names, compile logs mapped to the
learner's file, and the result of a try (``TryResult``). Used by ``course.tryout.sandbox``."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._html import escape, pre
from ..kernel.compile import numbered_excerpt

if TYPE_CHECKING:
    from ..lesson import Lesson

PROTOCOL_PREFIX = "@@course-sandbox "
DEFAULT_TIMEOUT_S = 20.0  # the run, after the compile: the Day 76 and 78 kernels finish in milliseconds
COMPILE_TIMEOUT_S = 300.0  # a backstop: NVRTC over libcu++ with an empty cache takes seconds, not minutes
_RESULT_GRACE_S = 10.0  # after the result line, how long the child may take to exit

OUTCOMES = ("passed", "failed-check", "compile-error", "fault", "refused", "timeout", "crashed", "not-run")

# What each outcome means, in the learner's words: the one table the try panel, the suggested
# experiments and the coding panel show (the labels above are for scripts: exit statuses, TOML,
# ``python -m course try``). "not-checked" is the coding check's: nothing here could check it.
OUTCOME_WORDS = {
    "passed": "passed",
    "failed-check": "wrong result",
    "compile-error": "did not compile",
    "fault": "the kernel faulted",
    "timeout": "stopped: it ran too long",
    "crashed": "the check stopped before a verdict",
    "refused": "the launch was refused",
    "not-run": "not run here",
    "not-checked": "not checked here",
}


def outcome_words(outcome: str) -> str:
    """``outcome`` in the learner's words (an unknown label as it is)."""
    return OUTCOME_WORDS.get(outcome, outcome)


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


# What a running kernel did, for the sticky errors (course.kernel.compile.STICKY_ERRORS).
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
        out = pre(chr(10).join(self.output)) if self.output else ""
        detail = f"<details open><summary>details</summary>{pre(self.detail)}</details>"
        words = outcome_words(self.outcome)
        # "Not run here: ..." already says it: the label once.
        label = "" if self.headline.lower().startswith(words.lower()) else f"<b>{escape(words)}</b>: "
        return (
            f"<div class='course-try' style='border-left:4px solid {color};padding:4px 10px;margin:4px 0'>"
            f"<p>{label}{escape(self.headline)}</p>"
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
