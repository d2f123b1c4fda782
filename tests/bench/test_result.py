"""course/bench/result.py: the result types, their JSON, and located errors when reading it back."""

from __future__ import annotations

import json
import re

import pytest

from course.bench import BenchResult, Reason, Timing, bench_dir, load, spec_of, write
from course.bench.result import REASON_KINDS, SCHEMA_VERSION, result_from_dict
from course.errors import CourseError
from course.lessons import get_lesson

from .conftest import BENCHED, peer_names, synthetic


def test_timing_from_samples():
    t = Timing.from_samples([0.3, 0.1, 0.2, 0.5], calls_per_repeat=8, buffers=40, gaps=1)
    assert (t.median_ms, t.min_ms, t.max_ms, t.repeats) == (0.25, 0.1, 0.5, 4)
    assert (t.calls_per_repeat, t.buffers, t.gap_repeats) == (8, 40, 1)
    with pytest.raises(CourseError, match="at least one value"):
        Timing.from_samples([], 1, 2)


def test_reasons_say_where_their_number_comes_from():
    assert set(REASON_KINDS) >= {"measured", "derived", "counted", "queried", "not measured"}
    with pytest.raises(CourseError, match="kind must be one of"):
        Reason("x", 1.0, "ms", "guessed", "")
    assert Reason("x", None, "", "not measured", "").value_text() == "n/a"
    assert Reason("x", 4096.0, "CTAs", "counted", "").value_text() == "4,096 CTAs"
    assert Reason("x", 0.0123456, "ms", "measured", "").value_text() == "0.0123 ms"
    assert Reason("x", 3.0, "", "derived", "").value_text() == "3"


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_rows_and_peers_are_found_by_name(lesson_id):
    result = synthetic(lesson_id)
    spec = spec_of(get_lesson(lesson_id))
    assert result.sizes == spec.sizes
    assert result.peer_names == peer_names(lesson_id)
    last = result.row(spec.sizes[-1])
    assert last is result.rows[-1]
    for name in result.peer_names:
        assert last.peer(name).name == name
    with pytest.raises(CourseError, match=rf"{lesson_id} was not measured at N=96 \(sizes: \["):
        result.row(96)
    with pytest.raises(CourseError, match=r"no peer named 'nobody' at size \d+ \(peers: "):
        last.peer("nobody")


def test_the_provenance_reads_as_the_results_own():
    result = synthetic(BENCHED[0], device="NVIDIA H200")
    assert (result.device, result.compute_capability, result.sm_count) == ("NVIDIA H200", "9.0", 132)
    assert result.recorded_at == "2026-11-30T10:00:00+00:00"
    assert result.driver == "580.159.04"
    assert result.command == f"python -m course bench {BENCHED[0]}"
    summary = result.summary()
    assert "NVIDIA H200 (compute capability 9.0, 132 SMs)" in summary and "driver 580.159.04" in summary
    assert "CuPy 14.2.0" in summary and "recorded 2026-11-30" in summary


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_json_round_trip(tmp_path, lesson_id):
    result = synthetic(lesson_id)
    json_path, png_path = write(result, tmp_path)
    assert json_path == tmp_path / f"{lesson_id}.json" and png_path == tmp_path / f"{lesson_id}.png"
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert load(lesson_id, tmp_path) == result
    data = json.loads(json_path.read_text())
    assert data["schema_version"] == SCHEMA_VERSION and data["lesson"] == lesson_id
    row = data["rows"][-1]
    assert set(row["kernel"]["timing"]) >= {"median_ms", "min_ms", "max_ms", "repeats", "calls_per_repeat"}
    assert [p["name"] for p in row["peers"]] == list(result.peer_names)
    assert all(p["ratio"] > 0 for p in row["peers"])
    # The provenance sits flat at the top level, the driver written out for readers of the file.
    assert data["device"] == "NVIDIA H200" and data["driver"] == "580.159.04" and data["recorded_at"]
    assert [r["kind"] for r in data["reasons"]] == [r.kind for r in result.reasons]
    assert not list(tmp_path.glob(".*.tmp")) and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [json_path.name, png_path.name]
    )  # atomic writes leave no temporary files


def test_optional_fields_may_be_absent():
    data = json.loads(synthetic(BENCHED[0]).to_json())
    for key in ("reasons", "ceilings", "notes"):
        del data[key]
    del data["rows"][0]["kernel"]["timing"]["gap_repeats"]
    data["rows"][0]["compile_cached"] = None
    result = result_from_dict(data)
    assert (result.reasons, result.ceilings, result.notes) == ((), {}, ())
    assert result.rows[0].kernel.timing.gap_repeats == 0 and result.rows[0].compile_cached is None


def _write_json(path, data) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def test_load_says_what_is_wrong_and_where(tmp_path):
    lesson_id = BENCHED[0]
    assert load(lesson_id, tmp_path) is None
    path = tmp_path / f"{lesson_id}.json"
    good = json.loads(synthetic(lesson_id).to_json())

    data = json.loads(json.dumps(good))
    del data["rows"][1]["kernel"]["timing"]["median_ms"]
    _write_json(path, data)
    with pytest.raises(
        CourseError, match=r"rows\[1\] kernel 'kernel' timing: field 'median_ms' is missing"
    ) as e:
        load(lesson_id, tmp_path)
    assert str(e.value).startswith(str(path)) and e.value.path == path

    data = json.loads(json.dumps(good))
    name = data["rows"][0]["peers"][0]["name"]
    data["rows"][0]["peers"][0]["rate"] = "fast"
    _write_json(path, data)
    with pytest.raises(
        CourseError, match=rf"rows\[0\] peers\[0\] '{re.escape(name)}': field 'rate' must be number"
    ):
        load(lesson_id, tmp_path)

    data = json.loads(json.dumps(good))
    data["sm_count"] = "132"
    _write_json(path, data)
    with pytest.raises(CourseError, match="'sm_count' must be int"):
        load(lesson_id, tmp_path)

    data = json.loads(json.dumps(good))
    data["reasons"][0]["kind"] = "guessed"
    _write_json(path, data)
    with pytest.raises(CourseError, match="kind must be one of"):
        load(lesson_id, tmp_path)

    data = json.loads(json.dumps(good))
    data["schema_version"] = 99
    _write_json(path, data)
    with pytest.raises(CourseError, match="schema_version must be 1 \\(got 99\\); record it again"):
        load(lesson_id, tmp_path)

    path.write_text('{\n  "schema_version": 1,\n  oops\n}', encoding="utf-8")
    with pytest.raises(CourseError, match="not valid JSON") as e:
        load(lesson_id, tmp_path)
    assert e.value.line == 3

    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(CourseError, match="benchmark must be a JSON object"):
        load(lesson_id, tmp_path)


def test_load_refuses_another_lessons_file(tmp_path):
    first, other = BENCHED[0], "a-lesson-that-is-not-" + BENCHED[0]
    (tmp_path / f"{other}.json").write_text(synthetic(first).to_json(), encoding="utf-8")
    with pytest.raises(CourseError, match=f"for lesson '{first}', not '{other}'"):
        load(other, tmp_path)


# The benchmarks recorded on a Hopper GPU and committed (evidence/bench/<lesson>.json): what the
# pages show without a GPU. A lesson may not have one yet (its page then says so).
RECORDED = [lesson_id for lesson_id in BENCHED if (bench_dir() / f"{lesson_id}.json").exists()]


def test_every_recorded_benchmark_belongs_to_a_lesson_with_a_spec():
    files = sorted(p.stem for p in bench_dir().glob("*.json"))
    assert files, f"no recorded benchmark in {bench_dir()}"
    assert set(files) <= set(BENCHED), f"recorded benchmarks of no timed lesson: {set(files) - set(BENCHED)}"
    assert sorted(RECORDED) == files


@pytest.mark.parametrize("lesson_id", RECORDED)
def test_the_recorded_evidence_loads_and_matches_the_spec(lesson_id):
    result = load(lesson_id)
    assert isinstance(result, BenchResult) and result.lesson == lesson_id
    spec = spec_of(get_lesson(lesson_id))
    assert result.unit == spec.unit and result.kernel_name == spec.kernel_label
    assert result.sizes == spec.sizes  # measured at the sizes the spec names: not stale
    # Every peer the spec declares was timed, or the recording says in a note why it could not run
    # there (an optional library missing: the engine's one line), in the spec's order.
    timed = [n for n in peer_names(lesson_id) if n in result.peer_names]
    assert tuple(timed) == result.peer_names
    for name in peer_names(lesson_id):
        assert name in result.peer_names or any(
            note.startswith(f"{name}: not measured on this machine: ") for note in result.notes
        ), name
    for row in result.rows:
        assert row.work == spec.work(row.size)
        assert row.kernel.rate > 0 and all(p.rate > 0 and p.ratio for p in row.peers)
    assert (bench_dir() / f"{lesson_id}.png").read_bytes()[:4] == b"\x89PNG"
