"""The climb's figure: drawn once per kernel from the recordings, again when one of them changes (issue 28);
a climb over a family of lessons, the GEMM ladder's or attention's, with its peer (issue 42)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace

import pytest
from recordings import unrecorded

from course.bench import climb
from course.bench.result import bench_dir, load
from course.errors import CourseError
from course.kernel import evidence
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


# -- a climb over a family of lessons: the GEMM ladder's and attention's (issue 42) -------------------

H100 = "h100-80gb-hbm3"
CUDNN = "PyTorch SDPA, cuDNN backend"
FLASH = "PyTorch SDPA, flash backend (FlashAttention-2)"


def _lines(fig):
    """The plotted lines of a climb figure, by legend label: (xs, ys)."""
    ax = fig.axes[0]
    return {
        line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
        for line in ax.get_lines()
        if not line.get_label().startswith("_")
    }


def _steps(ids):
    return [LESSONS[i] for i in ids]


def test_the_gemm_climb_is_the_ladder_it_was_and_attention_is_no_step_of_it():
    lessons = tuple(LESSONS.values())
    ladder = ["day78", "day79", "day80", "day81", "day82", "day83", "day84"]
    assert climb.climb_lessons(LESSONS["day85"], lessons) == _steps(ladder)
    assert climb.climb_lessons(LESSONS["day87"], lessons) == _steps([*ladder, "day86", "day87"])
    assert climb.family_of(LESSONS["day85"], lessons) == climb.GEMM_CLIMB
    with evidence.showing(H100):
        rows = climb.recorded_climb(LESSONS["day85"], lessons)
        fig = climb.climb_figure(LESSONS["day85"], rows)
    assert [r.lesson.id for r in rows] == ladder
    # every recorded cuBLAS call is still a dashed line of its own, and the axis is still N
    peers = {p.name for r in rows for x in r.result.rows for p in x.peers}
    assert peers and peers <= set(_lines(fig))
    assert fig.axes[0].get_xlabel() == "N (M = N = K)"
    assert fig.axes[0].get_title() == "The climb up to Day 85: NVIDIA H100 80GB HBM3"


def _attention_steps():
    """Attention's climb as the finale shows it: up to its last step (Day 89 now; a Day 90 joins)."""
    lessons = tuple(LESSONS.values())
    upto = climb.climb_upto(LESSONS["day85"], lessons, "attention")
    return lessons, upto, climb.climb_lessons(upto, lessons, "attention")


def test_the_attention_climb_is_the_recorded_day88_and_day89_rates_against_cudnn_and_flash():
    lessons, upto, steps = _attention_steps()
    assert list(climb.climb_families(lessons)) == ["gemm", "attention"]
    # the finale, a page before every attention step, shows the attention climb up to its last step
    assert steps[:2] == _steps(["day88", "day89"]) and upto == steps[-1] == max(steps, key=lambda s: s.day)
    assert climb.climb_upto(LESSONS["day85"], lessons) == LESSONS["day85"]
    with evidence.showing(H100):
        rows = climb.recorded_climb(upto, lessons, "attention")
        family = climb.family_of(upto, lessons, "attention")
        fig = climb.climb_figure(upto, rows, family)
        recorded = {s.id: load(s.id) for s in steps if load(s.id) is not None}
        unrecorded = climb.unrecorded_steps(upto, lessons, "attention")
        table = climb.climb_table(rows, 8192, family, unrecorded)
    assert [r.lesson.id for r in rows] == list(recorded) and list(recorded)[:2] == ["day88", "day89"]
    assert unrecorded == [s for s in steps if s.id not in recorded]
    lines = _lines(fig)
    for lesson_id, result in recorded.items():
        lesson = LESSONS[lesson_id]
        assert lines[f"Day {lesson.day}: {lesson.kernel_file}"] == (
            [x.size for x in result.rows],
            [x.kernel.rate for x in result.rows],
        )
    # the peers drawn are the two SDPA backends named, not the memory-efficient one nor Day 88's kernel
    assert {k for k in lines if not k.startswith("Day ")} == {CUDNN, FLASH}
    assert lines[CUDNN][1] == [x.peer(CUDNN).rate for x in recorded["day88"].rows]
    assert fig.axes[0].get_xlabel().startswith("S, the sequence length")
    assert fig.axes[0].get_title() == f"The attention climb up to Day {upto.day}: NVIDIA H100 80GB HBM3"
    # the table at S = 8192: each step's rate and its ratio to cuDNN in its own run, as recorded
    text = str(table).splitlines()
    for line, (lesson_id, result) in zip(text[: len(recorded)], recorded.items(), strict=True):
        at = result.row(8192)
        ratio = at.peer(CUDNN).ratio
        assert line == f"Day {LESSONS[lesson_id].day}: {at.kernel.rate:,.0f} TFLOP/s, {ratio:.2f}x cuDNN"
    assert len(text) == len(recorded) + bool(unrecorded)
    html = table._repr_html_()
    assert "At S = 8192, on the NVIDIA H100 80GB HBM3" in html and "cuDNN TFLOP/s" in html
    assert "cuBLAS" not in html and ("Not recorded" in html) == bool(unrecorded)


@pytest.mark.parametrize("gpu", ["h100-80gb-hbm3", "h200"])
def test_a_gpu_without_an_attention_recording_names_the_steps_it_lacks(gpu):
    # The H200 has no Day 88 or 89 bench yet (tests/recordings.py): its table names them, no crash,
    # and with no step recorded there is no table or plot at all.
    lessons, upto, steps = _attention_steps()
    with evidence.showing(gpu) as shown:
        rows = climb.recorded_climb(upto, lessons, "attention")
        missing = climb.unrecorded_steps(upto, lessons, "attention")
        table = climb.climb_table(rows, 4096, climb.family_of(upto, lessons, "attention"), missing)
    # recorded and unrecorded steps part the climb; Days 88 and 89 are missing exactly where not recorded
    assert sorted([r.lesson for r in rows] + missing, key=lambda s: s.day) == steps
    assert {s.id for s in missing} == unrecorded(gpu) & {s.id for s in steps}
    said = table._repr_html_()
    if missing:
        assert f"Not recorded yet on the {shown.device}: " in said and "(the attention climb)" in said
        assert all(f"Day {s.day}" in said for s in missing)
    else:
        assert "Not recorded" not in said
    assert ("<table" in said) == bool(rows) and ("the climb has no step to show" in said) == (not rows)


def test_a_step_without_a_recording_is_named_and_left_out(tmp_path, monkeypatch):
    folder = tmp_path / "bench"
    with evidence.showing(H100):
        shutil.copytree(bench_dir(), folder, ignore=shutil.ignore_patterns("*.png", "day89.json"))
    monkeypatch.setattr(climb, "bench_dir", lambda: folder)
    monkeypatch.setattr("course.bench.result.bench_dir", lambda: folder)
    lessons = tuple(LESSONS.values())
    upto = LESSONS["day89"]
    rows = climb.recorded_climb(upto, lessons)
    missing = climb.unrecorded_steps(upto, lessons)
    assert [r.lesson.id for r in rows] == ["day88"] and missing == [upto]
    table = climb.climb_table(rows, 4096, climb.family_of(upto, lessons), missing)
    said = table._repr_html_()
    assert "Not recorded yet on the " in said and ": Day 89 (the attention climb)" in said
    assert (
        "the table and the plot leave them out" in said
        and "<td style='text-align:left;padding:2px 8px;white-space:nowrap'>Day 88</td>" in said
    )
    assert "Day 89</td>" not in said and str(table).splitlines()[-1] == table.missing()


def test_a_later_attention_lesson_joins_the_climb_by_declaring_its_bench(tmp_path, monkeypatch):
    # A later day whose bench.py is an attention_spec (here: Day 89's package under another id and day,
    # as a Day 90 will be), with no recording yet
    later = replace(LESSONS["day89"], id="day99", day=99)
    lessons = (*LESSONS.values(), later)
    steps = climb.climb_lessons(later, lessons)
    assert steps[:2] == _steps(["day88", "day89"]) and steps[-1] == later
    assert climb.climb_upto(LESSONS["day85"], lessons, "attention") == later
    with evidence.showing(H100):
        assert climb.unrecorded_steps(later, lessons)[-1] == later  # no day99.json: named
        recorded = [r.lesson.id for r in climb.recorded_climb(later, lessons)]
    assert recorded[:2] == ["day88", "day89"] and "day99" not in recorded
    # the GEMM finale's own climb is unchanged by it
    assert later not in climb.climb_lessons(LESSONS["day85"], lessons)


def test_a_climb_named_that_no_lesson_declares_is_refused_with_the_known_ones():
    lessons = tuple(LESSONS.values())
    with pytest.raises(CourseError, match=r"climb named 'softmax' \(page day85\).*gemm, attention"):
        climb.climb_lessons(LESSONS["day85"], lessons, "softmax")


def test_the_finale_page_shows_the_attention_climb_and_the_h200_page_says_it_is_not_recorded(monkeypatch):
    from course.page import Page

    shown: list = []
    monkeypatch.setattr("course.page._display", shown.append)
    page = Page("day85")
    _, upto, steps = _attention_steps()
    with evidence.showing(H100):
        picture = page.climb(family="attention")
    assert f"The attention climb up to Day {upto.day}: NVIDIA H100 80GB HBM3" in repr(picture)
    assert len(shown) == 1 and "At S = 4096" in shown[0]._repr_html_()
    shown.clear()
    with evidence.showing("h200"):
        said = page.climb(family="attention")
    if {s.id for s in steps} <= unrecorded("h200"):  # none recorded there yet
        html = said._repr_html_()
        assert shown == [] and "<table" not in html and "Not recorded yet on the NVIDIA H200: Day 88" in html
    else:  # once one is, the H200's own climb is drawn
        assert len(shown) == 1 and "NVIDIA H200" in repr(said)
