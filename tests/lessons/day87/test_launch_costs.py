"""Issues 39 and 40: a cluster of one is launched as a plain grid (session 18; the kernels' "launch-costs"
regions): in kernels/gemm8_fp8.cu and kernels/gemm7_shapes.cu a GEMM_CLUSTER=1 build has no
__cluster_dims__ and no cluster barrier (GEMM_NO_CLUSTER defaults to GEMM_CLUSTER == 1);
-DGEMM_NO_CLUSTER=0 keeps the cluster launch, the comparison.

On the CPU: in the PTX, every cluster-1 build has neither .reqnctapercluster nor barrier.cluster, its
GEMM_NO_CLUSTER=0 twin and the cluster-2 builds have both; what the files refuse; the bench times the
twins only when asked. On a Hopper GPU (skipped here): each plain-grid build is exact on ragged shapes and
its D is its twin's bit for bit (only the launch and its barriers change).
"""

from __future__ import annotations

import pytest

from course.kernel.compile import CompileError, compile_lesson, compile_offline
from course.kernel.host import run_lesson
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons.day87 import bench, chooser

DAY87 = get_lesson("day87")
DAY86 = get_lesson("day86")
SMALL86 = {"GEMM_SMALL": 1, "GEMM_BM": 64, "GEMM_CLUSTER": 1, "GEMM_BN": 64}  # Day 86's pick at 256^3-1024^3
CLUSTER1 = {
    "day87-n64": (DAY87, chooser.NARROWER),
    "day87-n64-promote": (DAY87, {**chooser.NARROWER, "GEMM_PROMOTE": 1}),
    "day87-128x128": (DAY87, {"GEMM_BN": 128, "GEMM_CLUSTER": 1}),
    "day86-64x64": (DAY86, {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1}),  # the decode rows' pick
    "day86-128x200": (DAY86, {"GEMM_BN": 200, "GEMM_CLUSTER": 1}),
    "day86-128x256": (DAY86, {"GEMM_BN": 256, "GEMM_CLUSTER": 1}),
}


def _ptx(lesson, flags) -> str:
    ptx = compile_offline(lesson, defines=flags).ptx
    return ptx if isinstance(ptx, str) else ptx.decode()


def _cluster_launch(ptx: str) -> tuple[bool, bool]:
    return ".reqnctapercluster" in ptx, "barrier.cluster" in ptx


@pytest.mark.parametrize("case", list(CLUSTER1))
def test_a_cluster_of_one_is_a_plain_grid_and_the_flag_brings_the_cluster_launch_back(case):
    lesson, flags = CLUSTER1[case]
    result = compile_offline(lesson, defines=flags, ptxas_verbose=True)
    report = parse(result.log, lesson.kernel_name)
    assert not report.spills and not report.serialized_wgmma, result.log
    assert _cluster_launch(_ptx(lesson, flags)) == (False, False)
    assert _cluster_launch(_ptx(lesson, {**flags, "GEMM_NO_CLUSTER": 0})) == (True, True)
    assert compile_offline(lesson, defines={**flags, "GEMM_NO_CLUSTER": 0}).cubin != result.cubin


@pytest.mark.parametrize("lesson", [DAY87, DAY86], ids=["day87", "day86"])
def test_cluster_2_builds_keep_the_cluster_launch(lesson):
    assert _cluster_launch(_ptx(lesson, {})) == (True, True)  # both lessons' default build: cluster 2
    assert _cluster_launch(_ptx(lesson, SMALL86 if lesson is DAY86 else chooser.NARROWER))[0] is False


@pytest.mark.parametrize("lesson", [DAY87, DAY86], ids=["day87", "day86"])
def test_no_cluster_launch_is_refused_at_cluster_2(lesson):
    with pytest.raises(CompileError, match=r"GEMM_NO_CLUSTER=1 \(no cluster launch\) needs GEMM_CLUSTER=1"):
        compile_offline(lesson, defines={"GEMM_NO_CLUSTER": 1})


def test_the_bench_times_the_cluster_launch_twins_only_when_asked_at_512_and_1024(monkeypatch):
    for n in (256, 512, 1024, 4096):
        for sms in (114, 132):
            for flags in (chooser.choose(n, n, sms), chooser.promoting(n, n, sms)):
                assert "GEMM_NO_CLUSTER" not in flags
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert not set(bench.SMALL_DEV) & set(bench.dev_builds())
    monkeypatch.setenv(bench.PINGPONG_ENV, ",".join(bench.SMALL_DEV))
    assert bench.dev_builds() == bench.SMALL_DEV == ("n64", "n64cl", "n64p", "n64pcl")
    assert bench.DEV_INTERVALS["n64"] == bench.DEV_INTERVALS["n64cl"] == (0,)
    assert bench.DEV_INTERVALS["n64p"] == bench.DEV_INTERVALS["n64pcl"] == (1,)
    assert chooser.DEV_BUILDS["n64cl"] == {**chooser.NARROWER, "GEMM_NO_CLUSTER": 0}
    assert bench.SMALL_DEV_SIZES == (512, 1024) and not set(bench.SMALL_DEV_SIZES) & set(bench.DEV_SIZES)


SHAPES = [(200, 136, 128), (1000, 1032, 528), (130, 392, 1104), (512, 512, 512), (1, 8, 1008)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("case", list(CLUSTER1))
def test_it_is_exact_on_ragged_shapes_and_bit_for_bit_its_cluster_launch_twin(gpu_for, case):
    import cupy as cp

    from course.kernel.host import host_of

    lesson, flags = CLUSTER1[case]
    gpu_for(lesson.id)
    mine_c = compile_lesson(lesson, defines=flags)
    twin_c = compile_lesson(lesson, defines={**flags, "GEMM_NO_CLUSTER": 0})
    host = host_of(lesson)
    extra = {"split": 1} if lesson is DAY86 else {}  # Day 86's host asks a development build for its split
    for shape in SHAPES:
        result = run_lesson(lesson, compiled=mine_c, progress=lambda line: None, shape=shape, **extra)
        assert result.passed, (case, shape, result.lines)
        assert result.check.total == shape[0] * shape[1]
        mine = host.workload(mine_c, 1024, 1, "bench", shape=shape, **extra)
        twin = host.workload(twin_c, 1024, 1, "bench", shape=shape, **extra)
        for work in (mine, twin):
            work.poison(0)
            work.launch(0)
        cp.cuda.runtime.deviceSynchronize()
        same = cp.asarray(mine.out(0)).view(cp.uint16) == cp.asarray(twin.out(0)).view(cp.uint16)
        assert bool(same.all()), (case, shape, int((~same).sum()))
