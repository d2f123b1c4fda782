"""Issue 40: the staggered-promotion build (-DGEMM_PROMOTE_STAGGER=1), the 128 x 128 promoting build whose
second consumer warpgroup promotes half a K-tile after the first (kernels/gemm8_fp8.cu, regions
"stagger-constants" and "stagger-consumer"): its chains are 64, 128, ..., 128, 64 deep, each at most
128, so that one consumer's promotion (its wait for the chain and 64 FADDs) lies beside the other's
wgmmas instead of both promoting at once, as session 17's source-level profile of the promoting build
showed them doing (evidence/gemm_dev/notes_ncu_src.md).

The CPU tests compile it (NVRTC), check what the file refuses, that the chooser never picks it and that
the bench times it only when asked; the GPU tests (skipped without one) check it on ragged shapes
against float64 at the accuracy of promoting every K-tile.

The same for the descriptor-adds builds (-DGEMM_DESC_ITER=1, region "desc-iter": each wgmma's descriptors
advanced by adds from stage 0's), alone on the promoting build and with the stagger.
"""

from __future__ import annotations

import pytest

from course.kernel.compile import CompileError, compile_lesson, compile_offline
from course.kernel.host import run_lesson
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._fp8 import build_for
from course.lessons.day87 import bench, chooser
from tests.lessons.day87.dev_gpu import SHAPES

LESSON = get_lesson("day87")
STAGGER = chooser.DEV_BUILDS["stagger"]
DESC = chooser.DEV_BUILDS["desc"]
STAGDESC = chooser.DEV_BUILDS["stagdesc"]
NEW = {"stagger": STAGGER, "desc": DESC, "stagdesc": STAGDESC}


def test_the_build_is_the_promoting_128x128_build_with_the_stagger_flag():
    assert STAGGER == {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_STAGGER": 1}
    # the host launches it as the promoting build: same Build (tile, cluster, promotion)
    assert build_for(LESSON, STAGGER) == build_for(LESSON, chooser.PROMOTE_BUILD)


def test_the_descriptor_adds_builds_are_the_promoting_and_staggered_builds_with_the_flag():
    assert DESC == {**chooser.PROMOTE_BUILD, "GEMM_DESC_ITER": 1}
    assert STAGDESC == {**STAGGER, "GEMM_DESC_ITER": 1}
    assert build_for(LESSON, DESC) == build_for(LESSON, STAGDESC) == build_for(LESSON, chooser.PROMOTE_BUILD)


@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_compiles_without_spills_or_wgmma_serialization(cluster, name):
    result = compile_offline(LESSON, defines={**NEW[name], "GEMM_CLUSTER": cluster}, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log
    assert not any("C75" in w for w in report.warnings), result.log
    # another program than the promoting build's: the flag reaches the code
    assert (
        result.cubin
        != compile_offline(LESSON, defines={**chooser.PROMOTE_BUILD, "GEMM_CLUSTER": cluster}).cubin
    )


def _ptx(flags: dict[str, int]) -> str:
    ptx = compile_offline(LESSON, defines=flags).ptx
    return ptx if isinstance(ptx, str) else ptx.decode()


def _events(ptx: str) -> list[str]:
    """The PTX's wgmma commits and waits, and each run of FP32 adds as "add N", in order."""
    out: list[str] = []
    adds = 0
    for line in ptx.splitlines():
        if "add.f32" in line:
            adds += 1
            continue
        if adds:
            out.append(f"add {adds}")
            adds = 0
        if "wgmma.commit_group" in line:
            out.append("commit")
        elif "wgmma.wait_group.sync.aligned 0" in line:
            out.append("wait 0")
    return out


def test_consumer_1_promotes_between_the_two_halves_of_a_k_tile():
    # In the PTX: a commit, a wait_group 0 and a run of 64 FADDs, then another commit with no wait before
    # it (the second half's new chain, left in flight across the next K-tile's full-barrier wait).
    text = " | ".join(_events(_ptx(STAGGER)))
    assert "commit | wait 0 | add 64 | commit" in text
    plain = " | ".join(_events(_ptx(chooser.PROMOTE_BUILD)))
    assert text.count("add 64") > plain.count("add 64")  # consumer 1's loop is a second copy


@pytest.mark.parametrize(
    "flags",
    [
        {"GEMM_PROMOTE_STAGGER": 1},  # the 128 x 256 default: no promotion
        {"GEMM_BN": 128, "GEMM_PROMOTE_STAGGER": 1},  # not promoting
        {"GEMM_BN": 192, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_STAGGER": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_BLOCK_SCALES": 1, "GEMM_PROMOTE_STAGGER": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_OVERLAP": 1, "GEMM_PROMOTE_STAGGER": 1},
    ],
    ids=["default", "bn128", "bn192", "block", "overlap"],
)
def test_other_combinations_are_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="the staggered-promotion build|the overlapped-promotion build"):
        compile_offline(LESSON, defines=flags)


def test_a_flag_other_than_0_or_1_is_refused():
    with pytest.raises(CompileError, match="GEMM_PROMOTE_STAGGER is 0 or 1"):
        compile_offline(LESSON, defines={**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_STAGGER": 2})
    with pytest.raises(CompileError, match="GEMM_DESC_ITER is 0 or 1"):
        compile_offline(LESSON, defines={**chooser.PROMOTE_BUILD, "GEMM_DESC_ITER": 2})


@pytest.mark.parametrize(
    "flags",
    [
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_PINGPONG": 1, "GEMM_DESC_ITER": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_OVERLAP": 1, "GEMM_DESC_ITER": 1},
    ],
    ids=["pingpong", "overlap"],
)
def test_descriptor_adds_are_refused_outside_the_cooperative_loops(flags):
    with pytest.raises(CompileError, match="the descriptor increments"):
        compile_offline(LESSON, defines=flags)


@pytest.mark.parametrize(
    "flags",
    [{}, {"GEMM_BN": 128}, {"GEMM_BN": 64}, {**chooser.PROMOTE_BUILD, "GEMM_BLOCK_SCALES": 1}],
    ids=["default", "bn128", "bn64", "block"],
)
def test_the_descriptor_adds_change_the_program_of_every_cooperative_build(flags):
    plain = compile_offline(LESSON, defines=flags).cubin
    assert compile_offline(LESSON, defines={**flags, "GEMM_DESC_ITER": 1}).cubin != plain


def test_the_chooser_never_picks_it_and_the_bench_times_it_only_when_asked(monkeypatch):
    assert STAGGER not in chooser.PROMOTE_TILES.values()
    for n in (256, 1024, 4096, 16384):
        for sms in (114, 132):
            assert chooser.choose(n, n, sms) not in NEW.values()
            assert not {"GEMM_PROMOTE_STAGGER", "GEMM_DESC_ITER"} & set(chooser.promoting(n, n, sms))
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert "stagger" not in bench.dev_builds()
    monkeypatch.setenv(bench.PINGPONG_ENV, "stagger, desc, stagdesc")
    assert bench.dev_builds() == ("stagger", "desc", "stagdesc")
    assert (
        bench.DEV_INTERVALS["stagger"] == bench.DEV_INTERVALS["stagdesc"] == (1,)
    )  # every K-tile, whatever P
    assert bench.DEV_INTERVALS["desc"] == (1,)


GPU_SHAPES = SHAPES  # the development builds' ragged shapes (dev_gpu.py)


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize("name", list(NEW))
def test_it_is_exact_on_ragged_shapes_at_the_accuracy_of_promoting_every_k_tile(gpu_for, cluster, name):
    gpu_for("day87")
    compiled = compile_lesson(LESSON, defines={**NEW[name], "GEMM_CLUSTER": cluster})
    for shape in GPU_SHAPES:
        result = run_lesson(
            LESSON, compiled=compiled, progress=lambda line: None, shape=shape, promote_every=1
        )
        assert result.passed, (cluster, shape, result.lines)
        assert result.check.total == shape[0] * shape[1]
