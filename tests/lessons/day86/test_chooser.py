"""Day 86's chooser: a model of tiles, waves and split, held to what it claims."""

from __future__ import annotations

import sys

import pytest

from course.errors import CourseError
from course.lessons.day86 import chooser

SMS = 132


def test_every_candidate_is_a_build_the_kernel_has():
    for shape in [*chooser.SHAPES, (1, 8192, 8192), (64, 4096, 14336)]:
        for c in chooser.candidates(*shape, SMS, small=True):
            if c.along_n:  # the cluster along N: a pair, 128-row tiles, the widths ALONG_N prices, unsplit
                assert (c.bm, c.cluster, c.split, c.small, c.streamk) == (128, 2, 1, False, False)
                assert c.bn in chooser.ALONG_N
                continue
            assert (c.bn, c.cluster) in chooser.CONFIGS + chooser.WIDE_CONFIGS and c.bm in (128, 64)
            assert 1 <= c.split <= chooser.MAX_SPLIT
            if c.small:
                assert (c.bm, c.cluster) == (64, 1) and c.bn in chooser.SMALL_BNS


def test_the_picks_on_an_h200():
    # The picks the page explains (the dev notes list the same ones).
    picks = {shape: chooser.choose(*shape, SMS) for shape in chooser.SHAPES}
    # The small squares: a narrow or 64-row tile fills the SMs with no split of K to pay for (session 19's
    # refit: 64 x 64 at 512^3 and 64 x 128 at 1024^3, plain grids, the builds the H100 timed fastest there).
    assert [(picks[(s, s, s)].config, picks[(s, s, s)].split) for s in (512, 1024)] == [
        ("64x64 c1", 1),
        ("64x128 c1", 1),
    ]
    assert all(
        (picks[s].bn, picks[s].cluster, picks[s].split) == (256, 2, 1)
        for s in [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096), (16384, 4096, 4096)]
    )
    # The decode step: 64-row tiles, two tile rows x 64 columns = 128 CTAs, no split to reduce (issue 39's
    # refit; it was 128x256 c1 split 4, which the H100 measured 1.20x slower). Cluster 1 since session 19:
    # as a plain grid the H100 timed it level with the cluster-2 build (51.8 us against 51.7, CUDA graphs,
    # evidence/logs/2026-12-06-h100-s19/call1-sweep39-measure.json).
    decode = picks[(128, 8192, 8192)]
    assert (decode.bm, decode.bn, decode.cluster, decode.split, decode.units) == (64, 128, 1, 1, 128)


def test_the_last_partial_wave_is_priced_at_its_share():
    c = chooser.estimate(4096, 11008, 4096, SMS, 256, 2, 1)
    assert c is not None
    assert (c.units, c.slots, c.waves) == (688, 66, 11)
    # one more unit than a whole number of waves costs LONE_UNIT of a wave, not a whole one
    for cluster in (2, 1):
        slots = SMS // cluster
        full = chooser.estimate(128 * cluster * slots, 256, 4096, SMS, 256, cluster, 1)
        over = chooser.estimate(128 * cluster * (slots + 1), 256, 4096, SMS, 256, cluster, 1)
        assert full is not None and over is not None
        assert (full.waves, over.waves) == (1, 2)
        lone = (over.est_us - full.est_us) / (full.est_us - chooser.launch_us(cluster))
        assert lone == pytest.approx(chooser.LONE_UNIT)
    # the share rises to a whole wave as the last wave fills
    shares = [chooser.wave_share(66 + r, 66) for r in (1, 33, 65, 66)]
    assert shares == sorted(shares) and shares[0] == pytest.approx(1.65) and shares[-1] == 2.0


def test_per_sm_rates_scale_with_the_sm_count():
    # one full wave of the same units takes the same time on 114 SMs as on 132: each SM is as
    # fast, there are fewer of them (a fixed total divided by 114 would make each SM faster)
    a = chooser.estimate(128 * 132, 256, 4096, 132, 256, 1, 1)
    b = chooser.estimate(128 * 114, 256, 4096, 114, 256, 1, 1)
    assert a is not None and b is not None and a.waves == b.waves == 1
    assert a.est_us == pytest.approx(b.est_us)
    assert chooser.SUSTAINED_TFLOPS_132 == 660  # the figure the constants are named for, not 989


def test_the_deterministic_reduction_costs_one_more_partial_read():
    plain = chooser.estimate(1024, 1024, 16384, SMS, 256, 2, 4)
    det = chooser.estimate(1024, 1024, 16384, SMS, 256, 2, 4, deterministic=True)
    unsplit = chooser.estimate(1024, 1024, 16384, SMS, 256, 2, 1, deterministic=True)
    assert plain is not None and det is not None and unsplit is not None
    assert det.est_us > plain.est_us and det.deterministic and not plain.deterministic
    assert not unsplit.deterministic  # unsplit, both builds are the same: no separate build
    pick = chooser.choose(1024, 1024, 16384, SMS, deterministic=True)
    assert pick.split > 1 and chooser.defines(pick)["GEMM_DETERMINISTIC"] == 1
    assert "deterministic" in pick.describe()
    assert "GEMM_DETERMINISTIC" not in chooser.defines(chooser.choose(1024, 1024, 16384, SMS))


def test_a_split_is_worth_it_only_when_tiles_are_few():
    few = chooser.choose(1024, 1024, 16384, SMS)
    many = chooser.choose(8192, 8192, 8192, SMS)
    assert few.split > 1 and many.split == 1


def test_fewer_sms_change_the_pick():
    # The model reads the SM count: on 8 SMs a split buys nothing at 1024 x 1024 x 16384.
    assert chooser.choose(1024, 1024, 16384, 8).split < chooser.choose(1024, 1024, 16384, SMS).split


def test_best_for_a_build_is_the_cheapest_of_that_build():
    pick = chooser.best_for(1000, 1032, 520, SMS, 256, 2)
    same = [c for c in chooser.candidates(1000, 1032, 520, SMS) if (c.bm, c.bn, c.cluster) == (128, 256, 2)]
    assert pick == min(same, key=lambda c: c.est_us)
    with pytest.raises(CourseError, match="no configuration 128x32"):
        chooser.best_for(1000, 1032, 520, SMS, 32, 2)


def test_an_invalid_split_has_no_estimate():
    assert chooser.estimate(128, 128, 64, SMS, 256, 2, 2) is None  # one K-tile cannot be split in two
    assert chooser.estimate(128, 128, 64, SMS, 256, 2, 0) is None


@pytest.mark.parametrize("shape", [(100, 100, 64), (100, 64, 100), (0, 64, 64)])
def test_the_chooser_refuses_what_the_kernel_refuses(shape):
    with pytest.raises(CourseError):
        chooser.choose(*shape, SMS)


def test_defines_name_the_build():
    pick = chooser.choose(2048, 2048, 2048, SMS)
    assert pick.bm == 128 and not pick.small
    assert chooser.defines(pick) == {"GEMM_BN": pick.bn, "GEMM_CLUSTER": pick.cluster}
    rows64 = chooser.choose(1024, 1024, 1024, SMS)  # a 64-row build since session 19's refit
    assert chooser.defines(rows64) == {"GEMM_BN": 128, "GEMM_CLUSTER": 1, "GEMM_BM": 64}
    small = chooser.choose(256, 256, 256, SMS)  # the small build
    assert chooser.defines(small) == {"GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_BM": 64, "GEMM_SMALL": 1}


def test_the_dev_benchs_standalone_copy_picks_the_same(monkeypatch, cluster_launch_kernel):
    import importlib.util  # the development record's copy is a file, not a module of the package
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "evidence" / "gemm_dev" / "chooser86.py"
    spec = importlib.util.spec_from_file_location("chooser86", path)
    assert spec is not None and spec.loader is not None
    dev = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "chooser86", dev)  # its dataclass looks itself up there
    spec.loader.exec_module(dev)
    shapes = [*chooser.SHAPES, (1000, 1032, 520), (130, 5000, 3000), (3000, 200, 7000), (1, 8, 8)]
    for sms in (8, 78, 114, 132):
        for shape in shapes:
            # the copy predates the 64-row builds, the reduction tail and the per-SM streaming rate
            # (issue 39): without them, the 128-row model is the same
            monkeypatch.setattr(chooser, "reduction_tail_us", lambda *args, **kw: 0.0)
            monkeypatch.setattr(chooser, "SM_STREAM_GBPS", 1e12)
            monkeypatch.setattr(chooser, "WIDE_CONFIGS", ())  # and the wide widths
            # and the plain grid's launch (session 19): the fixture models the kernel before it
            mine, theirs = chooser.choose(*shape, sms, rows64=False), dev.choose(*shape, sms)
            assert (mine.bn, mine.cluster, mine.split, mine.units, mine.waves) == (
                theirs.bn, theirs.cluster, theirs.split, theirs.units, theirs.waves,
            ), (shape, sms)  # fmt: skip
            assert mine.est_us == pytest.approx(theirs.est_us)


def test_the_cluster_2_picks_stay_where_clusters_of_one_measured_slower():
    # On the H100's sweep of the plain-grid kernels (evidence/logs/2026-12-06-h100-s19/
    # call1-sweep39-measure.json, CUDA graphs) 128x256 c1 ran 0.76x c2 at 2504 x 2504 x 2504, and
    # 128x256 c1 0.80x 128x144 c2 at 1536^3 (evidence/logs/2026-12-06-h100-s18/call5-sweep39-measure.json).
    # (Session 10's cluster-1 measurements, 1000 x 1032 x 520 and 130 x 5000 x 3000, were cluster launches.)
    assert chooser.choose(2504, 2504, 2504, SMS).config == "128x256 c2"
    assert chooser.choose(1536, 1536, 1536, SMS).config == "128x144 c2"


def test_the_lone_unit_constant_is_what_the_recording_measures_with_clusters_of_two():
    from course.bench.result import load
    from course.lessons.day86 import bench

    result = load("day86")
    if result is None:
        pytest.skip("no Day 86 recording in this checkout")
    rows = [r for r in bench.wave_table(result) if r.cluster == 2]
    assert rows, "the recording has no last-wave rows for clusters of two"
    for r in rows:  # one unit more costs (ratio - 1) of a full wave
        assert abs((r.ratio - 1) - chooser.LONE_UNIT) <= 0.12, (r, chooser.LONE_UNIT)


# The issue's shape table (2500^3 is refused: N and K must be multiples of 8).
ISSUE_SHAPES = [
    *((s, s, s) for s in (256, 512, 768, 1024, 1536, 2048, 2560, 4096, 8192)),
    *((m, 8192, 8192) for m in (1, 2, 4, 32, 64, 128)),
    *((m, 4096, 14336) for m in (1, 2, 4, 32, 64, 128)),
    (1200, 1200, 1200),
    (640, 6144, 2048),
    (1000, 3000, 704),
    (4104, 776, 1240),
]


@pytest.mark.parametrize("sms", [132, 114, 78, 8])
def test_stream_k_is_priced_only_when_asked_and_leaves_the_other_picks_alone(sms):
    for shape in [*chooser.SHAPES, *ISSUE_SHAPES]:
        plain = chooser.candidates(*shape, sms)
        both = chooser.candidates(*shape, sms, streamk=True)
        assert not any(c.streamk for c in plain)
        assert [c for c in both if not c.streamk] == plain  # the same list, the same order
        assert not chooser.choose(*shape, sms).streamk
        for c in both:
            if c.streamk:
                assert c.split == 1 and c.shared >= 0
                assert chooser.defines(c)["GEMM_STREAMK"] == 1


def test_stream_k_removes_the_partial_wave_and_pays_a_fixup_per_shared_tile(monkeypatch):
    # one cluster tile more than a whole wave: data-parallel pays LONE_UNIT of a second wave for it
    for cluster in (2, 1):
        slots = SMS // cluster
        shape = (128 * cluster * (slots + 1), 256, 8192)
        dp = chooser.estimate(*shape, SMS, 256, cluster, 1)
        skc = chooser.estimate_streamk(*shape, SMS, 256, cluster)
        assert dp is not None and skc is not None and dp.waves == 2
        assert skc.streamk and skc.shared > 0
        assert skc.est_us < dp.est_us
        # and never faster than the whole problem's K-iterations spread evenly over the slots
        k_tile_us = 128 * 256 * 64 * 2 / (chooser.SM_TFLOPS * 1e12 * chooser.EFFICIENCY[(256, cluster)]) * 1e6
        even = (slots + 1) * 128 * k_tile_us / slots
        assert skc.est_us >= chooser.LAUNCH_US + even
    # whole waves: nothing to share, no Stream-K candidate
    assert chooser.estimate_streamk(128 * 2 * 66, 256, 8192, SMS, 256, 2) is None
    # the fixup's round trips are priced per shared piece
    shape = (128 * 2 * 67, 256, 8192)
    before = chooser.estimate_streamk(*shape, SMS, 256, 2)
    monkeypatch.setattr(chooser, "SPLIT_US", chooser.SPLIT_US + 10.0)
    after = chooser.estimate_streamk(*shape, SMS, 256, 2)
    assert before is not None and after is not None
    assert after.est_us - before.est_us == pytest.approx(20.0)  # the slowest unit shares two tiles


def test_a_deterministic_stream_k_choice_builds_both_flags():
    c = chooser.estimate_streamk(128 * 2 * 67, 256, 8192, SMS, 256, 2, deterministic=True)
    assert c is not None and "deterministic" in c.describe() and "Stream-K" in c.describe()
    assert chooser.defines(c) == {
        "GEMM_BN": 256,
        "GEMM_CLUSTER": 2,
        "GEMM_STREAMK": 1,
        "GEMM_DETERMINISTIC": 1,
    }


# Issue 39: the 64-row builds where a 128-row tile is half zero rows, and the small builds.
DECODE = [(m, n, k) for m in (1, 2, 4, 32, 64) for n, k in ((8192, 8192), (4096, 14336))]


def test_a_128_row_tile_wastes_half_its_rows_up_to_m_64():
    assert [m for m in range(1, 400) if chooser.wastes_half(m)] == list(range(1, 65))


@pytest.mark.parametrize("sms", [132, 114, 78, 8])
def test_the_64_row_builds_are_candidates_at_every_shape(sms):
    # since session 19's refit (until then only where M <= 128, one row of 128-row tiles)
    for shape in [*chooser.SHAPES, *ISSUE_SHAPES, (1, 8, 8), (65, 4096, 4096), (129, 4096, 4096)]:
        cands = chooser.candidates(*shape, sms)
        regular64 = [c for c in cands if c.bm == 64 and not c.small]
        assert {(c.bn, c.cluster) for c in regular64} == {
            (bn, cluster) for bn, cluster in chooser.CONFIGS if cluster in chooser.ROWS64_CLUSTERS
        }
        # clusters 1 and 2 (ROWS64_CLUSTERS: cluster 2 since the H100 timed it at M = 128, session 17)
        assert {c.cluster for c in regular64} <= set(chooser.ROWS64_CLUSTERS) == {1, 2}
        # without them, the list is the 128-row builds': the same candidates in the same order
        assert chooser.candidates(*shape, sms, rows64=False) == [c for c in cands if c.bm == 128]
        # the small builds: in the default where small_competes
        assert any(c.small for c in cands) == chooser.small_competes(shape[0], shape[2])
        assert not any(c.small for c in chooser.candidates(*shape, sms, small=False))


def test_a_64_row_k_tile_is_half_the_work_at_rows64_efficiency(monkeypatch):
    monkeypatch.setattr(chooser, "STREAM_TBPS", 1e6)  # no memory floor: the K loop alone
    monkeypatch.setattr(chooser, "SM_STREAM_GBPS", 1e9)  # nor a per-SM one
    for bn, cluster in chooser.CONFIGS:
        full = chooser.estimate(1, bn, 8192, SMS, bn, cluster, 1)
        half = chooser.estimate(1, bn, 8192, SMS, bn, cluster, 1, bm=64)
        assert full is not None and half is not None and half.bm == 64 and full.units == half.units == 1
        loop = [
            (c.est_us - chooser.launch_us(cluster)) / chooser.wave_share(c.units, c.slots) - chooser.FILL_US
            for c in (full, half)
        ]
        assert loop[1] / loop[0] == pytest.approx(0.5 / chooser.ROWS64_EFFICIENCY)
    # the 64-row split-K partial is 64 x BN floats: half the 128-row tile's traffic
    monkeypatch.setattr(chooser, "SPLIT_US", 0.0)
    monkeypatch.setattr(chooser, "FILL_US", 0.0)
    monkeypatch.setattr(chooser, "SM_TFLOPS", 1e9)  # no K loop: the partials alone
    a = chooser.estimate(1, 256, 8192, SMS, 256, 1, 2)
    b = chooser.estimate(1, 256, 8192, SMS, 256, 1, 2, bm=64)
    assert a is not None and b is not None
    assert (b.est_us - chooser.launch_us(1)) == pytest.approx((a.est_us - chooser.launch_us(1)) / 2, rel=1e-4)


def test_the_decode_picks_are_64_row_tiles_by_the_model():
    # A deliberate change (issue 39): at M <= 128, 128-row tiles make one tile row, so only N's
    # columns and a split of K give the SMs work; the split's reduction comes after the memory floor
    # (reduction_tail_us), and the 64-row tiles' two rows (M = 128) or lighter K loop (M <= 64) win
    # in the model, unsplit or split 2.
    for shape in [*DECODE, (128, 8192, 8192), (128, 4096, 14336)]:
        old = chooser.choose(*shape, SMS, rows64=False)
        assert old.bm == 128 and old.cluster == 1 and old.split > 1, (shape, old)
        pick = chooser.choose(*shape, SMS)
        assert pick.bm == 64 and pick.cluster == 1 and pick.split <= 2, (
            shape,
            pick,
        )
        assert pick.est_us < old.est_us, (
            shape,
            pick,
        )
        assert chooser.defines(pick)["GEMM_BM"] == 64 and "tile 64x" in pick.describe()
    for m in (1024, 4096):  # many 128-row tile rows: a 128-row build wins
        assert chooser.choose(m, 8192, 8192, SMS) == chooser.choose(m, 8192, 8192, SMS, rows64=False)


def test_the_split_k_reduction_is_a_tail_after_the_memory_floor(monkeypatch, cluster_launch_kernel):
    # A problem at the memory floor: the split build pays its reduction on top of the floor.
    shape = (128, 8192, 8192)
    floor = (128 * 8192 + 8192 * 8192 + 128 * 8192) * 2 / (chooser.STREAM_TBPS * 1e12) * 1e6
    split4 = chooser.estimate(*shape, SMS, 256, 1, 4)
    assert split4 is not None and split4.units == 128 and split4.waves == 1
    tail = chooser.reduction_tail_us(split4.units, split4.slots, 1, 4, 128 * 256 * 4)
    # the last arriver's partial out and three in, at a 128th of L2, then the round trips
    assert tail == pytest.approx(128 * 256 * 4 * 4 / (chooser.L2_TBPS * 1e12 / 128) * 1e6 + chooser.SPLIT_US)
    assert split4.est_us == pytest.approx(chooser.launch_us(1) + floor + tail)
    # deterministic: one more partial in; unsplit: no tail
    assert chooser.reduction_tail_us(128, 132, 1, 4, 1024, deterministic=True) > chooser.reduction_tail_us(
        128, 132, 1, 4, 1024
    )
    assert chooser.reduction_tail_us(128, 132, 1, 1, 1024) == 0.0
    # the tail's L2 share is the last wave's: one unit past a full wave reduces alone
    assert chooser.reduction_tail_us(133, 132, 1, 2, 1024) < chooser.reduction_tail_us(132, 132, 1, 2, 1024)
    # without the tail the model put the split build ahead of the unsplit 64-row one it measured slower
    # (session 13, cluster launches: the fixture models that kernel)
    monkeypatch.setattr(chooser, "reduction_tail_us", lambda *args, **kw: 0.0)
    assert chooser.choose(*shape, SMS).split > 1


def test_on_a_tie_at_the_memory_floor_more_units_win():
    # 64x64 and 64x128 unsplit at 1 x 16384 x 8192 (256 and 128 units, at least one a SM) both sit at the
    # device's floor: the model cannot tell them apart, and more units win the tie.
    a = chooser.best_for(1, 16384, 8192, SMS, 64, 1, bm=64)
    b = chooser.best_for(1, 16384, 8192, SMS, 128, 1, bm=64)
    assert (a.split, b.split) == (1, 1) and a.est_us == b.est_us and a.units == 2 * b.units
    floor = (8192 + 16384 * 8192 + 16384) * 2 / (chooser.STREAM_TBPS * 1e12) * 1e6
    assert a.est_us == pytest.approx(chooser.launch_us(1) + floor)
    assert chooser.choose(1, 16384, 8192, SMS) == a


def test_fewer_units_than_sms_stream_at_the_per_sm_rate():
    # On the 132-SM GPU the same two builds no longer tie: 64x128's 64 units leave half the SMs idle,
    # and each of the 64 streams its 2 MB of B at most at SM_STREAM_GBPS (the H100 measured 62.0 us
    # against 53.6 in CUDA graphs, evidence/logs/2026-12-06-h100-s14/call5-sweep39-measure.json).
    a = chooser.estimate(1, 8192, 8192, SMS, 64, 1, 1, bm=64)
    b = chooser.estimate(1, 8192, 8192, SMS, 128, 1, 1, bm=64)
    assert a is not None and b is not None and (a.units, b.units) == (128, 64)
    total = (8192 + 8192 * 8192 + 8192) * 2
    per_cta = chooser.wave_share(64, SMS) * total / 64 / (chooser.SM_STREAM_GBPS * 1e9) * 1e6
    assert b.est_us == pytest.approx(chooser.launch_us(1) + per_cta) and b.est_us > a.est_us + 10
    assert chooser.choose(1, 8192, 8192, SMS) == a
    # a full GPU is held by the device's rate, not the per-SM one: 132 SMs at it outrun STREAM_TBPS
    assert SMS * chooser.SM_STREAM_GBPS * 1e9 >= chooser.STREAM_TBPS * 1e12
    device = total / (chooser.STREAM_TBPS * 1e12) * 1e6
    assert chooser.memory_floor_us(1, 8192, 8192, SMS, SMS) == pytest.approx(device)


def test_best_for_a_64_row_or_small_build_is_that_builds_cheapest_split():
    for shape, bm, small, bn in [
        ((1, 8192, 8192), 64, False, 256),
        ((512, 512, 512), 64, True, 128),
        ((512, 512, 512), 64, True, 64),
    ]:
        got = chooser.best_for(*shape, SMS, bn, 1, bm=bm, small=small)
        same = [
            c
            for c in chooser.candidates(*shape, SMS)
            if (c.bm, c.small, c.bn, c.cluster) == (bm, small, bn, 1)
        ]
        assert got == min(same, key=lambda c: c.est_us) and (got.bm, got.small) == (bm, small)


def test_the_small_build_is_two_ctas_an_sm_that_share_its_tensor_cores(monkeypatch):
    monkeypatch.setattr(chooser, "STREAM_TBPS", 1e6)  # no memory floor
    monkeypatch.setattr(chooser, "SM_STREAM_GBPS", 1e9)  # nor a per-SM one
    with pytest.raises(CourseError, match="small build is 64 rows, cluster 1"):
        chooser.estimate(64, 256, 256, SMS, 256, 1, 1, bm=64, small=True)
    with pytest.raises(CourseError, match="small build"):
        chooser.estimate(64, 128, 256, SMS, 128, 2, 1, bm=64, small=True)
    # as many units as SMs: one CTA each, the 64-row K loop; one more: two share the busiest SM
    one = chooser.estimate(64, 64 * SMS, 4096, SMS, 64, 1, 1, bm=64, small=True)
    two = chooser.estimate(64, 64 * (SMS + 1), 4096, SMS, 64, 1, 1, bm=64, small=True)
    plain = chooser.estimate(64, 64 * SMS, 4096, SMS, 64, 1, 1, bm=64)
    assert one is not None and two is not None and plain is not None
    assert (one.slots, one.waves, two.waves, plain.slots) == (2 * SMS, 1, 1, SMS)
    launch = chooser.launch_us(1, small=True)  # a plain grid, a third of the shared memory
    assert launch == chooser.launch_us(1) - chooser.SMALL_SAVES_US < chooser.launch_us(2)
    loop = [(c.est_us - launch) / chooser.wave_share(c.units, c.slots) - chooser.FILL_US for c in (one, two)]
    assert chooser.SMALL_SAVES_US > 0 and loop[1] == pytest.approx(chooser.SMALL_SHARED * loop[0])
    assert 1 < chooser.SMALL_SHARED < 2  # two CTAs overlap: slower each, faster together
    assert (plain.est_us - chooser.launch_us(1)) / chooser.wave_share(
        SMS, SMS
    ) - chooser.FILL_US == pytest.approx(loop[0] * chooser.SMALL_EFFICIENCY[64])
    assert chooser.defines(one) == {"GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_BM": 64, "GEMM_SMALL": 1}
    assert one.config == "64x64 c1 small" and "2 CTAs an SM" in one.describe()


def test_the_small_build_is_the_default_for_256_cubed_only():
    # A deliberate change (session 19's refit to the H100's sweeps of the plain-grid kernels,
    # evidence/logs/2026-12-06-h100-s18/call5-sweep39-measure.json, CUDA graphs): the small 64x64 build at
    # 256^3, where it measured fastest of every build; from 512^3 the regular 64-row builds, which measured
    # faster than it there (1.13x at 512^3, 64 x 64; 1.13x and 1.24x at 768^3 and 1024^3, 64 x 128).
    # Session 13's refit picked it up to 1024^3, when the regular cluster-1 builds still had a cluster launch.
    assert (chooser.choose(256, 256, 256, SMS).config, chooser.choose(256, 256, 256, SMS).split) == (
        "64x64 c1 small",
        1,
    )
    for s, config in ((512, "64x64 c1"), (768, "64x128 c1"), (1024, "64x128 c1")):
        pick = chooser.choose(s, s, s, SMS)
        assert (pick.config, pick.split) == (config, 1), (s, pick)
    for s in (1536, 2048, 4096, 8192):
        assert not chooser.choose(s, s, s, SMS).small
    # where K is long or M <= 64 (the decode rows) the small build is not a candidate: measured slower
    # there than the regular 64-row build of the same tile and split
    for shape in [*DECODE, (128, 8192, 8192), (130, 5000, 3000), (65, 4096, 4096), (8, 4104, 1000)]:
        assert not any(c.small for c in chooser.candidates(*shape, SMS)), shape
