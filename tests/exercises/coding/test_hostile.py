"""Hostile code answers: none escapes its function, forges a score, outlives its limit or stops the grader.

Three layers, each tested on its own and then through the grader:

- the piece (``course.exercises.coding_piece``): what could leave the function is
  refused before anything compiles it, with the line of the piece;
- the CPU check (g++ and the compiled harness, no GPU): what compiles is
  confined, limited and scored 0 with a reason; run both inside
  bubblewrap (where it works here) and without it (the fallback);
- the child machinery (``course._confine``, the keeper) with stand-in
  programs that do what a C++ piece cannot reach without headers: signal
  their parent, leave daemons, flood their output, read stdin and the
  environment, use the network, write outside their folder.

The GPU cases (marked gpu) run the same hostile pieces through the lesson's
own check on the H200. Time limits are short and every assertion holds
however slow the machine: a case that must stop may stop by any of the
limits, never by being fast.
"""

from __future__ import annotations

import os
import re
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from course import _bwrap, _confine
from course._confine import Limits, child_folder, run_child
from course.exercises import coding_check
from course.exercises.coding import get_exercise
from course.exercises.coding_check import check_piece
from course.exercises.coding_piece import PieceRefused, refuse_escape
from course.lessons import get_lesson
from course.quiz.code_runner import CodeRunner
from course.quiz.grade import grade_submissions, write_reports
from course.quiz.loader import load_quiz
from course.quiz.submission import Submission, write_submission
from course.tryout import _child as _sandbox_child
from course.tryout.sandbox import PROTOCOL_PREFIX, run_variant

LESSON = get_lesson("day78")
EXERCISE = get_exercise(LESSON, "core-offset")
KERNEL = LESSON.kernel_path.read_text("utf-8")
REFERENCE = EXERCISE.reference(KERNEL)
WRONG = "return mn * 64 + k;"
needs_cxx = pytest.mark.usefixtures("cxx")


def _bwrap_reason() -> str | None:
    found = _bwrap._bwrap_probe(_confine.bwrap_path())
    return None if found.works else found.detail


@pytest.fixture(params=["bwrap", "none"])
def mode(request, monkeypatch):
    """Both ways a CPU child runs: inside bubblewrap (skipped, with the reason, where it cannot), and without."""
    if request.param == "bwrap" and (why := _bwrap_reason()):
        pytest.skip(f"bubblewrap cannot run here: {why}")
    monkeypatch.setenv(_confine.SANDBOX_ENV, request.param)
    return request.param


@pytest.fixture
def short_limits(monkeypatch):
    monkeypatch.setattr(coding_check, "CPU_RUN_TIMEOUT_S", 3.0)
    monkeypatch.setattr(coding_check, "CPU_COMPILE_TIMEOUT_S", 20.0)


# ---------------------------------------------------------------------------
# 1. The piece: refused before compiling, with its line.
# ---------------------------------------------------------------------------
INSTRUCTOR_FILE = str(Path(__file__).resolve())
REFUSED = {
    "close-the-function": (
        'return 0; }\nint escaped = printf("x");\nint more() {\nreturn 0;',
        1,
        "stay inside",
    ),
    "file-scope-constructor": (
        'return 0;\n}\nstruct Evil { Evil() { printf("pwned"); } } evil;\nint g() { return 0;',
        2,
        "stay inside",
    ),
    "never-closed": ("return 0;\nif (mn) {\nreturn 1;", 2, "never closed"),
    "include-dev-zero": ("#include </dev/zero>\nreturn 0;", 1, "preprocessor"),
    "include-dev-stdin": ('return 0;\n#include "/dev/stdin"', 2, "preprocessor"),
    "include-instructor-file": (f'#include "{INSTRUCTOR_FILE}"\nreturn 0;', 1, "preprocessor"),
    "indented-directive": ("return 0;\n   /* c */ # define X", 2, "preprocessor"),
    "macro-bomb": ("#define A(x) x x x x\n#define B(x) A(A(A(x)))\nreturn B(B(1));", 1, "preprocessor"),
    "digraph-directive": ("return 0;\n%:include </dev/zero>", 2, "preprocessor"),
    "trigraph-directive": ("return 0;\n??=include </dev/zero>", 2, "trigraph"),
    "spliced-comment": ("return 0; // a comment \\\n#include </dev/zero>", 1, "joins it to the next line"),
    "spliced-with-space": ("return 0; // \\  \n#include </dev/zero>", 1, "joins it to the next line"),
    "digraph-brace": ("return 0; %>\nint g() <%", 1, "digraph"),
    "raw-string": ('return R"x(})x"[0];', 1, "raw string"),
    "unclosed-string": ('return "}\n;', 1, "never closed"),
    "unclosed-comment": ("return 0; /* }", 1, "never closed"),
    "inline-asm": ('asm volatile("syscall");\nreturn 0;', 1, "inline assembly"),
    "gnu-asm": ('return 0;\n__asm__("int $0x80");', 2, "inline assembly"),
    "pragma": ('_Pragma("GCC poison coreOffset")\nreturn 0;', 1, "pragma"),
    "builtin-exec": ('return __builtin_execl("/bin/sh", "sh", "-c", "id", (char*)0);', 1, "built-in"),
    "builtin-fork": ("return __builtin_fork();", 1, "built-in"),
    "forged-tolerance": ("constexpr float kRelTolerance = 1e30f;\nreturn 0;", 1, "kernel's constants"),
    "forged-tile": ("return 0;\nint kTileK = 8;", 2, "kernel's constants"),
    "forged-by-assignment": ("int x = 0, kTileK = 8;\nreturn x;", 1, "kernel's constants"),
    "forged-typed": ("unsigned long long kTileK{8};\nreturn 0;", 1, "kernel's constants"),
    # Every line-ending spelling: CR LF and a lone CR end a line (and a // comment) for g++ and NVRTC,
    # and a backslash before either splices; the check sees them as the compilers do.
    "lone-cr-ends-comment": ("return 0; // x\r}\r__attribute__((constructor)) void f() {", 2, "stay inside"),
    "lone-cr-directive": ('return 0; // x\r#include "/etc/passwd"', 2, "preprocessor"),
    "crlf-directive": ("return 0; // x\r\n#include </dev/zero>", 2, "preprocessor"),
    "cr-cr-lf-directive": ("return 0; // x\r\r\n#include </dev/zero>", 3, "preprocessor"),
    "backslash-crlf-splice": ("return 0; // x \\\r\n#include </dev/zero>", 1, "joins it to the next line"),
    "backslash-cr-splice": ("return 0; // x \\\r#include </dev/zero>", 1, "joins it to the next line"),
    "backslash-space-cr-splice": ("return 0; // \\ \r#include </dev/zero>", 1, "joins it"),
    # Declarations with linkage, and code outside the piece's statements (issue 36, hole 1).
    "extern-system": (
        'extern char system[];\nreturn ((int (*)(const char*))(void*)system)("id");',
        1,
        "extern",
    ),
    "extern-dlsym": ("return 0;\n  extern char dlsym[];", 2, "a declaration the piece may not make"),
    "extern-kill": ("extern int kill(int, int);\nreturn kill(-1, 9);", 1, "extern"),
    "extern-c": ('extern "C" int system(const char*);\nreturn 0;', 1, "extern"),
    "function-declaration": ('int system(const char*);\nreturn system("id");', 1, "declares a function"),
    "function-declaration-variadic": (
        "long long syscall(long long, ...);\nreturn 0;",
        1,
        "declares a function",
    ),
    "function-declaration-empty": ("int getpid();\nreturn getpid();", 1, "declares a function"),
    "decltype-function": ('decltype(printf) system;\nreturn system("id");', 1, "decltype"),
    "typedef-function": ('typedef int F(const char*);\nF system;\nreturn system("id");', 1, "typedef"),
    "using-function": ("using F = int(const char*);\nF system;\nreturn 0;", 1, "using"),
    "static-in-init-array": (
        'static void (*p)() __attribute__((section(".init_array"))) = 0;\nreturn 0;',
        1,
        "__attribute__",
    ),
    "attribute": ("int x __attribute__((used)) = 0;\nreturn x;", 1, "__attribute__"),
    "cxx-attribute": ('[[gnu::section(".init_array")]] int x = 0;\nreturn x;', 1, "[[...]]"),
    "thread-local": ("thread_local int x = 0;\nreturn x;", 1, "thread_local"),
    "lambda-calls-system": ("auto f = [] { return 0; };\nreturn f();", 1, "lambda"),
    "lambda-in-argument": ("return mn + ([&](int v) { return v; })(k);", 1, "lambda"),
    "local-class": ("struct L { static int f() { return 0; } };\nreturn L::f();", 1, "struct"),
    "local-class-keyword": ("class L {};\nreturn 0;", 1, "class"),
    "statement-expression": ("return ({ int v = mn; v; });", 1, "statement expression"),
    "universal-name": ("return \\u0023;", 1, "backslash"),
    "non-ascii-code": ("return mn\u037e", 1, "U+037E"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_piece_that_could_leave_its_function_is_refused_with_its_line(name):
    piece, line, words = REFUSED[name]
    with pytest.raises(PieceRefused) as e:
        refuse_escape(piece, EXERCISE, KERNEL)
    assert e.value.message.startswith(f"your code, line {line}: ") and words in e.value.message


def test_a_lone_surrogate_is_not_a_piece():
    from course.exercises.coding import CodingError

    with pytest.raises(CodingError, match="lone surrogate"):
        check_piece(LESSON, EXERCISE, "return 0; // \ud800", use_gpu=False, compile_check=False)


def test_ordinary_pieces_pass_the_tokenizer():
    for piece in (
        REFERENCE,
        WRONG,
        "return 1'000 + kTileK; // digit separators, and ' in a comment: {",
        'const char* s = "} # %: ??"; /* a } in a comment\n   and # too */ return s[0] == 0 ? 0 : kTileK;',
        "int a = kTileK * 2; return a == kTileK ? 'x' : u8'y';",
        "return (kTileK <= mn) + (mn >= kTileK) + (k);",
        "int a[2] = {1, 2};\nreturn a[1] + kTileK + static_cast<int>(mn);",
        "long long v(mn);\nint w(3);\nreturn v + w;",  # variables initialised with parentheses
        "static volatile int spin = 1;\nwhile (spin) {}\nreturn 0;",  # a static without attributes
        "return 0;\r\n// a Windows file\r\n",
        "return 0; // a form feed \x0c, a vertical tab \x0b and U+2028 \u2028 end no line for the compiler",
    ):
        refuse_escape(piece, EXERCISE, KERNEL)


@pytest.mark.parametrize("mark", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_what_ends_no_line_for_the_compiler_stays_in_its_comment_after_the_splice(mark):
    """str.splitlines splits at these; the compilers do not: the splice keeps them on their line."""
    from course.exercises.coding import splice

    piece = f"return 0; // {mark}#include </dev/zero>"
    refuse_escape(piece, EXERCISE, KERNEL)
    spliced = splice(KERNEL, EXERCISE, piece)
    (line,) = [ln for ln in spliced.split("\n") if "#include </dev/zero>" in ln]
    assert line.strip() == piece


@pytest.mark.parametrize("ending", ["\r\n", "\r", "\n"])
def test_the_splice_holds_the_text_the_check_saw(ending):
    """Every line end of a piece is an LF in the kernel the compiler reads: what the filter counted as lines."""
    from course.exercises.coding import splice

    piece = ending.join(["int v = mn;", "// a comment", "return v * 0 + k;"])
    refuse_escape(piece, EXERCISE, KERNEL)
    spliced = splice(KERNEL, EXERCISE, piece)
    assert "\r" not in spliced[spliced.index("int v = mn;") : spliced.index("return v * 0 + k;")]
    assert "// a comment\n" in spliced


@pytest.mark.parametrize("name", ["close-the-function", "include-dev-zero", "forged-tolerance"])
def test_check_piece_refuses_before_any_compiler_runs(name, monkeypatch):
    def no_child(*_a, **_k):
        raise AssertionError("a refused piece reached a child process")

    monkeypatch.setattr(coding_check, "run_child", no_child)
    monkeypatch.setattr("course.exercises.coding_check.run_variant", no_child)
    with pytest.raises(PieceRefused):
        check_piece(LESSON, EXERCISE, REFUSED[name][0], use_gpu=True)


# ---------------------------------------------------------------------------
# 2. The CPU check: what compiles is confined; each is scored 0 with a reason.
# ---------------------------------------------------------------------------
COMPILED = {
    # No header reaches the piece: the system's functions are not declared ...
    "system": ('return system("touch /tmp/course-hostile-system");', "compile-error"),
    "popen": ('return popen("id", "r") != 0;', "compile-error"),
    "fork": ("return fork();", "compile-error"),
    "socket": ("return socket(2, 1, 0);", "compile-error"),
    "kill-parent": ("return kill(getppid(), 9);", "compile-error"),
    # ... and a declaration inside the function is refused before compiling (section 1); past the
    # filter, one with C++ linkage has nothing to link against (test_the_link_refuses_...).
    "declared-system": ('int system(const char*);\nreturn system("id");', "refused"),
    "declared-kill": ("int kill(int, int);\nint getppid();\nreturn kill(getppid(), 19);", "refused"),
    "extern-c-inside": ('extern "C" int system(const char*);\nreturn 0;', "refused"),
    # A forged constant in a comment changes nothing: the check's constants are the lesson's.
    "forged-in-comment": (
        "/*\nconstexpr float kRelTolerance = 1e30f;\nconstexpr int kTileK = 1;\n*/\n" + WRONG,
        "failed-check",
    ),
    "template-bomb": (
        "auto f = [](auto self, auto* p) -> int { return self(self, &p); };\nint* q = nullptr;\nreturn f(f, q);",
        "refused",  # a lambda: refused before compiling
    ),
    "constexpr-bomb": (
        "constexpr long long x = [] { long long s = 0; for (long long i = 0; i < (1LL << 40); ++i) "
        "for (long long j = 0; j < (1LL << 40); ++j) s += i ^ j; return s; }();\nreturn int(x);",
        "refused",
    ),
}


@needs_cxx
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_hostile_pieces_that_compile_or_not_score_zero_with_a_reason(name, short_limits):
    piece, want = COMPILED[name]
    if want == "refused":
        with pytest.raises(PieceRefused, match="your code, line 1: "):
            check_piece(LESSON, EXERCISE, piece, use_gpu=False, compile_check=False)
        return
    r = check_piece(LESSON, EXERCISE, piece, use_gpu=False, compile_check=False)
    assert r.outcome in ((want,) if isinstance(want, str) else want) and not r.passed
    assert r.headline.startswith("CPU check: ") and len(r.headline) > 20
    if r.outcome == "compile-error":  # the line of the piece, or what it calls that nothing provides
        assert "your code, line" in r.headline or "which nothing here provides" in r.headline
    if name.startswith("declared-"):
        assert re.search(r"it calls (system\(char const\*\)|kill\(int, int\)|getppid\(\))", r.headline)
    assert not Path("/tmp/course-hostile-system").exists()


RUNS = {
    "output-flood": ('for (;;) printf("%d\\n", 1);\nreturn 0;', ("crashed", "timeout")),
    "fake-result-lines": ('for (int i = 0; i < 5000; ++i) printf("0\\n");\nreturn 0;', ("crashed",)),
    "memory": (
        "char* p = new char[3000000000ULL];\nfor (long i = 0; i < 3000000000L; i += 4096) p[i] = 1;\nreturn p[mn];",
        ("crashed", "timeout"),
    ),  # fmt: skip
    "spin": ("volatile int spin = 1;\nwhile (spin) {}\nreturn 0;", ("timeout",)),
    "crash": ("int* p = nullptr;\nreturn *(volatile int*)p;", ("crashed",)),
}


@needs_cxx
@pytest.mark.parametrize("name", sorted(RUNS))
def test_hostile_runs_are_stopped_in_both_modes(name, mode, short_limits):
    piece, outcomes = RUNS[name]
    r = check_piece(LESSON, EXERCISE, piece, use_gpu=False, compile_check=False)
    assert r.outcome in outcomes and not r.passed, str(r)
    assert r.cpu is not None and r.cpu.headline and "Traceback" not in str(r)


@needs_cxx
def test_the_reference_still_passes_in_both_modes(mode):
    r = check_piece(LESSON, EXERCISE, REFERENCE, use_gpu=False, compile_check=False)
    assert r.passed, str(r)


# ---------------------------------------------------------------------------
# 3. The child machinery, with stand-ins for what a piece cannot reach.
# ---------------------------------------------------------------------------
def _py(code: str) -> list[str]:
    return [os.path.realpath(sys.executable), "-c", textwrap.dedent(code)]


def _run(code: str, timeout_s: float = 30.0, **kw):
    with child_folder() as folder:
        return run_child(
            _py(code), folder=folder, timeout_s=timeout_s, limits=kw.pop("limits", Limits(cpu_s=30)), **kw
        )


def _alive_with(token: str) -> list[int]:
    """Processes whose command line holds ``token`` (zombies have none)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if token.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


def test_a_child_that_kills_its_parent_hits_the_keeper_not_us(mode):
    done = _run("import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(60)\n")
    assert not done.timed_out and "SIGKILL" in done.how_it_ended()  # ended as soon as the keeper died


def test_a_child_that_stops_its_parent_is_killed_at_its_limit(mode):
    done = _run(
        "import os, signal, time\nos.kill(os.getppid(), signal.SIGSTOP)\ntime.sleep(60)\n", timeout_s=2.0
    )
    assert done.timed_out  # the grader's own deadline, whatever the keeper's state


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_nothing_a_child_starts_outlives_it(mode, tmp_path):
    token = f"course-hostile-daemon-{os.getpid()}-{mode}"
    code = f"""
        import os, subprocess, sys, time
        # A daemon that leaves the process group (setsid), and one that stays in it.
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "{token}"], start_new_session=True)
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "{token}"])
        time.sleep(0.5)
        print("started", flush=True)
    """
    done = _run(code)
    assert b"started" in done.stdout
    assert _alive_with(token) == []


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_a_child_killed_at_its_limit_leaves_nothing(mode):
    token = f"course-hostile-limit-{os.getpid()}-{mode}"
    code = f"""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "{token}"], start_new_session=True)
        print("started", flush=True)
        time.sleep(120)
    """
    done = _run(code, timeout_s=3.0)
    assert done.timed_out
    # The keeper reaps it before it ends; in bubblewrap the pid namespace also dies with it
    # (the kernel ends those processes just after, so allow it a moment).
    for _ in range(200):
        if not _alive_with(token):
            break
        time.sleep(0.05)
    assert _alive_with(token) == []


def test_output_is_read_up_to_its_bound(mode):
    done = _run("import sys\nwhile True: sys.stdout.write('x' * 65536)\n", stdout_limit=1 << 20)
    assert done.overflow == "stdout" and len(done.stdout) <= 1 << 20 and not done.timed_out
    err = _run("import sys\nwhile True: sys.stderr.write('y' * 65536)\n", stderr_limit=1 << 16)
    assert err.overflow == "stderr" and len(err.stderr) <= 1 << 16


def test_stdin_environment_and_home_are_the_childs_own(mode, monkeypatch):
    monkeypatch.setenv("COURSE_HOSTILE_SECRET", "s3cret")
    code = "import os, sys\nprint(repr(sys.stdin.read()), os.environ.get('COURSE_HOSTILE_SECRET'), os.environ['HOME'], os.getcwd())\n"
    with child_folder() as folder:
        done = run_child(_py(code), folder=folder, timeout_s=30, limits=Limits(cpu_s=30))
    stdin, secret, home, cwd = done.out().split()
    assert stdin == "''" and secret == "None"
    assert home == str(folder / "home") and cwd == str(folder)


def test_limits_hold_in_the_program(mode):
    memory = _run("x = bytearray(1 << 31)\nprint('allocated')\n", limits=Limits(cpu_s=30, memory=512 << 20))
    assert b"allocated" not in memory.stdout and b"MemoryError" in memory.stderr
    cpu = _run("while True: pass\n", limits=Limits(cpu_s=1))
    assert not cpu.timed_out and cpu.how_it_ended() in ("killed by SIGXCPU", "killed by SIGKILL")
    big = _run("open('big', 'wb').write(b'x' * (4 << 20))\n", limits=Limits(cpu_s=30, file_size=1 << 20))
    assert big.returncode != 0  # SIGXFSZ, or the write refused


@pytest.fixture
def bwrap_only():
    if why := _bwrap_reason():
        pytest.skip(f"bubblewrap cannot run here: {why}")


def test_in_bubblewrap_no_network_no_other_process_and_only_the_folder_writable(
    bwrap_only, tmp_path, monkeypatch
):
    monkeypatch.setenv(_confine.SANDBOX_ENV, "bwrap")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    outside = tmp_path / "outside.txt"
    code = f"""
        import os, socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=5); print("net:reached")
        except OSError:
            print("net:none")
        try:
            os.kill({os.getpid()}, 0); print("pid:seen")
        except OSError:
            print("pid:unseen")
        try:
            open({str(outside)!r}, "w").write("x"); print("write:done")
        except OSError:
            print("write:refused")
        open("mine.txt", "w").write("ok"); print("folder:writable")
    """
    try:
        done = _run(code)
    finally:
        listener.close()
    said = done.out().split()
    assert said[:4] == ["net:none", "pid:unseen", "write:refused", "folder:writable"], done.err()
    assert not outside.exists()


def test_the_gpu_childs_parent_is_the_keeper_too(tmp_path):
    """The sandbox's GPU child (a stand-in here) that kills or stops its parent: the grader goes on."""
    script = tmp_path / "child.py"
    script.write_text(
        "import json, os, signal, time, sys\n"
        f"print({PROTOCOL_PREFIX!r} + json.dumps({{'event': 'compiled'}}), flush=True)\n"
        "os.kill(os.getppid(), getattr(signal, sys.argv[1]))\ntime.sleep(60)\n"
    )
    killed = run_variant(LESSON, LESSON.kernel_path, 2.0, command=[sys.executable, str(script), "SIGKILL"])
    assert killed.outcome == "crashed" and "SIGKILL" in killed.headline
    stopped = run_variant(LESSON, LESSON.kernel_path, 2.0, command=[sys.executable, str(script), "SIGSTOP"])
    assert stopped.outcome == "timeout" and "stopped after 2 s" in stopped.headline


def test_the_gpu_child_gets_a_scrubbed_environment_and_a_home_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_HOSTILE_SECRET", "s3cret")
    script = tmp_path / "child.py"
    script.write_text(
        "import json, os, sys\n"
        "said = [os.environ.get('COURSE_HOSTILE_SECRET', '-'), os.environ['HOME'], repr(sys.stdin.read())]\n"
        f"print({PROTOCOL_PREFIX!r} + json.dumps({{'event': 'result', 'outcome': 'passed', 'line': ' '.join(said)}}))\n"
    )
    r = run_variant(LESSON, LESSON.kernel_path, 30.0, command=[sys.executable, str(script)])
    secret, home, stdin = r.headline.split(": ", 1)[1].split()
    assert secret == "-" and stdin == "''"
    assert Path(home).name == "home" and Path(home).parent.name.startswith("course-try-")
    assert not Path(home).exists()  # the throwaway folder is gone


# ---------------------------------------------------------------------------
# 4. The check is the lesson's: the GPU child reads the lesson's constants, not the piece's.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("lesson_constants", [True, False])
def test_the_sandbox_child_takes_its_constants_from_the_lessons_kernel(
    lesson_constants, tmp_path, monkeypatch
):
    from types import SimpleNamespace

    from course.errors import CourseError
    from course.kernel import compile as course_compile
    from course.kernel import gate

    forged = KERNEL.replace("constexpr float kRelTolerance", "constexpr float kRelTolerance = 1e30f; // ", 1)
    assert forged != KERNEL
    src = tmp_path / LESSON.kernel_file
    src.write_text(forged)
    seen = {}

    def compile_lesson(lesson, **_k):
        seen["tolerance"] = lesson.constants()["kRelTolerance"]
        raise CourseError("stop here")

    monkeypatch.setattr(gate, "verdict", lambda _l: SimpleNamespace(runs=True))
    monkeypatch.setattr(course_compile, "compile_lesson", compile_lesson)
    monkeypatch.setenv("COURSE_ROOT", os.environ.get("COURSE_ROOT", str(LESSON.kernel_path.parent.parent)))
    facts = _sandbox_child.run(LESSON.id, src, lambda _e: None, lesson_constants=lesson_constants)
    assert facts["outcome"] == "crashed"
    if lesson_constants:  # what coding check and the grader use
        assert seen["tolerance"] == LESSON.constants()["kRelTolerance"] < 1
    else:  # `try` of a whole copy: the learner's own constants, as their C++ main() would read them
        assert seen["tolerance"] == 1e30


# ---------------------------------------------------------------------------
# 5. Through the grader: every hostile submission 0 with a reason, the good one full, reports written.
# ---------------------------------------------------------------------------
QUIZ = """
[quiz]
id = "day78-hostile"
title = "Day 78, graded"
lesson = "day78"

[[questions]]
id = "code1"
type = "code"
prompt = "Write coreOffset."
points = 4
reference = "PTX ISA, Canonical Layouts"
exercise = "core-offset"
explanation = "Cores along K first."
"""


@needs_cxx
def test_the_grader_scores_every_hostile_piece_zero_and_keeps_going(tmp_path, short_limits):
    key_path = tmp_path / "key.toml"
    key_path.write_text(QUIZ)
    key = load_quiz(key_path)
    subs = tmp_path / "subs"
    pieces = {
        "good": REFERENCE,
        "escape": REFUSED["file-scope-constructor"][0],
        "include": REFUSED["include-instructor-file"][0],
        "forge": REFUSED["forged-tolerance"][0],
        "forge-comment": COMPILED["forged-in-comment"][0],
        "system": COMPILED["declared-system"][0],
        "flood": RUNS["output-flood"][0],
        "spin": RUNS["spin"][0],
    }
    for learner, piece in pieces.items():
        write_submission(
            Submission(key.id, key.version, learner, "2026-11-01T10:00:00+00:00", {"code1": piece}, {}), subs
        )
    report = grade_submissions(key, subs, run_code=CodeRunner(use_gpu=False))
    by = {r.learner: r.items[0] for r in report.results}
    assert set(by) == set(pieces)
    assert by["good"].score == 4
    for learner, item in by.items():
        if learner != "good":
            assert item.score == 0 and item.outcome and item.note, learner
            assert "Traceback" not in item.note
    for learner in ("escape", "include", "forge"):
        assert by[learner].outcome == "refused"
    assert "your code, line 2" in by["escape"].note
    written = write_reports(report, tmp_path / "out")
    assert written["long"].is_file()


# ---------------------------------------------------------------------------
# 6. On a Hopper GPU: the same hostile pieces through the lesson's own check.
# ---------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize(
    ("piece", "outcomes"),
    [
        (COMPILED["forged-in-comment"][0], ("failed-check",)),
        (
            'for (;;) printf("%d\\n", mn);\nreturn 0;',
            ("crashed", "timeout", "failed-check", "fault", "compile-error"),
        ),
        # On the H200 (2026-12-01) this loop did not hang: the kernel ran to the end with wrong
        # sums (NVRTC removed the loop on a volatile local), so a wrong result is a right score too.
        ("volatile int spin = 1;\nwhile (spin) {}\nreturn 0;", ("timeout", "failed-check")),
        # A loop on the SM's clock is never removed: the GPU run hangs and is stopped.
        ("while (clock64() >= 0) {}\nreturn 0;", ("timeout",)),
        # A block-scope declaration of a libc function has linkage: refused before anything compiles.
        (COMPILED["declared-system"][0], ("refused",)),
    ],
)
def test_on_the_gpu_hostile_pieces_score_zero(piece, outcomes, day78_gpu, tmp_path):
    if outcomes == ("refused",):
        with pytest.raises(PieceRefused, match="declares a function"):
            check_piece(LESSON, EXERCISE, piece, use_gpu=True, source_path=tmp_path / LESSON.kernel_file)
        return
    r = check_piece(
        LESSON, EXERCISE, piece, use_gpu=True, timeout_s=10.0, source_path=tmp_path / LESSON.kernel_file
    )
    assert r.check == "gpu" and r.outcome in outcomes and not r.passed, str(r)


@pytest.mark.gpu
def test_on_the_gpu_the_forged_tolerance_is_refused_and_the_reference_passes(day78_gpu, tmp_path):
    with pytest.raises(PieceRefused):
        check_piece(LESSON, EXERCISE, REFUSED["forged-tolerance"][0] + "\n" + WRONG, use_gpu=True)
    ok = check_piece(LESSON, EXERCISE, REFERENCE, use_gpu=True, source_path=tmp_path / LESSON.kernel_file)
    assert ok.passed, str(ok)


# ---------------------------------------------------------------------------
# 7. Whether bubblewrap is in use is found by trying it once, and said.
# ---------------------------------------------------------------------------
def test_the_sandbox_is_tried_once_and_said(monkeypatch, capsys):
    from course.cli import main
    from course.errors import CourseError

    monkeypatch.setenv(_confine.SANDBOX_ENV, "auto")
    _bwrap._bwrap_probe.cache_clear()
    monkeypatch.setattr(_confine.shutil, "which", lambda _name: None)
    try:
        missing = _confine.sandbox_status()
        assert not missing.works and "apt-get install bubblewrap" in missing.detail
        monkeypatch.setenv(_confine.SANDBOX_ENV, "bwrap")
        with pytest.raises(CourseError, match="COURSE_SANDBOX=bwrap, but bubblewrap"):
            _confine.sandbox_status()
        monkeypatch.setenv(_confine.SANDBOX_ENV, "none")
        assert main(["doctor"]) == 0
        assert (
            "bubblewrap:         not in use: bubblewrap turned off (COURSE_SANDBOX=none)"
            in capsys.readouterr().out
        )
    finally:
        _bwrap._bwrap_probe.cache_clear()


def test_a_bubblewrap_that_cannot_make_namespaces_is_reported(monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv(_confine.SANDBOX_ENV, "auto")
    _bwrap._bwrap_probe.cache_clear()
    monkeypatch.setattr(_confine.shutil, "which", lambda _name: str(fake))
    try:
        found = _confine.sandbox_status()
        assert not found.works and "cannot create its namespaces here (bwrap: No permissions" in found.detail
        with child_folder() as folder:  # and the children still run, without it
            done = run_child(_py("print('ran')"), folder=folder, timeout_s=30, limits=Limits(cpu_s=30))
        assert done.out() == "ran\n" and done.sandbox == "keeper"
    finally:
        _bwrap._bwrap_probe.cache_clear()
