"""Day 86's recorded tables name the GPU they were measured on, for each GPU the course keeps
(issue 35: the learners' H100 and the H200), and the Day 85 climb table does too."""

from __future__ import annotations

import pytest

from course.bench.climb import climb_table, recorded_climb
from course.kernel import evidence
from course.lessons import LESSONS, get_lesson
from course.lessons.day86 import figures

DEVICES = {"h100-80gb-hbm3": "NVIDIA H100 80GB HBM3", "h200": "NVIDIA H200"}


@pytest.mark.parametrize("key", sorted(DEVICES))
def test_the_shape_and_wave_tables_name_the_gpu_of_the_recording_shown(key):
    with evidence.showing(key):
        shapes, waves = figures.recorded_shapes(), figures.recorded_waves()
    assert shapes.rows and waves.rows, "recorded on this GPU: both tables have rows"
    assert f"Against cuBLAS on the {DEVICES[key]}, shape by shape" in shapes.title
    assert waves.title.startswith(f"On the {DEVICES[key]}: one full wave")
    other = next(d for k, d in DEVICES.items() if k != key)
    assert other not in shapes.title + shapes.note + waves.title + waves.note


@pytest.mark.parametrize("key", sorted(DEVICES))
def test_the_climb_table_names_the_gpu_of_its_rows(key):
    with evidence.showing(key):
        rows = recorded_climb(get_lesson("day85"), LESSONS.values())
    html = climb_table(rows, 4096)._repr_html_()
    assert rows and {r.result.device for r in rows} == {DEVICES[key]}
    assert f"At N = 4096, on the {DEVICES[key]}, recorded " in html


def test_a_climb_of_steps_recorded_on_two_gpus_names_both():
    day85 = get_lesson("day85")
    with evidence.showing("h200"):
        h200 = recorded_climb(day85, LESSONS.values())
    with evidence.showing("h100-80gb-hbm3"):
        h100 = recorded_climb(day85, LESSONS.values())
    html = climb_table([*h200[:1], *h100[1:]], 4096)._repr_html_()
    assert "on the NVIDIA H200 and the NVIDIA H100 80GB HBM3, recorded " in html
