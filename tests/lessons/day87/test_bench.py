"""Day 87's benchmark record on the CPU: the accuracy curve, the promotion table and the findings
read the recording's reasons, and the page's tables show those numbers and no others.

A result is built here the way ``finish`` builds one (the same titles), from made-up numbers."""

from __future__ import annotations

from course.bench.result import BenchResult, Measurement, Reason, SizeRow, Timing
from course.kernel.provenance import Provenance
from course.lessons.day87 import bench, chooser, figures, records

SMS = 132


# A recording made since the host picks the promoting tile per size: 128x192 at 8192 (as the model does
# on 132 SMs), the other tile timed at P=1 beside the chosen one. An older one has only 128x128 rows.
PICKS = {4096: "128x128", 8192: "128x192"}


def _result(ks=bench.ACCURACY_KS, blocks=True, picks=None) -> BenchResult:  # type: ignore[no-untyped-def]
    reasons: list[Reason] = []
    for i, dist in enumerate(bench.DISTS):
        for j, k in enumerate(ks):
            for n, name in enumerate(bench.CURVE_NAMES):
                err = (1 + i) * 1e-4 * (j + 1) * (n + 1)
                reasons.append(
                    Reason(bench.accuracy_title(dist, k, name), err, "relative error", "measured", "x")
                )
    for n in bench.PROMOTE_SIZES:
        chosen = picks[n] if picks else "128x128"
        timed = [(chosen, p) for p in bench.INTERVALS]
        if picks:
            timed.append((next(t for t in bench.TILES if t != chosen), 1))
            reasons += [
                Reason(bench.chosen_title(n, chosen), 0.99 + n / 40960, "x", "estimate", "x"),
                Reason(bench.tiles_title(n), 0.98 + n / 81920, "x", "measured", "x", 0.9, 1.2),
            ]
        for tile, p in timed:
            t = bench.promotion_title(p, n, tile)
            wide = 0.01 if tile == "128x192" else 0.0
            reasons += [
                Reason(t, 0.9 - 0.05 * p + wide, "x", "measured", "x", 0.85 - 0.05 * p, 0.95 - 0.05 * p),
                Reason(f"{t}: rate", 1000.0 + n / 100 - 10 * p + 100 * wide, "TFLOP/s", "measured", "x"),
                Reason(f"{t} against {bench.LT}", 0.8 - 0.04 * p + wide, "x", "measured", "x", 0.7, 0.9),
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
    curve = records.accuracy_curve(_result())
    assert set(curve) == set(bench.DISTS)
    assert set(curve["uniform"]) == set(bench.CURVE_NAMES)
    points = curve["uniform"][bench.CURVE_NAMES[0]]
    assert [k for k, _ in points] == list(bench.ACCURACY_KS)
    assert points[-1][1] == 2e-4 * len(bench.ACCURACY_KS)


def test_a_partial_curve_shows_what_it_has():
    curve = records.accuracy_curve(_result(ks=bench.ACCURACY_KS[:2]))
    assert [k for k, _ in curve["normal"][bench.LT]] == list(bench.ACCURACY_KS[:2])


def test_the_promotion_table_reads_rate_and_both_ratios():
    rows = records.promotion_table(_result())  # an older recording: 128x128 at every interval
    assert len(rows) == len(bench.PROMOTE_SIZES) * len(bench.INTERVALS)
    n, p, rate, ratio, vs_lt, tile, chosen = rows[1]
    assert (n, p) == (4096, 1) and rate == 1000.0 + 40.96 - 10 and ratio == 0.85 and vs_lt == 0.76
    assert {(r.tile, r.chosen) for r in rows} == {("128x128", True)}
    assert records.tile_checks(_result()) == []


def test_the_promotion_table_says_each_rows_tile_and_the_pick():
    result = _result(picks=PICKS)
    rows = records.promotion_table(result)
    assert len(rows) == len(bench.PROMOTE_SIZES) * (len(bench.INTERVALS) + 1)
    at = {(r.n, r.tile, r.p): r for r in rows}
    # the chosen tile at every interval, first; the other at P=1 after it
    assert [(r.tile, r.p, r.chosen) for r in rows if r.n == 8192] == [
        *(("128x192", p, True) for p in bench.INTERVALS),
        ("128x128", 1, False),
    ]
    assert [(r.tile, r.chosen) for r in rows if r.n == 4096][-1] == ("128x192", False)
    wide, square = at[(8192, "128x192", 1)], at[(8192, "128x128", 1)]
    assert (wide.ratio, wide.rate, wide.vs_lt) == (0.86, 1000.0 + 81.92 - 10 + 1, 0.77)
    assert (square.ratio, square.rate, square.vs_lt) == (0.85, 1000.0 + 81.92 - 10, 0.76)
    assert (
        records.chosen_tile(result, 8192) == "128x192" and records.chosen_tile(_result(), 8192) == "128x128"
    )
    assert records.tile_checks(result) == [
        records.TileCheck(n, PICKS[n], 0.99 + n / 40960, 0.98 + n / 81920) for n in bench.PROMOTE_SIZES
    ]
    # the titles: 128x128's as before a second tile existed; another tile names itself, and is not a dev title
    assert bench.promotion_title(1, 8192) == "promoting build, every 128 (P=1) at N=8192"
    assert bench.promotion_title(0, 8192, "128x192") == "promoting build (128x192), never (P=0) at N=8192"
    assert bench.promotion_title(1, 8192, "128x192") != bench.dev_title("128x192", 1, 8192)


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
    result = _result()  # an older recording: every promoting row is 128x128
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    promo = figures.promotion()
    assert promo.header[:3] == ("N", "tile", "promotion")
    assert promo.rows[0][3] == f"{records.promotion_table(result)[0].rate:,.0f}"
    assert {r[1] for r in promo.rows} == {"128x128"} and "Recorded before the host picked" in promo.note
    # what the model picks now, for the recording's SM count: computed, not recorded
    assert "on 132 SMs, 128x128 at N=4096, 128x192 at N=8192." in promo.note
    speed = figures.speed_against_lt()
    assert speed.rows[0][:2] == ("4096", f"{result.rows[0].kernel.rate:,.0f}")
    # A ratio against the like only: fast accumulation's cell has one, the default's its rate alone.
    fast, default = result.rows[0].peer(bench.LT_FAST), result.rows[0].peer(bench.LT)
    assert speed.rows[0][2:] == (f"{default.rate:,.0f}", f"{fast.rate:,.0f} ({fast.ratio:.2f}x)")
    assert [r[5] != "" for r in promo.rows] == [r.p == 1 for r in records.promotion_table(result)]
    assert "NVIDIA H200 (132 SMs)" in speed.note and "<table>" in speed._repr_html_()


def test_the_page_table_says_the_tile_of_each_row_and_why(monkeypatch):
    result = _result(picks=PICKS)
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    promo = figures.promotion()
    rows = records.promotion_table(result)
    assert [r[:3] for r in promo.rows] == [
        (
            str(r.n),
            r.tile if r.chosen else f"{r.tile} (not picked)",
            "never" if r.p == 0 else f"every {128 * r.p} of K (P={r.p})",
        )
        for r in rows
    ]
    assert ("8192", "128x128 (not picked)", "every 128 of K (P=1)") in [r[:3] for r in promo.rows]
    # 4096's 128x128 at each interval, then 128x192 at P=1: 0.01x and 1 TFLOP/s above 128x128's P=1
    assert promo.rows[len(bench.INTERVALS)][3:] == ("1,032", "0.86x", "0.77x")
    # the model's ratio and the measured one, from the recording; the fitted speed from the chooser
    assert (
        f"At N=8192 the model put 128x192 at {0.99 + 0.2:.2f}x the 128x128 and the batch measured 1.08x: 128x192."
        in promo.note
    )
    assert f"{chooser.TILE_SPEED['128x192']:g}x" in promo.note and "Recorded before" not in promo.note


def test_the_block_rows_read_rate_and_ratios_and_the_skewed_errors():
    rows = records.block_table(_result())
    assert rows == [
        (n, 900.0 + n / 1000, 0.8, 0.97, 0.7, 1.1 if n == bench.PROMOTE_SIZES[-1] else None)
        for n in bench.PROMOTE_SIZES
    ]
    errs = records.block_accuracy(_result())
    assert list(errs) == list(bench.BLOCK_SHAPES)
    assert (
        errs[bench.BLOCK_SHAPES[1]][(bench.SCALINGS[1], bench.REFERENCES[0], bench.METRICS[1])]
        == 2 * 1e-2 * 2
    )
    assert (
        records.block_table(_result(blocks=False)) == []
        and records.block_accuracy(_result(blocks=False)) == {}
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
    assert "128x128" in speed.header[3]  # the block-scaled build's twin: the same tile, per-tensor scales
    assert speed.rows[0][-1] == "not timed" and bench.LT_BLOCK in speed.header[-1]
    acc = figures.skewed_accuracy()
    assert len(acc.rows) == len(bench.BLOCK_SHAPES) * len(bench.SCALINGS)
    errs = records.block_accuracy(result)[bench.BLOCK_SHAPES[0]]
    per = acc.rows[0]
    assert per[:2] == ("1000x1032x528", bench.SCALINGS[0])
    assert per[2:] == tuple(
        f"{errs[(bench.SCALINGS[0], r, m)]:.1e}" for r in bench.REFERENCES for m in bench.METRICS
    )
    assert "NVIDIA H200 (132 SMs)" in acc.note and "<table>" in acc._repr_html_()
