"""The GPU checks every attention kernel (Days 88, 89, 90) passes, written once: every head dimension,
ragged and whole S, causal or not, O and LSE against float64; random normal inputs at the
benchmark's shape; launches repeat bit for bit; and the same for the BF16 build (-DATTN_BF16=1,
``page.run(dtype="bfloat16")``). A lesson's ``test_gpu.py`` subclasses
``AttentionGpuChecks`` with its ``lesson_id`` (pytest collects the inherited tests under the
lesson's own file, so ``pytest -m gpu tests/lessons/day88`` runs them) and adds its own."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_lesson
from course.kernel.host import host_of, run_lesson
from course.lessons import get_lesson
from course.lessons._attention import label_of

# S: whole tiles, a ragged key tile, a single row, one past a tile, long and ragged.
SHAPES = [(1, 2, 128), (1, 2, 1000), (2, 3, 1), (1, 2, 129), (2, 4, 4096), (2, 16, 4097)]


@pytest.mark.gpu
@pytest.mark.hopper
class AttentionGpuChecks:
    lesson_id = ""

    @pytest.mark.parametrize("d", [64, 128, 256], ids=["D64", "D128", "D256"])
    @pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
    def test_every_head_dim_is_right_on_every_shape(self, gpu_for, d, causal):
        gpu_for(self.lesson_id)
        lesson = get_lesson(self.lesson_id)
        compiled = compile_lesson(lesson, defines={"ATTN_HEAD_DIM": d})
        for b, h, s in SHAPES:
            result = run_lesson(
                lesson, compiled=compiled, progress=lambda line: None, shape=(b, h, s, d), causal=causal
            )
            assert result.passed, (d, causal, (b, h, s), result.lines)
            kind = "causal" if causal else "non-causal"
            assert f"{label_of(lesson)} B={b} H={h} S={s} D={d} {kind}: PASS" in result.lines[-1]
            assert result.check.total == b * h * s  # the LSE check, the second, covers every row

    @pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
    def test_random_normal_inputs_at_the_benchmarks_shape_match_float64(self, gpu_for, causal):
        self._bench_shape_matches_float64(gpu_for, causal, {})

    def _bench_shape_matches_float64(self, gpu_for, causal: bool, defines: dict[str, int]) -> None:
        # one launch at the benchmark's shape (S = 4096), O poisoned first: O and LSE against float64
        gpu_for(self.lesson_id)
        import cupy as cp

        lesson = get_lesson(self.lesson_id)
        work = host_of(lesson).workload(
            compile_lesson(lesson, defines=defines), 4096, 1, "bench", causal=causal
        )
        work.poison(0)
        work.launch(0)
        cp.cuda.get_current_stream().synchronize()
        check = work.check(work.out(0))
        assert check.passed, check
        lse = work.lse[0] - work.want_lse().astype(cp.float32)
        assert float(cp.abs(lse).max()) < 1e-3

    def test_launches_repeat_bit_for_bit(self, gpu_for):
        gpu_for(self.lesson_id)
        import cupy as cp

        lesson = get_lesson(self.lesson_id)
        work = host_of(lesson).workload(
            compile_lesson(lesson), 1000, 1, "bench", shape=(2, 16, 1000, 128), causal=True
        )
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

    @pytest.mark.parametrize("d", [64, 128, 256], ids=["D64", "D128", "D256"])
    @pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
    def test_the_bf16_build_is_right_on_ragged_and_whole_shapes(self, gpu_for, d, causal):
        # -DATTN_BF16=1: the same kernel on BF16 Q, K, V (the C++ program's inputs, exact in BF16), O
        # in BF16 against float64 within the BF16 tolerance (kRelTolerance, 8x FP16's), LSE as FP16's
        gpu_for(self.lesson_id)
        lesson = get_lesson(self.lesson_id)
        compiled = compile_lesson(lesson, defines={"ATTN_HEAD_DIM": d, "ATTN_BF16": 1})
        assert lesson.constants(dict(compiled.options.defines))["kRelTolerance"] == 3.2e-2
        for b, h, s in SHAPES[:4] + [(2, 16, 4097)]:
            result = run_lesson(
                lesson, compiled=compiled, progress=lambda line: None, shape=(b, h, s, d), causal=causal
            )
            assert result.passed, (d, causal, (b, h, s), result.lines)
            kind = "causal" if causal else "non-causal"
            assert f"{label_of(lesson)} B={b} H={h} S={s} D={d} BF16 {kind}: PASS" in result.lines[-1]
            assert result.check.total == b * h * s

    def test_dtype_bfloat16_builds_the_bf16_kernel_and_the_poison_is_caught(self, gpu_for):
        # page.run(dtype="bfloat16") compiles -DATTN_BF16=1 itself; an O never written stays 0xFFFF
        gpu_for(self.lesson_id)
        import cupy as cp

        lesson = get_lesson(self.lesson_id)
        result = run_lesson(lesson, progress=lambda line: None, dtype="bfloat16", causal=True)
        assert result.passed and " BF16 causal: PASS" in result.lines[-1], result.lines
        work = host_of(lesson).workload(compile_lesson(lesson), 1000, 1, "lesson", dtype="bfloat16")
        assert work.bf16 and work.o.dtype == cp.uint16
        work.poison(0)  # not launched: every element must fail as never written
        o_check, lse_check = work.host_checks()
        assert not o_check.passed and o_check.mismatch.error is None and o_check.failures == work.o[0].size

    @pytest.mark.parametrize("causal", [False, True], ids=["non-causal", "causal"])
    def test_bf16_random_normal_inputs_at_the_benchmarks_shape_match_float64(self, gpu_for, causal):
        self._bench_shape_matches_float64(gpu_for, causal, {"ATTN_BF16": 1})
