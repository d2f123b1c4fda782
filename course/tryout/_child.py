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
from collections.abc import Callable
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


def main(argv: list[str] | None = None) -> NoReturn:
    parser = argparse.ArgumentParser(prog="python -m course.tryout._child")
    parser.add_argument("--lesson", required=True)
    parser.add_argument("--source", required=True, type=Path)
    parser.add_argument("--offline", action="store_true", help="compile-check only, without a GPU")
    parser.add_argument(
        "--lesson-constants", action="store_true", help="the lesson's constants, not the source's"
    )
    args = parser.parse_args(argv)
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
