"""CPU CI compile-checks Day 87's kernel for every build (NVRTC, no GPU), and refuses the one that cannot fit."""

from __future__ import annotations

import pytest

from course.kernel.compile import CompileError, compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson

LESSON = get_lesson("day87")
BUILDS = [(256, 2, 0), (256, 1, 0), (128, 2, 0), (128, 2, 1), (128, 1, 1)]


@pytest.mark.parametrize(
    ("bn", "cluster", "promote"), BUILDS, ids=[f"128x{b}-c{c}-p{p}" for b, c, p in BUILDS]
)
def test_every_build_compiles_for_sm90a_without_spills(bn, cluster, promote):
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_PROMOTE": promote}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    c = LESSON.constants(flags)
    assert (c["kBN"], c["kClusterM"], c["kPromote"], c["kBoxBRows"]) == (bn, cluster, promote, bn // cluster)
    assert c["kStages"] == (4 if bn == 256 else 6)


def test_a_promoting_256_wide_build_is_refused_by_the_file_itself():
    with pytest.raises(CompileError, match="two accumulators per thread"):
        compile_offline(LESSON, defines={"GEMM_BN": 256, "GEMM_PROMOTE": 1})
