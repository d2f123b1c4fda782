"""CPU CI compile-checks Day 88's kernel for every head dimension it offers (NVRTC, no GPU)."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson

LESSON = get_lesson("day88")
HEAD_DIMS = (64, 128, 256)


def wgmma_shapes(ptx: str) -> dict[str, int]:
    """How many wgmma.mma_async of each shape (m64nNk16) the PTX issues."""
    counts: dict[str, int] = {}
    for line in ptx.splitlines():
        if "wgmma.mma_async.sync.aligned.m64n" in line:
            shape = line.split("wgmma.mma_async.sync.aligned.")[1].split(".")[0]
            counts[shape] = counts.get(shape, 0) + 1
    return counts


@pytest.mark.parametrize("d", HEAD_DIMS, ids=[f"D{d}" for d in HEAD_DIMS])
def test_every_head_dim_compiles_for_sm90a_without_spills_or_serialized_wgmma(d):
    result = compile_offline(LESSON, defines={"ATTN_HEAD_DIM": d}, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma and not report.injected_waits, report.warnings
    # the wgmma shapes the header promises: S = Q K^T m64n{kBN}k16 (SS), O += P V m64n{D}k16 (RS)
    ptx = result.ptx
    bn = int(LESSON.constants({"ATTN_HEAD_DIM": d})["kBN"])
    assert f"wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.f16.f16" in ptx
    # D / 16 of S = Q K^T (n = kBN) and kBN / 16 of O += P V (n = D), unrolled
    want: dict[str, int] = {f"m64n{bn}k16": d // 16}
    want[f"m64n{d}k16"] = want.get(f"m64n{d}k16", 0) + bn // 16
    assert wgmma_shapes(ptx) == want
    assert "setmaxnreg.inc.sync.aligned.u32 232" in ptx and "setmaxnreg.dec.sync.aligned.u32 40" in ptx


@pytest.mark.parametrize("d", HEAD_DIMS, ids=[f"D{d}" for d in HEAD_DIMS])
def test_the_shared_memory_budget_is_q_and_two_stages_of_k_and_v(d):
    c = LESSON.constants({"ATTN_HEAD_DIM": d})
    assert c["kHeadDim"] == d and c["kChunks"] == d // 64
    # 128 key rows per tile, 64 at D = 256, where 128 would need 64 + 2 x 128 KiB
    assert c["kBN"] == (64 if d == 256 else 128)
    tiles = c["kBM"] * d * 2 + c["kStages"] * 2 * c["kBN"] * d * 2
    assert c["kSmemBytes"] == tiles + 1024 + 1024 <= 227 * 1024
    assert (c["kBM"], c["kThreadsPerBlock"], c["kStages"]) == (128, 384, 2)
    # the per-thread accumulators: S is 64 x kBN, O is 64 x D, over 128 threads
    assert c["kSAccRegs"] == 64 * c["kBN"] // 128 and c["kOAccRegs"] == 64 * d // 128


def test_a_head_dim_the_kernel_does_not_build_is_refused_at_compile_time():
    from course.kernel.compile import CompileError

    with pytest.raises(CompileError, match="ATTN_HEAD_DIM is 64, 128 or 256"):
        compile_offline(LESSON, defines={"ATTN_HEAD_DIM": 96})


@pytest.mark.parametrize("d", (128, 256), ids=["D128", "D256"])
def test_the_split_pv_build_issues_only_n64_wgmmas_for_p_v_without_spills(d):
    flags = {"ATTN_HEAD_DIM": d, "ATTN_PV_SPLIT": 1}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma and not report.injected_waits, report.warnings
    c = LESSON.constants(flags)
    bn = int(c["kBN"])
    counts = wgmma_shapes(result.ptx)
    # S = Q K^T: D / 16 SS wgmmas m64n{kBN}; O += P V: kBN / 16 slices x D / 64 chunks, all m64n64
    want: dict[str, int] = {f"m64n{bn}k16": d // 16}
    want["m64n64k16"] = want.get("m64n64k16", 0) + bn // 16 * d // 64
    assert counts == want
    assert result.cubin != compile_offline(LESSON, defines={"ATTN_HEAD_DIM": d}).cubin


def test_a_third_stage_fits_at_d128_and_is_refused_at_d256():
    from course.kernel.compile import CompileError

    flags = {"ATTN_HEAD_DIM": 128, "ATTN_STAGES": 3}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert LESSON.constants(flags)["kSmemBytes"] == 32768 + 3 * 2 * 32768 + 2048 == 231424
    with pytest.raises(CompileError, match="per-block shared memory ceiling"):
        compile_offline(LESSON, defines={"ATTN_HEAD_DIM": 256, "ATTN_STAGES": 3})
