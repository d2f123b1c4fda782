"""The timeline as Chrome Trace Event JSON (course/timeline/trace.py), and the rows' declared roles.

A trace is checked the way Perfetto's JSON importer reads one (every event
has ph, ts, pid, tid, name; a complete event has a duration; metadata
names the tracks), then against the course's own summary of the same
timeline: the same intervals, the same time per role and activity, the
same spans. The recorded H200 timelines in evidence/timeline/ are checked
the same way, so the trace of what a learner sees is tested, not only a
synthetic one.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest
from recordings import NOT_RECORDED, TIMELINE_NOT_RECORDED

from course import timeline as tl
from course.cli import main
from course.cli.timeline import instrumented_lessons
from course.lessons import LESSONS, get_lesson
from course.timeline import TimelineError

from .test_timeline import decoded, provenance


def check_schema(trace: dict) -> list[dict]:
    """The Trace Event Format's required fields; returns the events."""
    assert trace["displayTimeUnit"] == "ns"
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    for i, e in enumerate(events):
        missing = [f for f in tl.TRACE_FIELDS if f not in e]
        assert not missing, f"event {i} lacks {missing}: {e}"
        assert e["ph"] in ("X", "M"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["name"], str)
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
        if e["ph"] == "X":
            assert isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, e
        else:
            assert e["name"] in ("process_name", "thread_name", "process_sort_index", "thread_sort_index")
            assert isinstance(e["args"], dict)
    return events


def check_against_summary(timeline: tl.Timeline, trace: dict) -> None:
    events = check_schema(trace)
    summary = tl.summarize(timeline)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    kernel_pid = max(procs)
    work = [e for e in events if e["ph"] == "X" and e["pid"] != kernel_pid]
    # One track per recorded CTA and warpgroup, named by the row's role.
    for row in timeline.rows:
        assert names[(row.cta, row.warpgroup)] == f"warpgroup {row.warpgroup}: {row.role}"
        assert procs[row.cta] == f"CTA {row.cta} (SM {row.smid})"
        mine = [e for e in work if (e["pid"], e["tid"]) == (row.cta, row.warpgroup)]
        ivs = tl.row_intervals(row)
        assert len(mine) == len(ivs) == len(row.events) - 1
        assert [e["name"] for e in mine] == [iv.activity for iv in ivs]
        assert [e["args"].get("stage") for e in mine] == [iv.stage for iv in ivs]
        assert {e["cat"] for e in mine} == {e["args"]["role"] for e in mine} == {row.role}
    assert set(names) == {(r.cta, r.warpgroup) for r in timeline.rows} | {(kernel_pid, 0)}
    # The time per role and activity is the summary's (to a nanosecond per event: the trace rounds to ns).
    per = defaultdict(float)
    count: Counter = Counter()
    for e in work:
        per[(e["cat"], e["name"])] += e["dur"]
        count[(e["cat"], e["name"])] += 1
    assert set(per) == {(a.role, a.activity) for a in summary.activities}
    for a in summary.activities:
        assert per[(a.role, a.activity)] == pytest.approx(a.ns / 1e3, abs=1e-3 * count[(a.role, a.activity)])
    # The spans: the recorded rows' first to last stamp, and the whole kernel.
    start = min(e["ts"] for e in work)
    end = max(e["ts"] + e["dur"] for e in work)
    assert end - start == pytest.approx(summary.recorded_ns / 1e3, abs=2e-3)
    (kernel,) = [e for e in events if e["ph"] == "X" and e["pid"] == kernel_pid]
    assert kernel["dur"] == pytest.approx(summary.kernel_ns / 1e3, abs=1e-3)
    assert kernel["args"]["ctas"] == summary.grid_ctas
    assert min(e["ts"] for e in events if e["ph"] == "X") == 0


def test_the_trace_of_a_synthetic_pipeline_is_its_summary():
    t = decoded(provenance=provenance())
    trace = tl.to_trace(t)
    check_against_summary(t, trace)
    # The known pipeline: per CTA a producer with K loads, each 400 ns, on stages 0, 1, 2, 0, ...
    loads = [e for e in trace["traceEvents"] if e["name"] == "load" and e["pid"] == 0]
    assert [e["args"]["stage"] for e in loads] == [k % 3 for k in range(10)]
    assert all(e["dur"] == pytest.approx(0.4, abs=0.002) for e in loads)
    assert trace["otherData"]["device"] == "NVIDIA H200"


def test_the_checks_catch_a_trace_that_lost_an_event():
    t = decoded()
    trace = tl.to_trace(t)
    events = trace["traceEvents"]
    i = next(i for i, e in enumerate(events) if e["name"] == "wgmma wait")
    with pytest.raises(AssertionError):
        check_against_summary(t, {**trace, "traceEvents": events[:i] + events[i + 1 :]})
    broken = dict(events[i])
    del broken["dur"]
    with pytest.raises(AssertionError, match="dur"):
        check_schema({**trace, "traceEvents": [*events[:i], broken, *events[i + 1 :]]})


KEYS = ("h100-80gb-hbm3", "h200")  # every GPU model the course keeps recordings of
RECORDED = [
    (key, lesson_id)
    for key in KEYS
    for lesson_id in instrumented_lessons()
    if (tl.timeline_dir(key) / f"{lesson_id}.json").exists()
]


@pytest.mark.parametrize("key, lesson_id", RECORDED)
def test_the_trace_of_each_recorded_timeline_is_its_summary(key, lesson_id, tmp_path):
    t = tl.load(lesson_id, tl.timeline_dir(key))
    assert tl.store.device_key(t.provenance.device) == key  # in the folder of the GPU it ran on
    path = tl.write_trace(t, tmp_path / f"{lesson_id}.json")
    check_against_summary(t, json.loads(path.read_text()))


@pytest.mark.parametrize("key", KEYS)
def test_every_instrumented_lesson_has_a_recording_to_trace(key):
    mine = [lesson_id for k, lesson_id in RECORDED if k == key]
    missing = NOT_RECORDED | TIMELINE_NOT_RECORDED.get(key, frozenset())
    assert not missing & set(mine), "recorded now: take it out of NOT_RECORDED / TIMELINE_NOT_RECORDED"
    assert mine == [x for x in instrumented_lessons() if x not in missing] and len(mine) >= 7


def test_cli_recorded_writes_the_trace(tmp_path, capsys):
    out = tmp_path / "traces" / "day80.json"
    assert main(["timeline", "day80", "--recorded", "--trace", str(out)]) == 0
    assert f"wrote the trace {out}" in capsys.readouterr().out
    check_against_summary(tl.load("day80"), json.loads(out.read_text()))


def test_cli_trace_to_a_folder_that_cannot_be_made_is_one_message(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["timeline", "day80", "--recorded", "--trace", str(blocker / "day80.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cannot write the trace" in err and "Traceback" not in err


# --- the roles: the lesson's declaration, checked against the stamps ------------------------------
def test_a_row_takes_the_role_the_lesson_declares():
    t = decoded(roles=("producer", "consumer"))
    assert {(r.warpgroup, r.role) for r in t.rows} == {(0, "producer"), (1, "consumer")}
    both = decoded(roles=("producer+consumer", "producer+consumer"))
    assert {r.role for r in both.rows} == {"producer+consumer"}


def test_a_row_that_stamps_another_roles_event_is_refused():
    with pytest.raises(
        TimelineError,
        match=r"CTA 0 warpgroup 0: the lesson declares this warpgroup a consumer, but it stamped WAIT_EMPTY",
    ):
        decoded(roles=("consumer", "producer"))


def test_a_file_whose_rows_name_another_role_than_the_lesson_is_refused(tmp_path):
    t = decoded(lesson="day80", provenance=provenance())
    tl.write(t, tmp_path)
    data = json.loads((tmp_path / "day80.json").read_text())
    assert [r["role"] for r in data["rows"]] == [r.role for r in t.rows]
    roles = get_lesson("day80").warpgroup_roles
    assert tl.load("day80", tmp_path, roles).rows == t.rows
    data["rows"][1]["role"] = "producer"
    (tmp_path / "day80.json").write_text(json.dumps(data))
    with pytest.raises(
        TimelineError, match=r"rows\[1\]: role 'producer', but warpgroup 1 is the lesson's consumer"
    ):
        tl.load("day80", tmp_path, roles)


@pytest.mark.parametrize("lesson_id", instrumented_lessons())
def test_the_declared_roles_are_the_kernels_warpgroups(lesson_id):
    lesson = get_lesson(lesson_id)
    c = lesson.constants()
    roles = lesson.warpgroup_roles
    assert c["kThreadsPerBlock"] == 128 * len(roles), "one role per warpgroup of the block"
    if "kConsumers" in c:  # warpgroup 0 produces, the next kConsumers consume
        assert roles == ("producer",) + ("consumer",) * int(c["kConsumers"])
    else:
        assert set(roles) <= {"producer", "consumer", "producer+consumer"}
    recorded = tl.load(lesson_id, roles=roles)
    if recorded is not None:  # the recorded stamps agree with it (load checks every row)
        assert {r.role for r in recorded.rows} == set(roles)


def test_lessons_without_stamps_declare_no_roles():
    for lesson in LESSONS.values():
        assert bool(lesson.warpgroup_roles) == tl.instrumented(lesson), lesson.id
