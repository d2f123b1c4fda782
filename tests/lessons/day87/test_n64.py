"""Issue 40's small sizes: the 128 x 64 build of Day 87's kernel (-DGEMM_BN=64, m64n64k32; kernels/gemm8_fp8.cu,
region "wgmma-n64"), twice the CTAs of the 128 x 128 build where a problem has too few tiles to fill the SMs.

On the CPU: it compiles (NVRTC) without spills in every combination it is built in (cluster 1 and 2,
promoting or not), its constants are what the host reads (the ring, one D box a consumer, the shared
memory), and the existing builds keep theirs. On a Hopper GPU (marked ``gpu``; skipped here): it is
exact on ragged shapes at P = 0, 1, 3 against float64, and its D is the 128 x 128 build's bit for bit
(the same wgmma K order for every element). First run on an H100 in session 16
(evidence/gemm_dev/notes_n64fp8.md).
"""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_lesson, compile_offline
from course.kernel.host import run_lesson
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._fp8 import build_for, grid_for

LESSON = get_lesson("day87")
N64 = {"GEMM_BN": 64, "GEMM_CLUSTER": 1}
BUILDS = [N64, {"GEMM_BN": 64}, {**N64, "GEMM_PROMOTE": 1}, {"GEMM_BN": 64, "GEMM_PROMOTE": 1}]
IDS = ["c1", "c2", "c1-promote", "c2-promote"]


@pytest.mark.parametrize("flags", BUILDS, ids=IDS)
def test_it_compiles_without_spills_or_wgmma_serialization(flags):
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma and not any("C75" in w for w in report.warnings), result.log
    assert report.registers == 168  # the launch bound's ceiling at 384 threads; setmaxnreg 40 / 232


def test_its_constants_are_the_hosts():
    c = LESSON.constants(N64)
    assert (c["kBM"], c["kBN"], c["kClusterM"], c["kAccRegs"], c["kThreadsPerBlock"]) == (128, 64, 1, 32, 384)
    assert (c["kStagingBoxes"], c["kPasses"], c["kProducerRegs"], c["kConsumerRegs"]) == (1, 1, 40, 232)
    # a stage is 16 KiB of A and 8 KiB of B: eight in 192 KiB, beside 16 KiB of D staging
    assert (c["kStageBytes"], c["kStages"]) == (24576, 8)
    assert c["kSmemBytes"] == 8 * 24576 + 2 * 8192 + 1024 + 1024 == 215040
    assert LESSON.constants({"GEMM_BN": 64})["kBoxBRows"] == 32  # cluster 2: four 8-row atoms a CTA
    build = build_for(LESSON, N64)
    assert (build.bm, build.bn, build.cluster, build.promote) == (128, 64, 1, 0)
    assert grid_for(1024, 1024, build, 132) == 128  # 8 x 16 tiles: one CTA each, 128 of 132 SMs


def test_the_other_builds_keep_their_rings_and_registers():
    for flags, stages, staging, producer in (
        ({}, 4, 2, 40),
        ({"GEMM_BN": 128, "GEMM_CLUSTER": 1}, 6, 2, 40),
        ({"GEMM_BN": 192, "GEMM_PROMOTE": 1}, 5, 1, 24),
        ({"GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_BM": 192}, 5, 1, 24),
    ):
        c = LESSON.constants(flags)
        assert (c["kStages"], c["kStagingBoxes"], c["kProducerRegs"]) == (stages, staging, producer), flags


GPU_SHAPES = [(200, 136, 128), (1000, 1032, 528), (130, 392, 1104), (2304, 2504, 768), (72, 8, 16)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("flags", BUILDS, ids=IDS)
def test_it_is_exact_on_ragged_shapes(gpu_for, flags):
    gpu_for("day87")
    compiled = compile_lesson(LESSON, defines=flags)
    for shape in GPU_SHAPES:
        for every in (0, 1, 3) if flags.get("GEMM_PROMOTE") else (0,):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, promote_every=every
            )
            assert result.passed, (flags, shape, every, result.lines)
            assert result.check.total == shape[0] * shape[1]


@pytest.mark.gpu
@pytest.mark.hopper
def test_its_d_is_the_128x128_builds_bit_for_bit(gpu_for):
    gpu_for("day87")
    import cupy as cp

    from course.lessons.day87.host import HOST

    mine_c = compile_lesson(LESSON, defines=N64)
    base_c = compile_lesson(LESSON, defines={"GEMM_BN": 128, "GEMM_CLUSTER": 1})
    for shape in [(1000, 1032, 528), (1024, 1024, 1024), (130, 392, 1104)]:
        mine = HOST.workload(mine_c, 1024, 1, "bench", shape=shape)
        base = HOST.workload(base_c, 1024, 1, "bench", shape=shape)
        for work in (mine, base):
            work.poison(0)
            work.launch(0)
        cp.cuda.runtime.deviceSynchronize()
        assert mine.check(mine.out(0)).passed, shape
        same = cp.asarray(mine.out(0)).view(cp.uint16) == cp.asarray(base.out(0)).view(cp.uint16)
        assert bool(same.all()), (shape, int((~same).sum()))
