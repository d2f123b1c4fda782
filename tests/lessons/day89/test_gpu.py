"""Day 89 on a Hopper GPU: every head dimension, ragged and whole S, causal or not, O and LSE
against float64; random normal inputs at the benchmark's shape; launches repeat bit for bit; and
the ping-pong kernel's O against Day 88's on the same buffers.

None of these has run yet (written without a GPU, 2026-12-05): evidence/gemm_dev/day89_gpu.sh
runs them."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_lesson
from course.kernel.host import host_of, run_lesson
from course.lessons import get_lesson

LESSON = get_lesson("day89")
# S: whole tiles, a ragged key tile, a single row, one past a tile, long and ragged.
SHAPES = [(1, 2, 128), (1, 2, 1000), (2, 3, 1), (1, 2, 129), (2, 4, 4096), (2, 16, 4097)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("d", [64, 128, 256], ids=["D64", "D128", "D256"])
@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_every_head_dim_is_right_on_every_shape(gpu_for, d, causal):
    gpu_for("day89")
    compiled = compile_lesson(LESSON, defines={"ATTN_HEAD_DIM": d})
    for b, h, s in SHAPES:
        result = run_lesson(
            LESSON, compiled=compiled, progress=lambda line: None, shape=(b, h, s, d), causal=causal
        )
        assert result.passed, (d, causal, (b, h, s), result.lines)
        kind = "causal" if causal else "non-causal"
        assert f"attn89 B={b} H={h} S={s} D={d} {kind}: PASS" in result.lines[-1]
        assert result.check.total == b * h * s  # the LSE check, the second, covers every row


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_random_normal_inputs_at_the_benchmarks_shape_match_float64(gpu_for, causal):
    gpu_for("day89")
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
    gpu_for("day89")
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
@pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
def test_day_88s_kernel_on_the_same_buffers_is_right_too(gpu_for, causal):
    # The benchmark's Day 88 peer: Day 88's build launched through this workload (same contract).
    # Each consumer's arithmetic is Day 88's, in the same order; both must pass the same check.
    gpu_for("day89")
    import cupy as cp

    work = host_of(LESSON).workload(
        compile_lesson(LESSON), 1000, 1, "bench", shape=(1, 16, 2048, 128), causal=causal
    )
    for compiled in (None, compile_lesson(get_lesson("day88"))):
        work.poison(0)
        work.launch(0, compiled)
        cp.cuda.get_current_stream().synchronize()
        assert work.check(work.out(0)).passed, compiled
