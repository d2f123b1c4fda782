"""Issue 40: the split-N promoting build (-DGEMM_PROMOTE_SPLITN=1, kernels/gemm8_fp8.cu regions
"splitn-constants" and "splitn-consumer"): each consumer's m64n128 chain issued as two m64n64 chains (the
tile's left and right 64 columns), the left half promoted while the right half's wgmmas run.

The CPU tests compile it (NVRTC), read the order in the PTX, check what the file refuses, that the chooser
never picks it and that the bench times it only when asked; the GPU tests (skipped without one) check it
on ragged shapes against float64, and D bit for bit against the 128 x 128 promoting build at P = 1 (the
same products in the same K order per element of D: only the chains' grouping by columns moves).
"""

from __future__ import annotations

import pytest

from course.kernel.compile import CompileError, compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._fp8 import build_for
from course.lessons.day87 import bench, chooser
from tests.lessons.day87.dev_gpu import assert_exact_and_bit_for_bit

LESSON = get_lesson("day87")


NEW = {  # the split build and the promoting build it splits
    "splitn": (chooser.SPLITN_BUILD, chooser.PROMOTE_BUILD),
    "splitn192": (chooser.SPLITN192_BUILD, chooser.BN192_BUILD),
}


@pytest.mark.parametrize("name", list(NEW))
def test_it_is_the_promoting_build_with_the_flag_and_launched_as_it(name):
    split, base = NEW[name]
    assert split == {**base, "GEMM_PROMOTE_SPLITN": 1}
    assert build_for(LESSON, split) == build_for(LESSON, base)


@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_compiles_without_spills_or_wgmma_serialization(cluster, name):
    flags = {**NEW[name][0], "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    # the form ptxas accepts: only the older group's accumulators are read while the newer one runs
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log
    assert not any("C75" in w for w in report.warnings), result.log


def _events(flags: dict[str, int]) -> list[str]:
    """The PTX's wgmma instructions (by shape), commits, waits and each run of FP32 adds, in order."""
    ptx = compile_offline(LESSON, defines=flags).ptx
    ptx = ptx if isinstance(ptx, str) else ptx.decode()
    out: list[str] = []
    adds = 0
    for line in ptx.splitlines():
        if "add.f32" in line:
            adds += 1
            continue
        if adds:
            out.append(f"add {adds}")
            adds = 0
        if "wgmma.mma_async" in line:
            out.append(line.split(".m64")[1].split("k32")[0] if ".m64n" in line else "wgmma")
        elif "wgmma.commit_group" in line:
            out.append("commit")
        elif "wgmma.wait_group.sync.aligned" in line:
            out.append("wait " + line.split("aligned")[1].strip(" ;\t"))
    return out


@pytest.mark.parametrize(
    ("name", "half", "whole", "adds"), [("splitn", "n64", "n128", 32), ("splitn192", "n96", "n192", 48)]
)
def test_the_left_half_is_promoted_between_the_two_waits(name, half, whole, adds):
    split, base = NEW[name]
    order = " | ".join(_events(split))
    # a K-tile: four half-width wgmmas, a commit, four more, a commit; wait 1 and the left half's adds,
    # then wait 0 and the right half's
    four = " | ".join([half] * 4)
    tile = f"{four} | commit | {four} | commit | wait 1 | add {adds} | wait 0"
    assert tile in order and f"{tile} | add {adds}" in order
    assert whole not in order
    assert whole in " | ".join(_events(base))


@pytest.mark.parametrize(
    "flags",
    [
        {"GEMM_PROMOTE_SPLITN": 1},  # the 128 x 256 default: no promotion
        {"GEMM_BN": 128, "GEMM_PROMOTE_SPLITN": 1},  # not promoting
        {**chooser.BLOCK_BUILD, "GEMM_PROMOTE_SPLITN": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_STAGGER": 1, "GEMM_PROMOTE_SPLITN": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_EARLY_RELEASE": 1, "GEMM_PROMOTE_SPLITN": 1},
    ],
    ids=["default", "bn128", "block", "stagger", "early"],
)
def test_other_combinations_are_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="the split-N promoting build"):
        compile_offline(LESSON, defines=flags)


def test_a_flag_other_than_0_or_1_is_refused():
    with pytest.raises(CompileError, match="GEMM_PROMOTE_SPLITN is 0 or 1"):
        compile_offline(LESSON, defines={**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_SPLITN": 2})


def test_the_chooser_never_picks_it_and_the_bench_times_it_only_when_asked(monkeypatch):
    for n in (256, 1024, 4096, 16384):
        for sms in (114, 132):
            assert "GEMM_PROMOTE_SPLITN" not in chooser.choose(n, n, sms)
            assert "GEMM_PROMOTE_SPLITN" not in chooser.promoting(n, n, sms)
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert not {"splitn", "splitn192"} & set(bench.dev_builds())
    monkeypatch.setenv(bench.PINGPONG_ENV, "splitn,splitn192")
    assert bench.dev_builds() == ("splitn", "splitn192")
    assert bench.DEV_INTERVALS["splitn"] == bench.DEV_INTERVALS["splitn192"] == (1,)


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_is_exact_on_ragged_shapes_and_bit_for_bit_the_promoting_build_at_p1(gpu_for, cluster, name):
    gpu_for("day87")
    split, base = NEW[name]
    assert_exact_and_bit_for_bit(split, base, cluster)
