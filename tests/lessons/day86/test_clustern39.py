"""Issue 39: Day 86's cluster along N (-DGEMM_CLUSTER_N=2 with -DGEMM_CLUSTER=1; kernels/gemm7_shapes.cu).

The pair of CTAs sits side by side along N and shares A: each loads half of the A tile's rows and
multicasts them to both, each loads its own B tile whole (cuBLAS's clusters at 4104 x 776 x 1240,
evidence/gemm_dev/notes_ncu_gap.md). Over an odd number of tile columns the last pair's second CTA has
no tile: it loads its slice of A for its peer and stores nothing.

On the CPU: each build compiles through NVRTC for sm_90a with no spills; its PTX has the cluster launch
and A's multicast; its constants and the host's launch arithmetic (units, grid, the split-K buffers,
which count no padding column) are what the header's contract says; the combinations the file refuses
are refused. On a Hopper GPU (marked ``gpu``; skipped here): each build is exact on ragged shapes, odd
tile columns and split K included (evidence/gemm_dev/bn39_gpu.sh runs these and times the builds).
"""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._ladder import ragged_problem

LESSON = get_lesson("day86")
WIDTHS = (200, 256, 128)  # 200: cuBLAS's width at 4104 x 776 x 1240; 256 and 128: the regular widths


def along_n(bn: int, bm: int = 128) -> dict[str, int]:
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": 1, "GEMM_CLUSTER_N": 2}
    return {**flags, "GEMM_BM": bm} if bm != 128 else flags


def _ptx(flags: dict[str, int]) -> str:
    ptx = compile_offline(LESSON, defines=flags).ptx
    return ptx if isinstance(ptx, str) else ptx.decode()


@pytest.mark.parametrize("bn", WIDTHS)
def test_each_cluster_along_n_build_compiles_without_spills_and_multicasts_a(bn):
    flags = along_n(bn)
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma, result.log
    c = LESSON.constants(flags)
    assert (c["kClusterM"], c["kClusterN"], c["kBM"], c["kBN"]) == (1, 2, 128, bn)
    assert c["kBoxARows"] == 64 and c["kBoxBRows"] == bn  # half of A's rows a CTA, B whole
    ptx = _ptx(flags)
    assert ".reqnctapercluster 2, 1, 1" in ptx and "barrier.cluster" in ptx  # a cluster launch of two
    assert "multicast::cluster" in ptx  # A's slices go to both CTAs
    plain = {"GEMM_BN": bn, "GEMM_CLUSTER": 1}
    assert "multicast::cluster" not in _ptx(plain)  # cluster 1 along M: no multicast at all
    assert result.cubin != compile_offline(LESSON, defines=plain).cubin


def test_the_64_row_tile_along_n_splits_a_into_32_row_slices():
    c = LESSON.constants(along_n(128, bm=64))
    assert (c["kBoxARows"], c["kConsumers"], c["kThreadsPerBlock"]) == (32, 1, 256)
    report = parse(
        compile_offline(LESSON, defines=along_n(128, bm=64), ptxas_verbose=True).log, LESSON.kernel_name
    )
    assert not report.spills


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"GEMM_CLUSTER": 2, "GEMM_CLUSTER_N": 2}, "a cluster along M or along N, not both"),
        ({**along_n(256), "GEMM_STREAMK": 1}, "not Stream-K"),
        ({**along_n(64, bm=64), "GEMM_SMALL": 1}, "not the small build"),
        ({"GEMM_CLUSTER": 1, "GEMM_CLUSTER_N": 4}, "GEMM_CLUSTER_N is 1, or 2"),
    ],
    ids=["both-axes", "stream-k", "small", "four"],
)
def test_what_the_file_refuses_along_n_it_refuses_at_compile_time(flags, message):
    with pytest.raises(CourseError, match=message):
        compile_offline(LESSON, defines=flags)


# (shape, width) -> (tile columns, cluster-tile columns, units unsplit, grid on 132 SMs)
WAVES = [
    ((4104, 776, 1240), 200, 4, 2, 66, 132),  # 33 rows x 2 pairs: cuBLAS's 132 CTAs, one wave
    ((4104, 776, 1240), 256, 4, 2, 66, 132),
    ((1000, 1032, 520), 256, 5, 3, 24, 48),  # 8 rows x 3 pairs, the last pair's second CTA idle
    ((1, 8, 1000), 128, 1, 1, 1, 2),
]


@pytest.mark.parametrize(("shape", "bn", "tiles_n", "columns", "units", "grid"), WAVES)
def test_the_host_launch_arithmetic_counts_pairs_along_n(shape, bn, tiles_n, columns, units, grid):
    p = ragged_problem(LESSON.constants(along_n(bn)), shape, 1)
    assert (p.cluster, p.cluster_n, p.cluster_size) == (1, 2, 2)
    assert (p.tiles_n, p.cluster_tiles_n, p.units, p.grid(132)) == (tiles_n, columns, units, grid)
    split = ragged_problem(LESSON.constants(along_n(bn)), shape, 3)
    assert split.units == 3 * units and split.grid(132) == min(66, 3 * units) * 2
    # The buffers count CTA tiles of D, not the idle CTA of an odd pair: the kernel's counter index is
    # mBlock * ceil(N / BN) + nBlock, and that CTA never counts in.
    rows = -(-shape[0] // 128)
    assert split.cta_tiles == rows * tiles_n
    assert split.workspace_floats == rows * tiles_n * 3 * 128 * bn and split.counters == rows * tiles_n * 2


def test_the_cluster_along_m_arithmetic_is_unchanged():
    p = ragged_problem(LESSON.constants({"GEMM_BN": 256, "GEMM_CLUSTER": 2}), (1000, 1032, 520), 1)
    assert (p.cluster_n, p.cluster_size, p.cluster_tiles_n, p.units, p.grid(132)) == (1, 2, 5, 20, 40)


# On a Hopper GPU: test_wide39's ragged shapes, whose tile columns are odd at 256 (1032: 5; 8: 1) and
# at 200 and 128 (136: 1; 392: 2 at 200, 4 at 128; 264: 2 at 200, 3 at 128), split 1 and 3.
GPU_SHAPES = [
    (200, 136, 72),
    (1000, 1032, 520),
    (130, 392, 1096),
    (2056, 264, 200),
    (72, 8, 8),
    (1, 8, 1000),
    (1000, 3000, 704),
    (4104, 776, 1240),
]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("bn", WIDTHS)
def test_each_cluster_along_n_build_is_exact_on_ragged_shapes_split_or_not(gpu_for, bn):
    from course.kernel.compile import compile_lesson
    from course.kernel.host import run_lesson

    gpu_for("day86")
    compiled = compile_lesson(LESSON, defines=along_n(bn))
    for shape in GPU_SHAPES:
        for split in sorted({1, min(3, -(-shape[2] // 64))}):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=split
            )
            assert result.passed, (bn, shape, split, result.lines)
            assert result.check.total == shape[0] * shape[1]  # every element
