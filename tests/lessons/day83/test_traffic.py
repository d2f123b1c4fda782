"""Day 83's byte table (course/lessons/day83/traffic.py) follows from the two kernels.

The counts are recomputed here from the constants and the copy calls of
gemm4_persistent.cu and gemm5_cluster.cu; the lines the count rests on must
each occur exactly once, so a change to the copies or the boxes breaks the
test instead of leaving the page's table stale.
"""

from __future__ import annotations

import re

import pytest

from course.hopper.wgmma import ModelError
from course.lessons import get_lesson
from course.lessons.day83 import traffic as t
from course.snippets import load_snippets

STEP5 = get_lesson("day83")
STEP4 = get_lesson("day82")
SRC5 = STEP5.kernel_path.read_text(encoding="utf-8")
SRC4 = STEP4.kernel_path.read_text(encoding="utf-8")
KIB = 1024


def lines_with(source: str, text: str) -> list[int]:
    return [n for n, line in enumerate(source.splitlines(), 1) if text in line]


@pytest.mark.parametrize("name", sorted(t.KERNEL_LINES))
def test_each_line_the_count_rests_on_is_in_step_5_once(name):
    assert len(lines_with(SRC5, t.KERNEL_LINES[name])) == 1, name


@pytest.mark.parametrize("name", sorted(t.STEP4_LINES))
def test_each_step_4_copy_is_in_step_4_once(name):
    assert len(lines_with(SRC4, t.STEP4_LINES[name])) == 1, name


def test_step_5_has_no_unicast_copy_of_b_left():
    assert not lines_with(SRC5, "tmaLoad2d(s.b[stage]")
    assert len(lines_with(SRC5, "tmaLoad2dMulticast(")) == 2  # the definition and the one call


def test_the_rank_picks_the_tile_row_in_both_roles():
    regions = load_snippets(STEP5.kernel_path)
    hits = lines_with(SRC5, t.CTA_ROW_LINE)
    assert len(hits) == 2
    assert regions["producer"].start <= hits[0] <= regions["producer"].end
    assert regions["consumer"].start <= hits[1] <= regions["consumer"].end


def test_the_multicast_instruction_carries_the_cluster_qualifier_and_a_mask():
    assert ".mbarrier::complete_tx::bytes.multicast::cluster" in SRC5
    assert re.search(r'"h"\(ctaMask\)', SRC5)


def test_pair_counts_from_the_constants():
    c4, c5 = STEP4.constants(), STEP5.constants()
    p = t.pair_traffic()
    cluster = c5["kClusterM"] * c5["kClusterN"]
    assert cluster == 2
    assert p.a_box == c5["kBoxARows"] * c5["kBK"] * 2 == 16 * KIB
    assert p.b_box_step4 == c4["kBoxBRows"] * c4["kBK"] * 2 == 32 * KIB
    assert p.b_box_step5 == c5["kBoxBRows"] * c5["kBK"] * 2 == 16 * KIB
    # each CTA multicasts one slice: the slices tile the B tile exactly
    assert c5["kBoxBRows"] * c5["kClusterM"] == c5["kBN"] == c4["kBoxBRows"]
    assert (p.step4_a, p.step4_b, p.step4_total) == (32 * KIB, 64 * KIB, 96 * KIB)
    assert (p.step5_a, p.step5_b, p.step5_total) == (32 * KIB, 32 * KIB, 64 * KIB)
    assert p.step5_total * 3 == p.step4_total * 2  # "a third less"
    # what lands in each CTA's stage is unchanged and is what the expect-tx announces
    assert p.landed_per_cta_step5 == p.stage_bytes == (c5["kBM"] + c5["kBN"]) * c5["kBK"] * 2 == 48 * KIB


@pytest.mark.parametrize("n", [1024, 2048, 4096, 8192])
def test_whole_gemm_row(n):
    table = t.traffic_table(n)
    whole = table.rows[-1]
    tiles = (n // 128) * (n // 256)  # CTA tiles of 128 x 256
    k_tiles = n // 64
    assert whole.step4 == tiles * k_tiles * 48 * KIB
    assert whole.step5 == tiles * k_tiles * 32 * KIB
    assert f"N = {n}" in whole.what


def test_the_table_renders_every_row():
    table = t.traffic_table(4096)
    html = table._repr_html_()
    text = str(table)
    assert [r.step5 / r.step4 for r in table.rows] == pytest.approx([1, 0.5, 2 / 3, 1, 2 / 3])
    for row in table.rows:
        assert row.what in text
    assert "1.50 GiB" in html and "1.00 GiB" in html and "not measured" in html


@pytest.mark.parametrize("n", [0, 1000, 128, 4096.0, True])
def test_sizes_the_kernel_cannot_build_are_refused(n):
    with pytest.raises(ModelError):
        t.traffic_table(n)
