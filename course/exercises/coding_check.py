"""Check a coding exercise's piece: on the GPU with the lesson's own check, and on the CPU against a model.

    result = check_piece(lesson, exercise, piece)
    result.outcome   # "passed", "failed-check", "compile-error", "fault", "timeout", "crashed",
                     # "refused", or "not-checked" (no GPU for the lesson and no CPU model)
    result.check     # which check decided: "gpu", "cpu", "compile" or "none"
    print(result)    # what happened, naming the first wrong element or the fault

The GPU check splices the piece into the lesson's kernel (``course.exercises.coding.splice``)
and runs it through the sandbox (``course.tryout.sandbox.run_variant``): compiled,
launched and checked by the lesson's own host code in a child process with a
time limit, so a piece that faults or hangs cannot break the page or the
grader. Its failed check names the first wrong element of the result.

The CPU check, where the exercise declares one (``[exercise.cpu]``), compiles
the piece into a small C++ harness with the machine's C++ compiler, runs it
(in a child process, with a time limit) over every combination of the
declared arguments, and compares each value with the lesson's Python model
of the same formula; a mismatch names the arguments, the value and what the
model says. It needs no GPU, so it also runs on a laptop and in CI. On a GPU
that runs the lesson both run; the GPU check decides and the CPU check's
verdict is shown beside it.

Before either, a piece that could leave its function (a stray brace, a
``#`` directive, ``asm``, a declaration of the kernel's constants, ...) is
refused with its line (``course.exercises.coding_piece``); the launch and the check
take every constant from the lesson's own kernel. The compile and the run
of the CPU check are children of ``course._confine`` (limits, a throwaway
folder, bubblewrap where it works), and the harness includes no header: the
piece sees the fixed-width integer types and ``printf``, nothing that reaches
the system.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import shutil
import signal
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._atomic import atomic_write_text
from .._confine import Limits, child_env, child_folder, run_child
from .._html import escape, pre
from ..kernel import gate
from ..tryout.outcome import outcome_words
from ..tryout.sandbox import DEFAULT_TIMEOUT_S, TryResult, run_variant
from ..tryout.workspace import lesson_folder, writing
from .coding import CodingError, CodingExercise, check_piece_text, splice
from .coding_piece import normalise_newlines, refuse_escape

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..lesson import Lesson
    from ..tryout.worker import GpuWorker

__all__ = ["CHECKS", "CodingResult", "CpuVerdict", "check_piece", "cpu_check", "find_compiler"]

CHECKS = ("gpu", "cpu", "compile", "none")
CPU_COMPILE_TIMEOUT_S = 60.0
CPU_RUN_TIMEOUT_S = 10.0
COMPILERS = ("c++", "g++", "clang++")

# No header at all: the piece sees the fixed-width types and printf, nothing that reaches the system
# (popen, system, fork come with <cstdio>, <cstdlib>, <unistd.h>).
_PRELUDE = """\
// The course's CPU harness for a coding exercise: CUDA's qualifiers mean nothing on the CPU.
typedef __SIZE_TYPE__ size_t;
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __UINTPTR_TYPE__ uintptr_t;
extern "C" int printf(const char*, ...);
#define __device__
#define __host__
#define __forceinline__ inline
struct CourseDim3 { unsigned x = 0, y = 0, z = 0; };
static CourseDim3 blockIdx, threadIdx, blockDim, gridDim;
"""
# What the compiler and the compiled check may use (course._confine sets them in the child alone).
COMPILE_LIMITS = Limits(cpu_s=CPU_COMPILE_TIMEOUT_S, memory=2 << 30, file_size=64 << 20)
RUN_MEMORY = 512 << 20
MAX_LOG_BYTES = 256 << 10


@dataclass(frozen=True)
class CpuVerdict:
    """What the CPU check found: ``ran`` False when it could not run here (no compiler)."""

    ran: bool
    passed: bool
    headline: str
    detail: str = ""
    points: int = 0  # argument combinations compared
    outcome: str = "failed-check"  # passed, failed-check, compile-error, timeout, crashed, not-run

    def __str__(self) -> str:
        return f"CPU check: {self.headline}" + (f"\n{self.detail}" if self.detail else "")


def find_compiler() -> str | None:
    """The first C++ compiler on PATH (``CXX`` first if set), or None."""
    for name in (os.environ.get("CXX") or "", *COMPILERS):
        if name and (found := shutil.which(name)):
            return found
    return None


def _constant(name: str, value: int | float) -> str:
    if isinstance(value, float):
        return f"constexpr double {name} = {value!r};"
    return f"constexpr long long {name} = {value}LL;"


def harness_source(lesson: Lesson, exercise: CodingExercise, piece: str) -> tuple[str, int, int]:
    """The harness's C++ text, and the first and last line (1-based) the piece occupies in it."""
    cpu = exercise.cpu
    assert cpu is not None
    # The kernel's constants, except those the harness declares itself (its own wins).
    constants = "\n".join(
        _constant(k, v)
        for k, v in lesson.constants(lesson.run_defines).items()
        if not re.search(rf"\bconstexpr\b[^;=]*\b{k}\s*=", cpu.harness)
    )
    before, _, after = cpu.harness.partition("{piece}")
    head = f"{_PRELUDE}{constants}\n{before}"
    first = head.count("\n") + 1
    piece_text = normalise_newlines(piece).strip("\n")
    last = first + piece_text.count("\n")
    loops = "".join(
        f"  for (long long {name} = {start}LL; {name} < {stop}LL; ++{name})\n"
        for name, start, stop in cpu.args
    )
    fmt = " ".join(["%lld"] * len(cpu.outputs))
    outs = ", ".join(f"out[{i}]" for i in range(len(cpu.outputs)))
    main = (
        "\nint main() {\n"
        f"  long long out[{len(cpu.outputs)}] = {{}};\n"
        f'{loops}  {{\n    {cpu.eval}\n    printf("{fmt}\\n", {outs});\n  }}\n'
        "  return 0;\n}\n"
    )
    return f"{head}{piece_text}\n{after}{main}", first, last


_UNDEFINED = re.compile(r"undefined reference to [`']([^'\n]+)'")
_SIGNAL_WORDS = {
    "SIGSEGV": ": a read or write of memory it does not own",
    "SIGBUS": ": a misaligned or invalid memory access",
    "SIGFPE": ": a division by zero",
    "SIGABRT": ": it aborted, often because memory it asked for could not be had",
    "SIGXCPU": ": it used up its CPU time",
}
_GCC_LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<rest>.*)$", re.M)


def _map_log(log: str, name: str, first: int, last: int) -> str:
    """The compiler's messages, lines of the piece renamed "your code, line N"."""

    def rewrite(m: re.Match[str]) -> str:
        n = int(m.group("line"))
        if Path(m.group("file")).name == name and first <= n <= last:
            return f"your code, line {n - first + 1}: {m.group('rest')}"
        if Path(m.group("file")).name == name:
            return f"the exercise's harness, line {n}: {m.group('rest')}"
        return m.group()

    return _GCC_LINE.sub(rewrite, log.strip())


def _values(result: Any, count: int) -> tuple[int, ...]:
    values = tuple(result) if isinstance(result, tuple | list) else (result,)
    if len(values) != count:
        raise CodingError(f"the CPU model returned {len(values)} value(s), the exercise declares {count}")
    return tuple(int(v) for v in values)


# What the built harness may take from the C and C++ libraries: printf (the harness's) and what the
# compiler emits by itself (start-up, stack protector, block copies, guards of local statics, new).
# Anything else (system, dlsym, kill, fork, open) came from a declaration in the piece: refused
# before the program runs. Bubblewrap is the wall; this is the message.
LINKABLE = frozenset(
    {
        "printf", "puts", "putchar", "__printf_chk", "__libc_start_main", "__cxa_finalize", "__gmon_start__",
        "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable", "__stack_chk_fail", "memcpy", "memset",
        "memmove", "__cxa_atexit", "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort",
        "__dso_handle", "__gxx_personality_v0", "_Unwind_Resume", "_Znwm", "_Znam", "_ZdlPv", "_ZdlPvm",
        "_ZdaPv", "_ZdaPvm",
    }
)  # fmt: skip


def _foreign_symbols(exe: Path, folder: Path) -> list[str]:
    """The undefined symbols of the built harness that are not ``LINKABLE`` (none when nm is missing)."""
    nm = shutil.which("nm")
    if nm is None:
        return []
    real = Path(os.path.realpath(nm))
    listed = run_child(
        [str(real), "-D", "--undefined-only", "--format=posix", str(exe)],
        folder=folder,
        timeout_s=CPU_RUN_TIMEOUT_S,
        limits=Limits(cpu_s=CPU_RUN_TIMEOUT_S, memory=RUN_MEMORY, file_size=1 << 20),
        readable=(real.parent.parent,),
        env=child_env(folder, {"LC_ALL": "C"}),
        stdout_limit=MAX_LOG_BYTES,
    )
    if listed.returncode != 0:
        return ["(the harness's symbols could not be listed)"]
    names = {line.split()[0].split("@")[0] for line in listed.out().splitlines() if line.split()}
    return sorted(names - LINKABLE)


def cpu_check(lesson: Lesson, exercise: CodingExercise, piece: str) -> CpuVerdict:
    """Compile ``piece`` into the exercise's harness, run it, and compare every value with the model."""
    cpu = exercise.cpu
    if cpu is None:
        raise CodingError(f"exercise {exercise.id!r} declares no CPU check")
    compiler = find_compiler()
    if compiler is None:
        return CpuVerdict(
            False,
            False,
            "not run: this machine has no C++ compiler (c++, g++ or clang++ on PATH)",
            "Install one (for example `apt install g++`) to check this exercise without a GPU.",
            outcome="not-run",
        )
    model = cpu.model_function(lesson)
    source, first, last = harness_source(lesson, exercise, piece)
    real = Path(os.path.realpath(compiler))
    with child_folder("course-cpu-") as tmp:
        name = f"{exercise.id}.cpp"
        src, exe = tmp / name, tmp / "check"
        src.write_text(source, encoding="utf-8")
        built = run_child(
            # No include path at all (the harness includes nothing; a piece's # is refused).
            [str(real), "-std=c++17", "-O1", "-w", "-fmax-errors=20", "-nostdinc", "-nostdinc++"]
            + ["-o", str(exe), str(src)],
            folder=tmp,
            timeout_s=CPU_COMPILE_TIMEOUT_S,
            limits=dataclasses.replace(COMPILE_LIMITS, cpu_s=CPU_COMPILE_TIMEOUT_S),
            readable=(real.parent.parent,),
            env=child_env(tmp, {"LC_ALL": "C"}),
            stdout_limit=MAX_LOG_BYTES,
            stderr_limit=MAX_LOG_BYTES,
        )
        if built.timed_out:
            return CpuVerdict(
                True, False, f"compiling took over {CPU_COMPILE_TIMEOUT_S:g} s; stopped", outcome="timeout"
            )
        if built.returncode != 0 or not exe.is_file():
            log = _map_log(built.err() + built.out(), name, first, last)
            missing = _UNDEFINED.search(log)
            first_error = (
                f"it calls {missing.group(1)}, which nothing here provides (a piece can use only what the "
                "lesson's code around it declares)"
                if missing
                else next(
                    (ln for ln in log.splitlines() if "error" in ln),
                    log.splitlines()[0] if log else f"the compiler stopped ({built.how_it_ended()})",
                )
            )
            return CpuVerdict(
                True,
                False,
                f"does not compile: {first_error}",
                "\n".join(log.splitlines()[:30]),
                outcome="compile-error",
            )
        foreign = _foreign_symbols(exe, tmp)
        if foreign:
            return CpuVerdict(
                True,
                False,
                f"refused: your code reaches {', '.join(foreign[:5])}, which a piece cannot use (the "
                "harness links only printf and what the compiler itself needs)",
                outcome="refused",
            )
        width = sum(21 for _ in cpu.outputs) + 1  # "%lld " per output and a newline, at most
        ran = run_child(
            [str(exe)],
            folder=tmp,
            timeout_s=CPU_RUN_TIMEOUT_S,
            limits=Limits(cpu_s=CPU_RUN_TIMEOUT_S, memory=RUN_MEMORY, processes=0, file_size=1 << 20),
            env=child_env(tmp),
            stdout_limit=cpu.points * width + 4096,
            stderr_limit=64 << 10,
        )
    if ran.timed_out or ran.returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return CpuVerdict(
            True,
            False,
            f"it ran over {CPU_RUN_TIMEOUT_S:g} s on the CPU and was stopped: a loop that never ends?",
            outcome="timeout",
        )
    if ran.overflow:
        return CpuVerdict(
            True,
            False,
            f"it printed more than the check reads ({cpu.points} lines of numbers) and was stopped",
            outcome="crashed",
        )
    if ran.returncode != 0:
        how = ran.how_it_ended()
        why = next((words for sig, words in _SIGNAL_WORDS.items() if how.endswith(sig)), "")
        return CpuVerdict(
            True, False, f"your code crashed the check ({how}{why})", ran.err()[-2000:], outcome="crashed"
        )
    got_lines = ran.out().splitlines()
    names = [n for n, _, _ in cpu.args]
    grid = list(itertools.product(*(range(start, stop) for _, start, stop in cpu.args)))
    if len(got_lines) != len(grid):
        return CpuVerdict(
            True,
            False,
            f"the harness printed {len(got_lines)} lines for {len(grid)} cases",
            outcome="crashed",
        )
    wrong: list[str] = []
    count = 0
    for point, line in zip(grid, got_lines, strict=True):
        try:
            got = tuple(int(x) for x in line.split())
        except ValueError:
            got = ()
        want = _values(model(**dict(zip(names, point, strict=True))), len(cpu.outputs))
        if got != want:
            count += 1
            if len(wrong) < 5:
                at = ", ".join(f"{n} = {v}" for n, v in zip(names, point, strict=True))
                diffs = "; ".join(
                    f"{o} = {g}, should be {w}"
                    for o, g, w in zip(cpu.outputs, got, want, strict=False)
                    if g != w
                )
                wrong.append(f"for {at}: {diffs}")
    if count:
        return CpuVerdict(
            True,
            False,
            f"wrong for {count} of {len(grid)} cases; the first: {wrong[0]}",
            "\n".join(wrong),
            len(grid),
        )
    return CpuVerdict(
        True,
        True,
        f"matches the lesson's model for all {len(grid)} cases",
        points=len(grid),
        outcome="passed",
    )


# ---------------------------------------------------------------------------
# One piece, every check this machine can run.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CodingResult:
    lesson_id: str
    exercise_id: str
    outcome: str  # passed, failed-check, compile-error, fault, timeout, crashed, refused, not-checked
    check: str  # which check decided (CHECKS)
    headline: str
    gpu: TryResult | None = None  # the sandbox's run (on a machine without the GPU: its compile check)
    cpu: CpuVerdict | None = None

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def which_check(self) -> str:
        return {
            "gpu": "on the GPU, with the lesson's own check",
            "cpu": "on the CPU, against the course's model (no GPU here runs this lesson)",
            "compile": "compiled only (no GPU here runs this lesson)",
            "none": "not checked: no GPU here runs this lesson, and this exercise has no CPU model",
        }[self.check]

    def state(self) -> dict[str, Any]:
        """What progress and grading keep of it."""
        return {"outcome": self.outcome, "check": self.check, "passed": self.passed, "message": self.headline}

    def __str__(self) -> str:
        lines = [f"{self.exercise_id}: {self.outcome} (checked {self.which_check})", self.headline]
        if self.gpu is not None and self.check in ("gpu", "compile"):
            lines.append(str(self.gpu))
        if self.cpu is not None and self.check == "cpu":
            lines += [f"  {ln}" for ln in self.cpu.detail.splitlines()]  # the headline said the rest
        elif self.cpu is not None:
            lines.append(str(self.cpu))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        color = {"passed": "#1a7f37", "not-checked": "#1f5fa8"}.get(self.outcome, "#cf222e")
        mark = {"passed": "✓", "not-checked": "?"}.get(self.outcome, "✗")
        parts = [
            f"<div class='course-coding-result' style='border-left:4px solid {color};padding:4px 10px;margin:4px 0'>",
            f"<p><b style='color:{color}'>{mark} {escape(outcome_words(self.outcome))}</b> "
            f"<span style='color:#57606a'>(checked {escape(self.which_check)})</span></p>",
            f"<p>{escape(self.headline)}</p>",
        ]
        if self.gpu is not None and self.check in ("gpu", "compile"):
            parts.append(self.gpu._repr_html_())
        if self.cpu is not None:
            detail = pre(self.cpu.detail) if self.cpu.detail else ""
            # When the CPU check decided, the headline above is its verdict: only the cases follow.
            said = "" if self.check == "cpu" else f"<p>CPU check: {escape(self.cpu.headline)}</p>"
            parts.append(f"{said}{detail}")
        parts.append("</div>")
        return "".join(parts)


def _holds(path: Path, source: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == source
    except (OSError, UnicodeDecodeError):
        return False


def _default_path(lesson: Lesson, exercise: CodingExercise, source: str) -> Path:
    """The learner's own file when it holds exactly this source (so messages name its lines), else a copy."""
    suffix = Path(lesson.kernel_file).suffix
    mine = lesson_folder(lesson) / "coding" / f"{exercise.id}{suffix}"
    return (
        mine
        if _holds(mine, source)
        else lesson_folder(lesson) / "coding" / ".checked" / f"{exercise.id}{suffix}"
    )


def check_piece(
    lesson: Lesson,
    exercise: CodingExercise,
    piece: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    use_gpu: bool | None = None,
    compile_check: bool = True,
    source_path: Path | None = None,
    command: Sequence[str] | None = None,
    device: str | None = None,
    worker: GpuWorker | None = None,
) -> CodingResult:
    """Check ``piece`` every way this machine can; see the module's docstring.

    ``use_gpu`` None asks the gate; ``compile_check`` False skips the NVRTC
    compile on a machine without the GPU (the grader: no learner code is
    compiled in its own process). ``source_path`` is where the spliced kernel
    is written for the sandbox (default: the workspace's ``coding/.checked``);
    ``device`` is the GPU child's ``CUDA_VISIBLE_DEVICES`` (None: this process's).
    ``worker``, when given, runs the GPU check instead of a one-off child
    (the grader's: ``course.tryout.worker``, already on its device). On the
    GPU the CPU check runs meanwhile, in its own child, so a piece that loops
    waits out the two limits side by side, not one after the other.
    """
    # The text the compilers see: CR LF and a lone CR end a line for them (coding_piece).
    piece = normalise_newlines(check_piece_text(piece, exercise))
    kernel = lesson.kernel_path.read_text("utf-8")
    refuse_escape(piece, exercise, kernel)  # before anything compiles it
    source = splice(kernel, exercise, piece)
    if use_gpu is None:
        use_gpu = gate.verdict(lesson).runs
    path = source_path or _default_path(lesson, exercise, source)
    if (use_gpu or compile_check) and not _holds(path, source):
        with writing("the copy of your code to check", path):  # a read-only or full workspace: a message
            atomic_write_text(path, source)
    if use_gpu:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="course-cpu-check") as pool:
            cpu_later = pool.submit(cpu_check, lesson, exercise, piece) if exercise.cpu is not None else None
            if worker is not None:
                run = worker.run(path, timeout_s)
            else:
                run = run_variant(
                    lesson, path, timeout_s, command=command, lesson_constants=True, device=device
                )
            cpu = cpu_later.result() if cpu_later is not None else None
        common: dict[str, Any] = {"lesson_id": lesson.id, "exercise_id": exercise.id, "cpu": cpu}
        headline = run.headline
        if run.outcome == "passed":
            headline = "Your code passed the lesson's own check on the GPU."
        if cpu is not None and cpu.ran and cpu.passed != run.passed:
            headline += f" (The CPU check disagrees: {cpu.headline}.)"
        return CodingResult(outcome=run.outcome, check="gpu", headline=headline, gpu=run, **common)
    cpu = cpu_check(lesson, exercise, piece) if exercise.cpu is not None else None
    common = {"lesson_id": lesson.id, "exercise_id": exercise.id, "cpu": cpu}
    # Without the GPU, run_variant compile-checks offline (NVRTC): "compile-error", or "not-run"
    # with a headline that says whether it compiled.
    compiled = (
        run_variant(lesson, path, timeout_s, command=command, lesson_constants=True)
        if compile_check
        else None
    )
    if compiled is not None and compiled.outcome == "compile-error":
        return CodingResult(
            outcome="compile-error", check="compile", headline=compiled.headline, gpu=compiled, **common
        )
    if cpu is not None and cpu.ran:
        return CodingResult(
            outcome=cpu.outcome, check="cpu", headline=f"CPU check: {cpu.headline}", gpu=compiled, **common
        )
    why = cpu.headline if cpu is not None else "this exercise has no CPU model"
    return CodingResult(
        outcome="not-checked",
        check="compile" if compiled is not None else "none",
        headline=f"Not checked here: no GPU on this machine runs {lesson.id}, and {why}.",
        gpu=compiled,
        **common,
    )
