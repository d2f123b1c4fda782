"""Day 88 on a Hopper GPU: every head dimension, ragged and whole S, causal or not, O and LSE
against float64; random normal inputs at the benchmark's shape; launches repeat bit for bit.

None of these has run yet (written without a GPU, 2026-12-05): the next GPU session runs them
(evidence/gemm_dev/day88_gpu.sh)."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_lesson
from course.kernel.host import host_of, run_lesson
from course.lessons import get_lesson

LESSON = get_lesson("day88")
# S: whole tiles, a ragged key tile, a single row, one past a tile, long and ragged.
SHAPES = [(1, 2, 128), (1, 2, 1000), (2, 3, 1), (1, 2, 129), (2, 4, 4096), (2, 16, 4097)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("d", [64, 128, 256], ids=["D64", "D128", "D256"])
@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_every_head_dim_is_right_on_every_shape(gpu_for, d, causal):
    gpu_for("day88")
    compiled = compile_lesson(LESSON, defines={"ATTN_HEAD_DIM": d})
    for b, h, s in SHAPES:
        result = run_lesson(
            LESSON, compiled=compiled, progress=lambda line: None, shape=(b, h, s, d), causal=causal
        )
        assert result.passed, (d, causal, (b, h, s), result.lines)
        kind = "causal" if causal else "non-causal"
        assert f"attn88 B={b} H={h} S={s} D={d} {kind}: PASS" in result.lines[-1]
        assert result.check.total == b * h * s  # the LSE check, the second, covers every row


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_random_normal_inputs_at_the_benchmarks_shape_match_float64(gpu_for, causal):
    gpu_for("day88")
    import cupy as cp

    compiled = compile_lesson(LESSON)
    work = host_of(LESSON).workload(compiled, 4096, 1, "bench", causal=causal)
    work.poison(0)
    work.launch(0)
    cp.cuda.get_current_stream().synchronize()
    check = work.check(work.out(0))
    assert check.passed, check
    lse = work.lse[0] - work.want_lse().astype(cp.float32)
    assert float(cp.abs(lse).max()) < 1e-3


@pytest.mark.gpu
@pytest.mark.hopper
def test_launches_repeat_bit_for_bit(gpu_for):
    gpu_for("day88")
    import cupy as cp

    compiled = compile_lesson(LESSON)
    work = host_of(LESSON).workload(compiled, 1000, 1, "bench", shape=(2, 16, 1000, 128), causal=True)
    runs = []
    for _ in range(5):
        work.poison(0)
        work.launch(0)
        cp.cuda.get_current_stream().synchronize()
        runs.append(
            (cp.asnumpy(work.o[0]).view("uint16").copy(), cp.asnumpy(work.lse[0]).view("uint32").copy())
        )
    for o, lse in runs[1:]:
        assert (o == runs[0][0]).all() and (lse == runs[0][1]).all()


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("d", [128, 256], ids=["D128", "D256"])
def test_the_split_pv_build_is_right_too(gpu_for, d):
    # O += P V as one n64 wgmma per 64-column chunk of V: V's descriptor never uses its leading byte
    # offset. If this passes where the default build fails, the LBO of mnMajorDesc is wrong.
    gpu_for("day88")
    compiled = compile_lesson(LESSON, defines={"ATTN_HEAD_DIM": d, "ATTN_PV_SPLIT": 1})
    for b, h, s in SHAPES[:4]:
        for causal in (False, True):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=(b, h, s, d), causal=causal
            )
            assert result.passed, (d, causal, (b, h, s), result.lines)
