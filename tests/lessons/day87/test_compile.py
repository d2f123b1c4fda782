"""CPU CI compile-checks Day 87's kernel for every build (NVRTC, no GPU), and refuses the one that cannot fit."""

from __future__ import annotations

import pytest

from course.kernel.compile import CompileError, compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson

LESSON = get_lesson("day87")
# (BN, cluster, promote, block scales)
BUILDS = [
    (256, 2, 0, 0),
    (256, 1, 0, 0),
    (128, 2, 0, 0),
    (128, 1, 0, 0),
    (128, 2, 1, 0),
    (128, 1, 1, 0),
    (128, 2, 1, 1),
]


@pytest.mark.parametrize(
    ("bn", "cluster", "promote", "block"), BUILDS, ids=[f"128x{b}-c{c}-p{p}-b{s}" for b, c, p, s in BUILDS]
)
def test_every_build_compiles_for_sm90a_without_spills(bn, cluster, promote, block):
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_PROMOTE": promote, "GEMM_BLOCK_SCALES": block}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    c = LESSON.constants(flags)
    assert (c["kBN"], c["kClusterM"], c["kPromote"], c["kBoxBRows"]) == (bn, cluster, promote, bn // cluster)
    assert c["kBlockScales"] == block
    assert c["kStages"] == (4 if bn == 256 else 6)


def test_a_promoting_256_wide_build_is_refused_by_the_file_itself():
    with pytest.raises(CompileError, match="two accumulators per thread"):
        compile_offline(LESSON, defines={"GEMM_BN": 256, "GEMM_PROMOTE": 1})


@pytest.mark.parametrize("flags", [{"GEMM_BLOCK_SCALES": 1}, {"GEMM_BN": 128, "GEMM_BLOCK_SCALES": 1}])
def test_block_scales_without_the_promoting_128_wide_build_are_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="block scales are applied at promotion"):
        compile_offline(LESSON, defines=flags)


# The ping-pong promoting build (GEMM_PROMOTE_PINGPONG=1): 64 x 128 tiles, one consumer each, chains in
# turns (course/lessons/day87/pingpong.py models the order). Not in BUILDS: the page shows no number
# for it yet, and its ring is 8 stages of 64 rows.
PINGPONG = {"GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_PINGPONG": 1}


@pytest.mark.parametrize("cluster", [2, 1])
def test_the_pingpong_build_compiles_without_spills_or_wgmma_serialization(cluster):
    flags = {**PINGPONG, "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log
    c = LESSON.constants(flags)
    assert (c["kBM"], c["kBoxARows"], c["kStages"], c["kStageReaders"], c["kPingpong"]) == (64, 64, 8, 1, 1)
    assert c["kSmemBytes"] == LESSON.constants({})["kSmemBytes"]  # the same shared memory as every build


@pytest.mark.parametrize(
    "flags",
    [
        {"GEMM_PROMOTE_PINGPONG": 1},
        {"GEMM_BN": 128, "GEMM_PROMOTE_PINGPONG": 1},
        {**PINGPONG, "GEMM_BLOCK_SCALES": 1},
    ],
)
def test_a_pingpong_build_that_is_not_the_promoting_128_wide_one_is_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="the ping-pong build is a promoting build"):
        compile_offline(LESSON, defines=flags)


def test_ptxas_serializes_two_chain_accumulators_each_read_after_the_others_wait_group_1():
    # Why the ping-pong build takes turns by chains (its "pingpong-order" comment): a consumer cannot
    # promote its own previous chain beside its next one. Reduced kernels, evidence/gemm_dev/fp8pp/.
    folder = LESSON.kernel_path.parents[1] / "evidence" / "gemm_dev" / "fp8pp"
    both, one = (
        parse(compile_offline(LESSON, source=(folder / f).read_text(), ptxas_verbose=True).log, "k")
        for f in ("c7514_both_reads.cu", "c7514_one_read.cu")
    )
    assert both.serialized_wgmma and any("C7514" in w for w in both.warnings)
    assert not one.serialized_wgmma and not one.spills


# The larger promoting tiles (issue 40): 192 x 128 with three consumer warpgroups of 64 x 128
# (GEMM_BM=192, 512 threads) and 128 x 192 with two consumers of 64 x 192 on m64n192k32 (GEMM_BN=192).
# Not in BUILDS: no GPU has run them yet (evidence/gemm_dev/notes_fp8wide.md).
WIDE = {
    "192x128": ({"GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_BM": 192}, (192, 128, 3, 512, 128, 160, 64)),
    "128x192": ({"GEMM_BN": 192, "GEMM_PROMOTE": 1}, (128, 192, 2, 384, 168, 240, 96)),
}


@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(WIDE))
def test_the_larger_promoting_tiles_compile_without_spills_or_wgmma_serialization(name, cluster):
    defines, (bm, bn, consumers, threads, launch_regs, consumer_regs, acc_regs) = WIDE[name]
    flags = {**defines, "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log
    assert not any(w.startswith("ptxas info") and "C75" in w for w in report.warnings), result.log
    c = LESSON.constants(flags)
    assert (c["kBM"], c["kBN"], c["kConsumers"], c["kThreadsPerBlock"]) == (bm, bn, consumers, threads)
    assert (c["kStageReaders"], c["kAccRegs"], c["kBoxARows"], c["kBoxBRows"]) == (
        consumers,
        acc_regs,
        bm,
        bn // cluster,
    )
    # ptxas gives the kernel the launch bound's ceiling; setmaxnreg only moves registers inside the
    # CTA's pool of threads x that, so the producer's 24 and the consumers' ceilings must fit it
    assert report.registers == launch_regs == 65536 // threads // 8 * 8
    assert (c["kProducerRegs"], c["kConsumerRegs"]) == (24, consumer_regs)
    assert 128 * (c["kProducerRegs"] + consumers * c["kConsumerRegs"]) <= threads * launch_regs
    # a stage is 40 KiB (A 24 + B 16, or A 16 + B 24): five of them beside one D box per consumer
    assert c["kStageBytes"] == 40 * 1024 and c["kStages"] == 5 and c["kStagingBoxes"] == 1
    assert c["kPasses"] * 64 == bn
    assert c["kSmemBytes"] == 5 * 40 * 1024 + consumers * 64 * 64 * 2 + 1024 + 1024 <= 227 * 1024


def test_the_existing_builds_keep_their_registers_stages_and_shared_memory():
    # The file's constants became expressions for the larger tiles; the builds the page shows keep
    # their values (and, NVRTC emitting every namespace-scope constant into the cubin, no constant
    # was added: their cubins are byte-identical to before, evidence/gemm_dev/fp8wide/).
    for flags, stages in (
        ({}, 4),
        ({"GEMM_BN": 128}, 6),
        ({"GEMM_BN": 128, "GEMM_PROMOTE": 1}, 6),
        (PINGPONG, 8),
    ):
        c = LESSON.constants(flags)
        assert (c["kThreadsPerBlock"], c["kProducerRegs"], c["kConsumerRegs"]) == (384, 40, 232), flags
        assert (c["kStages"], c["kStagingBoxes"], c["kSmemBytes"], c["kRingBytes"]) == (
            stages,
            2,
            231424,
            196608,
        ), flags


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        ({"GEMM_BM": 192}, "the 192-row build"),
        ({"GEMM_BM": 192, "GEMM_BN": 128}, "the 192-row build"),
        ({"GEMM_BM": 192, "GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_BLOCK_SCALES": 1}, "the 192-row build"),
        (
            {"GEMM_BM": 192, "GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_PINGPONG": 1},
            "the 192-row build",
        ),
        ({"GEMM_BN": 192}, "the 192-column build"),
        ({"GEMM_BN": 192, "GEMM_PROMOTE": 1, "GEMM_BM": 192}, "the 192-column build"),
        ({"GEMM_BN": 192, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_PINGPONG": 1}, "the 192-column build"),
        ({"GEMM_BN": 96}, "GEMM_BN is 256, 192, 128 or 64"),
        ({"GEMM_BM": 256, "GEMM_BN": 128, "GEMM_PROMOTE": 1}, "GEMM_BM is 128"),
    ],
)
def test_a_larger_tile_that_is_not_a_plain_promoting_build_is_refused_by_the_file_itself(flags, words):
    with pytest.raises(CompileError, match=words):
        compile_offline(LESSON, defines=flags)
