"""The timeline section says what recording cost the kernel, from the recorded honesty checks."""

from __future__ import annotations

import json
import shutil

import pytest

from course.errors import CourseError
from course.kernel import evidence
from course.lessons import get_lesson
from course.timeline.section import timeline_section
from course.timeline.store import CHECKS_FILE, recorded_cost, timeline_dir


def _checks(tmp_path, overhead):
    data = {
        "device": "NVIDIA H200",
        "recorded_at": "2026-11-30T16:47:50+00:00",
        "n": 4096,
        "lessons": {"day80": {"n": 4096, "overhead": overhead}},
    }
    (tmp_path / CHECKS_FILE).write_text(json.dumps(data))


def test_the_cost_is_read_from_the_checks_and_said_with_its_numbers(tmp_path):
    _checks(tmp_path, {"plain_ms": 0.2, "timeline_ms": 0.25})
    cost = recorded_cost("day80", tmp_path)
    assert cost is not None and cost.ratio == pytest.approx(1.25)
    said = cost.sentence()
    assert "25% of its time at N = 4096 (200 µs built plain, 250 µs recording" in said
    assert "about that much slower" in said  # over 10%: the learner is told what it means
    _checks(tmp_path, {"plain_ms": 0.2, "timeline_ms": 0.204})
    said = recorded_cost("day80", tmp_path).sentence()
    assert "2% of its time" in said and "slower" not in said
    _checks(tmp_path, {"plain_ms": 6.60, "timeline_ms": 6.55})
    assert "nothing measurable" in recorded_cost("day80", tmp_path).sentence()
    assert recorded_cost("day81", tmp_path) is None  # not measured: nothing said


def test_a_broken_checks_file_is_named(tmp_path):
    _checks(tmp_path, {"plain_ms": "fast"})
    with pytest.raises(CourseError) as e:
        recorded_cost("day80", tmp_path)
    assert CHECKS_FILE in str(e.value.path)


def test_each_recorded_page_says_its_own_recorded_cost(monkeypatch):
    # The honesty checks were run on the H200 (tools/timeline_gpu_check.py); the pages that show its
    # recordings say their cost, and those that show the H100's, which has none, say nothing.
    monkeypatch.setenv(evidence.DEVICE_ENV, "h200")
    data = json.loads((timeline_dir() / CHECKS_FILE).read_text())
    for lesson_id, entry in data["lessons"].items():
        overhead = entry.get("overhead")
        if overhead is None:  # not measured for this lesson: nothing is said
            assert "Recording costs" not in timeline_section(get_lesson(lesson_id)).message
            continue
        pct = (overhead["timeline_ms"] / overhead["plain_ms"] - 1) * 100
        message = timeline_section(get_lesson(lesson_id)).message
        if pct >= 0.5:
            assert f"Recording costs this kernel {pct:.0f}% of its time" in message, lesson_id
        else:
            assert "Recording costs this kernel nothing measurable" in message, lesson_id


def test_a_gpu_without_honesty_checks_says_no_cost(monkeypatch):
    monkeypatch.setenv(evidence.DEVICE_ENV, "h100-80gb-hbm3")
    assert not (timeline_dir() / CHECKS_FILE).exists()
    message = timeline_section(get_lesson("day80")).message
    assert "Recording costs" not in message and "NVIDIA H100 80GB HBM3" in message


def test_a_timeline_missing_on_the_shown_gpu_says_which_gpu_and_which_other_has_one(tmp_path, monkeypatch):
    monkeypatch.delenv(evidence.DEVICE_ENV, raising=False)
    monkeypatch.setattr("course.kernel.gate.probe", lambda: evidence.gate.Machine(None, "no GPU", "", {}))
    (tmp_path / "h100-80gb-hbm3").mkdir()
    (tmp_path / "h200" / "timeline").mkdir(parents=True)
    shutil.copy(timeline_dir("h200") / "day80.json", tmp_path / "h200" / "timeline" / "day80.json")
    monkeypatch.setattr("course._paths.evidence_dir", lambda: tmp_path)
    message = timeline_section(get_lesson("day80")).message
    assert message.startswith("Not recorded yet on the NVIDIA H100 80GB HBM3:")
    assert "another GPU (h200)" in message and f"{evidence.DEVICE_ENV}=h200" in message
    monkeypatch.setenv(evidence.DEVICE_ENV, "h200")
    shown = timeline_section(get_lesson("day80"))
    assert shown.timeline is not None and "Recorded on NVIDIA H200" in shown.message
