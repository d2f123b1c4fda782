"""Day 87 on a Hopper GPU: every build on ragged shapes, every element against float64 of the
dequantised inputs; the promoting build at several intervals; a refused shape; cuBLASLt agrees."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernel.compile import compile_lesson
from course.kernel.host import run_lesson
from course.lessons import get_lesson

LESSON = get_lesson("day87")
# The C++ program's shapes: not tile multiples in M, N or K (K a multiple of 16).
SHAPES = [(200, 136, 144), (1000, 1032, 528), (130, 392, 1104), (2056, 264, 208), (72, 8, 16), (1, 8, 1008)]
BUILDS = [(256, 2, 0), (256, 1, 0), (128, 2, 1), (128, 1, 1)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    ("bn", "cluster", "promote"), BUILDS, ids=[f"128x{b}-c{c}-p{p}" for b, c, p in BUILDS]
)
def test_every_build_is_exact_on_ragged_shapes(gpu_for, bn, cluster, promote):
    gpu_for("day87")
    compiled = compile_lesson(
        LESSON, defines={"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_PROMOTE": promote}
    )
    for shape in SHAPES:
        for every in (0, 1, 3) if promote else (0,):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, promote_every=every
            )
            assert result.passed, (bn, cluster, promote, shape, every, result.lines)
            assert result.check.total == shape[0] * shape[1]
            assert f"{'x'.join(map(str, shape))} promote every {every}: PASS" in result.lines[-1]


@pytest.mark.gpu
@pytest.mark.hopper
def test_a_refused_shape_and_interval_are_refused_before_launch(gpu_for):
    gpu_for("day87")
    with pytest.raises(CourseError, match="stride-16B"):
        run_lesson(LESSON, progress=lambda line: None, shape=(1000, 1032, 520))
    with pytest.raises(CourseError, match="needs the promoting build"):
        run_lesson(LESSON, progress=lambda line: None, promote_every=1)


@pytest.mark.gpu
@pytest.mark.hopper
def test_quantised_normal_inputs_match_float64_and_cublaslt(gpu_for):
    gpu_for("day87")
    # heavy: nvmath, the peer's library
    pytest.importorskip(
        "nvmath", reason="nvmath-python is not installed: no cuBLASLt FP8 peer to compare with"
    )
    from course.lessons.day87.bench import lt_peers
    from course.lessons.day87.host import HOST

    compiled = compile_lesson(LESSON)
    work = HOST.workload(compiled, 1024, 1, "bench", shape=(1024, 1024, 2048))
    work.poison(0)
    work.launch(0)
    assert work.check(work.out(0)).passed
    for peer in lt_peers():
        work.poison(0)
        peer.call(work, 0)
        check = work.check(work.out(0))
        assert check.passed, (peer.name, check.describe())


BLOCK_CLUSTERS = (2, 1)


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", BLOCK_CLUSTERS, ids=[f"c{c}" for c in BLOCK_CLUSTERS])
def test_the_block_scaled_build_is_exact_on_ragged_shapes(gpu_for, cluster):
    gpu_for("day87")
    defines = {"GEMM_BN": 128, "GEMM_CLUSTER": cluster, "GEMM_PROMOTE": 1, "GEMM_BLOCK_SCALES": 1}
    compiled = compile_lesson(LESSON, defines=defines)
    for shape in SHAPES:
        result = run_lesson(LESSON, compiled=compiled, progress=lambda line: None, shape=shape)
        assert result.passed, (cluster, shape, result.lines)
        assert result.check.total == shape[0] * shape[1]
        assert f"gemm8 block scales {'x'.join(map(str, shape))} promote every 1: PASS" in result.lines[-1]
    with pytest.raises(CourseError, match="promotes after every K-tile"):
        run_lesson(LESSON, compiled=compiled, progress=lambda line: None, promote_every=2)


@pytest.mark.gpu
@pytest.mark.hopper
def test_block_scales_keep_the_small_rows_one_scale_loses(gpu_for):
    gpu_for("day87")
    from course.lessons._fp8 import draw_inputs, segment_error
    from course.lessons.day87.bench import BLOCK_BUILD, PROMOTE_BUILD
    from course.lessons.day87.host import HOST

    shape = (1000, 1032, 528)
    per = HOST.workload(
        compile_lesson(LESSON, defines=PROMOTE_BUILD),
        1024,
        1,
        "bench",
        shape=shape,
        promote_every=1,
        dist="skewed",
    )
    blk = HOST.workload(
        compile_lesson(LESSON, defines=BLOCK_BUILD), 1024, 1, "bench", shape=shape, dist="skewed"
    )
    a, b = (x[0].astype("float64") for x in draw_inputs(shape, "skewed"))
    original = a @ b.T
    errors = {}
    for name, work in (("per", per), ("block", blk)):
        work.poison(0)
        work.launch(0)
        check = work.check(work.out(0))
        assert check.passed, (name, check.describe())
        errors[name] = segment_error(work.out(0), original)
        errors[f"{name} own"] = segment_error(work.out(0), work.want())
    # against its own dequantised inputs each is accurate; against the original inputs one scale per
    # tensor has flushed the small rows to e4m3's subnormals, block scales have not
    assert errors["block own"] < 1e-2 and errors["per own"] < 1e-2, errors
    assert errors["per"] > 2 * errors["block"], errors


# The ping-pong promoting build (GEMM_PROMOTE_PINGPONG=1; course/lessons/day87/pingpong.py models its
# turns): the C++ program's shapes, and two with many 64-row tiles (CTAs with an odd number of units:
# a last unit without a partner) and K-tiles past the ring's 8 stages, at every kind of interval:
# never, every K-tile, a chain of 3, and a chain of 12 (longer than the ring).
PINGPONG_SHAPES = [*SHAPES, (2304, 2504, 768), (4100, 264, 2064)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
def test_the_pingpong_build_is_exact_on_ragged_shapes(gpu_for, cluster):
    gpu_for("day87")
    compiled = compile_lesson(
        LESSON,
        defines={"GEMM_BN": 128, "GEMM_CLUSTER": cluster, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_PINGPONG": 1},
    )
    for shape in PINGPONG_SHAPES:
        for every in (0, 1, 3, 12):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, promote_every=every
            )
            assert result.passed, (cluster, shape, every, result.lines)
            assert result.check.total == shape[0] * shape[1]


# The larger promoting tiles (GEMM_BM=192: three consumers of 64 x 128; GEMM_BN=192: two of 64 x 192),
# through the course's NVRTC path: the C++ program's shapes and two with more units than clusters and
# more K-tiles than the 5-stage ring, never promoting, every K-tile and every 3.
WIDE_SHAPES = [*SHAPES, (2304, 2504, 768), (1400, 2504, 400)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
@pytest.mark.parametrize(
    "defines", [{"GEMM_BN": 128, "GEMM_BM": 192}, {"GEMM_BN": 192}], ids=["192x128", "128x192"]
)
def test_the_larger_promoting_tiles_are_exact_on_ragged_shapes(gpu_for, defines, cluster):
    gpu_for("day87")
    compiled = compile_lesson(LESSON, defines={**defines, "GEMM_CLUSTER": cluster, "GEMM_PROMOTE": 1})
    for shape in WIDE_SHAPES:
        for every in (0, 1, 3):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, promote_every=every
            )
            assert result.passed, (defines, cluster, shape, every, result.lines)
            assert result.check.total == shape[0] * shape[1]
