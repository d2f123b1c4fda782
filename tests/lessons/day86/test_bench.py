"""Day 86's benchmark record on the CPU: the shape table and its sentences follow the reasons.

No recording exists yet, so a result is built here the way ``finish`` builds one (its
``_shape_reasons``), from made-up rates; every number the table and the findings show must be
that result's."""

from __future__ import annotations

import math
import re

import pytest

from course.bench.result import BenchResult, Reason
from course.kernel.provenance import Provenance
from course.lessons.day86 import bench, chooser, figures

SMS = 132


def _lt_rate(i: int, j: int) -> float:
    return 450.0 + 7 * i + 20 * j  # made up: shape i, cuBLASLt plan j (heuristic, autotuned)


def _result(shapes=chooser.SHAPES, lt=bench.LT_PEERS, notes=()) -> BenchResult:  # type: ignore[no-untyped-def]
    reasons: list[Reason] = []
    for i, shape in enumerate(shapes):
        pick = chooser.choose(*shape, SMS)
        kernel, peer = 400.0 + 10 * i, 500.0 + 3 * i
        low, high = (None, None) if len(set(shape)) == 1 else (kernel / peer - 0.02, kernel / peer + 0.01)
        reasons += bench._shape_reasons(shape, pick, kernel, peer, kernel / peer, low, high, "made up")
        for j, name in enumerate(lt):
            rate = _lt_rate(i, j)
            reasons += bench._lt_reasons(shape, name, kernel, rate, kernel / rate, None, None, "made up")
    provenance = Provenance("2026-12-03T00:00:00+00:00", "test", "NVIDIA H200", "9.0", SMS, {})
    return BenchResult(
        lesson="day86", provenance=provenance, l2_bytes=60 * 2**20, unit="TFLOP/s", kernel_name="k",
        rows=(), reasons=tuple(reasons), notes=tuple(notes),
    )  # fmt: skip


def test_the_table_reads_every_shape_in_order():
    rows = bench.shape_table(_result())
    assert [r.shape for r in rows] == list(chooser.SHAPES)
    for i, r in enumerate(rows):
        assert (r.kernel, r.peer) == (400.0 + 10 * i, 500.0 + 3 * i)
        assert r.pick == chooser.choose(*r.shape, SMS).describe()
    assert rows[0].low is None and rows[-1].low is not None


def test_a_partial_recording_shows_only_what_it_has_and_no_summary():
    result = _result(chooser.SHAPES[:3])  # squares only: the page's button
    assert len(bench.shape_table(result)) == 3
    assert bench._findings(result) == []  # the table (the speed section's) says it all
    # a recording made before the table grew (issue 39) is read for the shapes it has
    older = _result((*chooser.SHAPES[:3], (128, 8192, 8192)))
    (line,) = bench._findings(older)
    reached = sum(r.ratio >= bench.TARGET for r in bench.shape_table(older))
    assert line.startswith(f"{reached} of the 4 shapes run at 0.90x cuBLAS gemmEx or better")


def test_the_one_finding_is_the_recordings_and_repeats_no_table():
    """Every shape's numbers are in the shape table (the speed section's), the wave and the
    deterministic cost in their tables: the finding says only what no table does (issue 38)."""
    result = _result()  # no CUDA-graph numbers: the count is of the launches one by one, said
    rows = bench.shape_table(result)
    (line,) = bench._findings(result)
    m = re.fullmatch(
        r"(\d+) of the (\d+) shapes run at 0\.90x cuBLAS gemmEx or better launched one by one \(this "
        r"recording has no CUDA-graph numbers\); the lowest is (\d+x\d+x\d+), at ([\d.]+)x\. The table "
        r"below gives every shape\.",
        line,
    )
    assert m, line
    ratios = [r.ratio for r in rows]
    worst = min(rows, key=lambda r: r.ratio)
    assert (int(m[1]), int(m[2])) == (sum(x >= bench.TARGET for x in ratios), len(rows))
    assert (m[3], m[4]) == (bench.shape_name(worst.shape), f"{worst.ratio:.2f}")
    assert 0 < int(m[1]) < len(rows)  # the made-up rates straddle the target: the count is not trivial
    # another result, another sentence: it follows the numbers
    faster = _result()
    faster = BenchResult(**{**faster.__dict__, "reasons": tuple(
        Reason(r.title, r.value * 2, r.unit, r.kind, r.detail, r.low, r.high)
        if r.title.endswith("against cuBLAS") else r
        for r in faster.reasons
    )})  # fmt: skip
    assert bench._findings(faster) != [line]


def test_the_speed_section_shows_the_shape_table_in_place_of_the_squares(monkeypatch):
    from course.bench import report
    from course.lessons import get_lesson

    result = _result()
    lesson = get_lesson("day86")
    table = report.own_table(lesson, result)
    assert table is not None and len(table.rows) == len(chooser.SHAPES)
    section = report.SpeedSection("day86", result, None, False, "recorded", (), (), table)
    html = section._repr_html_()
    assert html.count("<table>") == 1 and "the chooser&#x27;s pick" in html.replace("'", "&#x27;")
    assert str(table) in str(section)
    partial = _result(shapes=())  # nothing the shape table can show: the engine's table stays
    assert report.own_table(lesson, partial) is None


def test_the_page_table_without_and_with_a_recording(monkeypatch):
    monkeypatch.setattr(figures, "load", lambda lesson_id: None)
    empty = figures.recorded_shapes()
    assert "Not recorded yet" in str(empty) and not empty.rows
    result = _result()
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    table = figures.recorded_shapes()
    assert len(table.rows) == len(chooser.SHAPES)
    first = bench.shape_table(result)[0]
    assert table.rows[0][2:4] == (f"{first.kernel:,.0f}", f"{first.peer:,.0f}")
    # the pick in the short form its heading names: tile, cluster, split
    c = chooser.choose(*first.shape, SMS)
    assert table.header[1] == "the chooser's pick (tile, cluster, split)"
    small = " small" if c.small else ""  # 512^3: the small build since the refit (issue 39)
    assert table.rows[0][1] == f"{c.bm}x{c.bn}{small}, {c.cluster}, {c.split}"
    assert "NVIDIA H200 (132 SMs)" in table.note
    assert "<table>" in table._repr_html_()


def test_the_cublaslt_plans_are_read_by_name_with_the_kernels_ratio_to_each():
    rows = bench.shape_table(_result())
    for i, r in enumerate(rows):
        assert list(r.lt) == list(bench.LT_PEERS)
        for j, name in enumerate(bench.LT_PEERS):
            assert r.lt[name].rate == _lt_rate(i, j)
            assert r.lt[name].ratio == pytest.approx(r.kernel / _lt_rate(i, j))
    note = figures.shapes(_result()).note  # the geometric means against each plan: the table's note
    for name in bench.LT_PEERS:
        to_lt = [r.lt[name].ratio for r in rows]
        mean = math.exp(sum(map(math.log, to_lt)) / len(to_lt))
        assert f"Against {name}: geometric mean {mean:.2f}x." in note


def test_the_page_table_shows_the_cublaslt_columns_or_says_why_they_are_empty(monkeypatch):
    result = _result()
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    table = figures.recorded_shapes()
    assert table.header[-2:] == ("cuBLASLt heuristic", "cuBLASLt autotuned")
    first = bench.shape_table(result)[0]
    heuristic = first.lt[bench.LT_PEERS[0]]
    assert table.rows[0][-2] == f"{heuristic.rate:,.0f} ({heuristic.ratio:.2f}x)"
    assert f"Against {bench.LT_PEERS[1]}: geometric mean" in table.note
    why = f"{bench.LT_PEERS[0]}: not measured on this machine: nvmath-python is not installed"
    bare = _result(lt=(), notes=(why,))
    monkeypatch.setattr(figures, "load", lambda lesson_id: bare)
    table = figures.recorded_shapes()
    assert {row[-1] for row in table.rows} == {"not measured"} and why in table.note
    older = _result(lt=())
    monkeypatch.setattr(figures, "load", lambda lesson_id: older)
    assert "made before they were measured" in figures.recorded_shapes().note


@pytest.mark.parametrize(("bn", "cluster"), chooser.CONFIGS)
def test_the_last_wave_problems_are_one_full_wave_and_one_unit_more(bn, cluster):
    full, plus = bench.wave_shapes(bn, cluster, SMS)
    one = chooser.estimate(*full, SMS, bn, cluster, 1)
    two = chooser.estimate(*plus, SMS, bn, cluster, 1)
    assert (one.units, one.waves) == (SMS // cluster, 1)
    assert (two.units, two.waves) == (SMS // cluster + 1, 2)
    assert full[0] == plus[0] and full[2] == plus[2] and plus[1] - full[1] == bn


def _wave_result(builds) -> BenchResult:  # type: ignore[no-untyped-def]
    reasons = []
    for i, (bn, cluster) in enumerate(builds):
        title = bench.wave_title(bn, cluster)
        full, plus = 40.0 + i, 75.0 + 2 * i
        reasons += [
            Reason(f"{title}: one full wave", full, "us", "measured", "made up"),
            Reason(f"{title}: one unit more", plus, "us", "measured", "made up"),
            # recorded as the engine records ratios: full over plus, with its spread
            Reason(title, full / plus, "x", "measured", "made up", full / plus - 0.05, full / plus + 0.02),
        ]
    base = _result(shapes=())
    return BenchResult(
        lesson="day86", provenance=base.provenance, l2_bytes=base.l2_bytes, unit="TFLOP/s", kernel_name="k",
        rows=(), reasons=tuple(reasons),
    )  # fmt: skip


def test_the_last_wave_table_and_sentences_are_the_recordings(monkeypatch):
    builds = chooser.CONFIGS[:3]
    result = _wave_result(builds)
    rows = bench.wave_table(result)
    assert [(r.bn, r.cluster) for r in rows] == list(builds)
    assert [(r.full_us, r.plus_us) for r in rows] == [(40.0 + i, 75.0 + 2 * i) for i in range(3)]
    # read back as time: one unit more takes this many times the full wave, the spread inverted
    assert rows[0].ratio == pytest.approx(75 / 40)
    assert (rows[0].low, rows[0].high) == pytest.approx((1 / (40 / 75 + 0.02), 1 / (40 / 75 - 0.05)))
    assert bench._findings(result) == []  # the wave table says it, once
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    table = figures.recorded_waves()
    assert len(table.rows) == 3 and table.rows[1][2:4] == ("41.0", "77.0")
    monkeypatch.setattr(figures, "load", lambda lesson_id: _result())
    assert "Not recorded yet" in str(figures.recorded_waves())


def _with_graphs_and_determinism(result: BenchResult) -> BenchResult:  # type: ignore[no-untyped-def]
    """``result`` plus what ``finish`` adds from timing in CUDA graphs and the deterministic build,
    made from made-up interleaved samples through the same functions."""
    from dataclasses import replace as dc_replace

    from course.bench.timing import Samples, in_graphs

    extra: list[Reason] = []
    names = [bench.GEMMEX, *bench.LT_PEERS]
    for i, shape in enumerate(chooser.SHAPES):
        flops = 2.0 * math.prod(shape)
        per = {"kernel": 400.0 + 10 * i, bench.GEMMEX: 420.0 + 3 * i, **{n: 430.0 for n in bench.LT_PEERS}}
        samples = {  # ms per call, 20 repeats, a rate of `per` TFLOP/s
            in_graphs(name): Samples(tuple(flops / (tf * 1e9) for _ in range(20)), 8, 8)
            for name, tf in per.items()
        }
        extra += bench._graph_reasons(shape, samples, names, "made up")
    shape = (1024, 1024, 16384)
    extra.append(
        Reason(bench.deterministic_title(shape), 0.98, "x", "measured", "deterministic 62.3 us, default 61.1 us "
               "per call (+1.2 us); made up", 0.97, 0.99)
    )  # fmt: skip
    return dc_replace(result, reasons=result.reasons + tuple(extra))


def test_the_cuda_graph_columns_and_the_deterministic_cost_are_the_recordings(monkeypatch):
    result = _with_graphs_and_determinism(_result())
    rows = bench.shape_table(result)
    for i, r in enumerate(rows):
        assert r.graphs["kernel"].rate == pytest.approx(400.0 + 10 * i)
        assert r.graphs[bench.GEMMEX].ratio == pytest.approx((400.0 + 10 * i) / (420.0 + 3 * i))
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    table = figures.recorded_shapes()
    assert table.header[5:7] == ("kernel, graphs", "gemmEx, graphs (ratio)")
    assert table.rows[0][5:7] == ("400", f"420 ({400 / 420:.2f}x)")
    ratios = [r.graphs[bench.GEMMEX].ratio for r in rows]
    assert f"In CUDA graphs: geometric mean {bench.geometric_mean(ratios):.2f}x cuBLAS gemmEx" in table.note
    # the finding counts the shapes at the target in graphs (issue 39); the means stay in the note,
    # the deterministic cost in its table
    (line,) = bench._findings(result)
    graphed = {r.shape: r.graphs[bench.GEMMEX].ratio for r in rows}
    worst = min(graphed, key=graphed.__getitem__)
    assert line == (
        f"{sum(x >= 0.90 for x in graphed.values())} of the {len(rows)} shapes run at 0.90x cuBLAS gemmEx or "
        f"better in CUDA graphs; the lowest is {bench.shape_name(worst)}, at {graphed[worst]:.2f}x. The table "
        "below gives every shape."
    )
    assert "geometric mean" not in line and "eterministic" not in line
    # the bench's summary line: both means, the count at the target, the lowest, from the same rows
    summary = bench.summary_line(rows)
    assert (
        f"in CUDA graphs ({len(rows)} shapes) geometric mean {bench.geometric_mean(ratios):.2f}x" in summary
    )
    assert f"{sum(x >= 0.90 for x in ratios)} of {len(rows)} at 0.90x or better" in summary
    assert f"the lowest {bench.shape_name(worst)} at {graphed[worst]:.2f}x" in summary
    assert bench.summary_line(bench.shape_table(_result()))  # no graph numbers: said
    assert "none timed in CUDA graphs" in bench.summary_line(bench.shape_table(_result()))
    det = figures.recorded_deterministic()
    assert det.rows == (("1024x1024x16384", "launched one by one", "0.980x (0.970-0.990)",
                         "deterministic 62.3 us, default 61.1 us per call (+1.2 us)"),)  # fmt: skip
    # an older recording: no graph columns, said; no deterministic table
    monkeypatch.setattr(figures, "load", lambda lesson_id: _result())
    older = figures.recorded_shapes()
    assert {row[5] for row in older.rows} == {"not measured"}
    assert "no CUDA-graph columns" in older.note
    assert "Not recorded yet" in str(figures.recorded_deterministic())


def test_the_wave_table_shows_the_models_ratio_beside_the_measured_one(monkeypatch):
    result = _wave_result(chooser.CONFIGS)
    monkeypatch.setattr(figures, "load", lambda lesson_id: result)
    table = figures.recorded_waves()
    for (bn, cluster), row in zip(chooser.CONFIGS, table.rows, strict=True):
        full, plus = (chooser.estimate(*s, SMS, bn, cluster, 1) for s in bench.wave_shapes(bn, cluster, SMS))
        assert row[-1] == f"{plus.est_us / full.est_us:.2f}x"
        # the model prices the lone unit at most at LONE_UNIT of a wave (less where the problem's bytes
        # through device memory, the floor, take longer than its compute), never a whole one
        assert 1 < plus.est_us / full.est_us <= 1 + chooser.LONE_UNIT + 1e-9
