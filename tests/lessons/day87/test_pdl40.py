"""Programmatic dependent launch of Day 87's kernel (session 22), as Day 86's (tests/lessons/day86/test_pdl39.py; the checks both use are tests/lessons/dependent_launch.py):
the wait comes before every global access in each build the page and the bench run, and on a Hopper GPU
(marked ``gpu``) chains of dependent launches on one buffer set, with other promotion intervals between
them, leave D exact and bit for bit the first launch's."""

from __future__ import annotations

import pytest

from course.lessons import get_lesson
from course.lessons.day87.chooser import BLOCK_BUILD, PINGPONG_BUILD, PROMOTE_BUILD, WIDE_BUILD
from tests.lessons.dependent_launch import assert_still_exact, assert_waits_before_global_memory, first_result

LESSON = get_lesson("day87")
BUILDS = {
    "never (128x256 c2)": WIDE_BUILD,
    "never (128x128 c1)": {"GEMM_BN": 128, "GEMM_CLUSTER": 1},
    "promoting": PROMOTE_BUILD,
    "block scales": BLOCK_BUILD,
    "ping-pong": PINGPONG_BUILD,
}


@pytest.mark.parametrize("flags", list(BUILDS.values()), ids=list(BUILDS))
def test_every_build_waits_on_the_grid_before_its_first_global_access(flags):
    assert_waits_before_global_memory(LESSON, flags)


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    "flags", [PROMOTE_BUILD, BLOCK_BUILD, WIDE_BUILD], ids=["promoting", "block", "never"]
)
def test_chains_of_dependent_launches_on_one_buffer_set_stay_exact(gpu_for, flags):
    from course.kernel.compile import compile_lesson
    from course.kernel.host import host_of

    gpu_for("day87")
    shape = (1000, 1032, 528)
    w = host_of(LESSON).workload(compile_lesson(LESSON, defines=flags), max(shape), 3, "bench", shape=shape)
    first = first_result(w)
    promoting = "GEMM_PROMOTE" in flags and "GEMM_BLOCK_SCALES" not in flags
    for i in range(24):
        if promoting and i % 4 == 1:
            w.launch_every(i % w.sets or 1, 3)  # another interval, dependent too, on another set
        else:
            w.launch(0 if i % 3 == 0 else i % w.sets)
    assert_still_exact(w, first, bits=True)
