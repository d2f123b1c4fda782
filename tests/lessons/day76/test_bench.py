"""Day 76's benchmark specification (course/lessons/day76/bench.py): what it counts,
its peers, and the reasons and findings drawn from the numbers of a run."""

from __future__ import annotations

import pytest

from course.bench.arith import copy_bytes, gb_per_s
from course.bench.result import BenchResult, Measurement, SizeRow, Timing
from course.bench.spec import bench_spec
from course.kernel.provenance import Provenance
from course.lessons import get_lesson
from course.lessons.day76 import bench
from course.lessons.day76.figures import tma_tile_plan

LESSON = get_lesson("day76")


def test_the_spec_counts_the_floats_read_and_written():
    spec = bench_spec(LESSON)
    assert spec is bench.SPEC
    assert spec.unit == "GB/s"
    assert spec.work(256) == 256 * 256 * 4 * 2 == copy_bytes(256)  # float32 read once, written once
    assert spec.set_bytes(16384) == 2 * 2**30
    assert spec.validate_sizes("day76", spec.page_sizes) == spec.page_sizes
    assert set(spec.page_sizes) <= set(spec.sizes)


def test_the_peers_are_cupys_add_and_a_copy_checked_against_the_input():
    add, copy = bench.peers()
    assert (add.name, copy.name) == (bench.PEER_ADD, bench.PEER_COPY) == ("x + 1 (CuPy)", "D2D copy")
    assert add.want is None  # x + 1 must equal what the kernel must produce
    marker = object()
    work = type("Work", (), {"x": [marker]})()
    assert copy.want(work) is marker  # a copy must reproduce its input, set 0


# --- rows of a run, built from the result types ----------------------------------------------------
def _timing(ms: float) -> Timing:
    return Timing(ms, ms * 0.95, ms * 1.1, 20, 4, 8, 0)


def _row(n: int, kernel_gbs: float, peers: dict[str, float]) -> SizeRow:
    work = float(copy_bytes(n))

    def measured(name: str, rate: float, ratio: float | None = None) -> Measurement:
        return Measurement(name, _timing(work / (rate * 1e9) * 1e3), rate, ratio)

    return SizeRow(
        n,
        work,
        0.4,
        None,
        "bit-exact on all elements",
        measured("kernel", kernel_gbs),
        tuple(measured(name, rate, kernel_gbs / rate) for name, rate in peers.items()),
    )


def _rows(copy: bool = True) -> tuple[SizeRow, ...]:
    def peers(add: float, cp: float) -> dict[str, float]:
        return {bench.PEER_ADD: add, **({bench.PEER_COPY: cp} if copy else {})}

    return (
        _row(256, 120.0, peers(150.0, 300.0)),
        _row(4096, 2500.0, peers(3100.0, 3900.0)),
        _row(16384, 2900.0, peers(3300.0, 3850.0)),
    )


def test_tma_reasons_from_rows():
    rows = _rows()
    reasons = bench.reasons(rows, 132)
    assert [r.kind for r in reasons] == ["measured", "measured"]
    launch, against_copy = reasons
    small = rows[0]
    assert launch.value == pytest.approx(small.kernel.timing.median_ms * 1e3)
    assert launch.unit == "µs"
    assert f"{len(tma_tile_plan(dim=256))} CTAs on 132 SMs" in launch.detail
    assert "16 CTAs on 132 SMs" in launch.detail
    assert f"moves 0.52 MB in {launch.value:.1f} µs" in launch.detail
    # The best copy of the run (3900 GB/s, at N=4096) is the yardstick, and says so.
    assert "at 3.90 TB/s (the best copy rate of this run)" in launch.detail
    assert f"those bytes take {copy_bytes(256) / 3.9e12 * 1e6:.2f} µs" in launch.detail
    assert against_copy.value == pytest.approx(2900.0 / 3850.0)
    assert against_copy.unit == "x"
    assert "at N=16384: kernel 2,900 GB/s, copy 3,850 GB/s" in against_copy.detail
    assert bench.reasons((), 132) == ()


def test_tma_reasons_count_the_ctas_of_the_smallest_size():
    rows = _rows()[1:]
    (launch, _) = bench.reasons(rows, 114)
    assert f"{len(tma_tile_plan(dim=4096))} CTAs on 114 SMs" in launch.detail
    assert "4096 CTAs" in launch.detail


def test_without_a_copy_in_the_run_the_lead_is_used_and_labelled():
    reasons = bench.reasons(_rows(copy=False), 132)
    assert len(reasons) == 1
    assert (
        f"at {bench.LEAD_COPY_BYTES_PER_S / 1e12:.2f} TB/s (a lead from an earlier H200 run)"
        in reasons[0].detail
    )


# --- findings: the page's sentences, from a recorded result --------------------------------------
def _result(rows: tuple[SizeRow, ...]) -> BenchResult:
    return BenchResult(
        lesson="day76",
        provenance=Provenance(
            "2026-11-30T10:00:00+00:00", "python -m course bench day76", "NVIDIA H200", "9.0", 132, {}
        ),
        l2_bytes=50 * 2**20,
        unit="GB/s",
        kernel_name="loadTileTma",
        rows=rows,
    )


def test_findings_quote_the_recorded_numbers():
    rows = _rows()
    small_us = rows[0].kernel.timing.median_ms * 1e3
    assert bench.findings(_result(rows)) == [
        f"At the smallest size, N = 256, the kernel takes {small_us:.1f} µs for 0.52 MB (120 GB/s): it "
        "measures the launch and one tile's round trip, not the memory.",
        "At N = 16384 it moves 2,900 GB/s: 0.75x the device-to-device copy of the same bytes (3,850 GB/s) "
        "and 0.88x CuPy's x + 1 (3,300 GB/s).",
    ]
    assert small_us == pytest.approx(copy_bytes(256) / 120e9 * 1e6)
    assert gb_per_s(copy_bytes(256), rows[0].kernel.timing.median_ms) == pytest.approx(120.0)


def test_findings_change_with_the_result():
    faster = (_row(512, 480.0, {bench.PEER_ADD: 500.0, bench.PEER_COPY: 640.0}),)
    (small, large) = bench.findings(_result(faster))
    assert "N = 512" in small and "(480 GB/s)" in small and "2.10 MB" in small
    assert "At N = 512 it moves 480 GB/s: 0.75x" in large and "(640 GB/s)" in large and "0.96x" in large
