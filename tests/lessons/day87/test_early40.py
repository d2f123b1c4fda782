"""Issue 40: the early-release builds (-DGEMM_EARLY_RELEASE=1, kernels/gemm8_fp8.cu regions "early-release"
and "stagger-consumer"): a promoting consumer gives a K-tile's stage back to the producer right after the
wait_group 0 before its promotion, as DeepGEMM's math warpgroups do, instead of after the next K-tile's
full-barrier wait and wgmma issue (the snippet "consumer").

The CPU tests compile them (NVRTC), read the order in the PTX, check what the file refuses, that the
chooser never picks them and that the bench times them only when asked; the GPU tests (skipped without
one) check them on ragged shapes against float64, and D bit for bit against the build without the flag
(the same sums in the same order: only the release moves).
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
NEW = {
    "early": (chooser.EARLY_BUILD, chooser.PROMOTE_BUILD),
    "early192": (chooser.EARLY192_BUILD, chooser.BN192_BUILD),
    "earlyblock": (chooser.EARLYBLOCK_BUILD, chooser.BLOCK_BUILD),
}


@pytest.mark.parametrize("name", list(NEW))
def test_each_is_its_promoting_build_with_the_flag_and_launched_as_it(name):
    early, base = NEW[name]
    assert early == {**base, "GEMM_EARLY_RELEASE": 1}
    assert base.get("GEMM_PROMOTE") == 1
    assert build_for(LESSON, early) == build_for(LESSON, base)


@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_compiles_without_spills_or_wgmma_serialization(cluster, name):
    early, base = NEW[name]
    result = compile_offline(LESSON, defines={**early, "GEMM_CLUSTER": cluster}, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log
    assert not any("C75" in w for w in report.warnings), result.log
    assert result.cubin != compile_offline(LESSON, defines={**base, "GEMM_CLUSTER": cluster}).cubin


def _events(flags: dict[str, int]) -> list[str]:
    """The PTX's wgmma waits, the empty barrier's cluster arrivals and each run of FP32 adds, in order."""
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
        if "wgmma.wait_group.sync.aligned 0" in line:
            out.append("wait 0")
        elif "mbarrier.arrive" in line and "shared::cluster" in line:
            out.append("arrive")
    return out


def test_the_stage_goes_back_between_the_wait_and_the_promotion():
    early = " | ".join(_events(chooser.EARLY_BUILD))
    plain = " | ".join(_events(chooser.PROMOTE_BUILD))
    # the flag puts an arrival between the wait before a promotion and its 64 FADDs; the plain build
    # goes from the wait straight to the adds
    assert "wait 0 | arrive | add 64" in early
    assert "wait 0 | arrive | add 64" not in plain
    assert "wait 0 | add 64" in plain


@pytest.mark.parametrize(
    "flags",
    [
        {"GEMM_EARLY_RELEASE": 1},  # the 128 x 256 default: no promotion
        {"GEMM_BN": 128, "GEMM_EARLY_RELEASE": 1},  # not promoting
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_PINGPONG": 1, "GEMM_EARLY_RELEASE": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_OVERLAP": 1, "GEMM_EARLY_RELEASE": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_STAGGER": 1, "GEMM_EARLY_RELEASE": 1},
    ],
    ids=["default", "bn128", "pingpong", "overlap", "stagger"],
)
def test_other_combinations_are_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="the early release"):
        compile_offline(LESSON, defines=flags)


def test_a_flag_other_than_0_or_1_is_refused():
    with pytest.raises(CompileError, match="GEMM_EARLY_RELEASE is 0 or 1"):
        compile_offline(LESSON, defines={**chooser.PROMOTE_BUILD, "GEMM_EARLY_RELEASE": 2})


def test_the_chooser_never_picks_it_and_the_bench_times_it_only_when_asked(monkeypatch):
    for n in (256, 1024, 4096, 16384):
        for sms in (114, 132):
            assert "GEMM_EARLY_RELEASE" not in chooser.choose(n, n, sms)
            assert "GEMM_EARLY_RELEASE" not in chooser.promoting(n, n, sms)
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert not {"early", "early192", "earlyblock"} & set(bench.dev_builds())
    monkeypatch.setenv(bench.PINGPONG_ENV, "early,early192,block,earlyblock")
    assert bench.dev_builds() == ("early", "early192", "block", "earlyblock")
    assert all(bench.DEV_INTERVALS[name] == (1,) for name in ("early", "early192", "block", "earlyblock"))


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_is_exact_on_ragged_shapes_and_bit_for_bit_its_base_build(gpu_for, cluster, name):
    gpu_for("day87")
    early, base = NEW[name]
    intervals = (1,) if "GEMM_BLOCK_SCALES" in base else (1, 3)
    assert_exact_and_bit_for_bit(early, base, cluster, intervals=intervals)
