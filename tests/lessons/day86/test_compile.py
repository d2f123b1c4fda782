"""CPU CI compile-checks Day 86's kernel for every build the chooser can pick (NVRTC, no GPU)."""

from __future__ import annotations

import pytest

from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons.day86 import chooser

LESSON = get_lesson("day86")


@pytest.mark.parametrize(
    ("bn", "cluster"), chooser.CONFIGS, ids=[f"128x{b}-c{c}" for b, c in chooser.CONFIGS]
)
def test_every_build_compiles_for_sm90a_without_spills(bn, cluster):
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    # the build's constants are the ones the host reads for it
    c = LESSON.constants(flags)
    assert (c["kBN"], c["kClusterM"], c["kBoxBRows"]) == (bn, cluster, bn // cluster)


# The clusters along N the chooser prices (test_clustern39 compiles and checks each, WIDTHS).
ALONG = [{"GEMM_BN": bn, "GEMM_CLUSTER": 1, "GEMM_CLUSTER_N": 2} for bn in chooser.ALONG_N]

# The shapes the pick tests walk: the page's, the decode rows and small squares (issue 39).
PICK_SHAPES = [
    *chooser.SHAPES,
    *((m, n, k) for m in (1, 2, 4, 8, 16, 32, 64) for n, k in ((8192, 8192), (4096, 14336))),
    *((s, s, s) for s in (256, 768)),
    (8, 4104, 1000),
]


def test_the_chooser_picks_only_builds_that_are_compile_checked():
    picks = [chooser.choose(*s, sms) for s in chooser.SHAPES for sms in (8, 78, 114, 132)]
    picked = {(c.bn, c.cluster) for c in picks if not c.along_n}
    assert picked <= set(chooser.CONFIGS + chooser.WIDE_CONFIGS)  # the wide ones: test_wide39 compiles them
    assert {c.bn for c in picks if c.along_n} <= set(chooser.ALONG_N)  # test_clustern39 compiles them
    flags = {
        tuple(sorted(chooser.defines(chooser.choose(*s, sms, deterministic=det, small=small)).items()))
        for s in PICK_SHAPES
        for sms in (8, 78, 114, 132)
        for det in (False, True)
        for small in (False, True)
    }
    checked = {tuple(sorted(f.items())) for f in [*BUILDS, *chooser.DEV_BUILDS.values(), *ALONG]}
    assert flags <= checked
    assert any(dict(f).get("GEMM_BM") == 64 for f in flags)  # the decode rows pick 64-row tiles
    assert any(dict(f).get("GEMM_SMALL") for f in flags)  # and small=True the small builds
    assert {dict(f).get("GEMM_A_ROWS") for f in flags} >= set(chooser.A_ROWS)  # M <= 32: short A boxes


# Every build the chooser can pick: the six tiles and clusters, each with split-K's sums in arrival
# order (the default) and in split order (-DGEMM_DETERMINISTIC=1); the same with 64-row tiles (the
# decode rows, issue 39); the small builds (-DGEMM_SMALL=1, with small=True); the 64-row cluster-1
# builds with a short A box (-DGEMM_A_ROWS, M <= 32, session 24).
BUILDS = [
    {"GEMM_BN": bn, "GEMM_CLUSTER": cluster, **rows, **({"GEMM_DETERMINISTIC": 1} if det else {})}
    for rows, configs in (
        ({}, chooser.CONFIGS),
        ({"GEMM_BM": 64}, chooser.CONFIGS),
        ({"GEMM_BM": 64, "GEMM_SMALL": 1}, [(bn, 1) for bn in chooser.SMALL_BNS]),
        *(
            ({"GEMM_BM": 64, "GEMM_A_ROWS": r}, [(b, c) for b, c in chooser.CONFIGS if c == 1])
            for r in chooser.A_ROWS
        ),
    )
    for bn, cluster in configs
    for det in (False, True)
]
NEW_BUILDS = [
    f
    for f in BUILDS
    if f.get("GEMM_SMALL") or (f.get("GEMM_BM") and f.get("GEMM_DETERMINISTIC")) or f.get("GEMM_A_ROWS")
]


@pytest.mark.parametrize(
    "flags",
    NEW_BUILDS,
    ids=["-".join(f"{k[5:].lower()}{v}" for k, v in f.items()) for f in NEW_BUILDS],
)
def test_every_new_pickable_build_compiles_without_spills(flags):
    # the 64-row deterministic builds and the small builds (the 64-row default ones: below)
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not report.serialized_wgmma, result.log  # the 128-register cap costs no wgmma overlap
    c = LESSON.constants(flags)
    assert (c["kBM"], c["kConsumers"], c["kThreadsPerBlock"]) == (64, 1, 256)
    if flags.get("GEMM_SMALL"):
        # two CTAs an SM: 228 KiB of shared memory, 1 KiB reserved a CTA; 128 registers a thread
        assert c["kCtasPerSm"] == 2 and c["kStages"] == {64: 4, 128: 3}[flags["GEMM_BN"]]
        assert 2 * (c["kSmemBytes"] + 1024) <= 228 * 1024
        assert report.registers is not None and report.registers <= 65536 // (2 * 256)
        plain = {k: v for k, v in flags.items() if k != "GEMM_SMALL"}
        assert result.cubin != compile_offline(LESSON, defines=plain).cubin


@pytest.mark.parametrize(
    "flags",
    [{"GEMM_SMALL": 1}, {"GEMM_SMALL": 1, "GEMM_BM": 64}, {"GEMM_SMALL": 1, "GEMM_BM": 64, "GEMM_BN": 256}],
)
def test_a_small_build_of_another_tile_is_refused_at_compile_time(flags):
    from course.errors import CourseError

    with pytest.raises(CourseError, match="GEMM_SMALL=1 is a 64-row tile"):
        compile_offline(LESSON, defines={"GEMM_CLUSTER": 1, **flags} if "GEMM_BM" in flags else flags)


@pytest.mark.parametrize(
    ("bn", "cluster"), chooser.CONFIGS, ids=[f"128x{b}-c{c}" for b, c in chooser.CONFIGS]
)
def test_every_deterministic_build_compiles_and_differs_from_the_default(bn, cluster):
    flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cluster}
    det = compile_offline(LESSON, defines={**flags, "GEMM_DETERMINISTIC": 1}, ptxas_verbose=True)
    report = parse(det.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, det.log
    assert LESSON.constants({**flags, "GEMM_DETERMINISTIC": 1})["kDeterministic"] == 1
    # the define reaches the code: the reduction is another program
    assert det.cubin != compile_offline(LESSON, defines=flags).cubin


# The 64-row tile with one consumer warpgroup (-DGEMM_BM=64), for decode shapes: every width and cluster.
BM64 = [(bn, cluster) for bn in (256, 128, 64) for cluster in (1, 2)]


@pytest.mark.parametrize(("bn", "cluster"), BM64, ids=[f"64x{b}-c{c}" for b, c in BM64])
def test_every_64_row_build_compiles_without_spills_with_its_launch_contract(bn, cluster):
    flags = {"GEMM_BM": 64, "GEMM_BN": bn, "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    c = LESSON.constants(flags)
    assert (c["kBM"], c["kConsumers"], c["kThreadsPerBlock"], c["kBoxARows"]) == (64, 1, 256, 64)
    # the shared memory the host requests: the ring, one consumer's D staging, barriers, slack
    ring = c["kStages"] * (64 + bn) * 64 * 2
    assert c["kSmemBytes"] == ring + 2 * 64 * 64 * 2 + 1024 + 1024 <= 227 * 1024


def test_the_128_row_builds_request_what_they_always_did():
    for bn, cluster in chooser.CONFIGS:
        c = LESSON.constants({"GEMM_BN": bn, "GEMM_CLUSTER": cluster})
        assert (c["kSmemBytes"], c["kThreadsPerBlock"], c["kConsumers"]) == (231424, 384, 2)


# The Stream-K builds (-DGEMM_STREAMK=1): every tile and cluster, with the fixup's sums in arrival
# order and in K order. The chooser picks them only when asked (choose(..., streamk=True)).
STREAMK = [
    {"GEMM_BN": bn, "GEMM_CLUSTER": cluster, "GEMM_STREAMK": 1, **({"GEMM_DETERMINISTIC": 1} if det else {})}
    for bn, cluster in chooser.CONFIGS
    for det in (False, True)
]


@pytest.mark.parametrize(
    "flags",
    STREAMK,
    ids=[f"sk-128x{f['GEMM_BN']}-c{f['GEMM_CLUSTER']}-d{f.get('GEMM_DETERMINISTIC', 0)}" for f in STREAMK],
)
def test_every_stream_k_build_compiles_without_spills_and_is_another_program(flags):
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    report = parse(result.log, LESSON.kernel_name)
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    c = LESSON.constants(flags)
    assert (c["kStreamK"], c["kSkMinIters"], c["kSmemBytes"]) == (1, 8, 231424)
    plain = {k: v for k, v in flags.items() if k != "GEMM_STREAMK"}
    assert result.cubin != compile_offline(LESSON, defines=plain).cubin


def test_the_chooser_picks_only_stream_k_builds_that_are_compile_checked():
    flags = {
        tuple(sorted(chooser.defines(chooser.choose(*s, sms, deterministic=det, streamk=True)).items()))
        for s in chooser.SHAPES
        for sms in (8, 78, 114, 132)
        for det in (False, True)
    }
    checked = {tuple(sorted(f.items())) for f in [*BUILDS, *STREAMK, *chooser.DEV_BUILDS.values(), *ALONG]}
    assert flags <= checked
    assert any(dict(f).get("GEMM_STREAMK") for f in flags)  # the model does pick Stream-K somewhere
