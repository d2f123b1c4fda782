"""Dependent launches under compute-sanitizer (session 22): Day 86's pick at 512^3 and a split-3 ragged
shape, and Day 87's promoting build at a ragged shape, each launched dependent four times back to back
on one buffer set, then checked. Run as ``compute-sanitizer --tool memcheck python3 pdl39_sanitize.py``
(and racecheck, synccheck). ``PDL_LATE=1`` (session 24) sanitizes the builds with ``-DGEMM_PDL_LATE=1``
(the trigger after the last load, ``pdllate39.py``)."""

from __future__ import annotations

import os

import cupy as cp

from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons.day87.chooser import PROMOTE_BUILD

CASES = [
    ("day86", (512, 512, 512), {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1}, 1),
    ("day86", (1000, 1032, 520), {"GEMM_BN": 256, "GEMM_CLUSTER": 2}, 3),
    ("day86", (5, 1032, 520), {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_A_ROWS": 8}, 3),  # session 24
    ("day87", (1000, 1032, 528), PROMOTE_BUILD, None),
]
LATE = {"GEMM_PDL_LATE": 1} if os.environ.get("PDL_LATE") == "1" else {}
for lesson_id, shape, flags, split in CASES:
    flags = {**flags, **LATE}
    lesson = get_lesson(lesson_id)
    options = {"shape": shape} | ({"split": split} if split else {})
    w = host_of(lesson).workload(compile_lesson(lesson, defines=flags), max(shape), 2, "bench", **options)
    w.poison(0)
    for i in range(4):
        w.launch(i % 2, None, True)
    cp.cuda.Device().synchronize()
    check = w.check(w.out(0))
    print(lesson_id, shape, flags, split, "PASS" if check.passed else "FAIL", check.max_error, flush=True)
    assert check.passed
