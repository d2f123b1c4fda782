"""The timeline's host side (course/timeline.py) on synthetic buffers, and its CLI and page cell.

The buffers here are written the way the kernels' block writes them (the
layout in the module's docstring), from a small pipeline whose every
duration is known, so each number the summary reports is checked against
arithmetic. Malformed buffers must give a TimelineError that names what is
wrong, never a traceback. The GPU tests at the end record real kernels.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from course import timeline as tl
from course.bench.spec import bench_spec
from course.cli import main
from course.cli.timeline import instrumented_lessons
from course.errors import CourseError
from course.kernel.provenance import Provenance
from course.lessons import get_lesson
from course.timeline import Layout, TimelineError

T0 = 1_764_000_000_000_000_000  # a %globaltimer value: ns since 1970, as the driver keeps it
GHZ = 1.98  # the synthetic SM clock
LAYOUT = Layout(4, 4, 64)
GRID = (6,)  # CTAs 0 and 1 recorded in full; 2..5 only stamp their start and end
K, STAGES = 10, 3


def producer(k_tiles: int = K) -> list[tuple[str, int, int]]:
    """(kind, stage, true ns): setup 100, then per k-tile 600 waiting for a free stage and 400 loading."""
    ev = [("START", 0, 0)]
    for k in range(k_tiles):
        ev += [("WAIT_EMPTY", k % STAGES, 100 + 1000 * k), ("LOAD", k % STAGES, 700 + 1000 * k)]
    return ev + [("END", 0, 100 + 1000 * k_tiles)]


def consumer(k_tiles: int = K) -> list[tuple[str, int, int]]:
    """Setup 200; per k-tile 400 waiting for data, 200 issuing, 300 waiting for wgmma, 100 other; epilogue 300."""
    ev = [("START", 0, 0)]
    for k in range(k_tiles):
        s = k % STAGES
        ev += [
            ("WAIT_FULL", s, 200 + 1000 * k),
            ("MMA", s, 600 + 1000 * k),
            ("MMA_WAIT", s, 800 + 1000 * k),
            ("RELEASE", s, 1100 + 1000 * k),
        ]
    return ev + [("EPI", 0, 200 + 1000 * k_tiles), ("END", 0, 500 + 1000 * k_tiles)]


def pipeline() -> dict[tuple[int, int], tuple[int, list[tuple[str, int, int]]]]:
    """CTA 0 on SM 5 and CTA 1 on SM 9 (started 50 ns later), each a producer (wg 0) and a consumer (wg 1)."""
    out = {}
    for cta, (sm, late) in enumerate(((5, 0), (9, 50))):
        out[(cta, 0)] = (sm, [(k, s, t + late) for k, s, t in producer()])
        out[(cta, 1)] = (sm, [(k, s, t + late) for k, s, t in consumer()])
    return out


def encode(
    rows=None,
    layout: Layout = LAYOUT,
    grid_ctas: int = GRID[0],
    quantum: int = 1,
    ghz: float = GHZ,
    spans=True,
) -> np.ndarray:
    """A buffer as the kernel fills it; %globaltimer ticks every ``quantum`` ns, clock64 at ``ghz``."""
    rows = pipeline() if rows is None else rows
    w = np.zeros(layout.words(grid_ctas), dtype=np.uint64)
    w[layout.head : layout.head + 6] = [
        tl.MAGIC,
        tl.LAYOUT_VERSION,
        layout.ctas,
        layout.warpgroups,
        layout.capacity,
        grid_ctas,
    ]
    for (cta, wg), (sm, events) in rows.items():
        slot = cta * layout.warpgroups + wg
        w[layout.head + 8 + slot] = 1 << 32 | sm << 8 | wg
        kept = events if len(events) <= layout.capacity else events[: layout.capacity - 1] + events[-1:]
        for i, (kind, stage, t) in enumerate(kept):
            clock = (1_000_000 * (slot + 3) + round(t * ghz)) % (1 << 32)
            w[2 * layout.capacity * slot + 2 * i] = T0 + t // quantum * quantum
            w[2 * layout.capacity * slot + 2 * i + 1] = clock << 32 | stage << 8 | tl.kind_named(kind).code
        if spans:
            w[layout.span_offset + 2 * slot] = T0 + events[0][2]
            w[layout.span_offset + 2 * slot + 1] = T0 + events[-1][2]
    if spans:
        for cta in sorted(set(range(grid_ctas)) - {c for c, _ in rows}):
            for wg in (0, 1):
                slot = cta * layout.warpgroups + wg
                w[layout.span_offset + 2 * slot] = T0 + 1000 * cta
                w[layout.span_offset + 2 * slot + 1] = T0 + 1000 * cta + 30_000 + wg
    return w


def provenance() -> Provenance:
    return Provenance("2026-12-01T00:00:00+00:00", "test", "NVIDIA H200", "9.0", 132, {"cupy": "14.2"})


def decoded(words=None, **kw) -> tl.Timeline:
    kw.setdefault("lesson", "dayX")
    kw.setdefault("n", 4096)
    kw.setdefault("block", (256,))
    return tl.decode(encode() if words is None else words, LAYOUT, GRID, **kw)


# --- decoding ------------------------------------------------------------------------------------
def test_decode_gives_one_row_per_warpgroup_with_roles_sms_and_every_event():
    t = decoded()
    assert [(r.cta, r.warpgroup, r.smid, r.role) for r in t.rows] == [
        (0, 0, 5, "producer"),
        (0, 1, 5, "consumer"),
        (1, 0, 9, "producer"),
        (1, 1, 9, "consumer"),
    ]
    assert [e.kind for e in t.rows[0].events] == [k for k, _, _ in producer()]
    assert [e.stage for e in t.rows[1].events] == [s for _, s, _ in consumer()]
    assert t.recorded_ctas == (0, 1) and t.grid_ctas == 6
    assert not any(r.full for r in t.rows)


def test_event_times_are_the_true_times_and_rows_from_two_sms_line_up():
    t = decoded()
    for row, late in zip(t.rows, (0, 0, 50, 50), strict=True):
        truth = [x for _, _, x in (producer() if row.warpgroup == 0 else consumer())]
        assert [e.t_ns for e in row.events] == pytest.approx([x + late for x in truth], abs=1.5)
    assert t.origin_ns == T0
    assert t.clock.ns_per_cycle == pytest.approx(1 / GHZ, rel=1e-6)


def test_kernel_span_covers_every_cta_not_only_the_recorded_ones():
    t = decoded()
    assert t.span.start_ns == T0
    assert t.span.ns == 1000 * 5 + 30_000 + 1  # CTA 5's consumer ends last
    assert t.span.ctas == 6 and t.span.warpgroups == 12


def test_clock64_refines_a_coarse_globaltimer():
    # %globaltimer ticking every microsecond cannot tell a 200 ns issue from a 300 ns wait;
    # the clock64 fit recovers every duration to a few ns, and rows stay aligned to a tick.
    t = decoded(encode(quantum=1000))
    assert t.clock.step_ns == 1000 and t.clock.fitted_rows == 4
    for row in t.rows:
        truth = [x for _, _, x in (producer() if row.warpgroup == 0 else consumer())]
        got = [e.t_ns for e in row.events]
        assert np.diff(got) == pytest.approx(np.diff(truth), abs=5.0)
        raw = np.diff([e.gt_ns for e in row.events])
        assert max(abs(raw - np.diff(truth))) >= 500  # what raw %globaltimer would have drawn
    firsts = [r.events[0].t_ns for r in t.rows]
    assert max(firsts) - min(firsts) <= 1000 + 50


def test_a_row_whose_clock_disagrees_falls_back_to_globaltimer():
    rows = pipeline()
    rows[(1, 1)] = (
        9,
        [(k, s, t if i < 20 else t + 3000 * (i - 19)) for i, (k, s, t) in enumerate(consumer())],
    )
    w = encode(rows)
    # CTA 1's consumer: %globaltimer jumps ahead of its clock from event 20 on
    slot = 1 * LAYOUT.warpgroups + 1
    for i, (_, _, t) in enumerate(consumer()):
        w[2 * LAYOUT.capacity * slot + 2 * i] = T0 + t + (3000 * (i - 19) if i >= 20 else 0)
        clock = (1_000_000 * (slot + 3) + round(t * GHZ)) % (1 << 32)
        w[2 * LAYOUT.capacity * slot + 2 * i + 1] = (
            clock << 32 | int(w[2 * LAYOUT.capacity * slot + 2 * i + 1]) & 0xFFFF
        )
    w[LAYOUT.span_offset + 2 * slot + 1] = int(w[2 * LAYOUT.capacity * slot + 2 * (len(consumer()) - 1)])
    t = decoded(w)
    by = {(r.cta, r.warpgroup): r for r in t.rows}
    assert not by[(1, 1)].clock_fit and by[(0, 1)].clock_fit
    assert [e.t_ns for e in by[(1, 1)].events] == [e.gt_ns - T0 for e in by[(1, 1)].events]
    assert t.clock.raw_rows == 1 and "fell back" in t.clock.describe()


def test_rows_too_short_to_fit_keep_globaltimer():
    rows = {(0, 0): (3, [("START", 0, 0), ("END", 0, 700)])}
    w = encode(rows, grid_ctas=1)
    t = tl.decode(w, LAYOUT, (1,))
    assert t.clock.ns_per_cycle is None and not t.rows[0].clock_fit
    assert t.rows[0].events[-1].t_ns == 700
    assert t.rows[0].role == "other"


def test_a_full_slot_keeps_its_end_and_marks_the_gap():
    small = Layout(4, 4, 16)
    t = tl.decode(encode(layout=small), small, GRID)
    row = t.rows[0]
    assert row.full and len(row.events) == 16 and row.events[-1].kind == "END"
    assert tl.row_intervals(row)[-1].activity == tl.NOT_RECORDED


def test_bytes_decode_like_the_array():
    assert tl.decode(encode().tobytes(), LAYOUT, GRID).rows == decoded().rows


# --- malformed buffers: a clear TimelineError, never a traceback ---------------------------------
def _set(w, index, value):
    w = w.copy()
    w[index] = value
    return w


def _slot_word(slot, event, second=False):
    return 2 * LAYOUT.capacity * slot + 2 * event + int(second)


def _bad_buffers():
    good = encode()
    h = LAYOUT.head
    second = _slot_word(1, 3, True)
    kind_mask = ~np.uint64(0xFF)
    return [
        ("truncated", good[:-1], r"holds \d+ words; the layout .* needs \d+: truncated"),
        ("longer", np.concatenate([good, good[:2]]), "longer than the layout"),
        ("odd bytes", good.tobytes()[:-3], "not a whole number of 8-byte words"),
        ("2-D", good.reshape(-1, 2), "1-D array of uint64"),
        ("float", good.astype(np.float64), "1-D array of uint64"),
        ("nothing recorded", np.zeros_like(good), "nothing was recorded.*-DCOURSE_TIMELINE"),
        ("magic", _set(good, h, 12345), "not a timeline buffer"),
        ("version", _set(good, h + 1, 7), "layout version 7"),
        (
            "layout",
            _set(good, h + 4, 128),
            r"the kernel's layout .* = \(4, 4, 128\) is not the host's \(4, 4, 64\)",
        ),
        ("ctas", _set(good, h + 5, 9), "the kernel ran 9 CTAs; the host launched 6"),
        ("garbage kind", _set(good, second, int(good[second]) & int(kind_mask) | 0xEE), r"kind 238 \(0xee\)"),
        ("kind zero mid-row", _set(good, second, 0), "follows an empty place at event 3"),
        (
            "time goes back",
            _set(good, _slot_word(1, 5), int(good[_slot_word(1, 4)]) - 10),
            "event 5 .* is earlier than event 4",
        ),
        ("unused bits", _set(good, second, int(good[second]) | 1 << 20), "bits 16..31 are set"),
        ("no owner", _set(good, h + 8 + 1, 0), "CTA 0 warpgroup 1: .* events but no owner word"),
        ("owner wg", _set(good, h + 8 + 1, 1 << 32 | 5 << 8 | 2), "owner word .* is not"),
        ("cut before END", _cut_end(good), "never stamped its end"),
        (
            "START not first",
            _set(good, _slot_word(0, 0, True), int(good[_slot_word(0, 0, True)]) + 2),
            "not START",
        ),
        (
            "span half",
            _set(good, LAYOUT.span_offset + 2 * (3 * 4) + 1, 0),
            "CTA 3 warpgroup 0 stamped a start but no end",
        ),
        ("span silent", _silence(good, 4), "CTA 4 of 6 stamped no start"),
        ("span backwards", _set(good, LAYOUT.span_offset + 2 * (2 * 4), T0 + 10**9), "ends before it starts"),
    ]


def _cut_end(w):
    w = w.copy()
    n = len(producer())
    w[_slot_word(0, n - 1)] = 0
    w[_slot_word(0, n - 1, True)] = 0
    return w


def _silence(w, cta):
    w = w.copy()
    w[LAYOUT.span_offset + 2 * cta * 4 : LAYOUT.span_offset + 2 * (cta + 1) * 4] = 0
    return w


@pytest.mark.parametrize("name, words, message", _bad_buffers(), ids=[b[0] for b in _bad_buffers()])
def test_a_malformed_buffer_is_refused_with_what_is_wrong(name, words, message):
    with pytest.raises(TimelineError, match=message) as info:
        tl.decode(words, LAYOUT, GRID)
    assert isinstance(info.value, CourseError)  # the CLI prints it as one message, exit 2
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"ctas": 0}, "ctas must be a positive integer"),
        ({"capacity": 48}, "power of 2"),
        ({"warpgroups": 17}, "16"),
    ],
)
def test_a_layout_that_cannot_be_is_refused(kw, words):
    with pytest.raises(TimelineError, match=words):
        Layout(**{"ctas": 4, "warpgroups": 4, "capacity": 64, **kw})


def test_a_lesson_without_stamps_has_no_layout():
    with pytest.raises(TimelineError, match="carries no timeline stamps"):
        Layout.of(get_lesson("day76"))


# --- what the summary says -----------------------------------------------------------------------
def test_intervals_tile_each_row_and_follow_the_kinds():
    t = decoded()
    for row in t.rows:
        ivs = tl.row_intervals(row)
        assert all(a.end_ns == b.start_ns for a, b in zip(ivs, ivs[1:], strict=False))
        assert sum(iv.ns for iv in ivs) == pytest.approx(row.end_ns - row.start_ns)
    cons = tl.row_intervals(t.rows[1])
    assert [iv.activity for iv in cons[:5]] == [
        "setup",
        "wait: data",
        "wgmma issue",
        "wgmma wait",
        "after release",
    ]
    assert [iv.stage for iv in cons[:5]] == [None, 0, 0, 0, 0]
    assert cons[-1].activity == "epilogue"


def test_summary_times_shares_and_overlap_are_the_pipeline_arithmetic():
    s = tl.summarize(decoded())
    got = {(a.role, a.activity): (a.ns, a.share) for a in s.activities}
    p_total, c_total = 100 + 1000 * K, 500 + 1000 * K
    assert got[("producer", "load")] == pytest.approx((2 * 400 * K, 400 * K / p_total), abs=2)
    assert got[("producer", "wait: free stage")][0] == pytest.approx(2 * 600 * K, abs=2)
    assert got[("consumer", "wgmma issue")][0] == pytest.approx(2 * 200 * K, abs=2)
    assert got[("consumer", "epilogue")][0] == pytest.approx(2 * 300, abs=2)
    assert s.load_share() == pytest.approx(400 * K / p_total, rel=1e-3)
    assert s.wgmma_share() == pytest.approx(500 * K / c_total, rel=1e-3)
    # loads run [700, 1100) of each k-tile, wgmma [600, 1100): 400 of every 500 ns overlap
    assert s.overlap_share() == pytest.approx(0.8, abs=1e-3)
    assert [o.cta for o in s.overlaps] == [0, 1]
    assert s.kernel_ns == 35_001 and s.recorded_ctas == 2 and s.grid_ctas == 6
    text = s.text()
    assert "The producer spends 39.6% of its time issuing or copying loads." in text
    assert "2 of 6 CTAs recorded" in text


def test_one_warpgroup_doing_both_roles_never_overlaps_itself():
    both = [("START", 0, 0)]
    for k in range(4):
        both += [("LOAD", 0, 100 + 1000 * k), ("WAIT_FULL", 0, 200 + 1000 * k), ("MMA", 0, 700 + 1000 * k)]
        both += [("MMA_WAIT", 0, 800 + 1000 * k), ("SYNC", 0, 1000 + 1000 * k)]
    both += [("EPI", 0, 4100), ("END", 0, 4400)]
    t = tl.decode(encode({(0, 0): (1, both)}, grid_ctas=1), LAYOUT, (1,))
    assert t.rows[0].role == "producer+consumer"
    s = tl.summarize(t)
    assert s.overlap_share() == 0.0
    assert s.load_share() == pytest.approx(400 / 4400, rel=1e-3)


def test_a_copy_issued_for_another_stage_counts_as_ahead_of_the_math_until_its_wait_ends():
    # Stage 1's copy is issued at 200 and waited for until 1600, so it is outstanding through the
    # consumer's whole wgmma on stage 0 [600, 1400); stage 0's second copy is never waited for.
    prod = [("START", 0, 0), ("LOAD", 0, 100), ("LOAD", 1, 200), ("WAIT_EMPTY", 0, 300), ("LOAD", 0, 1500)]
    prod += [("END", 0, 3000)]
    cons = [
        ("START", 0, 0),
        ("WAIT_FULL", 0, 100),
        ("MMA", 0, 600),
        ("MMA_WAIT", 0, 1000),
        ("RELEASE", 0, 1400),
    ]
    cons += [
        ("WAIT_FULL", 1, 1500),
        ("MMA", 1, 1600),
        ("MMA_WAIT", 1, 2000),
        ("RELEASE", 1, 2400),
        ("END", 0, 3000),
    ]
    t = tl.decode(encode({(0, 0): (1, prod), (0, 1): (1, cons)}, grid_ctas=1), LAYOUT, (1,))
    s = tl.summarize(t)
    assert s.ahead_share() == pytest.approx(800 / 1600, abs=1e-3)
    assert "a copy of another stage had been issued and not yet waited for 50.0% of the time" in s.text()


def test_one_warpgroup_says_it_does_both_jobs_and_that_no_copy_is_outstanding_while_it_computes():
    both = [("START", 0, 0)]
    for k in range(4):
        both += [("LOAD", 0, 100 + 1000 * k), ("WAIT_FULL", 0, 200 + 1000 * k), ("MMA", 0, 700 + 1000 * k)]
        both += [("MMA_WAIT", 0, 800 + 1000 * k), ("SYNC", 0, 1000 + 1000 * k)]
    both += [("EPI", 0, 4100), ("END", 0, 4400)]
    s = tl.summarize(tl.decode(encode({(0, 0): (1, both)}, grid_ctas=1), LAYOUT, (1,)))
    assert s.one_warpgroup and s.ahead_share() == 0.0
    text = s.text()
    assert "One warpgroup does both jobs" in text and "no copy is outstanding: 0.0%" in text
    assert "The producer spends" not in text and "The consumer spends" not in text
    assert "one warpgroup, producer and consumer" in text  # the table's role, in words


# --- the picture -----------------------------------------------------------------------------------
def test_the_figure_has_a_row_per_warpgroup_and_a_legend_of_what_happened():
    fig = tl.figure(decoded(provenance=provenance()))
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "CTA 1 (SM 9) wg 1: consumer" and labels[-1] == "CTA 0 (SM 5) wg 0: producer"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "load" in legend and "wgmma issue" in legend and tl.NOT_RECORDED not in legend
    assert "NVIDIA H200" in fig.get_suptitle()
    stages = {t.get_text() for t in ax.texts}
    assert stages == {"0", "1", "2"}
    assert fig.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_dense_timeline_gets_a_zoomed_panel():
    rows = {(0, 0): (1, producer(40)), (0, 1): (1, consumer(40))}
    t = tl.decode(encode(rows, layout=Layout(1, 2, 256), grid_ctas=1), Layout(1, 2, 256), (1,))
    fig = tl.figure(t)
    assert len(fig.axes) == 2
    lo, hi = fig.axes[1].get_xlim()
    assert 0 < lo < hi < fig.axes[0].get_xlim()[1]


# --- evidence ----------------------------------------------------------------------------------
def test_json_round_trip_keeps_every_event_and_the_provenance(tmp_path):
    t = decoded(provenance=provenance(), launch_ms=0.04)
    json_path, png_path = tl.write(t, tmp_path)
    assert png_path.read_bytes()[:4] == b"\x89PNG"
    back = tl.load("dayX", tmp_path)
    assert back is not None and back.rows == t.rows and back.span == t.span
    assert back.provenance == t.provenance and back.launch_ms == 0.04
    data = json.loads(json_path.read_text())
    assert data["device"] == "NVIDIA H200" and data["kinds"]["4"] == "LOAD"
    assert tl.load("dayY", tmp_path) is None


def test_only_a_gpu_recording_is_written():
    with pytest.raises(TimelineError, match="no provenance"):
        tl.to_dict(decoded())


def _recorded_dict():
    return tl.to_dict(decoded(provenance=provenance()))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.pop("rows"), "field 'rows' is missing"),
        (lambda d: d.update(schema_version=9), "schema_version must be 1"),
        (lambda d: d["kinds"].update({"4": "COPY"}), "not this course's event kind 4"),
        (lambda d: d["rows"][1]["dt_ns"].__setitem__(3, -5), r"rows\[1\]: dt_ns\[3\] = -5"),
        (lambda d: d["rows"][0]["kind"].__setitem__(2, "LOAD"), r"kind\[2\] must be an integer"),
        (
            lambda d: d["rows"][0]["kind"].__setitem__(2, 99),
            r"rows\[0\]: CTA 0 warpgroup 0, event 2: kind 99",
        ),
        (lambda d: d["rows"][0].update(full="yes"), "'full' must be bool"),
        (lambda d: d["layout"].update(capacity=3), "power of 2"),
        (lambda d: d["rows"][2]["dclock"].__setitem__(4, -1), r"rows\[2\]: clock0 and dclock must be 32-bit"),
        (lambda d: d.update(device=None), "'device' must be str"),
    ],
)
def test_a_broken_recording_names_the_field(tmp_path, edit, message):
    d = _recorded_dict()
    edit(d)
    path = tmp_path / "dayX.json"
    path.write_text(json.dumps(d))
    with pytest.raises(TimelineError, match=message) as info:
        tl.load("dayX", tmp_path)
    assert str(path) in str(info.value)


def test_a_recording_of_another_lesson_is_refused(tmp_path):
    tl.write(decoded(provenance=provenance()), tmp_path)
    (tmp_path / "dayX.json").rename(tmp_path / "dayZ.json")
    with pytest.raises(TimelineError, match="is for lesson 'dayX', not 'dayZ'"):
        tl.load("dayZ", tmp_path)


def test_invalid_json_is_a_timeline_error(tmp_path):
    (tmp_path / "dayX.json").write_text("{")
    with pytest.raises(TimelineError, match="not valid JSON"):
        tl.load("dayX", tmp_path)


# --- the command line and the page ----------------------------------------------------------------
@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """An evidence/timeline/ folder holding a (synthetic) recorded day80 timeline."""
    folder = tmp_path / "evidence-timeline"
    t = decoded(lesson="day80", provenance=provenance(), launch_ms=0.036)
    tl.write(t, folder)
    monkeypatch.setattr(tl.store, "timeline_dir", lambda: folder)
    return folder


def test_cli_recorded_prints_the_summary_and_writes_json_and_png(recorded, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["timeline", "day80", "--recorded", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "The recorded timeline of day80 (N = 4096 on NVIDIA H200" in said
    assert "wgmma wait" in said and f"wrote {out / 'day80.json'}" in said
    data = json.loads((out / "day80.json").read_text())
    roles = {r["role"] for r in data["rows"]}  # the lesson's declaration, written in every row
    assert roles == {tl._role(r["kind"]) for r in data["rows"]}
    assert {"producer", "consumer"} <= roles
    assert len({s for r in data["rows"] for s in r["stage"]}) >= 3
    assert (out / "day80.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_recorded_without_a_recording_says_how_to_make_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tl.store, "timeline_dir", lambda: tmp_path)
    assert main(["timeline", "day80", "--recorded"]) == 2
    assert "No recorded timeline of day80" in capsys.readouterr().out


def test_cli_offers_only_the_lessons_with_stamps(capsys):
    with pytest.raises(SystemExit) as info:
        main(["timeline", "day76", "--recorded"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'day76'" in err and "day80" in err
    with pytest.raises(SystemExit):
        main(["timeline", "--help"])
    said = capsys.readouterr().out
    assert "day76" not in said and all(lesson_id in said for lesson_id in instrumented_lessons())


def test_cli_n_with_recorded_is_refused(recorded, capsys):
    assert main(["timeline", "day80", "--recorded", "--n", "1024"]) == 2
    assert "--n goes with recording" in capsys.readouterr().err


def test_cli_on_a_machine_that_cannot_run_says_why_and_shows_the_recording(recorded, monkeypatch, capsys):
    from course.kernel import gate

    lesson = get_lesson("day80")
    monkeypatch.setattr(
        gate, "verdict", lambda *_a, **_k: gate.Verdict(lesson, "no-gpu", "No GPU here.", "Use one.")
    )
    assert main(["timeline", "day80"]) == 2
    said = capsys.readouterr().out
    assert said.startswith("Cannot record day80 here. No GPU here. Use one.")
    assert "The recorded timeline of day80" in said


def test_cli_broken_recording_is_one_message_exit_2(recorded, capsys):
    (recorded / "day80.json").write_text("[]")
    assert main(["timeline", "day80", "--recorded"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_page_shows_the_recorded_timeline_without_a_gpu(recorded, monkeypatch):
    from course.kernel import gate
    from course.page import Page

    lesson = get_lesson("day80")
    monkeypatch.setattr(
        gate, "verdict", lambda *_a, **_k: gate.Verdict(lesson, "no-gpu", "No GPU here.", "Use one.")
    )
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    section = Page("day80").timeline()
    assert isinstance(section, tl.TimelineSection) and section.timeline is not None
    html = section._repr_html_()
    assert "Recorded on NVIDIA H200" in html and "data:image/png;base64," in html and "wgmma issue" in html


def test_page_without_a_recording_says_so(tmp_path, monkeypatch):
    from course.kernel import gate
    from course.page import Page

    lesson = get_lesson("day80")
    monkeypatch.setattr(tl.store, "timeline_dir", lambda: tmp_path)
    monkeypatch.setattr(
        gate, "verdict", lambda *_a, **_k: gate.Verdict(lesson, "no-gpu", "No GPU here.", "Use one.")
    )
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    section = Page("day80").timeline()
    assert (
        section.timeline is None
        and "Not recorded yet on the NVIDIA H100 80GB HBM3: no timeline of day80" in section.message
        and "checkout" not in section.message
    )


def test_the_recorded_timelines_line_names_no_tool_of_the_course(monkeypatch):
    from course.kernel import gate
    from course.page import Page

    lesson = get_lesson("day81")
    monkeypatch.setattr(
        gate, "verdict", lambda *_a, **_k: gate.Verdict(lesson, "no-gpu", "No GPU here.", "Use one.")
    )
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    section = Page("day81").timeline()
    assert section.timeline is not None and section.timeline.provenance is not None
    command = section.timeline.provenance.command
    assert "tools/" not in section.message
    if not command.startswith("python -m course"):  # recorded by a tool of the course: say how to make one
        assert "python -m course timeline day81" in section.message
    assert f"on {section.timeline.provenance.recorded_at[:10]}" in section.message


def test_page_of_a_lesson_without_stamps_is_a_message():
    from course.page import Message, Page

    msg = Page("day76").timeline()
    assert isinstance(msg, Message) and "records no timeline" in msg.text


# --- record() on a simulated GPU: the plumbing, without a driver -------------------------------------
class _FakeDevice:
    """Just enough of CuPy for record(): device arrays are numpy arrays found by their address."""

    def __init__(self):
        import types

        self.arrays: dict[int, np.ndarray] = {}
        self.cuda = types.SimpleNamespace(
            driver=types.SimpleNamespace(CUDADriverError=RuntimeError),
            runtime=types.SimpleNamespace(CUDARuntimeError=RuntimeError),
            get_current_stream=lambda: None,
            Event=lambda: types.SimpleNamespace(record=lambda _s: None, synchronize=lambda: None),
            get_elapsed_time=lambda _a, _b: 0.0361,
        )
        self.uint64 = np.uint64

    def zeros(self, n, dtype):
        import types

        a = np.zeros(n, dtype=dtype)
        self.arrays[a.ctypes.data] = a
        return types.SimpleNamespace(data=types.SimpleNamespace(ptr=a.ctypes.data), fill=a.fill, a=a)

    @staticmethod
    def asnumpy(x):
        return x.a.copy()


class _FakeSymbol:
    def __init__(self):
        self.value = 0
        self.history: list[int] = []

    def copy_from_host(self, src, nbytes):
        import ctypes

        assert nbytes == 8
        self.value = ctypes.cast(src, ctypes.POINTER(ctypes.c_uint64))[0]
        self.history.append(self.value)


def test_record_points_the_kernel_at_a_zeroed_buffer_for_one_checked_launch_only(monkeypatch):
    import sys
    import types

    from course.bench import timing
    from course.kernel import gate
    from course.kernel.host import Check

    device = _FakeDevice()
    monkeypatch.setitem(sys.modules, "cupy", device)
    symbol = _FakeSymbol()
    real = get_lesson("day80")
    launches: list[int] = []

    class Work:
        config = types.SimpleNamespace(grid=GRID, block=(256,), shared_mem=0)
        compiled = None

        def launch(self, j):
            launches.append(symbol.value)
            ranges.append(("launch", symbol.value != 0))
            if symbol.value:  # the "kernel" fills the buffer the pointer names, as the block does
                buf = device.arrays[symbol.value]
                assert not buf.any(), "the recorded launch must find a zeroed buffer"
                buf[:] = encode(layout=real_layout)

        def poison(self, j):
            pass

        def out(self, j):
            return "D"

        def check(self, got, want=None):
            return Check("relative", 0, 1, 0.0, 1e-3, None)

    real_layout = Layout.of(real)
    compiled = types.SimpleNamespace(
        module=types.SimpleNamespace(get_global=lambda name: symbol if name == tl.SYMBOL else None),
        summary=lambda: "compiled",
        lesson=real,
    )
    lesson = types.SimpleNamespace(
        id="day80",
        kernel_file=real.kernel_file,
        kernel_path=real.kernel_path,
        size_macro="GEMM_DIM",
        constants=real.constants,
        warpgroup_roles=real.warpgroup_roles,
    )
    monkeypatch.setattr(tl.gpu, "bench_spec", lambda _lesson: bench_spec(real))
    host = types.SimpleNamespace(workload=lambda c, n, sets, purpose, **options: Work())
    monkeypatch.setattr(tl.gpu, "host_of", lambda _lesson: host)
    gpu = gate.Gpu(0, "NVIDIA H200", (9, 0), 132, 232448, 150 * 2**30)
    monkeypatch.setattr(gate, "probe", lambda: gate.Machine(gpu, None, None, {"cupy": "14.2"}))
    monkeypatch.setattr(gate, "ensure_runs", lambda *_a: None)
    monkeypatch.setattr(tl.gpu, "compile_instrumented", lambda les, n, source=None, defines=None: compiled)
    monkeypatch.setattr(timing, "Timer", lambda _r: types.SimpleNamespace(hold=lambda *_a: None))
    from course.kernel import nvtx

    ranges: list[tuple] = []
    recorder = types.SimpleNamespace(
        RangePush=lambda name: ranges.append(("push", name)), RangePop=lambda: ranges.append(("pop",))
    )
    monkeypatch.setattr(nvtx, "_backend", lambda: recorder)
    said: list[str] = []
    t = tl.record(lesson, 4096, progress=said.append, command="test")
    # Nsight Systems sees the lesson's ranges: the warm-ups, then the recorded launch in its own.
    assert ranges == [
        ("push", "day80 timeline: 2 warm-up launches"),
        ("launch", False),
        ("launch", False),
        ("pop",),
        ("push", "day80 timeline: the recorded launch, N=4096"),
        ("launch", True),
        ("pop",),
    ]
    assert launches[:2] == [0, 0] and launches[2] != 0 and len(launches) == 3  # 2 warm-ups record nothing
    assert symbol.value == 0 and symbol.history[-1] == 0  # and the pointer is cleared afterwards
    assert t.lesson == "day80" and t.launch_ms == 0.0361 and t.provenance.device == "NVIDIA H200"
    assert {r.role for r in t.rows} == {"producer", "consumer"}
    assert "recorded one launch of 6 CTAs (36.1 µs by CUDA events); checked" in said[-1]


def test_record_refuses_a_wrong_result_and_still_clears_the_pointer(monkeypatch):
    import sys
    import types

    from course.bench import timing
    from course.errors import CheckFailed
    from course.kernel import gate
    from course.kernel.host import Check, Mismatch

    device = _FakeDevice()
    monkeypatch.setitem(sys.modules, "cupy", device)
    symbol = _FakeSymbol()
    real = get_lesson("day80")
    work = types.SimpleNamespace(
        config=types.SimpleNamespace(grid=GRID, block=(256,), shared_mem=0),
        compiled=None,
        launch=lambda j: None,
        poison=lambda j: None,
        out=lambda j: "D",
        check=lambda got, want=None: Check("relative", 3, 9, 2.0, 1e-3, Mismatch(1, 0, 1, 5.0, 1.0, 4.0)),
    )
    compiled = types.SimpleNamespace(
        module=types.SimpleNamespace(get_global=lambda name: symbol), summary=lambda: "c", lesson=real
    )
    lesson = types.SimpleNamespace(
        id="day80",
        kernel_file=real.kernel_file,
        kernel_path=real.kernel_path,
        size_macro="GEMM_DIM",
        constants=real.constants,
    )
    monkeypatch.setattr(tl.gpu, "bench_spec", lambda _lesson: bench_spec(real))
    monkeypatch.setattr(
        tl.gpu,
        "host_of",
        lambda _lesson: types.SimpleNamespace(workload=lambda c, n, sets, purpose, **options: work),
    )
    gpu = gate.Gpu(0, "NVIDIA H200", (9, 0), 132, 232448, 150 * 2**30)
    monkeypatch.setattr(gate, "probe", lambda: gate.Machine(gpu, None, None, {}))
    monkeypatch.setattr(gate, "ensure_runs", lambda *_a: None)
    monkeypatch.setattr(tl.gpu, "compile_instrumented", lambda les, n, source=None, defines=None: compiled)
    monkeypatch.setattr(timing, "Timer", lambda _r: types.SimpleNamespace(hold=lambda *_a: None))
    with pytest.raises(
        CheckFailed, match="day80 N=4096, built with -DCOURSE_TIMELINE: 3 of 9 elements wrong"
    ):
        tl.record(lesson, 4096, progress=lambda _l: None)
    assert symbol.value == 0 and len(symbol.history) == 3


# --- on the H200 ---------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("lesson_id", ["day78", "day80", "day84"])
def test_recording_on_the_gpu_shows_both_roles_over_several_stages(gpu_for, lesson_id):
    gpu_for(lesson_id)
    t = tl.record(get_lesson(lesson_id), 1024, progress=lambda _line: None)
    roles = set(t.roles())
    assert {"producer", "consumer"} <= roles
    assert len({e.stage for r in t.rows for e in r.events if tl.kind_named(e.kind).staged}) >= 2
    assert t.span.ctas == math.prod(t.grid) and t.launch_ms is not None
    assert t.span.ns <= 1.1 * t.launch_ms * 1e6


@pytest.mark.gpu
@pytest.mark.hopper
def test_globaltimer_resolution_is_measured(gpu_for):
    gpu_for("day78")
    r = tl.globaltimer_resolution(1 << 16)
    assert r.changes > 0 and 0 < r.min_step_ns <= 2000 and 0.5 < r.ghz < 3.0


def test_a_wrong_size_is_refused_before_the_gpu_is_asked(capsys, monkeypatch):
    from course.cli import main
    from course.kernel import gate

    def no_gpu_question(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the GPU check ran before --n was checked")

    monkeypatch.setattr(gate, "verdict", no_gpu_question)
    assert main(["timeline", "day79", "--n", "100"]) == 2
    err = capsys.readouterr().err
    assert "sizes for day79 must be multiples of 256" in err and "(got 100)" in err


def test_the_page_draws_a_recording_once_and_again_when_its_file_changes(recorded, monkeypatch):
    """Issue 28: page.timeline() drew the recording every Run All (0.7 s); now once per file state."""
    import os

    from course.lessons import LESSONS
    from course.timeline import section

    drawn = []
    real = section.png_bytes
    monkeypatch.setattr(section, "png_bytes", lambda t: drawn.append(t) or real(t))
    monkeypatch.setattr(section, "_DRAWN", {})
    first = section.timeline_section(LESSONS["day80"])
    again = section.timeline_section(LESSONS["day80"])
    assert again is first and len(drawn) == 1
    path = recorded / "day80.json"
    data = json.loads(path.read_text())
    data["device"] = "Another GPU"
    path.write_text(json.dumps(data))
    st = path.stat()
    os.utime(
        path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000)
    )  # a later write, whatever the clock's grain
    changed = section.timeline_section(LESSONS["day80"])
    assert len(drawn) == 2 and changed is not first and "Another GPU" in changed.message


def test_a_command_in_the_sections_message_shows_as_code_not_backticks(recorded):
    from course.lessons import LESSONS
    from course.timeline import section

    html = section.timeline_section(LESSONS["day80"])._repr_html_()
    message = html.split("</div>")[0]
    assert "`" not in message and "<code>python -m course timeline day80</code>" in message, message
