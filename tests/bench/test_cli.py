"""``python -m course bench`` (course/cli/bench.py): exit codes, what is written, ``--recorded``.

Exit status: 0 measured (or recorded evidence printed), 1 a wrong result
(nothing timed or written), 2 this machine cannot run a lesson or the
arguments are wrong. Measuring runs on the simulated GPU of conftest.py.
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from course.bench import DEFAULT_REPEATS, bench_dir, load
from course.bench.spec import bench_spec
from course.cli import main
from course.kernel import evidence, gate
from course.lessons import get_lesson

from .conftest import BENCHED, SIM_GPU, synthetic

RECORDED_FIELDS = {"lesson", "n", "kernel", "peer", "peer_rate", "unit", "device", "recorded_at"}


def bench(*argv: str) -> int:
    return main(["bench", *argv])


# -- --recorded: the evidence in the checkout, no GPU -----------------------------------


def test_recorded_prints_every_lessons_evidence_of_every_gpu(no_gpu, capsys):
    assert bench("--recorded") == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == [
        "lesson",
        "N",
        "kernel",
        "peer",
        "peer",
        "rate",
        "kernel/peer",
        "unit",
        "device",
        "recorded",
    ]
    assert set(lines[1].replace(" ", "")) == {"-"}
    keys = evidence.recorded_keys()
    assert {"h100-80gb-hbm3", "h200"} <= set(keys)  # the learners' GPU and the one the course began on
    seen = set()
    for key in keys:
        for lesson_id in BENCHED:
            result = load(lesson_id, bench_dir(key))
            if result is None:
                assert f"{lesson_id}: no recorded benchmark in {bench_dir(key)}" in lines
                continue
            seen.add(result.device)
            # a size's first line names the lesson, N and the kernel's rate; its other peers follow, unnamed;
            # every line names the GPU
            groups: list[list[str]] = []
            current = None
            for line in lines[2:]:
                first = line.split()[0]
                if first in BENCHED:
                    current = first if result.device in line else None
                    if current == lesson_id:
                        groups.append([line])
                elif current == lesson_id and "no recorded benchmark" not in line:
                    groups[-1].append(line)
            assert [int(g[0].split()[1]) for g in groups] == list(result.sizes)
            for group, row in zip(groups, result.rows, strict=True):
                cells = group[0].split()
                assert float(cells[2].replace(",", "")) == pytest.approx(row.kernel.rate, abs=0.051)
                assert len(group) == max(1, len(row.peers))
                for line, peer in zip(group, row.peers, strict=True):
                    cells = line.split()
                    ratios = [c for c in cells if re.fullmatch(r"\d+\.\d{3}x", c)]
                    if peer.name in bench_spec(get_lesson(lesson_id)).unlike:
                        assert not ratios, line  # unlike accuracy: its rate, no ratio
                    else:
                        assert float(ratios[0][:-1]) == pytest.approx(peer.ratio, abs=0.0006)
                    assert cells[-1] == result.recorded_at[:10] and result.unit in cells
                    assert line.rstrip().endswith(f"{result.device}  {result.recorded_at[:10]}")
    assert {"NVIDIA H100 80GB HBM3", "NVIDIA H200"} <= seen


def test_recorded_json_lists_the_committed_evidence_of_every_gpu(no_gpu, capsys):
    assert bench("--recorded", "--json") == 0
    objects = json.loads(capsys.readouterr().out)
    assert isinstance(objects, list) and objects
    assert {o["device"] for o in objects} >= {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}
    for key in evidence.recorded_keys():
        folder = bench_dir(key)
        recorded = [lesson_id for lesson_id in BENCHED if load(lesson_id, folder) is not None]
        assert recorded and (folder / f"{recorded[0]}.json").exists()
        for lesson_id in recorded:
            result = load(lesson_id, folder)
            mine = [o for o in objects if o["lesson"] == lesson_id and o["device"] == result.device]
            assert [(o["n"], o["peer"]) for o in mine] == [
                (row.size, p.name) for row in result.rows for p in row.peers
            ]
            pairs = [(row, p) for row in result.rows for p in row.peers]
            for o, (row, peer) in zip(mine, pairs, strict=True):
                assert set(o) >= RECORDED_FIELDS
                assert o["kernel"] == pytest.approx(row.kernel.rate, abs=1e-3)
                assert o["peer_rate"] == pytest.approx(peer.rate, abs=1e-3)
                assert (o["unit"], o["recorded_at"]) == (result.unit, result.recorded_at)
                unlike = peer.name in bench_spec(get_lesson(lesson_id)).unlike
                assert o["ratio"] == (None if unlike else pytest.approx(peer.ratio, abs=1e-3)), (lesson_id, o)
    # Day 87's default build never promotes: beside cuBLASLt's default (which promotes) no ratio.
    day87 = [o for o in objects if o["lesson"] == "day87"]
    assert {o["ratio"] is None for o in day87 if o["peer"] in bench_spec(get_lesson("day87")).unlike} == {
        True
    }
    assert any(o["ratio"] is not None for o in day87)


def test_recorded_json_reads_the_folder_given(no_gpu, tmp_path, capsys):
    lesson_id = BENCHED[0]
    result = synthetic(lesson_id, device="Some GPU", sizes=(256, 512))
    (tmp_path / f"{lesson_id}.json").write_text(result.to_json(), encoding="utf-8")
    assert bench("--recorded", "--json", "--out", str(tmp_path)) == 0
    objects = json.loads(capsys.readouterr().out)
    first = result.rows[0].peers[0]
    assert objects[0] == {
        "lesson": lesson_id,
        "n": 256,
        "kernel": round(result.rows[0].kernel.rate, 3),
        "peer": first.name,
        "peer_rate": round(first.rate, 3),
        "ratio": round(first.ratio, 4),
        "unit": result.unit,
        "device": "Some GPU",
        "recorded_at": "2026-11-30T10:00:00+00:00",
    }
    peers = len(result.rows[0].peers)
    assert [o["n"] for o in objects] == [256] * peers + [512] * peers and {o["lesson"] for o in objects} == {
        lesson_id
    }
    assert [o["peer"] for o in objects[:peers]] == [p.name for p in result.rows[0].peers]


def test_recorded_table_reads_the_folder_given(no_gpu, tmp_path, capsys):
    lesson_id = BENCHED[0]
    (tmp_path / f"{lesson_id}.json").write_text(
        synthetic(lesson_id, sizes=(256, 512)).to_json(), encoding="utf-8"
    )
    assert bench("--recorded", "--out", str(tmp_path)) == 0
    lines = capsys.readouterr().out.splitlines()
    peers = max(1, len(load(lesson_id, tmp_path).rows[0].peers))
    named = [line.split()[:2] for line in lines[2:] if line.split()[:1] == [lesson_id]]
    assert named == [[lesson_id, "256"], [lesson_id, "512"]]
    assert lines[2 + peers].split()[:2] == [lesson_id, "512"]  # 256's other peers between, unnamed
    for other in BENCHED[1:]:
        assert f"{other}: no recorded benchmark in {tmp_path}" in lines


def test_recorded_with_nothing_recorded_says_so(no_gpu, tmp_path, capsys):
    assert bench("--recorded", "--out", str(tmp_path), BENCHED[0]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{BENCHED[0]}: no recorded benchmark in {tmp_path}"
    assert bench("--recorded", "--json", "--out", str(tmp_path)) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_recorded_refuses_a_broken_file_by_name(no_gpu, tmp_path, capsys):
    path = tmp_path / f"{BENCHED[0]}.json"
    path.write_text('{"schema_version": 1}', encoding="utf-8")
    assert bench("--recorded", "--out", str(tmp_path)) == 2
    assert f"error: {path}: benchmark: field 'rows' is missing" in capsys.readouterr().err


def test_recorded_table_of_a_lesson_without_peers(no_gpu, tmp_path, capsys):
    lesson_id = BENCHED[0]
    (tmp_path / f"{lesson_id}.json").write_text(synthetic(lesson_id, peers=()).to_json(), encoding="utf-8")
    assert bench("--recorded", "--out", str(tmp_path), lesson_id) == 0
    assert capsys.readouterr().out.splitlines()[2].split()[:2] == [
        lesson_id,
        str(synthetic(lesson_id).sizes[0]),
    ]


def test_json_without_recorded_is_refused(no_gpu, tmp_path, capsys):
    assert bench("--json", "--out", str(tmp_path)) == 2
    assert "--json goes with --recorded" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


# -- measuring: refusals without a GPU ----------------------------------------------------


def test_exits_2_where_the_gpu_cannot_run_the_lesson(no_gpu, tmp_path, capsys):
    assert bench(BENCHED[0], "--out", str(tmp_path)) == 2
    out = capsys.readouterr().out
    assert f"{BENCHED[0]}: not timed, nothing written. There is no NVIDIA driver" in out
    assert not list(tmp_path.iterdir())


def test_every_lesson_is_refused_by_name_without_a_gpu(no_gpu, tmp_path, capsys):
    assert bench("--out", str(tmp_path)) == 2
    out = capsys.readouterr().out
    for lesson_id in BENCHED:
        assert f"{lesson_id}: not timed, nothing written." in out
    assert not list(tmp_path.iterdir())


def test_refuses_bad_arguments_before_touching_the_gpu(no_gpu, capsys):
    assert bench(BENCHED[0], "--sizes", "256", "100") == 2
    assert "multiples of 64" in capsys.readouterr().err
    assert bench("--repeats", "3") == 2
    assert "at least 20" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        bench("day99")
    assert e.value.code == 2
    assert "invalid choice: 'day99'" in capsys.readouterr().err


# -- measuring on the simulated GPU ------------------------------------------------------


def test_measures_writes_and_prints_the_table(simulated_gpu, tmp_path, capsys):
    assert bench("day76", "--sizes", "64", "128", "--repeats", "25", "--out", str(tmp_path)) == 0
    out = capsys.readouterr().out
    json_path, png_path = tmp_path / "day76.json", tmp_path / "day76.png"
    assert f"day76: wrote {json_path} and {png_path}" in out
    result = load("day76", tmp_path)
    assert result is not None and result.sizes == (64, 128) and result.device == SIM_GPU.name
    assert result.command == "python -m course bench day76 --sizes 64 128 --repeats 25"
    assert all(r.kernel.timing.repeats == 25 for r in result.rows)
    assert png_path.read_bytes()[:4] == b"\x89PNG"
    assert f"day76: {result.kernel_name} on {SIM_GPU.name}" in out  # the table
    assert re.search(r"^day76 N=64: compile .* checked; kernel ", out, re.M)  # progress, as it goes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["day76.json", "day76.png"]


def test_the_default_repeats_are_not_in_the_command(simulated_gpu, tmp_path, capsys):
    assert bench("day76", "--sizes", "64", "--out", str(tmp_path)) == 0
    result = load("day76", tmp_path)
    assert result.command == "python -m course bench day76 --sizes 64"
    assert result.rows[0].kernel.timing.repeats == DEFAULT_REPEATS


def test_exits_1_on_a_wrong_result_and_writes_nothing(simulated_gpu, tmp_path, capsys):
    simulated_gpu.corrupt = lambda out: out.__setitem__((0, 5), np.float32(np.nan))
    assert bench("day76", "day78", "--sizes", "64", "--out", str(tmp_path)) == 1
    out = capsys.readouterr().out
    assert (
        "day76: wrong result, nothing timed or written. day76 N=64, kernel: 1 of 4096 elements wrong" in out
    )
    assert "first at row 0, col 5: got nan" in out
    assert "day78: wrong result, nothing timed or written. day78 N=64, kernel:" in out
    assert not list(tmp_path.iterdir())


def test_one_lesson_measured_and_one_refused_exits_2_and_writes_the_first(
    simulated_gpu, monkeypatch, tmp_path, capsys
):
    # A compute capability 10.0 GPU has TMA (Day 76) but not sm_90a's wgmma (Day 78).
    blackwell = dataclasses.replace(SIM_GPU, name="Simulated B200", cc=(10, 0))
    monkeypatch.setattr(gate, "probe", lambda: gate.Machine(blackwell, None, None, {"cupy": "simulated"}))
    assert bench("day76", "day78", "--sizes", "64", "--out", str(tmp_path)) == 2
    out = capsys.readouterr().out
    assert "day78: not timed, nothing written. Simulated B200 is compute capability 10.0" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["day76.json", "day76.png"]
