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
