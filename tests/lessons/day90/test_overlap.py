"""The overlap model (course/lessons/day90/overlap.py) against wgmma's group rule and the kernel.

The model plays one consumer warpgroup's operations against the PTX ISA's rule for asynchronous
wgmma groups; these tests hold it to what the page says of each variant for 1 to 12 key tiles,
and hold the kernel to the model's program (its waits and issues in the model's order)."""

from __future__ import annotations

import re

import pytest

from course.lessons import get_lesson
from course.lessons.day90 import overlap

TILES = range(1, 13)
SOURCE = get_lesson("day90").kernel_path.read_text("utf-8")


@pytest.mark.parametrize("n", TILES)
def test_the_kernel_has_no_hazard_and_every_softmax_but_the_first_runs_under_p_v(n):
    played = overlap.play(overlap.program(n))
    assert played.hazards == []
    assert played.overlapped == list(range(1, n))
    assert played.most_s == 1  # one FP32 S at a time: the other tile's scores are P, in FP16
    # every tile's S and P V issued once, in tile order
    issued = [(op.kind, op.arg) for op in overlap.program(n) if op.kind in ("S", "PV")]
    assert sorted(issued) == sorted([("S", k) for k in range(n)] + [("PV", k) for k in range(n)])


@pytest.mark.parametrize("variant", ["day89", "wait-0"])
def test_the_orders_without_overlap_are_correct_and_overlap_nothing(variant):
    for n in TILES:
        played = overlap.play(overlap.program(n, variant))
        assert played.hazards == [] and played.overlapped == [], (variant, n)


@pytest.mark.parametrize(
    ("variant", "what"),
    [
        ("pv-first", "reads S({k}) while its group is pending"),
        ("rescale-early", "rescale({k}) writes O while a P V group accumulates into it"),
    ],
)
def test_each_broken_variant_has_the_hazard_the_page_names_once_a_step(variant, what):
    for n in TILES:
        played = overlap.play(overlap.program(n, variant))
        assert len(played.hazards) == n - 1, (variant, n, played.hazards)
        for k, hazard in zip(range(1, n), played.hazards, strict=True):
            assert what.format(k=k) in hazard


def test_a_group_left_pending_is_a_hazard():
    ops = overlap.program(3)[:-1]  # drop the last wait_group 0
    assert overlap.play(ops).hazards == ["1 group(s) still pending at the end"]


def test_the_registers_the_arrays_take_are_the_kernels_counts():
    regs = {d: overlap.Registers.of(d) for d in (64, 128, 256)}
    assert [(r.s, r.p, r.o) for r in regs.values()] == [(64, 32, 32), (64, 32, 64), (32, 16, 128)]
    # Day 89 holds S or P beside O, never both; the overlap holds S, P and O at once
    for d, r in regs.items():
        assert overlap.play(overlap.program(5, "day89"), r).most_registers == max(r.s, r.p) + r.o, d
        assert overlap.play(overlap.program(5), r).most_registers == r.s + r.p + r.o, d


def test_bad_input_is_refused_with_what_was_given():
    with pytest.raises(ValueError, match="unknown variant 'late'"):
        overlap.program(3, "late")
    with pytest.raises(ValueError, match="tiles=0"):
        overlap.program(0)


def test_the_schedule_rows_show_the_p_v_pending_under_the_softmax():
    rows = overlap.rows(3)
    assert len(rows) == len(overlap.program(3))
    softmax1 = next(r for r in rows if r.startswith("softmax of S(1)"))
    assert softmax1.endswith("pending: PV(0)")
    assert rows[-1].startswith("wait_group 0") and rows[-1].endswith("pending: -")


def _body(start: str, end: str) -> str:
    return SOURCE[SOURCE.index(start) : SOURCE.index(end)]


def test_the_kernels_step_is_the_models_step_in_order():
    step = _body("for (int kt = 1; kt < kvTiles; ++kt) {", "// The last tile's P V, in a turn of its own.")
    calls = re.findall(r"(qkIssue|pvIssue|wgmmaWait<(\d)>|softmaxTile|rescaleO|pFragment)\(", step)
    names = [f"wait{n}" if n else c for c, n in calls]
    model = [
        {
            "S": "qkIssue",
            "PV": "pvIssue",
            "softmax": "softmaxTile",
            "rescale": "rescaleO",
            "pack": "pFragment",
        }.get(op.kind, f"wait{op.arg}")
        for op in overlap.program(2)[4:11]  # the one step of a two-tile CTA
    ]
    assert names == model
    # and the first tile and the last P V are the model's too
    first = _body("// The first tile's S alone", "// snippet: overlap")
    assert re.findall(r"(qkIssue|wgmmaWait<\d>|softmaxTile|pFragment)\(", first) == [
        "qkIssue",
        "wgmmaWait<0>",
        "softmaxTile",
        "pFragment",
    ]
    last = _body(
        "// The last tile's P V, in a turn of its own.", "// end snippet\n\n        // snippet: epilogue"
    )
    assert re.findall(r"(pvIssue|wgmmaWait<\d>)\(", last) == ["pvIssue", "wgmmaWait<0>"]
