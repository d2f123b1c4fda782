"""GPU fault paths, run on a real GPU: each ends in a clear message and the next run works.

Run from the repo root on the GPU machine: python3 tools/fault_paths.py
Prints what happened for each path; exits 1 if any path raised something
other than a CourseError, or if the run after it did not pass.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from course.errors import CourseError
from course.kernel.compile import compile_lesson
from course.kernel.host import run_lesson
from course.lessons import get_lesson
from course.page import Page

failures = 0


def attempt(title: str, fn) -> None:
    global failures
    print(f"--- {title}")
    try:
        fn()
        print("no error raised")
    except CourseError as e:
        print(f"{type(e).__name__}: {str(e)[:1200]}")
    except Exception as e:  # this script reports anything unexpected
        failures += 1
        print(f"UNEXPECTED {type(e).__module__}.{type(e).__name__}: {e}")
    after = run_lesson(get_lesson("day76"), progress=lambda s: None)
    print(f"next run: {after.lines[-1]}")
    if not after.passed:
        failures += 1


def broken_kernel() -> None:
    root = Path(tempfile.mkdtemp())
    shutil.copytree("kernels", root / "kernels")
    k = root / "kernels" / "tma_tile.cu"
    k.write_text(k.read_text().replace("bar.wait(cuda::std::move(token));", "bar.wait(token_typo);"))
    os.environ["COURSE_ROOT"] = str(root)
    try:
        compile_lesson(get_lesson("day76"))
    finally:
        del os.environ["COURSE_ROOT"]


attempt("a kernel that does not compile", broken_kernel)
attempt("the GEMM built for plain sm_90 (wrong architecture)", lambda: compile_lesson(get_lesson("day78"), arch="sm_90"))
attempt("the TMA kernel built for sm_100a and loaded on this GPU", lambda: compile_lesson(get_lesson("day76"), arch="sm_100a"))
attempt("a launch asking for 400 KiB of dynamic shared memory", lambda: run_lesson(get_lesson("day76"), shared_mem=400 * 1024, progress=lambda s: None))
attempt("a launch with 2048 threads per block", lambda: compile_lesson(get_lesson("day78")).launch((1, 1), (2048,), ()))
print("--- the page goes on after a refused launch (a learner's page: COURSE_REQUIRE_GPU unset)")
os.environ.pop("COURSE_REQUIRE_GPU", None)
page = Page("day76")
result = page.run(shared_mem=400 * 1024)
print(f"page.run returned {type(result).__name__}; then:")
again = page.run()
print(f"page.run again: passed={getattr(again, 'passed', None)}")
print("--- day78 still passes")
print(run_lesson(get_lesson("day78"), progress=lambda s: None).lines[-1])
print(f"fault paths: {failures} unexpected")
sys.exit(1 if failures else 0)
