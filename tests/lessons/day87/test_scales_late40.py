"""Issue 40: the block-scaled build loading each K-tile's scales right after the promotion before it
(-DGEMM_SCALES_LATE=1, kernels/gemm8_fp8.cu region "scales-late"), alone and with the turns, and walking
the scales by pointer adds (-DGEMM_SCALES_LATE=2).

The CPU tests compile it (NVRTC) and check the refusals and that the chooser never picks it (the SASS
reading, no copy of a scale load's register between a K-tile's wgmmas, was made with nvdisasm, which the
course does not ship: evidence/gemm_dev/notes_turns40.md); the GPU test (skipped without one) checks it on ragged
shapes against float64 and D bit for bit against the block-scaled build (the same scales, the same FFMAs
in the same order: only the moment each load is issued moves). Since session 21 the block-scaled build
walks its scales as late2 does, the same cubin (tested here).
"""

from __future__ import annotations

import pytest

from course.kernel.compile import CompileError, compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._fp8 import build_for
from course.lessons.day87 import bench, chooser
from tests.lessons.day87.dev_gpu import assert_exact_and_bit_for_bit

LESSON = get_lesson("day87")
NEW = {"late": chooser.LATE_BUILD, "lateturns": chooser.LATETURNS_BUILD, "late2": chooser.LATE2_BUILD}


@pytest.mark.parametrize("name", list(NEW))
def test_it_is_the_block_scaled_build_with_the_flag_and_launched_as_it(name):
    assert NEW[name]["GEMM_SCALES_LATE"] in (1, 2) and NEW[name]["GEMM_BLOCK_SCALES"] == 1
    assert build_for(LESSON, NEW[name]) == build_for(LESSON, chooser.BLOCK_BUILD)


@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_compiles_without_spills_or_wgmma_serialization(cluster, name):
    result = compile_offline(LESSON, defines={**NEW[name], "GEMM_CLUSTER": cluster}, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log


@pytest.mark.parametrize("cluster", [2, 1])
def test_the_block_scaled_build_is_the_pointer_walk_byte_for_byte(cluster):
    # Session 21 moved late2's pointer walk into the snippets "block-scales" and "consumer": the block-scaled
    # build is late2's program (so its H100 checks and timings of session 21 are the block-scaled build's),
    # and late, which loads through the K-tile-indexed addresses, is another.
    block = compile_offline(LESSON, defines={**chooser.BLOCK_BUILD, "GEMM_CLUSTER": cluster}).cubin
    assert block == compile_offline(LESSON, defines={**chooser.LATE2_BUILD, "GEMM_CLUSTER": cluster}).cubin
    assert block != compile_offline(LESSON, defines={**chooser.LATE_BUILD, "GEMM_CLUSTER": cluster}).cubin


@pytest.mark.parametrize(
    "flags",
    [
        {**chooser.PROMOTE_BUILD, "GEMM_SCALES_LATE": 1},  # no block scales
        {**chooser.BLOCK_BUILD, "GEMM_PROMOTE_STAGGER": 1, "GEMM_SCALES_LATE": 1},
        {**chooser.BLOCK_BUILD, "GEMM_SCALES_LATE": 3},
    ],
    ids=["promoting", "stagger", "three"],
)
def test_other_combinations_are_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="the late block scales|the staggered-promotion build"):
        compile_offline(LESSON, defines=flags)


def test_the_chooser_never_picks_it_and_the_bench_times_it_only_when_asked(monkeypatch):
    for n in (256, 1024, 4096, 16384):
        for sms in (114, 132):
            assert "GEMM_SCALES_LATE" not in chooser.choose(n, n, sms)
            assert "GEMM_SCALES_LATE" not in chooser.promoting(n, n, sms)
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert not set(NEW) & set(bench.dev_builds())
    monkeypatch.setenv(bench.PINGPONG_ENV, ",".join(NEW))
    assert bench.dev_builds() == tuple(NEW)


GPU_SHAPES = [(200, 136, 128), (1000, 1032, 528), (130, 392, 1104), (1400, 2504, 400), (1, 8, 1008)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_is_exact_on_ragged_shapes_and_bit_for_bit_the_block_scaled_build(gpu_for, cluster, name):
    gpu_for("day87")
    assert_exact_and_bit_for_bit(NEW[name], chooser.BLOCK_BUILD, cluster, GPU_SHAPES)
