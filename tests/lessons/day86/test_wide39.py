"""Issue 39's development widths of Day 86's kernel: -DGEMM_BN=200, 192, 160, 144, 96 (``chooser.DEV_BUILDS``).

On the CPU: each compiles through NVRTC for sm_90a with no spills, its constants are what the host
expects (the ring, the narrower D boxes, the grid and the units); the chooser picks only the widths
the H100 measured faster somewhere (``chooser.WIDE_CONFIGS``, unsplit), priced at what that run
measured, and refuses to price the others with a CourseError. On a Hopper GPU (marked ``gpu``;
skipped here): each is exact on ragged shapes, split or not (first run on an H100 on 2026-12-06,
session 16: evidence/logs/2026-12-06-h100-s16/, evidence/gemm_dev/notes_bn39.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from course.errors import CourseError
from course.hopper.tensormap import TileMap
from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._ladder import ragged_problem
from course.lessons.day86 import chooser

LESSON = get_lesson("day86")
DEV = list(chooser.DEV_BUILDS.items())
IDS = [name for name, _ in DEV]
# Per width: D's store box (columns), the ring's stages (what 227 KiB leaves beside one staging box a
# consumer and 2 KiB of barriers and slack). A staging box holds 64 rows of one 128-byte swizzle line
# each, whatever the box's width: the TMA reads a narrower box's rows 128 bytes apart (the kernel's
# region wide39-epilogue; rows packed 96 or 64 bytes apart faulted on the H100, session 16).
BOX = {200: 40, 192: 64, 160: 32, 144: 48, 96: 48}
STAGES = {200: 5, 192: 5, 160: 5, 144: 6, 96: 7}
# The Stream-K builds: 200's (100 accumulators a thread) spills 8 bytes through NVRTC, so it is no build
# of the course's; the chooser prices the development widths unsplit only.
STREAMK_BNS = tuple(bn for bn in chooser.DEV_BNS if bn != 200)


def test_the_development_builds_are_the_widths_at_each_cluster_that_splits_b_in_whole_atoms():
    assert chooser.DEV_BNS == (200, 192, 160, 144, 96)
    assert len(chooser.DEV_BUILDS) == 9 and "128x200c2" not in chooser.DEV_BUILDS
    for name, flags in DEV:
        assert name == f"128x{flags['GEMM_BN']}c{flags['GEMM_CLUSTER']}"
        # modelled once measured faster somewhere (WIDE_CONFIGS), else never
        key = (flags["GEMM_BN"], flags["GEMM_CLUSTER"])
        assert (key in chooser.EFFICIENCY) == (key in chooser.WIDE_CONFIGS)


@pytest.mark.parametrize("flags", [f for _, f in DEV], ids=IDS)
def test_every_development_build_compiles_without_spills_and_its_constants_are_the_hosts(flags):
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma, result.log
    bn, cluster = flags["GEMM_BN"], flags["GEMM_CLUSTER"]
    c = LESSON.constants(flags)
    assert (c["kBM"], c["kBN"], c["kClusterM"], c["kThreadsPerBlock"]) == (128, bn, cluster, 384)
    assert c["kBoxBRows"] == bn // cluster and c["kBoxBRows"] % 8 == 0  # whole 8-row swizzle atoms
    assert c["kAccRegs"] == bn // 2  # m64n<bn>k16: bn / 2 floats a thread
    assert c["kBoxDCols"] == BOX[bn] and c["kBoxDRows"] == 64
    assert c["kPasses"] == bn // BOX[bn] and c["kStagingBoxes"] == c["kStagingSlots"] == 1
    assert c["kStageBytes"] == 128 * 64 * 2 + bn * 64 * 2
    assert c["kStages"] == STAGES[bn]
    assert (
        c["kStagingCols"] == 64
    )  # a staging row is a whole 128-byte line, the box's 48 or 32 columns or not
    staging = 2 * 64 * 128
    assert c["kSmemBytes"] == c["kStages"] * c["kStageBytes"] + staging + 1024 + 1024 <= 227 * 1024
    # The host's D map (the same 128B swizzle as every build's) is legal for the narrower box.
    TileMap(1544, 1000, int(c["kBoxDCols"]), int(c["kBoxDRows"]), elem_bytes=2, swizzle="128B").check()
    # Another program than the 256, 128 or 64 builds (the width reaches the code).
    assert result.cubin != compile_offline(LESSON, defines={"GEMM_BN": 128, "GEMM_CLUSTER": cluster}).cubin


@pytest.mark.parametrize("bn", STREAMK_BNS)
def test_the_stream_k_and_deterministic_builds_of_a_development_width_compile_without_spills(bn):
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": 2, "GEMM_STREAMK": 1, "GEMM_DETERMINISTIC": 1}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma, result.log


def test_the_existing_builds_keep_their_rings_and_boxes():
    for bn, stages in ((256, 4), (128, 6), (64, 8)):
        c = LESSON.constants({"GEMM_BN": bn})
        assert (c["kBoxDCols"], c["kStagingSlots"], c["kStages"], c["kSmemBytes"]) == (64, 2, stages, 231424)
        assert c["kPasses"] == (2 if bn == 256 else 1)
    small = LESSON.constants({"GEMM_BN": 128, "GEMM_BM": 64, "GEMM_SMALL": 1, "GEMM_CLUSTER": 1})
    assert (small["kStages"], small["kStagingSlots"]) == (3, 2)


@pytest.mark.parametrize(
    "flags",
    [
        {"GEMM_BN": 112},
        {"GEMM_BN": 144, "GEMM_BM": 64},
        {"GEMM_BN": 96, "GEMM_BM": 64, "GEMM_SMALL": 1, "GEMM_CLUSTER": 1},
    ],
    ids=["bn112", "64x144", "small-64x96"],
)
def test_another_width_or_a_64_row_development_build_is_refused_at_compile_time(flags):
    with pytest.raises(CourseError, match="GEMM_BN is 256, 128 or 64; or 200, 192, 160, 144 or 96"):
        compile_offline(LESSON, defines=flags)


def test_width_200_at_cluster_2_is_refused_at_compile_time_its_b_halves_are_no_whole_atoms():
    with pytest.raises(CourseError, match="whole 8-row swizzle atoms"):
        compile_offline(LESSON, defines={"GEMM_BN": 200, "GEMM_CLUSTER": 2})


# (shape, width, cluster) -> (units, grid on 132 SMs): the wave arithmetic of notes_bn39.md
WAVES = [
    ((1536, 1536, 1536), 144, 1, 132, 132),  # 12 x 11 tiles: one full wave, as cuBLAS's 128 x 144
    ((1536, 1536, 1536), 144, 2, 66, 132),
    ((1200, 1200, 1200), 96, 1, 130, 130),  # 10 x 13
    ((1000, 3000, 704), 192, 1, 128, 128),  # 8 x 16
    ((2560, 2560, 2560), 144, 2, 180, 132),  # 10 x 18 cluster tiles: 2.73 waves
    ((4104, 776, 1240), 160, 1, 165, 132),  # 33 x 5
]


@pytest.mark.parametrize(("shape", "bn", "cluster", "units", "grid"), WAVES)
def test_the_host_launch_arithmetic_takes_the_development_widths(shape, bn, cluster, units, grid):
    c = LESSON.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster})
    p = ragged_problem(c, shape, 1)
    assert (p.tile_n, p.units, p.grid(132)) == (bn, units, grid)
    split = ragged_problem(c, shape, 2)
    assert split.units == 2 * units
    assert split.workspace_floats == split.cta_tiles * 2 * 128 * bn and split.counters == split.cta_tiles * 2
    sk = ragged_problem(
        LESSON.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_STREAMK": 1}), shape, 1
    )
    assert sk.grid(132) == 132 and sk.buffers(132)[0] % (128 * bn) == 0


# The pick tests' shapes (test_compile.PICK_SHAPES) and the issue's middle-sized ones.
PICK_SHAPES = [
    *chooser.SHAPES,
    *((m, n, k) for m in (1, 2, 4, 32, 64) for n, k in ((8192, 8192), (4096, 14336))),
    *((s, s, s) for s in (256, 768)),
    (8, 4104, 1000),
]


def test_the_chooser_picks_a_development_width_only_from_the_measured_ones_and_unsplit():
    wide = set(chooser.WIDE_CONFIGS)
    assert wide == {(192, 2), (160, 2), (144, 2), (200, 1)} and all(c in chooser.EFFICIENCY for c in wide)
    for shape in PICK_SHAPES:
        for sms in (8, 78, 114, 132):
            for det in (False, True):
                ranked = chooser.candidates(*shape, sms, deterministic=det, streamk=True)
                for c in ranked:
                    if c.bn in chooser.DEV_BNS and not c.along_n:  # along N: test_chooser's first test
                        assert (c.bn, c.cluster) in wide and c.split == 1 and not c.streamk and c.bm == 128
                        flags = chooser.defines(c)
                        assert flags == {"GEMM_BN": c.bn, "GEMM_CLUSTER": c.cluster}
                        assert flags in chooser.DEV_BUILDS.values()
                for small in (False, True):
                    pick = chooser.choose(*shape, sms, deterministic=det, small=small)
                    assert (
                        pick.bn not in chooser.DEV_BNS
                        or pick.along_n
                        or ((pick.bn, pick.cluster) in wide and pick.split == 1)
                    )


UNMODELLED = [
    (f["GEMM_BN"], f["GEMM_CLUSTER"])
    for _, f in DEV
    if (f["GEMM_BN"], f["GEMM_CLUSTER"]) not in chooser.WIDE_CONFIGS
]


def test_the_unmodelled_development_builds_are_96_and_the_cluster_1_widths_but_200():
    assert sorted(UNMODELLED) == [(96, 1), (96, 2), (144, 1), (160, 1), (192, 1)]


@pytest.mark.parametrize(("bn", "cluster"), UNMODELLED)
def test_asked_about_an_unmeasured_development_build_the_chooser_refuses_with_a_course_error(bn, cluster):
    with pytest.raises(
        CourseError, match=f"128x{bn} c{cluster} is a development build .*measured slower than another build"
    ):
        chooser.estimate(1536, 1536, 1536, 132, bn, cluster, 1)
    with pytest.raises(CourseError, match="development build"):
        chooser.estimate_streamk(1536, 1536, 1536, 132, bn, cluster)
    with pytest.raises(CourseError, match="give the split yourself"):
        chooser.best_for(1536, 1536, 1536, 132, bn, cluster)
    with pytest.raises(CourseError, match="no configuration 128x112"):
        chooser.estimate(1536, 1536, 1536, 132, 112, 2, 1)


def test_200_has_no_cluster_2_build_and_the_chooser_says_so():
    with pytest.raises(CourseError, match="128x200 c2 is a development build"):
        chooser.estimate(4104, 776, 1240, 132, 200, 2, 1)
    assert chooser.estimate(4104, 776, 1240, 132, 200, 1, 1) is not None


# The H100 run that measured the widths (every build checked against float64 first; CUDA graphs,
# interleaved with the pick of the time, "pick", and cuBLAS): the chooser's wide widths are held to it.
LOGS = Path(__file__).resolve().parents[3] / "evidence/logs"
MEASURED = LOGS / "2026-12-06-h100-s16/call2-bn39-measure.json"
# Session 16's run timed the cluster-2 widths; 128 x 200 (cluster 1) came later (session 17, below).
WIDE_C2 = [c for c in chooser.WIDE_CONFIGS if c[1] == 2]
NAME = {(bn, c): f"128x{bn}c{c}" for bn, c in WIDE_C2}


def _measured() -> list[dict]:
    return [r for r in json.loads(MEASURED.read_text())["rows"] if "graphs" in r]


def _implied(shape, bn, cluster, us):
    """The efficiency at which the model gives (bn, cluster), unsplit, the measured time (bisection)."""
    lo, hi = 0.05, 3.0
    saved = dict(chooser.EFFICIENCY)
    try:
        for _ in range(50):
            chooser.EFFICIENCY[(bn, cluster)] = mid = (lo + hi) / 2
            lo, hi = (mid, hi) if chooser.estimate(*shape, 132, bn, cluster, 1).est_us > us else (lo, mid)
    finally:
        chooser.EFFICIENCY.clear()
        chooser.EFFICIENCY.update(saved)
    return mid


def _bench_us(path: Path, shape: tuple[int, int, int]) -> tuple[dict, float]:
    """The pick's flags and its time in CUDA graphs, us, from a ``course bench day86`` recording."""
    reasons = {r["title"]: r for r in json.loads(path.read_text())["reasons"]}
    name = "x".join(map(str, shape))
    pick = reasons[f"{name}: the chooser's pick"]["detail"]
    rate = reasons[f"{name}: kernel rate (CUDA graphs)"]["value"]  # TFLOP/s
    return pick, 2 * math.prod(shape) / (rate * 1e12) * 1e6


def test_the_wide_widths_efficiency_lies_inside_what_the_h100_measured_against_128x256():
    ratios = {c: [] for c in WIDE_C2}
    for r in _measured():
        shape, us = tuple(r["shape"]), r["graphs"]["us"]
        if r["builds"]["pick"]["flags"] != {"GEMM_BN": 256, "GEMM_CLUSTER": 2}:
            continue
        base = _implied(shape, 256, 2, us["pick"]) / chooser.EFFICIENCY[(256, 2)]
        for c in WIDE_C2:
            ratios[c].append(_implied(shape, *c, us[NAME[c]]) / base)
    assert all(len(v) == 4 for v in ratios.values())  # 1536^3, 1000 x 3000 x 704, 2560^3, 2048^3
    aligned = [x for v in ratios.values() for x in v]
    assert 0.94 <= min(aligned) and max(aligned) <= 1.04, ratios
    # 2500 x 2504 x 2504 (ragged; N and K not multiples of 64): 128x144 c2 in session 16's bench,
    # 128x256 c2 in session 15's, both on the H100
    shape = (2500, 2504, 2504)
    pick16, us144 = _bench_us(LOGS / "2026-12-06-h100-s16/call3-day86.json", shape)
    pick15, us256 = _bench_us(LOGS / "2026-12-06-h100-s15/call3-day86.json", shape)
    assert pick16.startswith("tile 128x144, cluster 2, split 1") and pick15.startswith(
        "tile 128x256, cluster 2, split 1"
    )
    ragged = _implied(shape, 144, 2, us144) / (_implied(shape, 256, 2, us256) / chooser.EFFICIENCY[(256, 2)])
    assert 0.75 <= ragged <= 0.85
    for c in WIDE_C2:  # inside the spread, so picked only where the waves gain more
        assert ragged < chooser.EFFICIENCY[c] < min(aligned)
        assert chooser.EFFICIENCY[c] == pytest.approx((ragged + max(aligned)) / 2, abs=0.02)


@pytest.mark.usefixtures("cluster_launch_kernel")  # sessions 16 and 17 timed cluster launches
def test_where_the_model_picks_a_wide_width_it_measured_faster_or_within_the_runs_spread():
    faster = 0
    for r in _measured():
        shape, us = tuple(r["shape"]), r["graphs"]["us"]
        pick = chooser.choose(*shape, 132)
        if (pick.bn, pick.cluster) not in NAME:
            continue
        # never the slowest wide width, and no more than 3% behind the pick of the time
        mine = us[NAME[(pick.bn, pick.cluster)]]
        assert mine < max(us[NAME[c]] for c in WIDE_C2), shape
        assert mine <= 1.03 * us["pick"], (shape, mine, us["pick"])
        faster += mine * 1.15 < us["pick"]
    assert faster >= 2  # 1536^3 (1.33x) and 1000 x 3000 x 704 (1.17x)


# Session 17's H100 run of 128 x 200 (cluster 1) beside the pick and the other builds of those shapes,
# every build checked against float64 first, CUDA graphs, interleaved.
MEASURED200 = LOGS / "2026-12-06-h100-s17/call3-bn39-measure.json"


def _fastest_is_200(row: dict) -> bool:
    """Whether 128x200c1 ran within 3% of the fastest course build timed at the row's shape."""
    us = dict(row["graphs"]["us"])
    us.pop("cuBLAS")
    if row["builds"]["pick"]["flags"] == {"GEMM_BN": 200, "GEMM_CLUSTER": 1}:
        us.pop("pick")  # the same build, timed twice
    return us["128x200c1"] <= 1.03 * min(us.values())


@pytest.mark.usefixtures("cluster_launch_kernel")  # sessions 16 and 17 timed cluster launches
@pytest.mark.parametrize("eff", [0.77, 0.78, 0.79])
def test_the_model_picks_128x200_exactly_where_the_h100_timed_it_fastest(monkeypatch, eff):
    rows = json.loads(MEASURED200.read_text())["rows"]
    assert [tuple(r["shape"]) for r in rows] == [
        (4104, 776, 1240),
        (4104, 776, 4096),
        (2056, 776, 1240),
        (8200, 776, 1240),
        (2560, 2560, 2560),
    ]
    monkeypatch.setitem(chooser.EFFICIENCY, (200, 1), eff)  # the fit's neighbours pick the same
    fastest = {tuple(r["shape"]): _fastest_is_200(r) for r in rows}
    assert fastest == {
        (4104, 776, 1240): True,
        (4104, 776, 4096): True,
        (2056, 776, 1240): False,
        (8200, 776, 1240): False,
        (2560, 2560, 2560): False,
    }
    for shape, want in fastest.items():
        assert (chooser.choose(*shape, 132).bn == 200) == want, shape


def test_128x200_ran_faster_than_the_pick_it_replaced_at_4104_x_776_x_1240():
    row = json.loads(MEASURED200.read_text())["rows"][0]
    us = row["graphs"]["us"]
    assert row["builds"]["r256c1"]["flags"] == {"GEMM_BN": 256, "GEMM_CLUSTER": 1}  # session 16's pick
    assert 1.15 < us["r256c1"] / us["128x200c1"] < 1.3  # 1.21x
    # the fit of that kernel (a cluster launch) was 0.78; session 21 refit the plain grid's with the odd-K
    # term, which 4104 x 776 x 1240 (K = 1240) pays (test_clustern39)
    assert chooser.EFFICIENCY[(200, 1)] == 0.92 and 1240 % 16


def test_the_host_refuses_to_choose_a_split_for_a_development_build(monkeypatch):
    # ShapesHost.workload asks the chooser for the split when none is given: a clear CourseError,
    # before anything is allocated (with a split given, the launch arithmetic above applies).
    from course.lessons.day86 import host

    monkeypatch.setattr(host, "sm_count", lambda: 132)  # an H100's, with no GPU here
    HOST = host.HOST
    compiled = SimpleNamespace(options=SimpleNamespace(defines=(("GEMM_BN", 144), ("GEMM_CLUSTER", 1))))
    with pytest.raises(CourseError, match="128x144 c1 is a development build"):
        HOST.workload(compiled, 1536, purpose="bench", shape=(1536, 1536, 1536))


# On a Hopper GPU. The C++ program's ragged shapes (test_gpu.SHAPES) and shapes ragged against the new
# widths: N = 1032 leaves a last tile column 24 wide at 144 and 72 at 192, 160 and 96; 4104 x 776 x 1240
# has 33 tile rows (the last 8 deep) and a last column 8 wide at 192 and 96, 136 at 160, 56 at 144.
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


def assert_exact_on_ragged_shapes(flags: dict[str, int]) -> None:
    """The build of ``flags`` passes the lesson's own check on every element of D at each of GPU_SHAPES,
    K unsplit and split in three (or in as many K-tiles as there are, if fewer); on a GPU."""
    from course.kernel.compile import compile_lesson
    from course.kernel.host import run_lesson

    compiled = compile_lesson(LESSON, defines=flags)
    for shape in GPU_SHAPES:
        for split in sorted({1, min(3, -(-shape[2] // 64))}):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=split
            )
            assert result.passed, (flags, shape, split, result.lines)
            assert result.check.total == shape[0] * shape[1]  # every element


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("flags", [f for _, f in DEV], ids=IDS)
def test_every_development_build_is_exact_on_ragged_shapes_split_or_not(gpu_for, flags):
    gpu_for("day86")
    assert_exact_on_ragged_shapes(flags)


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("bn", STREAMK_BNS)
def test_the_stream_k_build_of_every_development_width_is_exact(gpu_for, bn):
    from course.kernel.compile import compile_lesson
    from course.kernel.host import run_lesson

    gpu_for("day86")
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": 2, "GEMM_STREAMK": 1, "GEMM_DETERMINISTIC": 1}
    compiled = compile_lesson(LESSON, defines=flags)
    for shape in ((1000, 1032, 520), (4104, 776, 1240), (1000, 3000, 704), (1, 8, 1000)):
        result = run_lesson(LESSON, compiled=compiled, progress=lambda line: None, shape=shape, split=1)
        assert result.passed, (flags, shape, result.lines)
        assert result.check.total == shape[0] * shape[1]
