"""Day 89's benchmark on the CPU: Day 88's benchmark with Day 88's kernel as the first peer."""

from __future__ import annotations

import builtins

from course.bench.spec import bench_spec
from course.lessons import _attention_bench as shared
from course.lessons import get_lesson
from course.lessons.day89 import bench
from tests.lessons.attention_fake import FakeContext

LESSON = get_lesson("day89")
SPEC = bench_spec(LESSON)


def test_the_sizes_work_and_buffers_are_day_88s():
    spec88 = bench_spec(get_lesson("day88"))
    assert SPEC is bench.SPEC and spec88 is not None and SPEC is not None
    assert (SPEC.sizes, SPEC.page_sizes, SPEC.max_size, SPEC.size_step) == (
        spec88.sizes,
        spec88.page_sizes,
        spec88.max_size,
        spec88.size_step,
    )
    assert SPEC.work is spec88.work and SPEC.set_bytes is spec88.set_bytes and SPEC.finish is spec88.finish
    assert SPEC.climb is spec88.climb and SPEC.climb is not None and SPEC.climb.name == "attention"
    assert LESSON.kernel_name in SPEC.kernel_label


def test_the_finish_names_no_lesson_but_the_one_it_is_handed(no_gpu_release):
    # the causal pass and the head dimensions build every workload from ctx.lesson's host: Day 89's
    # run times Day 89's kernel (a workload from anywhere else would need a GPU here, and fail)
    ctx = FakeContext(get_lesson("day89"), (4096,), ())
    shared.finish(ctx)
    assert ctx.asked == [("day89", "host")] * 5 and len(ctx.compiled) == 5  # causal, D 64, 256, BF16 x 2


def _no_torch(monkeypatch):
    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)


def test_day_88s_kernel_is_the_first_peer_launched_on_the_same_workload(monkeypatch):
    from course.kernel import compile as compiler

    built = object()  # stands for Day 88's Compiled: the peer hands it to the workload's launch
    seen = []
    monkeypatch.setattr(compiler, "compile_lesson", lambda lesson: seen.append(lesson.id) or built)
    _no_torch(monkeypatch)
    peers = bench.peers()
    assert [p.name for p in peers] == [bench.DAY88_PEER] + [name for _, name in shared.BACKENDS]
    assert seen == ["day88"] and peers[0].unavailable == ""
    assert all("pip install torch" in p.unavailable for p in peers[1:])

    class Work:
        launched: list = []

        def launch(self, j, compiled=None):
            self.launched.append((j, compiled))

    work = Work()
    peers[0].call(work, 3)
    assert work.launched == [(3, built)]


def test_a_day_88_that_does_not_build_is_an_unavailable_peer_with_the_reason(monkeypatch):
    from course.kernel import compile as compiler

    def refuse(lesson):
        raise compiler.CompileError(lesson.kernel_path, ("-arch=sm_90a",), "error: something", "")

    monkeypatch.setattr(compiler, "compile_lesson", refuse)
    peer = bench.day88_peer()
    assert peer.name == bench.DAY88_PEER
    assert (
        peer.unavailable.startswith("Day 88's kernel did not build here:") and "something" in peer.unavailable
    )
