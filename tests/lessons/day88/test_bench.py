"""Day 88's benchmark specification on the CPU: its arithmetic, its sizes, and peers that say why
they cannot run when PyTorch is missing (the course does not depend on it)."""

from __future__ import annotations

import builtins

import pytest

from course.bench.spec import bench_spec
from course.errors import CourseError
from course.lessons import _attention_bench as shared
from course.lessons import get_lesson
from course.lessons.day88 import bench
from tests.lessons.attention_fake import FakeContext

LESSON = get_lesson("day88")
SPEC = bench_spec(LESSON)


def test_the_rate_counts_two_products_of_2_s2_d_per_head_and_half_when_causal():
    assert SPEC is bench.SPEC
    b, h, d = shared.BENCH_B, shared.BENCH_H, shared.HEAD_DIM
    assert LESSON.constants()["kHeadDim"] == d  # the bench compiles the default build
    for s in (4096, 8192):
        assert SPEC.work(s) == 2 * (2 * b * h * s * s * d)
        assert shared.attention_flops(s, causal=True) == SPEC.work(s) / 2
    assert SPEC.set_bytes(4096) == 4 * b * h * 4096 * d * 2 + b * h * 4096 * 4


def test_the_benchmark_times_whole_tiles_up_to_16384():
    assert SPEC.validate_sizes("day88", [8192, 4096, 16384]) == (4096, 8192, 16384)
    assert SPEC.size_step == LESSON.constants()["kBM"]
    for bad in (0, 4097, 16512, 4096.0, True):
        with pytest.raises(CourseError):
            SPEC.validate_sizes("day88", [bad])


def test_without_pytorch_every_sdpa_peer_is_named_and_unavailable_with_the_reason(monkeypatch):
    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    peers = shared.sdpa_peers()
    assert [p.name for p in peers] == [name for _, name in shared.BACKENDS]
    assert {"cuDNN", "flash", "memory-efficient"} <= {
        w for p in peers for w in p.name.replace(",", "").split()
    }
    assert all("pip install torch" in p.unavailable for p in peers)


def test_attention_is_a_step_of_its_own_climb_not_the_gemm_ladders():
    from course.bench.climb import climb_lessons, family_of
    from course.lessons import LESSONS
    from course.lessons._attention_bench import ATTENTION_CLIMB

    lessons = tuple(LESSONS.values())
    assert SPEC.climb == ATTENTION_CLIMB and family_of(LESSON, lessons) == ATTENTION_CLIMB
    assert climb_lessons(LESSON, lessons) == [LESSON]  # the first step of attention's climb
    # the GEMM pages' climbs are what they were: every TFLOP/s ladder step up to their day
    steps = climb_lessons(get_lesson("day87"), lessons)
    assert LESSON not in steps and get_lesson("day87") in steps and get_lesson("day79") in steps


@pytest.mark.parametrize("lesson_id", ["day88", "day89"])
def test_the_speed_section_shows_each_recorded_number_once(lesson_id):
    # issue 38's rule, as Days 85-87: no findings repeating the table; every causal number is a reason
    from course.bench import bench_dir, load
    from course.bench.report import findings, listed_reasons, table_rows

    lesson = get_lesson(lesson_id)
    result = load(lesson_id, bench_dir("h100-80gb-hbm3"))
    assert result is not None and findings(lesson, result) == ()
    rates = [row[2] for row in table_rows(result)[1:]]
    assert rates == [f"{r.kernel.rate:.1f}" for r in result.rows]
    causal = [r for r in listed_reasons(result) if r.title.startswith("Causal at S=")]
    assert len(causal) == len(result.rows) * (1 + len(result.peer_names))


def test_finish_times_causal_at_every_size_then_d64_and_d256_against_the_sdpa_backends_only(
    no_gpu_release, monkeypatch
):
    from course.bench.spec import KERNEL, Peer

    def broken(work, j):
        raise RuntimeError("No available kernel. Aborting execution.\nmore")

    cudnn, flash = (name for _, name in shared.BACKENDS[:2])
    peers = (
        Peer("Day 88's kernel (slow)", lambda work, j: None),  # a D = 128 build: causal rows only
        Peer(cudnn + " slow", lambda work, j: None),
        Peer(flash, broken),
    )
    # the SDPA peers are known by name: these two stand in for cuDNN's and flash's
    monkeypatch.setattr(shared, "SDPA_NAMES", frozenset({cudnn + " slow", flash}))
    ctx = FakeContext(LESSON, (4096, 8192), peers)
    extras = shared.finish(ctx)
    assert ctx.compiled == [
        (4096, None),
        (8192, None),
        (8192, {"ATTN_HEAD_DIM": 64}),
        (8192, {"ATTN_HEAD_DIM": 256}),
        (8192, {"ATTN_BF16": 1}),
        (8192, {"ATTN_BF16": 1}),
    ]
    titles = {r.title: r for r in extras.reasons}
    for d in (64, 256):
        rate = titles[shared.head_dim_title(d, 8192)]
        assert rate.unit == "TFLOP/s"
        assert rate.value == pytest.approx(shared.attention_flops(8192, head_dim=d) / 1e-3 / 1e12)
        assert titles[shared.head_dim_title(d, 8192, cudnn + " slow")].value == pytest.approx(2.0)
        assert shared.head_dim_title(d, 8192, "Day 88's kernel (slow)") not in titles  # D = 128 build
        assert shared.head_dim_title(d, 8192, flash) not in titles  # raised: left out, and said so
    assert any(flash in s and "No available kernel. Aborting execution." in s for s in ctx.said)
    assert titles["Causal at S=4096 against Day 88's kernel (slow)"].value == pytest.approx(2.0)
    assert not any(
        r.title.startswith(f"Causal at S={n} against {flash}") for r in extras.reasons for n in (4096, 8192)
    )
    assert KERNEL in ctx.verified


def test_other_head_dims_are_timed_at_8192_or_the_largest_size_asked_for(no_gpu_release):
    ctx = FakeContext(LESSON, (4096,), ())
    extras = shared.finish(ctx)
    assert [c for c in ctx.compiled if c[1]] == [
        (4096, {"ATTN_HEAD_DIM": 64}),
        (4096, {"ATTN_HEAD_DIM": 256}),
        (4096, {"ATTN_BF16": 1}),
        (4096, {"ATTN_BF16": 1}),
    ]
    assert [r.title for r in extras.reasons] == [
        "Causal at S=4096",
        "D=64 at S=4096",
        "D=256 at S=4096",
        "BF16 D=128 at S=4096",
        "BF16 D=128 causal at S=4096",
    ]
    assert shared.attention_flops(4096, head_dim=64) * 4 == shared.attention_flops(4096, head_dim=256)
    assert shared.set_bytes(4096, 256) == 4 * 16 * 4096 * 256 * 2 + 16 * 4096 * 4


def test_the_bf16_build_is_timed_non_causal_and_causal_against_the_sdpa_backends_only(
    no_gpu_release, monkeypatch
):
    from course.bench.spec import Peer

    cudnn = shared.BACKENDS[0][1]
    peers = (
        Peer("Day 88's kernel (slow)", lambda work, j: None),  # an FP16 build: it cannot read BF16 buffers
        Peer(cudnn + " slow", lambda work, j: None),
    )
    monkeypatch.setattr(shared, "SDPA_NAMES", frozenset({cudnn + " slow"}))
    ctx = FakeContext(LESSON, (4096, 8192), peers)
    extras = shared.finish(ctx)
    # the two BF16 workloads: the -DATTN_BF16=1 build at D = 128 (no ATTN_HEAD_DIM), non-causal then causal
    bf16_builds = [c for c in ctx.compiled if c[1] and "ATTN_BF16" in c[1]]
    assert bf16_builds == [(8192, {"ATTN_BF16": 1})] * 2
    works = [v for v in ctx.verified if isinstance(v, tuple) and v[2][2] == (("ATTN_BF16", 1),)]
    assert [(n, causal) for _, n, _, causal in works] == [(8192, False), (8192, True)]
    titles = {r.title: r for r in extras.reasons}
    for causal in (False, True):
        rate = titles[shared.bf16_title(causal, 8192)]
        assert rate.title.startswith("BF16 D=128 ") and rate.unit == "TFLOP/s"
        assert rate.value == pytest.approx(shared.attention_flops(8192, causal=causal) / 1e-3 / 1e12)
        assert "-DATTN_BF16=1" in rate.detail
        ratio = titles[shared.bf16_title(causal, 8192, cudnn + " slow")]
        assert ratio.value == pytest.approx(2.0) and "BF16 inputs" in ratio.detail
        assert shared.bf16_title(causal, 8192, "Day 88's kernel (slow)") not in titles
    # the BF16 rows are not causal rows of the FP16 table: "Causal at S=" stays the FP16 kernel's
    assert not any(r.title.startswith("Causal at S=") and "BF16" in r.title for r in extras.reasons)
