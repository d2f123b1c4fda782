"""CPU CI compile-checks Day 86's kernel for every build the chooser can pick (NVRTC, no GPU)."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons.day86 import chooser

LESSON = get_lesson("day86")


@pytest.mark.parametrize(
    ("bn", "cluster"), chooser.CONFIGS, ids=[f"128x{b}-c{c}" for b, c in chooser.CONFIGS]
)
def test_every_build_compiles_for_sm90a_without_spills(bn, cluster):
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    # the build's constants are the ones the host reads for it
    c = LESSON.constants(flags)
    assert (c["kBN"], c["kClusterM"], c["kBoxBRows"]) == (bn, cluster, bn // cluster)


def test_the_chooser_picks_only_builds_that_are_compile_checked():
    picked = {
        (chooser.choose(*s, sms).bn, chooser.choose(*s, sms).cluster)
        for s in chooser.SHAPES
        for sms in (8, 78, 114, 132)
    }
    assert picked <= set(chooser.CONFIGS)
    flags = {
        tuple(sorted(chooser.defines(chooser.choose(*s, sms, deterministic=det)).items()))
        for s in chooser.SHAPES
        for sms in (8, 78, 114, 132)
        for det in (False, True)
    }
    checked = {tuple(sorted(f.items())) for f in BUILDS}
    assert flags <= checked


# Every build the chooser can pick: the six tiles and clusters, each with split-K's sums in arrival
# order (the default) and in split order (-DGEMM_DETERMINISTIC=1).
BUILDS = [
    {"GEMM_BN": bn, "GEMM_CLUSTER": cluster, **({"GEMM_DETERMINISTIC": 1} if det else {})}
    for bn, cluster in chooser.CONFIGS
    for det in (False, True)
]


@pytest.mark.parametrize(
    ("bn", "cluster"), chooser.CONFIGS, ids=[f"128x{b}-c{c}" for b, c in chooser.CONFIGS]
)
def test_every_deterministic_build_compiles_and_differs_from_the_default(bn, cluster):
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cluster}
    det = compile_offline(LESSON, defines={**flags, "GEMM_DETERMINISTIC": 1}, ptxas_verbose=True)
    report = parse(det.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, det.log
    assert LESSON.constants({**flags, "GEMM_DETERMINISTIC": 1})["kDeterministic"] == 1
    # the define reaches the code: the reduction is another program
    assert det.cubin != compile_offline(LESSON, defines=flags).cubin
