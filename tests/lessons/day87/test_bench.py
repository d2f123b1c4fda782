"""Day 87's benchmark record on the CPU: the accuracy curve, the promotion table and the findings
read the recording's reasons, and the page's tables show those numbers and no others.

A result is built here the way ``finish`` builds one (the same titles), from made-up numbers."""

from __future__ import annotations

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
            if n == bench.PROMOTE_SIZES[-1]:  # cuBLASLt's block-scaled matmul at the last size only
                reasons.append(Reason(f"{t} against {bench.LT_BLOCK}", 1.1, "x", "measured", "x", 1.0, 1.2))
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


def test_the_promotion_table_reads_rate_and_both_ratios():
    rows = bench.promotion_table(_result())
    assert len(rows) == len(bench.PROMOTE_SIZES) * len(bench.INTERVALS)
    n, p, rate, ratio, vs_lt = rows[1]
    assert (n, p) == (4096, 1) and rate == 1000.0 + 40.96 - 10 and ratio == 0.85 and vs_lt == 0.76


def test_the_findings_say_only_the_pairing_and_the_speed_section_shows_the_like_table():
    """Every rate and ratio is in a table the page shows (the speed section's, the promotion's,
    the block scales', the accuracy's): the findings say only which pairing each ratio is (issue 35),
    and the speed section shows the like-with-like table in place of the engine's (issue 38)."""
    from course.bench import report
    from course.lessons import get_lesson

    result = _result()
    lines = bench._findings(result)
    assert lines == [bench.PAIRING] and "fast accumulation" in lines[0] and "promotes" in lines[0]
    table = report.own_table(get_lesson("day87"), result)
    assert table is not None and table.rows == figures.speed(result).rows
    assert [r[0] for r in table.rows] == [str(row.size) for row in result.rows]


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
    assert rows == [
        (n, 900.0 + n / 1000, 0.8, 0.97, 0.7, 1.1 if n == bench.PROMOTE_SIZES[-1] else None)
        for n in bench.PROMOTE_SIZES
    ]
    errs = bench.block_accuracy(_result())
    assert list(errs) == list(bench.BLOCK_SHAPES)
    assert (
        errs[bench.BLOCK_SHAPES[1]][(bench.SCALINGS[1], bench.REFERENCES[0], bench.METRICS[1])]
        == 2 * 1e-2 * 2
    )
    assert (
        bench.block_table(_result(blocks=False)) == [] and bench.block_accuracy(_result(blocks=False)) == {}
    )
    assert not any("Block-scaled" in line or "Skewed" in line for line in bench._findings(_result()))


def test_the_block_tables_without_and_with_a_recording(monkeypatch):
    monkeypatch.setattr(figures, "load", lambda lesson_id: None)
    for table in (figures.block_speed(), figures.skewed_accuracy()):
        assert "Not recorded yet" in str(table) and not table.rows
    monkeypatch.setattr(figures, "load", lambda lesson_id: _result(blocks=False))  # an older recording
    assert "Not recorded yet" in str(figures.block_speed()) and not figures.skewed_accuracy().rows
    result = _result()
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    speed = figures.block_speed()
    assert speed.rows[1] == ("8192", f"{900.0 + 8.192:,.0f}", "0.80x", "0.97x", "0.70x", "1.10x")
    assert speed.rows[0][-1] == "not timed" and bench.LT_BLOCK in speed.header[-1]
    acc = figures.skewed_accuracy()
    assert len(acc.rows) == len(bench.BLOCK_SHAPES) * len(bench.SCALINGS)
    errs = bench.block_accuracy(result)[bench.BLOCK_SHAPES[0]]
    per = acc.rows[0]
    assert per[:2] == ("1000x1032x528", bench.SCALINGS[0])
    assert per[2:] == tuple(
        f"{errs[(bench.SCALINGS[0], r, m)]:.1e}" for r in bench.REFERENCES for m in bench.METRICS
    )
    assert "NVIDIA H200 (132 SMs)" in acc.note and "<table>" in acc._repr_html_()
