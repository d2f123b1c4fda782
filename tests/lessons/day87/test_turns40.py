"""Issue 40: the promoting builds whose consumers issue each K-tile's wgmmas in turns
(-DGEMM_PROMOTE_TURNS=1, kernels/gemm8_fp8.cu regions "turns-constants" and "turns-order"): consumer 0,
1[, 2], 0, ..., ordered by named barriers 8 + c, so that one consumer's group is queued on the tensor
cores ahead of the other's.

The CPU tests compile each (NVRTC), read the turns in the PTX, check what the file refuses, that the
chooser never picks them and that the bench times them only when asked; the GPU tests (skipped without
one) check each on ragged shapes against float64, and D bit for bit against the build without turns at
P = 1 (the same wgmmas and adds per element of D: only the moment each group is issued moves).
"""

from __future__ import annotations

import re

import pytest

from course.kernel.compile import CompileError, compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._fp8 import build_for
from course.lessons.day87 import bench, chooser
from tests.lessons.day87.dev_gpu import assert_exact_and_bit_for_bit

LESSON = get_lesson("day87")

NEW = {  # the turns build and the build it orders
    "turns": (chooser.TURNS_BUILD, chooser.PROMOTE_BUILD),
    "turns192": (chooser.TURNS192_BUILD, chooser.BN192_BUILD),
    "turns3": (chooser.TURNS3_BUILD, chooser.BM192_BUILD),
    "turnsblock": (chooser.TURNSBLOCK_BUILD, chooser.BLOCK_BUILD),
}


@pytest.mark.parametrize("name", list(NEW))
def test_it_is_its_base_with_the_flag_and_launched_as_it(name):
    turns, base = NEW[name]
    assert turns == {**base, "GEMM_PROMOTE_TURNS": 1}
    assert build_for(LESSON, turns) == build_for(LESSON, base)


@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_compiles_without_spills_or_wgmma_serialization(cluster, name):
    flags = {**NEW[name][0], "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log
    assert not any("C75" in w for w in report.warnings), result.log


def _events(flags: dict[str, int]) -> list[str]:
    """The PTX's 256-thread named-barrier syncs and arrivals, wgmmas and commits, in order."""
    ptx = compile_offline(LESSON, defines=flags).ptx
    ptx = ptx if isinstance(ptx, str) else ptx.decode()
    out: list[str] = []
    for line in ptx.splitlines():
        turn = re.search(r"\b(bar\.sync|barrier\.sync|bar\.arrive|barrier\.arrive)\S*\s+%r\d+, 256;", line)
        if turn:
            out.append("sync" if "sync" in turn.group(1) else "arrive")
        elif "wgmma.mma_async" in line:
            out.append("wgmma")
        elif "wgmma.commit_group" in line:
            out.append("commit")
    return out


@pytest.mark.parametrize("name", list(NEW))
def test_each_k_tiles_group_is_issued_between_its_turn_and_the_hand_over(name):
    turns, base = NEW[name]
    order = " | ".join(_events(turns))
    group = " | ".join(["wgmma"] * 4)
    # a K-tile: the turn's wait, four wgmmas, the commit, the hand-over
    assert f"sync | {group} | commit | arrive" in order, order[:400]
    # the first hand-over (the last consumer's, for consumer 0's first turn) comes before any sync
    assert order.index("arrive") < order.index("sync")
    assert "sync" not in _events(base) and "arrive" not in _events(base)


@pytest.mark.parametrize(
    "flags",
    [
        {"GEMM_PROMOTE_TURNS": 1},  # the 128 x 256 default: no promotion
        {"GEMM_BN": 128, "GEMM_PROMOTE_TURNS": 1},  # not promoting
        {**chooser.PINGPONG_BUILD, "GEMM_PROMOTE_TURNS": 1},
        {**chooser.STAGGER_BUILD, "GEMM_PROMOTE_TURNS": 1},
        {**chooser.OVERLAP_BUILD, "GEMM_PROMOTE_TURNS": 1},
    ],
    ids=["default", "bn128", "pingpong", "stagger", "overlap"],
)
def test_other_combinations_are_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="the turns build"):
        compile_offline(LESSON, defines=flags)


def test_split_n_with_turns_is_refused_and_a_flag_other_than_0_or_1_too():
    with pytest.raises(CompileError, match="the split-N promoting build"):
        compile_offline(LESSON, defines={**chooser.SPLITN_BUILD, "GEMM_PROMOTE_TURNS": 1})
    with pytest.raises(CompileError, match="GEMM_PROMOTE_TURNS is 0 or 1"):
        compile_offline(LESSON, defines={**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_TURNS": 2})


def test_the_chooser_never_picks_them_and_the_bench_times_them_only_when_asked(monkeypatch):
    for n in (256, 1024, 4096, 16384):
        for sms in (114, 132):
            assert "GEMM_PROMOTE_TURNS" not in chooser.choose(n, n, sms)
            assert "GEMM_PROMOTE_TURNS" not in chooser.promoting(n, n, sms)
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert not set(NEW) & set(bench.dev_builds())
    monkeypatch.setenv(bench.PINGPONG_ENV, ",".join(NEW))
    assert bench.dev_builds() == tuple(NEW)
    assert all(bench.DEV_INTERVALS[name] == (1,) for name in NEW)


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_is_exact_on_ragged_shapes_and_bit_for_bit_its_base_at_p1(gpu_for, cluster, name):
    gpu_for("day87")
    turns, base = NEW[name]
    assert_exact_and_bit_for_bit(turns, base, cluster)
