"""The climb's figure: drawn once per kernel from the recordings, again when one of them changes (issue 28)."""

from __future__ import annotations

import json
import os
import shutil

from course.bench import climb
from course.bench.result import bench_dir
from course.lessons import LESSONS


def test_the_recorded_climb_is_drawn_again_only_when_a_recording_changes(tmp_path, monkeypatch):
    folder = tmp_path / "bench"
    shutil.copytree(bench_dir(), folder, ignore=shutil.ignore_patterns("*.png"))
    monkeypatch.setattr(climb, "bench_dir", lambda: folder)
    monkeypatch.setattr("course.bench.result.bench_dir", lambda: folder)
    upto, lessons = LESSONS["day84"], tuple(LESSONS.values())
    first = climb.recorded_climb_figure(upto, lessons)
    first.png()
    assert (
        climb.recorded_climb_figure(upto, lessons) is first
    )  # Run All again: the same picture, already drawn
    path = folder / "day84.json"
    data = json.loads(path.read_text("utf-8"))
    data["device"] = "Another GPU"
    path.write_text(json.dumps(data), "utf-8")
    st = path.stat()
    os.utime(
        path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000)
    )  # a later write, whatever the clock's grain
    redrawn = climb.recorded_climb_figure(upto, lessons)
    assert redrawn is not first
    # Measured rows passed in are never kept.
    rows = climb.recorded_climb(upto, lessons)
    assert climb.climb_figure(upto, rows) is not climb.climb_figure(upto, rows)
