"""Issues 39 and 40: the launch-cost flags of session 18 (region "launch-costs" of kernels/gemm8_fp8.cu and
kernels/gemm7_shapes.cu): -DGEMM_PREFETCH_TMAP=1 (thread 0 prefetches the three tensor maps before the
mbarrier init, as CUTLASS's sm90 kernels do) in both kernels, and -DGEMM_NO_CLUSTER=1 in Day 87's (no
cluster launch at cluster 1; its barriers are the CTA's).

On the CPU: each compiles through NVRTC without spills, the flag reaches the program (PTX and cubin),
and what the file refuses; the chooser never picks them and the bench times them only when asked. On a
Hopper GPU (skipped here): each is exact on ragged shapes and its D is the build's without the flags, bit
for bit (the same sums; only the launch and the first loads change).
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
CASES = {
    "day87-n64-nocl": (DAY87, {**chooser.NARROWER, "GEMM_NO_CLUSTER": 1}, chooser.NARROWER),
    "day87-n64-pf": (DAY87, {**chooser.NARROWER, "GEMM_PREFETCH_TMAP": 1}, chooser.NARROWER),
    "day87-n64p-both": (
        DAY87,
        {**chooser.NARROWER, "GEMM_PROMOTE": 1, **chooser.LAUNCH_COSTS},
        {**chooser.NARROWER, "GEMM_PROMOTE": 1},
    ),
    "day87-default-pf": (DAY87, {"GEMM_PREFETCH_TMAP": 1}, {}),
    "day86-small-pf": (DAY86, {**SMALL86, "GEMM_PREFETCH_TMAP": 1}, SMALL86),
    "day86-default-pf": (DAY86, {"GEMM_PREFETCH_TMAP": 1}, {}),
}


def _ptx(lesson, flags) -> str:
    ptx = compile_offline(lesson, defines=flags).ptx
    return ptx if isinstance(ptx, str) else ptx.decode()


@pytest.mark.parametrize("case", list(CASES))
def test_it_compiles_without_spills_and_the_flag_reaches_the_program(case):
    lesson, flags, base = CASES[case]
    result = compile_offline(lesson, defines=flags, ptxas_verbose=True)
    report = parse(result.log, lesson.kernel_name)
    assert not report.spills and not report.serialized_wgmma, result.log
    assert result.cubin != compile_offline(lesson, defines=base).cubin
    ptx, plain = _ptx(lesson, flags), _ptx(lesson, base)
    prefetches = ptx.count("prefetch.tensormap")
    assert prefetches == (3 if flags.get("GEMM_PREFETCH_TMAP") else 0)
    assert plain.count("prefetch.tensormap") == 0
    if flags.get("GEMM_NO_CLUSTER"):
        # no cluster launch: no .reqnctapercluster on the entry, no barrier.cluster in the body
        assert ".reqnctapercluster" in plain and ".reqnctapercluster" not in ptx
        assert "barrier.cluster" in plain and "barrier.cluster" not in ptx


def test_no_cluster_launch_is_refused_at_cluster_2_and_each_flag_is_0_or_1():
    with pytest.raises(CompileError, match="GEMM_NO_CLUSTER=1 .no cluster launch. needs GEMM_CLUSTER=1"):
        compile_offline(DAY87, defines={"GEMM_BN": 64, "GEMM_NO_CLUSTER": 1})
    with pytest.raises(CompileError, match="GEMM_PREFETCH_TMAP is 0 or 1"):
        compile_offline(DAY87, defines={"GEMM_PREFETCH_TMAP": 2})
    with pytest.raises(CompileError, match="GEMM_PREFETCH_TMAP is 0 or 1"):
        compile_offline(DAY86, defines={"GEMM_PREFETCH_TMAP": 2})


def test_the_chooser_never_picks_them_and_the_bench_times_them_only_when_asked_at_512_and_1024(monkeypatch):
    for n in (256, 512, 1024, 4096):
        for sms in (114, 132):
            for flags in (chooser.choose(n, n, sms), chooser.promoting(n, n, sms)):
                assert not {"GEMM_NO_CLUSTER", "GEMM_PREFETCH_TMAP"} & set(flags)
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert not set(bench.SMALL_DEV) & set(bench.dev_builds())
    monkeypatch.setenv(bench.PINGPONG_ENV, ",".join(bench.SMALL_DEV))
    assert bench.dev_builds() == bench.SMALL_DEV
    assert {bench.DEV_INTERVALS[x] for x in ("n64", "n64nocl", "n64pf", "n64both")} == {(0,)}
    assert {bench.DEV_INTERVALS[x] for x in ("n64p", "n64pboth")} == {(1,)}
    assert set(bench.SMALL_DEV) <= set(chooser.DEV_BUILDS)
    assert bench.SMALL_DEV_SIZES == (512, 1024) and not set(bench.SMALL_DEV_SIZES) & set(bench.DEV_SIZES)


SHAPES = [(200, 136, 128), (1000, 1032, 528), (130, 392, 1104), (512, 512, 512), (1, 8, 1008)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("case", list(CASES))
def test_it_is_exact_on_ragged_shapes_and_bit_for_bit_the_build_without_the_flags(gpu_for, case):
    import cupy as cp

    from course.kernel.host import host_of

    lesson, flags, base = CASES[case]
    gpu_for(lesson.id)
    mine_c, base_c = compile_lesson(lesson, defines=flags), compile_lesson(lesson, defines=base)
    host = host_of(lesson)
    extra = {"split": 1} if lesson is DAY86 else {}  # Day 86's host asks a development build for its split
    for shape in SHAPES:
        result = run_lesson(lesson, compiled=mine_c, progress=lambda line: None, shape=shape, **extra)
        assert result.passed, (case, shape, result.lines)
        assert result.check.total == shape[0] * shape[1]
        mine = host.workload(mine_c, 1024, 1, "bench", shape=shape, **extra)
        other = host.workload(base_c, 1024, 1, "bench", shape=shape, **extra)
        for work in (mine, other):
            work.poison(0)
            work.launch(0)
        cp.cuda.runtime.deviceSynchronize()
        same = cp.asarray(mine.out(0)).view(cp.uint16) == cp.asarray(other.out(0)).view(cp.uint16)
        assert bool(same.all()), (case, shape, int((~same).sum()))
