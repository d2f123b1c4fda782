"""Day 88 on a Hopper GPU: every head dimension, ragged and whole S, causal or not, O and LSE
against float64; random normal inputs at the benchmark's shape; launches repeat bit for bit.

The shared checks are tests/lessons/attention_gpu.py. First passed on an H100 80GB HBM3 on
2026-12-06 (evidence/logs/2026-12-06-h100-s12/day88_gpu_part2.log: 11 passed)."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_lesson
from course.kernel.host import run_lesson
from course.lessons import get_lesson
from tests.lessons.attention_gpu import SHAPES, AttentionGpuChecks

LESSON = get_lesson("day88")


class TestDay88(AttentionGpuChecks):
    lesson_id = "day88"


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
