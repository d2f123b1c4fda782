"""Day 86 on a Hopper GPU: every build, ragged shapes and splits, every element against float64."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernel.compile import compile_lesson
from course.kernel.host import run_lesson
from course.lessons import get_lesson
from course.lessons.day86 import chooser

LESSON = get_lesson("day86")
# The C++ program's shapes: not tile multiples in M, N or K (the last one ragged in N only).
SHAPES = [(200, 136, 72), (1000, 1032, 520), (130, 392, 1096), (2056, 264, 200), (72, 8, 8), (1, 8, 1000)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    ("bn", "cluster"), chooser.CONFIGS, ids=[f"128x{b}-c{c}" for b, c in chooser.CONFIGS]
)
def test_every_build_is_exact_on_ragged_shapes_split_or_not(gpu_for, bn, cluster):
    gpu_for("day86")
    compiled = compile_lesson(LESSON, defines={"GEMM_BN": bn, "GEMM_CLUSTER": cluster})
    for shape in SHAPES:
        # Split 3 where K has three K-tiles of 64 (the host refuses more splits than K-tiles,
        # as the C++ program's main() never asks for them: split 2 at K = 72, 1 at K = 8).
        for split in sorted({1, min(3, -(-shape[2] // 64))}):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=split
            )
            assert result.passed, (bn, cluster, shape, split, result.lines)
            assert result.check.total == shape[0] * shape[1]  # every element
            assert f"{'x'.join(map(str, shape))} split {split}: PASS" in result.lines[-1]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("rows", chooser.A_ROWS)
def test_a_short_a_box_is_exact_at_every_m_it_takes_split_or_not(gpu_for, rows):
    # -DGEMM_A_ROWS (decode, session 24): M from 1 to the box's rows, ragged N and K, split or not,
    # and the deterministic build; the rows past the box come from the zeros written at setup.
    gpu_for("day86")
    for det in (False, True):
        flags = {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_A_ROWS": rows}
        compiled = compile_lesson(LESSON, defines={**flags, **({"GEMM_DETERMINISTIC": 1} if det else {})})
        for m in sorted({1, rows // 2 + 1, rows}):
            for shape, split in (((m, 1032, 520), 3), ((m, 392, 1096), 1)):
                result = run_lesson(
                    LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=split
                )
                assert result.passed, (rows, det, shape, split, result.lines)
                assert result.check.total == shape[0] * shape[1]


@pytest.mark.gpu
@pytest.mark.hopper
def test_a_refused_shape_is_refused_before_launch(gpu_for):
    gpu_for("day86")
    with pytest.raises(CourseError, match="stride-16B"):
        run_lesson(LESSON, progress=lambda line: None, shape=(1000, 1030, 520), split=1)


def _runs(compiled, shape, split, launches):
    """D's bits from ``launches`` launches of one build on the same random normal inputs (the
    benchmark's N(0, 1) operands: their FP32 sums are not exact, so their order shows in D's bits),
    each checked against float64 first."""
    import cupy as cp

    from course.kernel.host import host_of

    work = host_of(LESSON).workload(compiled, max(shape), 1, "bench", shape=shape, split=split)
    out = []
    for _ in range(launches):
        work.poison(0)
        work.launch(0)
        cp.cuda.get_current_stream().synchronize()
        check = work.check(work.out(0))
        assert check.passed, check
        out.append(cp.asnumpy(work.out(0)).view("uint16").copy())
    return out


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(("bn", "cluster"), [(256, 2), (128, 1)], ids=["128x256-c2", "128x128-c1"])
def test_the_deterministic_build_gives_the_same_bits_every_launch(gpu_for, bn, cluster):
    gpu_for("day86")
    # Few tiles, long K, split 8: eight partials per tile, arriving in whatever order the SMs finish.
    shape, split, launches = (520, 1032, 8200), 8, 12
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cluster}
    det = compile_lesson(LESSON, defines={**flags, "GEMM_DETERMINISTIC": 1})
    runs = _runs(det, shape, split, launches)
    for i, bits in enumerate(runs[1:], 1):
        differ = int((bits != runs[0]).sum())
        assert differ == 0, (
            f"launch {i} of the deterministic build differs from launch 0 in {differ} elements"
        )
    # The default build may differ from launch to launch (which split arrives last decides the
    # order of its FP32 sums); said, not asserted: it can also come out the same.
    plain = _runs(compile_lesson(LESSON, defines=flags), shape, split, launches)
    changed = sum(bool((bits != plain[0]).any()) for bits in plain[1:])
    print(f"default build 128x{bn} c{cluster}: {changed} of {launches - 1} launches differ from the first")


@pytest.mark.gpu
@pytest.mark.hopper
def test_a_deterministic_run_from_the_page_runs_that_build(gpu_for):
    gpu_for("day86")
    result = run_lesson(
        LESSON, progress=lambda line: None, shape=(1000, 1032, 520), split=3, deterministic=True
    )
    assert result.passed, result.lines
    assert "split 3 (deterministic): PASS" in result.lines[-1]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    ("bn", "det"), [(64, 0), (128, 0), (128, 1)], ids=["small64", "small128", "small128-det"]
)
def test_the_small_builds_are_exact_on_ragged_shapes_split_or_not_two_ctas_an_sm(gpu_for, bn, det):
    # -DGEMM_SMALL=1 (issue 39): two CTAs an SM, no cluster launch; the grid is 2 x SMs at most
    gpu_for("day86")
    flags = {"GEMM_SMALL": 1, "GEMM_BM": 64, "GEMM_BN": bn, "GEMM_CLUSTER": 1, "GEMM_DETERMINISTIC": det}
    compiled = compile_lesson(LESSON, defines=flags)
    for shape in [*SHAPES, (8, 4104, 1000), (1024, 1024, 1024), (4104, 776, 1240)]:
        for split in sorted({1, min(3, -(-shape[2] // 64))}):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=split
            )
            assert result.passed, (flags, shape, split, result.lines)
            assert result.check.total == shape[0] * shape[1]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    ("bn", "cluster", "det"),
    [(256, 1, 0), (256, 2, 1), (128, 1, 0), (64, 1, 1), (64, 1, 0)],
    ids=["64x256-c1", "64x256-c2-det", "64x128-c1", "64x64-c1-det", "64x64-c1"],  # the last: a decode pick
)
def test_the_64_row_builds_are_exact_on_ragged_shapes_split_or_not(gpu_for, bn, cluster, det):
    gpu_for("day86")
    flags = {"GEMM_BM": 64, "GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_DETERMINISTIC": det}
    compiled = compile_lesson(LESSON, defines=flags)
    for shape in [*SHAPES, (8, 4104, 1000), (64, 264, 2056)]:
        for split in sorted({1, min(3, -(-shape[2] // 64))}):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=split
            )
            assert result.passed, (flags, shape, split, result.lines)
            assert result.check.total == shape[0] * shape[1]


# Stream-K (-DGEMM_STREAMK=1). Shapes whose schedule on a full H100/H200 shares tiles: fewer cluster
# tiles than slots with enough K-iterations (1000 x 1032 x 520 and the decode step), a second,
# partial wave (4104 x 776 x 1240 at 128 x 64 tiles), and the C++ program's tiny ones (data-parallel).
STREAMK_SHAPES = [*SHAPES, (4104, 776, 1240), (1, 8192, 8192), (1000, 3000, 704)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    ("bm", "bn", "cluster", "det"),
    [(128, 256, 2, 0), (128, 128, 1, 0), (128, 64, 2, 1), (64, 128, 2, 0)],
    ids=["sk-128x256-c2", "sk-128x128-c1", "sk-128x64-c2-det", "sk-64x128-c2"],
)
def test_the_stream_k_builds_are_exact_on_ragged_shapes(gpu_for, bm, bn, cluster, det):
    gpu_for("day86")
    from course.lessons._ladder import ragged_problem, sm_count

    flags = {
        "GEMM_BM": bm,
        "GEMM_BN": bn,
        "GEMM_CLUSTER": cluster,
        "GEMM_DETERMINISTIC": det,
        "GEMM_STREAMK": 1,
    }
    compiled = compile_lesson(LESSON, defines=flags)
    shared = 0
    for shape in STREAMK_SHAPES:
        result = run_lesson(LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=1)
        assert result.passed, (flags, shape, result.lines)
        assert result.check.total == shape[0] * shape[1]
        shared += ragged_problem(LESSON.constants(flags), shape, 1).stream_k(sm_count()).shared_tiles()
    assert shared > 0  # the fixup ran somewhere


@pytest.mark.gpu
@pytest.mark.hopper
def test_the_deterministic_stream_k_build_gives_the_same_bits_every_launch(gpu_for):
    gpu_for("day86")
    # 1 x 8192 x 8192 at 128 x 256: 32 tiles of 128 K-tiles over every slot, four or five units a tile.
    flags = {"GEMM_BN": 256, "GEMM_CLUSTER": 1, "GEMM_STREAMK": 1}
    runs = _runs(compile_lesson(LESSON, defines={**flags, "GEMM_DETERMINISTIC": 1}), (1, 8192, 8192), 1, 12)
    for i, bits in enumerate(runs[1:], 1):
        differ = int((bits != runs[0]).sum())
        assert differ == 0, f"launch {i} of the deterministic Stream-K build differs in {differ} elements"
