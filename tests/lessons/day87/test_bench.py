"""Day 87's benchmark record on the CPU: the accuracy curve, the promotion table and the findings
read the recording's reasons, and the page's tables show those numbers and no others.

A result is built here the way ``finish`` builds one (the same titles), from made-up numbers."""

from __future__ import annotations

import re

from course.bench.result import BenchResult, Measurement, Reason, SizeRow, Timing
from course.kernel.provenance import Provenance
from course.lessons.day87 import bench, figures

SMS = 132


def _result(ks=bench.ACCURACY_KS, blocks=True) -> BenchResult:  # type: ignore[no-untyped-def]
    reasons: list[Reason] = []
    for i, dist in enumerate(bench.DISTS):
        for j, k in enumerate(ks):
            for n, name in enumerate(bench.CURVE_NAMES):
                err = (1 + i) * 1e-4 * (j + 1) * (n + 1)
                reasons.append(
                    Reason(bench.accuracy_title(dist, k, name), err, "relative error", "measured", "x")
                )
    for n in bench.PROMOTE_SIZES:
        for p in bench.INTERVALS:
            t = bench.promotion_title(p, n)
            reasons += [
                Reason(t, 0.9 - 0.05 * p, "x", "measured", "x", 0.85 - 0.05 * p, 0.95 - 0.05 * p),
                Reason(f"{t}: rate", 1000.0 + n / 100 - 10 * p, "TFLOP/s", "measured", "x"),
                Reason(f"{t} against {bench.LT}", 0.8 - 0.04 * p, "x", "measured", "x", 0.7, 0.9),
            ]
    if blocks:
        for n in bench.PROMOTE_SIZES:
            t = bench.block_title(n)
            reasons += [
                Reason(t, 0.8, "x", "measured", "x", 0.75, 0.85),
                Reason(f"{t}: rate", 900.0 + n / 1000, "TFLOP/s", "measured", "x"),
                Reason(f"{t} against P=1", 0.97, "x", "measured", "x", 0.95, 0.99),
                Reason(f"{t} against {bench.LT}", 0.7, "x", "measured", "x", 0.65, 0.75),
            ]
        for i, shape in enumerate(bench.BLOCK_SHAPES):
            for s, scaling in enumerate(bench.SCALINGS):
                for r, ref in enumerate(bench.REFERENCES):
                    for m, metric in enumerate(bench.METRICS):
                        err = (i + 1) * 10.0 ** -(1 + s + 2 * r) * (1 + m)
                        reasons.append(
                            Reason(
                                bench.skew_title(shape, scaling, ref, metric),
                                err,
                                "relative error",
                                "measured",
                                "x",
                            )
                        )
    t = Timing(0.1, 0.1, 0.1, 10, 4, 2)
    rows = tuple(
        SizeRow(
            n,
            2.0 * n**3,
            1.0,
            True,
            "made up",
            Measurement("kernel", t, 1100.0 + n / 100),
            (
                Measurement(bench.LT, t, 1200.0, (1100.0 + n / 100) / 1200.0),
                Measurement(bench.LT_FAST, t, 1300.0, (1100.0 + n / 100) / 1300.0),
            ),
        )
        for n in (4096, 8192)
    )
    provenance = Provenance("2026-12-03T00:00:00+00:00", "test", "NVIDIA H200", "9.0", SMS, {})
    return BenchResult(
        lesson="day87", provenance=provenance, l2_bytes=60 * 2**20, unit="TFLOP/s", kernel_name="k",
        rows=rows, reasons=tuple(reasons),
    )  # fmt: skip


def test_the_curve_reads_every_point():
    curve = bench.accuracy_curve(_result())
    assert set(curve) == set(bench.DISTS)
    assert set(curve["uniform"]) == set(bench.CURVE_NAMES)
    points = curve["uniform"][bench.CURVE_NAMES[0]]
    assert [k for k, _ in points] == list(bench.ACCURACY_KS)
    assert points[-1][1] == 2e-4 * len(bench.ACCURACY_KS)


def test_a_partial_curve_shows_what_it_has():
    curve = bench.accuracy_curve(_result(ks=bench.ACCURACY_KS[:2]))
    assert [k for k, _ in curve["normal"][bench.LT]] == list(bench.ACCURACY_KS[:2])
    assert not any("K = 16384" in line for line in bench._findings(_result(ks=bench.ACCURACY_KS[:2])))


def test_the_promotion_table_reads_rate_and_both_ratios():
    rows = bench.promotion_table(_result())
    assert len(rows) == len(bench.PROMOTE_SIZES) * len(bench.INTERVALS)
    n, p, rate, ratio, vs_lt = rows[1]
    assert (n, p) == (4096, 1) and rate == 1000.0 + 40.96 - 10 and ratio == 0.85 and vs_lt == 0.76


def test_every_number_in_the_findings_is_the_recordings():
    result = _result()
    lines = bench._findings(result)
    # The first sentence about speed says which pairing every ratio is (issue 35).
    assert lines[0] == bench.PAIRING and "fast accumulation" in lines[0] and "promotes" in lines[0]
    for row, line in zip(result.rows, lines[1:], strict=False):
        assert line.startswith(
            f"N = {row.size}: the default build (never promoting) {row.kernel.rate:,.0f} TFLOP/s, "
        )
        fast, default = row.peer(bench.LT_FAST), row.peer(bench.LT)
        assert f"{fast.ratio:.2f}x {fast.name} ({fast.rate:,.0f} TFLOP/s)" in line
        # Like with like: cuBLASLt's default promotes, so the never-promoting build quotes its rate, no ratio.
        assert f"{default.name} {default.rate:,.0f} TFLOP/s" in line and f"{default.ratio:.2f}x" not in line
    promo = [line for line in lines if "the default build" in line and line.startswith("Promoting")]
    assert len(promo) == len(bench.PROMOTE_SIZES) * len(bench.INTERVALS)
    for (n, p, rate, ratio, vs_lt), line in zip(bench.promotion_table(result), promo, strict=True):
        assert ("never (P=0)" in line) == (p == 0)
        assert f"N = {n}: {rate:,.0f} TFLOP/s, {ratio:.2f}x the default build" in line
        # Only promoting every 128 is set beside cuBLASLt's default, which promotes too.
        assert (f"{vs_lt:.2f}x {bench.LT} (both promote" in line) == (p == 1), line
    last = [line for line in lines if line.startswith("Relative error at K = 16384, uniform")]
    assert last and all(re.search(rf"{re.escape(n)} \d\.\de-\d\d", last[0]) for n in bench.CURVE_NAMES)


def test_the_page_tables_without_and_with_a_recording(monkeypatch):
    monkeypatch.setattr(figures, "load", lambda lesson_id: None)
    for table in (figures.promotion(), figures.speed_against_lt()):
        assert "Not recorded yet" in str(table) and not table.rows
    result = _result()
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    promo = figures.promotion()
    assert promo.rows[0][2] == f"{bench.promotion_table(result)[0][2]:,.0f}"
    speed = figures.speed_against_lt()
    assert speed.rows[0][:2] == ("4096", f"{result.rows[0].kernel.rate:,.0f}")
    # A ratio against the like only: fast accumulation's cell has one, the default's its rate alone.
    fast, default = result.rows[0].peer(bench.LT_FAST), result.rows[0].peer(bench.LT)
    assert speed.rows[0][2:] == (f"{default.rate:,.0f}", f"{fast.rate:,.0f} ({fast.ratio:.2f}x)")
    assert [r[4] != "" for r in promo.rows] == [p == 1 for _, p, _, _, _ in bench.promotion_table(result)]
    assert "NVIDIA H200 (132 SMs)" in speed.note and "<table>" in speed._repr_html_()


def test_the_block_rows_read_rate_and_ratios_and_the_skewed_errors():
    rows = bench.block_table(_result())
    assert rows == [(n, 900.0 + n / 1000, 0.8, 0.97, 0.7) for n in bench.PROMOTE_SIZES]
    errs = bench.block_accuracy(_result())
    assert list(errs) == list(bench.BLOCK_SHAPES)
    assert (
        errs[bench.BLOCK_SHAPES[1]][(bench.SCALINGS[1], bench.REFERENCES[0], bench.METRICS[1])]
        == 2 * 1e-2 * 2
    )
    assert (
        bench.block_table(_result(blocks=False)) == [] and bench.block_accuracy(_result(blocks=False)) == {}
    )
    lines = bench._findings(_result())
    assert any(line.startswith("Block-scaled build at N = 4096: 904 TFLOP/s, 0.80x") for line in lines)
    assert not any(
        "Block-scaled" in line or "Skewed" in line for line in bench._findings(_result(blocks=False))
    )


def test_the_block_tables_without_and_with_a_recording(monkeypatch):
    monkeypatch.setattr(figures, "load", lambda lesson_id: None)
    for table in (figures.block_speed(), figures.skewed_accuracy()):
        assert "Not recorded yet" in str(table) and not table.rows
    monkeypatch.setattr(figures, "load", lambda lesson_id: _result(blocks=False))  # an older recording
    assert "Not recorded yet" in str(figures.block_speed()) and not figures.skewed_accuracy().rows
    result = _result()
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    speed = figures.block_speed()
    assert speed.rows[1] == ("8192", f"{900.0 + 8.192:,.0f}", "0.80x", "0.97x", "0.70x")
    acc = figures.skewed_accuracy()
    assert len(acc.rows) == len(bench.BLOCK_SHAPES) * len(bench.SCALINGS)
    errs = bench.block_accuracy(result)[bench.BLOCK_SHAPES[0]]
    per = acc.rows[0]
    assert per[:2] == ("1000x1032x528", bench.SCALINGS[0])
    assert per[2:] == tuple(
        f"{errs[(bench.SCALINGS[0], r, m)]:.1e}" for r in bench.REFERENCES for m in bench.METRICS
    )
    assert "NVIDIA H200 (132 SMs)" in acc.note and "<table>" in acc._repr_html_()
