"""CPU CI compile-checks Day 88's kernel for every head dimension it offers (NVRTC, no GPU)."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson

LESSON = get_lesson("day88")
HEAD_DIMS = (64, 128, 256)


@pytest.mark.parametrize("d", HEAD_DIMS, ids=[f"D{d}" for d in HEAD_DIMS])
def test_every_head_dim_compiles_for_sm90a_without_spills_or_serialized_wgmma(d):
    result = compile_offline(LESSON, defines={"ATTN_HEAD_DIM": d}, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma and not report.injected_waits, report.warnings
    # the wgmma shapes the header promises: S = Q K^T m64n{kBN}k16 (SS), O += P V m64n{D}k16 (RS)
    ptx = result.ptx
    bn = LESSON.constants({"ATTN_HEAD_DIM": d})["kBN"]
    assert f"wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.f16.f16" in ptx
    assert f"wgmma.mma_async.sync.aligned.m64n{d}k16.f32.f16.f16" in ptx
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
