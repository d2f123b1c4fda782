"""The sandbox on this machine: error classification, compile-error mapping, the child protocol.

No GPU is needed: the child is a stand-in command (``run_variant(command=...)``)
that speaks the protocol, sleeps, prints garbage or dies, and the real child
module is run where this machine cannot run the lesson (it reports "not-run").
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from course._paths import repo_root
from course.errors import CourseError
from course.kernel import gate
from course.kernel.compile import STICKY_ERRORS, CompileError, LaunchError, compile_offline, error_kind
from course.lessons import LESSONS, get_lesson
from course.tryout.sandbox import (
    DELIBERATE,
    EXIT_CODES,
    OUTCOMES,
    PROTOCOL_PREFIX,
    child_command,
    cuda_error_name,
    deliberate_variant,
    map_compile_log,
    run_variant,
)

driver = pytest.importorskip("cuda.bindings.driver")
runtime = pytest.importorskip("cuda.bindings.runtime")

# ---------------------------------------------------------------------------
# Classification: every CUDA error name a launch can raise.
# ---------------------------------------------------------------------------
# The sticky errors, as the CUDA Runtime API reference (cudaError_t) and the
# Driver API reference (CUresult) word them: "This leaves the process in an
# inconsistent state and any further CUDA work will return the same error.
# To continue using CUDA, the process must be terminated and relaunched."
# (cudaErrorAssert: "The device cannot be used again"; CUDA_ERROR_ASSERT:
# "The context cannot be used anymore, and must be destroyed").
STICKY_RUNTIME = {
    "cudaErrorIllegalAddress",
    "cudaErrorMisalignedAddress",
    "cudaErrorIllegalInstruction",
    "cudaErrorInvalidPc",
    "cudaErrorInvalidAddressSpace",
    "cudaErrorHardwareStackError",
    "cudaErrorLaunchFailure",
    "cudaErrorAssert",
    "cudaErrorLaunchTimeout",
    "cudaErrorTensorMemoryLeak",
    "cudaErrorContained",
    "cudaErrorExternalDevice",
    "cudaErrorMpsClientTerminated",
}
STICKY_DRIVER = {
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_TENSOR_MEMORY_LEAK",
    "CUDA_ERROR_CONTAINED",
    "CUDA_ERROR_EXTERNAL_DEVICE",
    "CUDA_ERROR_MPS_CLIENT_TERMINATED",
}
RUNTIME_NAMES = sorted(e.name for e in runtime.cudaError_t if e.name != "cudaSuccess")
DRIVER_NAMES = sorted(e.name for e in driver.CUresult if e.name != "CUDA_SUCCESS")


def _docs_say_sticky(doc: str | None) -> bool:
    text = " ".join((doc or "").split())
    return "must be terminated and relaunched" in text or "cannot be used anymore" in text


@pytest.mark.parametrize("name", RUNTIME_NAMES + DRIVER_NAMES)
def test_every_cuda_error_name_is_a_fault_or_a_refusal(name):
    want = "fault" if name in STICKY_RUNTIME | STICKY_DRIVER else "refused"
    # As CuPy words them ("cudaErrorIllegalAddress: an illegal memory access was
    # encountered"), and inside a longer message.
    assert error_kind(f"{name}: what the driver says") == want
    assert error_kind(f"launching k failed: {name}. more text") == want
    assert cuda_error_name(f"x {name}: y") == name


def test_the_sticky_sets_are_real_names_of_both_apis():
    assert STICKY_RUNTIME <= set(RUNTIME_NAMES)
    assert STICKY_DRIVER <= set(DRIVER_NAMES)


def test_the_sticky_sets_match_the_api_reference_as_cuda_python_ships_it():
    # cuda-python carries each enum member's reference text as its docstring.
    docs_runtime = {e.name for e in runtime.cudaError_t if _docs_say_sticky(e.__doc__)}
    docs_driver = {e.name for e in driver.CUresult if _docs_say_sticky(e.__doc__)}
    if not docs_runtime and not docs_driver:
        pytest.skip("this cuda-bindings carries no docstrings on its enums")
    assert docs_runtime == STICKY_RUNTIME
    assert docs_driver == STICKY_DRIVER


def test_course_sticky_errors_are_exactly_the_normalised_names():
    def norm(name: str) -> str:
        return name.removeprefix("CUDA_ERROR_").removeprefix("cudaError").replace("_", "").lower()

    assert {norm(n) for n in STICKY_RUNTIME | STICKY_DRIVER} == set(STICKY_ERRORS)


def test_no_error_name_means_refused():
    assert error_kind("out of memory") == "refused"
    assert cuda_error_name("no name here") is None


@pytest.mark.parametrize(
    "error, kind, words",
    [
        # The case: CuPy raises the runtime spelling after an LBO-256 fault.
        (
            "cudaErrorIllegalAddress: an illegal memory access was encountered",
            "fault",
            "faulted while running",
        ),
        (
            "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
            "fault",
            "faulted while running",
        ),
        ("cudaErrorLaunchFailure: unspecified launch failure", "fault", "faulted while running"),
        ("cudaErrorInvalidValue: invalid argument", "refused", "refused before the kernel ran"),
        ("CUDA_ERROR_INVALID_VALUE: invalid argument", "refused", "refused before the kernel ran"),
    ],
)
def test_launch_error_says_fault_or_refusal(error, kind, words):
    compiled = SimpleNamespace(lesson=get_lesson("day78"))
    e = LaunchError(compiled, (4, 4), (256,), 0, error)  # type: ignore[arg-type]
    assert e.kind == kind
    assert e.sticky is (kind == "fault")
    assert words in str(e)


# ---------------------------------------------------------------------------
# Compile errors in the learner's file and line numbers.
# ---------------------------------------------------------------------------
def _broken(lesson) -> tuple[str, int]:
    """The lesson's kernel with three lines added on top and a bad statement first in the kernel's body."""
    text = "// my notes\n// more notes\n// and more\n" + lesson.kernel_path.read_text()
    text = deliberate_variant(lesson, text, "trap")
    text = re.sub(
        r"asm volatile\(\"trap;\"\);  // deliberate: trap", "undefined_name_for_the_test = 1;", text
    )
    lines = text.splitlines()
    return text, 1 + next(i for i, line in enumerate(lines) if "undefined_name_for_the_test" in line)


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_a_compile_error_names_the_learners_file_and_line(lesson_id, tmp_path):
    lesson = get_lesson(lesson_id)
    source, line = _broken(lesson)
    mine = tmp_path / "my_version.cu"
    with pytest.raises(CompileError) as info:
        compile_offline(lesson, source=source)
    problem = map_compile_log(info.value.log, source, mine, (lesson.kernel_file,))
    assert problem.line == line
    assert "undefined_name_for_the_test" in problem.message
    assert f"{mine}:{line}: error" in problem.log
    assert f"{lesson.kernel_file}(" not in problem.log  # every line of ours is renamed
    assert f"{line} |     undefined_name_for_the_test = 1;" in problem.excerpt


def test_cupy_style_log_and_header_errors():
    source = "\n".join(f"line {n}" for n in range(1, 21))
    log = (
        "/usr/include/cuda/barrier(33): error: something in a header\n"
        '/tmp/tmpabc123/kern.cu(12): error: identifier "x" is undefined\n'
        '/tmp/tmpabc123/kern.cu(15): warning #177-D: variable "y" was declared but never referenced\n'
        '2 errors detected in the compilation of "/tmp/tmpabc123/kern.cu".'
    )
    mine = Path("/home/me/work/day76/tma_tile.cu")
    p = map_compile_log(log, source, mine, ("tma_tile.cu", "kern.cu"))
    assert p.line == 12  # ours, not the header's 33
    assert p.message == 'identifier "x" is undefined'
    assert "/usr/include/cuda/barrier(33): error" in p.log  # a header keeps its own name
    assert f"{mine}:12: error" in p.log and f"{mine}:15: warning #177-D" in p.log
    assert "12 | line 12" in p.excerpt and "33 |" not in p.excerpt


def test_a_log_without_a_line_of_ours_still_says_what_failed():
    p = map_compile_log(
        "ptxas error   : Entry function 'k' uses too much shared data", "x", Path("a.cu"), ("a.cu",)
    )
    assert p.line is None
    assert "too much shared data" in p.message
    assert p.excerpt == ""


# ---------------------------------------------------------------------------
# The child protocol, with stand-in children.
# ---------------------------------------------------------------------------
LESSON = get_lesson("day76")


def _standin(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "standin.py"
    script.write_text(
        "import json, os, sys, time, subprocess, signal\n"
        f"P = {PROTOCOL_PREFIX!r}\n"
        "def emit(**e):\n    print(P + json.dumps(e), flush=True)\n" + body
    )
    return [sys.executable, str(script)]


def _run(tmp_path, body, timeout_s=30.0, **kw):
    # 30 s: a stand-in that ends by itself ends long before; only a busy machine's start-up would near it
    return run_variant(LESSON, LESSON.kernel_path, timeout_s, command=_standin(tmp_path, body), **kw)


def test_a_passing_child(tmp_path):
    r = _run(
        tmp_path,
        "emit(event='compiled', summary='s')\nemit(event='line', text='GPU: stand-in')\n"
        "emit(event='result', outcome='passed', line='round trip: PASS.')\n",
    )
    assert r.outcome == "passed" and r.exit_code == 0
    assert r.output == ("GPU: stand-in",)
    assert "round trip: PASS." in r.headline


def test_a_child_that_hangs_is_killed_and_reported_as_timeout(tmp_path):
    start = time.monotonic()
    r = _run(tmp_path, "emit(event='compiled')\ntime.sleep(60)\n", timeout_s=1.0)
    assert time.monotonic() - start < 30  # not the child's 60 s: it was stopped
    assert r.outcome == "timeout" and r.exit_code == 1
    assert "hung and was stopped after 1 s" in r.headline
    assert "barrier that never completes" in r.meaning


def test_the_time_limit_starts_after_the_compile(tmp_path):
    # 4 s of "compiling" and 0.2 s of running fit a 3 s run limit (the slack, 2.8 s, is for a busy machine).
    r = _run(
        tmp_path,
        "time.sleep(4)\nemit(event='compiled')\ntime.sleep(0.2)\nemit(event='result', outcome='passed', line='ok')\n",
        timeout_s=3.0,
    )
    assert r.outcome == "passed"


def test_a_compile_that_never_ends_is_stopped(tmp_path):
    r = _run(tmp_path, "time.sleep(60)\n", timeout_s=5.0, compile_timeout_s=1.0)
    assert r.outcome == "timeout"
    assert "did not finish compiling within 1 s" in r.headline


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] == "Z"  # killed, not yet reaped by init
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the grandchild")
def test_a_timeout_kills_the_whole_process_group(tmp_path, monkeypatch):
    # The keeper's group kill, without bubblewrap (inside it the pid namespace ends them all, and the
    # grandchild's pid there is not the one outside): tests/hardening/test_sandbox_hostile.py has that path.
    monkeypatch.setenv("COURSE_SANDBOX", "none")
    pid_file = tmp_path / "grandchild.pid"
    r = _run(
        tmp_path,
        f"g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(g.pid))\n"
        "emit(event='compiled')\ntime.sleep(60)\n",
        timeout_s=1.0,
    )
    assert r.outcome == "timeout"
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)


def test_a_child_that_prints_garbage_and_exits_is_crashed(tmp_path):
    r = _run(tmp_path, "print('hello, not the protocol')\nprint('oops', file=sys.stderr)\nsys.exit(3)\n")
    assert r.outcome == "crashed" and r.exit_code == 1
    assert "exit status 3" in r.headline
    assert "hello, not the protocol" in r.detail and "oops" in r.detail


def test_a_malformed_protocol_line_is_not_a_result(tmp_path):
    r = _run(tmp_path, "print(P + '{not json', flush=True)\nprint(P + '[1, 2]', flush=True)\n")
    assert r.outcome == "crashed"
    assert "{not json" in r.detail


def test_a_child_killed_by_a_signal_is_crashed(tmp_path):
    r = _run(tmp_path, "os.kill(os.getpid(), signal.SIGSEGV)\n")
    assert r.outcome == "crashed"
    assert "killed by SIGSEGV" in r.headline


def test_an_unknown_outcome_is_crashed(tmp_path):
    r = _run(tmp_path, "emit(event='result', outcome='exploded')\n")
    assert r.outcome == "crashed"
    assert "exploded" in r.headline


def test_noise_after_the_result_does_not_change_it(tmp_path):
    # What CuPy's module unload prints after a sticky error, had the child not left with os._exit.
    r = _run(
        tmp_path,
        "emit(event='compiled')\nemit(event='result', outcome='failed-check', line='round trip wrong at 192')\n"
        "print('Exception ignored in: <cupy.cuda.function.Module>', file=sys.stderr)\nsys.exit(1)\n",
    )
    assert r.outcome == "failed-check" and r.exit_code == 1
    assert "its output is wrong: round trip wrong at 192" in r.headline


@pytest.mark.parametrize(
    "error, outcome, words",
    [
        (
            "cudaErrorIllegalAddress: an illegal memory access was encountered",
            "fault",
            "an address it does not own",
        ),
        ("cudaErrorMisalignedAddress: misaligned address", "fault", "not aligned"),
        ("cudaErrorLaunchFailure: unspecified launch failure", "fault", "trap instruction"),
        ("cudaErrorInvalidValue: invalid argument", "refused", "out of range"),
        (
            "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested",
            "refused",
            "registers or shared",
        ),
    ],
)
def test_fault_and_refusal_in_words(tmp_path, error, outcome, words):
    r = _run(
        tmp_path, f"emit(event='compiled')\nemit(event='result', outcome={outcome!r}, error={error!r})\n"
    )
    assert r.outcome == outcome and r.exit_code == 1
    assert r.error_name == error.split(":")[0]
    assert words in r.headline
    if outcome == "fault":
        assert r.headline.startswith("The kernel faulted while running")
        assert "this page's GPU context was never touched" in r.meaning
    else:
        assert r.headline.startswith("The launch was refused before it ran")


def test_a_compile_error_from_the_child_is_mapped(tmp_path):
    log = "/tmp/tmpq/kern.cu(154): error: an rvalue reference cannot be bound to an lvalue"
    r = _run(tmp_path, f"emit(event='result', outcome='compile-error', log={log!r})\n")
    assert r.outcome == "compile-error" and r.exit_code == 3
    assert r.line == 154
    assert f"{LESSON.kernel_path}:154: an rvalue reference" in r.headline
    assert "154 | " in r.detail


def test_the_child_gets_the_course_root_and_the_package(tmp_path):
    r = _run(
        tmp_path,
        "emit(event='result', outcome='passed', line=os.environ['COURSE_ROOT'] + '|' + os.environ['PYTHONPATH'])\n",
    )
    root, pythonpath = r.headline.split(": ", 1)[1].split("|")
    assert Path(root) == repo_root()
    assert str(Path(__file__).resolve().parents[2]) in pythonpath.split(os.pathsep)


@pytest.mark.parametrize("bad", [0, -1, True, "5", float("nan")])
def test_timeouts_must_be_positive_seconds(bad):
    with pytest.raises(CourseError, match="must be a positive number of seconds"):
        run_variant(LESSON, LESSON.kernel_path, bad, command=["true"])


def test_a_missing_source_is_a_clear_error(tmp_path):
    with pytest.raises(CourseError, match="cannot read the kernel to try"):
        run_variant(LESSON, tmp_path / "nope.cu", command=["true"])


def test_every_outcome_has_an_exit_code():
    assert set(EXIT_CODES) == set(OUTCOMES)
    assert EXIT_CODES["passed"] == 0 and EXIT_CODES["not-run"] == 2 and EXIT_CODES["compile-error"] == 3


# ---------------------------------------------------------------------------
# The real child, where this machine cannot run the lesson.
# ---------------------------------------------------------------------------
@pytest.mark.skipif(gate.verdict(LESSON).runs, reason="this machine runs day76: the child would use the GPU")
def test_the_real_child_reports_not_run_in_the_protocol(tmp_path):
    r = run_variant(LESSON, LESSON.kernel_path, 60, command=child_command(LESSON, LESSON.kernel_path))
    assert r.outcome == "not-run" and r.exit_code == 2
    assert "Not run here" in r.headline


def test_the_real_child_reports_a_bad_lesson_as_crashed(tmp_path):
    command = [
        sys.executable,
        "-m",
        "course.tryout._child",
        "--lesson",
        "day99",
        "--source",
        str(LESSON.kernel_path),
    ]
    r = run_variant(LESSON, LESSON.kernel_path, 60, command=command)
    assert r.outcome == "crashed"
    assert "no lesson named 'day99'" in r.headline


@pytest.mark.skipif(gate.verdict(LESSON).runs, reason="this machine runs day76")
def test_without_the_gpu_the_source_is_compile_checked_in_a_child(tmp_path, monkeypatch):
    from course.kernel import compile as course_compile

    def not_here(*_a, **_k):
        raise AssertionError("NVRTC ran in the calling process")

    monkeypatch.setattr(course_compile, "compile_offline", not_here)
    r = run_variant(LESSON, LESSON.kernel_path)
    assert r.outcome == "not-run"
    assert "your version compiles" in r.headline and LESSON.arch in r.headline


@pytest.mark.skipif(gate.verdict(LESSON).runs, reason="this machine runs day76")
def test_without_the_gpu_a_compile_that_never_ends_is_stopped(tmp_path):
    """A 200-byte macro bomb: NVRTC would expand it for hours; the child is stopped by its time or its
    memory limit (whichever comes first on this machine), and the call returns."""
    bomb = (
        "#define A(x) x x x x x x x x\n#define B(x) A(A(A(A(x))))\n#define C(x) B(B(B(B(x))))\n"
        "int course_bomb[] = {C(C(1,))};\n"
    )
    src = tmp_path / LESSON.kernel_file
    src.write_text(bomb + LESSON.kernel_path.read_text())
    r = run_variant(LESSON, src, compile_timeout_s=3.0)
    assert "your version compiles" not in r.headline
    assert (r.outcome == "timeout" and "did not finish within 3 s" in r.headline) or r.outcome in (
        "compile-error",
        "not-run",
    )


# ---------------------------------------------------------------------------
# Deliberate failures (tools/try_gpu_check.py) still compile, for every lesson.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", DELIBERATE)
@pytest.mark.parametrize("lesson_id", LESSONS)
def test_deliberate_variants_compile_for_every_lesson(lesson_id, kind):
    lesson = get_lesson(lesson_id)
    original = lesson.kernel_path.read_text()
    source = deliberate_variant(lesson, original, kind)
    assert source.count(f"// deliberate: {kind}") == 1 and len(source) > len(original)
    compile_offline(lesson, source=source)


def test_deliberate_variant_skips_a_declaration():
    lesson = SimpleNamespace(kernel_name="k", kernel_path=Path("k.cu"))
    source = 'extern "C" __global__ void k(int* a);\nextern "C" __global__ void k(int* a) {\n  a[0] = 1;\n}\n'
    out = deliberate_variant(lesson, source, "trap")  # type: ignore[arg-type]
    assert out.index("trap") > out.index("void k(int* a) {")
    with pytest.raises(CourseError, match="kind must be one of"):
        deliberate_variant(lesson, source, "boom")  # type: ignore[arg-type]


def test_protocol_lines_are_json_objects():
    line = PROTOCOL_PREFIX + json.dumps({"event": "result", "outcome": "passed"})
    assert json.loads(line[len(PROTOCOL_PREFIX) :])["outcome"] == "passed"


def test_the_childs_shadow_checkout_holds_the_learners_kernel(tmp_path, monkeypatch):
    import shutil

    from course.tryout import _child as _sandbox_child

    lesson = get_lesson("day76")
    real = repo_root()
    original = lesson.kernel_path.read_text()
    mine = original.replace("constexpr int kTileWidth = 64;", "constexpr int kTileWidth = 32;")
    assert mine != original
    root = _sandbox_child.shadow_root(lesson.kernel_file, mine)
    try:
        monkeypatch.setenv("COURSE_ROOT", str(root))
        assert lesson.kernel_path == root / "kernels" / lesson.kernel_file
        assert lesson.constants()["kTileWidth"] == 32  # the host side reads the learner's constants
        assert (root / "content").resolve() == (real / "content").resolve()
        other = next(p.name for p in (real / "kernels").iterdir() if p.name != lesson.kernel_file)
        assert (root / "kernels" / other).is_symlink()
    finally:
        shutil.rmtree(root)
    assert (real / "kernels" / lesson.kernel_file).read_text() == original  # the real one untouched
    assert (real / "content").is_dir()
