"""The child process of ``course.tryout.sandbox``: compile, run and check one learner's source, then exit.

    python -m course.tryout._child --lesson <id> --source ~/hopper-course-work/<id>/<kernel file>

It reports on stdout in ``course.tryout.sandbox``'s protocol (lines starting with
``@@course-sandbox``, one JSON object each) and always ends with exactly one
``result`` event. It then leaves with ``os._exit``: after a sticky error
(an illegal address, a trap) CuPy's module unload at interpreter exit would
raise inside ``__dealloc__`` and print "Exception ignored" tracebacks and
"Error in sys.excepthook"; skipping interpreter teardown skips them, and
the driver frees the context when the process ends.

For ``try`` (the learner's own copy of the whole kernel), the run sees the
learner's file as the lesson's kernel: ``COURSE_ROOT`` points at a temporary
shadow of the checkout whose ``kernels/<kernel_file>`` is the learner's
source (everything else is a link to the real checkout). So the host side
reads the kernel's constants (tile sizes, threads per block, the tolerance)
from the learner's version, as the C++ program's own ``main()`` would after
the same edit. With ``--lesson-constants`` (a coding exercise's piece,
spliced into the lesson's kernel, and its grading) there is no shadow:
every constant the launch and the check use comes from the lesson's own
kernel, whatever the piece's text says.

With ``--offline`` it only compile-checks the source without a GPU
(``course.kernel.compile.compile_offline``) and reports ``not-run`` with what
NVRTC said, so a compile that never ends is stopped with this process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, NoReturn

from .sandbox import PROTOCOL_PREFIX, cuda_error_name

Emit = Callable[[dict[str, Any]], None]


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(PROTOCOL_PREFIX + json.dumps(event) + "\n")
    sys.stdout.flush()


def _cuda_errors() -> tuple[type[BaseException], ...]:
    try:
        # heavy: cupy, when a GPU path runs
        import cupy
    except ImportError:
        return ()
    return (cupy.cuda.driver.CUDADriverError, cupy.cuda.runtime.CUDARuntimeError)


_SHADOWS: list[Path] = []


def shadow_root(kernel_file: str, source: str) -> Path:
    """A temporary checkout: links to the real one, with ``kernels/<kernel_file>`` holding ``source``."""
    # in main's try: a failed import is this run's result, sent to the parent
    from .._paths import repo_root

    real = repo_root()
    root = Path(tempfile.mkdtemp(prefix="course-try-root-"))
    _SHADOWS.append(root)
    for entry in real.iterdir():
        if entry.name != "kernels":
            (root / entry.name).symlink_to(entry)
    (root / "kernels").mkdir()
    for entry in (real / "kernels").iterdir():
        if entry.name != kernel_file:
            (root / "kernels" / entry.name).symlink_to(entry)
    (root / "kernels" / kernel_file).write_text(source, encoding="utf-8")
    return root


def offline(lesson_id: str, source_path: Path) -> dict[str, Any]:
    """The compile check without a GPU: ``not-run`` with what it found."""
    # in main's try: a failed import is this run's result, sent to the parent
    from ..errors import CourseError
    from ..kernel.compile import CompileError, compile_offline
    from ..lessons import get_lesson

    lesson = get_lesson(lesson_id)
    source = source_path.read_text(encoding="utf-8")
    try:
        compiled = compile_offline(lesson, source=source, defines=lesson.run_defines)
    except CompileError as e:
        return {"outcome": "compile-error", "log": e.log}
    except CourseError as e:  # NVRTC or the headers missing
        return {"outcome": "not-run", "message": str(e)}
    return {"outcome": "not-run", "compiled": compiled.summary()}


def run(lesson_id: str, source_path: Path, emit: Emit, lesson_constants: bool = False) -> dict[str, Any]:
    """The facts of one run, for ``course.tryout.sandbox._describe``."""
    # in main's try: a failed import is this run's result, sent to the parent
    from ..errors import CourseError
    from ..kernel import gate
    from ..kernel.compile import CompileError, LaunchError, compile_lesson, error_kind
    from ..kernel.host import run_lesson
    from ..lessons import get_lesson

    lesson = get_lesson(lesson_id)
    source = source_path.read_text(encoding="utf-8")
    verdict = gate.verdict(lesson)
    if not verdict.runs:
        return {"outcome": "not-run", "reason": verdict.message()}
    if not lesson_constants:
        os.environ["COURSE_ROOT"] = str(shadow_root(lesson.kernel_file, source))
    try:
        # The lesson run's size (run_defines), as run_lesson compiles it: the workload is that size.
        compiled = compile_lesson(lesson, source=source, defines=lesson.run_defines)
    except CompileError as e:
        return {"outcome": "compile-error", "log": e.log}
    except CourseError as e:  # NVRTC missing, a module this GPU cannot load
        return {"outcome": "crashed", "message": str(e)}
    emit({"event": "compiled", "summary": compiled.summary()})
    cuda_errors = _cuda_errors()
    try:
        result = run_lesson(
            lesson, compiled=compiled, progress=lambda line: emit({"event": "line", "text": line})
        )
    except LaunchError as e:
        return {"outcome": e.kind, "error": e.error, "error_name": cuda_error_name(e.error)}
    except cuda_errors as e:  # raised outside the launch (the check's copy back, an allocation)
        return {"outcome": error_kind(str(e)), "error": str(e), "error_name": cuda_error_name(str(e))}
    except CourseError as e:
        return {"outcome": "crashed", "message": str(e)}
    mismatch = result.check.mismatch
    return {
        "outcome": "passed" if result.passed else "failed-check",
        "line": result.lines[-1],
        "check": result.check.describe(),
        "mismatch": asdict(mismatch) if mismatch is not None else None,
    }


def blocking_sync() -> str | None:
    """Ask CUDA to sleep, not spin, while this process waits for the GPU; None, or why it could not.

    By default a thread waiting in ``cudaDeviceSynchronize`` spins on a core
    while fewer CUDA contexts are active than there are cores (CUDA Driver
    API, ``cuDevicePrimaryCtxSetFlags``: ``CU_CTX_SCHED_AUTO``); a kernel that
    hangs would then hold a core for its whole time limit. Set on the primary
    context before it is made, as ``CU_CTX_SCHED_BLOCKING_SYNC``.
    """
    # in main's try: heavy (cuda-python), and only on the GPU path
    from ..kernel._cuda import checked, driver

    try:
        cu = driver()
        checked(cu.cuInit(0), "cuInit")
        device = checked(cu.cuDeviceGet(0), "cuDeviceGet")
        checked(
            cu.cuDevicePrimaryCtxSetFlags(device, cu.CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC),
            "cuDevicePrimaryCtxSetFlags",
        )
    except Exception as e:  # noqa: BLE001 - spinning is slower, never wrong: the run goes on
        return f"{type(e).__name__}: {e}"
    return None


# A result after which the worker's CUDA context may be unusable (a sticky fault) or in doubt: it leaves.
_KEEPS_GOING = frozenset({"passed", "failed-check", "compile-error"})


def serve(lesson_id: str, emit: Emit, lines: Iterator[str] | None = None) -> None:
    """The grader's worker: one request (a JSON line ``{"id": N, "source": PATH}``) after another.

    Each is compiled, run and checked as ``run`` does with the lesson's
    constants, on buffers of its own (freed before the next), its events
    carrying its ``request`` id; its result also says how much CPU time this
    process has used (``cpu_s``), so the parent can start a fresh worker well
    before the keeper's CPU limit. After any result but a pass, a failed check
    or a compile error (a fault leaves the context unusable), it leaves, and
    the parent starts a new worker for the next request. It leaves at the
    end of its input too.
    """
    # in main's try: a failed import is this run's result, sent to the parent
    import resource

    for line in lines if lines is not None else sys.stdin:
        if not line.strip():
            continue
        request: dict[str, Any] = {}
        try:
            request = json.loads(line)
            number = request["id"]

            def tagged(event: dict[str, Any], number: Any = number) -> None:
                emit({**event, "request": number})

            facts = run(lesson_id, Path(request["source"]), tagged, lesson_constants=True)
        except BaseException as e:  # the parent must get a result whatever happened
            facts = {
                "outcome": "crashed",
                "message": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc()[-4000:],
            }
        _free_buffers()
        used = resource.getrusage(resource.RUSAGE_SELF)
        leaving = facts.get("outcome") not in _KEEPS_GOING
        emit(
            {
                "event": "result",
                **facts,
                "request": request.get("id") if isinstance(request, dict) else None,
                "cpu_s": used.ru_utime + used.ru_stime,
                "leaving": leaving,
            }
        )
        if leaving:
            return


def _free_buffers() -> None:
    """Give the run's GPU memory back, so the next request's buffers are new allocations."""
    try:
        # heavy: cupy, loaded by the run already
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    except Exception:  # noqa: BLE001, S110 - after a fault this fails too; the worker then leaves
        pass


def main(argv: list[str] | None = None) -> NoReturn:
    parser = argparse.ArgumentParser(prog="python -m course.tryout._child")
    parser.add_argument("--lesson", required=True)
    parser.add_argument("--source", type=Path, help="the source to run (all but --serve)")
    parser.add_argument("--offline", action="store_true", help="compile-check only, without a GPU")
    parser.add_argument(
        "--lesson-constants", action="store_true", help="the lesson's constants, not the source's"
    )
    parser.add_argument(
        "--serve", action="store_true", help="the grader's worker: sources read as JSON lines on stdin"
    )
    args = parser.parse_args(argv)
    if not args.serve and args.source is None:
        parser.error("--source is needed (all but --serve)")
    if not args.offline:
        why = blocking_sync()
        if why is not None:
            _emit({"event": "note", "text": f"CUDA will spin while it waits ({why})"})
    if args.serve:
        try:
            serve(args.lesson, _emit)
        except BaseException:  # noqa: BLE001 - each request got its result; nothing more to say
            pass
        sys.stdout.flush()
        os._exit(0)
    try:
        if args.offline:
            facts = offline(args.lesson, args.source)
        else:
            facts = run(args.lesson, args.source, _emit, args.lesson_constants)
    except BaseException as e:  # the parent must get a result whatever happened
        facts = {
            "outcome": "crashed",
            "message": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc()[-4000:],
        }
    _emit({"event": "result", **facts})
    for root in _SHADOWS:
        shutil.rmtree(root, ignore_errors=True)  # removes the links, never what they point at
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
