"""tools/time_notebooks.py, the Run All timer the issue-28 table comes from: its arithmetic and
its report, with stand-in page runs (the real runs are on the GPU machine, gpu_session.sh timings)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("time_notebooks", ROOT / "tools" / "time_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cell(source: str, start: str, end: str):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["execution"] = {"iopub.execute_input": start, "shell.execute_reply": end}
    return cell


def test_a_page_time_is_the_sum_of_its_code_cells_spans(tool):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# not timed"),
        _cell(
            "from course.page import Page\npage = Page('day80')",
            "2026-12-03T10:00:00.000Z",
            "2026-12-03T10:00:00.750Z",
        ),
        _cell("page.run()", "2026-12-03T10:00:01.000+00:00", "2026-12-03T10:00:02.250+00:00"),
    ]
    total, cells = tool._spans(nb)
    assert total == 2.0
    assert cells == [("from course.page import Page", 0.75), ("page.run()", 1.25)]


def test_the_report_holds_the_machine_every_page_and_the_goals(tool, tmp_path, monkeypatch, capsys):
    def fake(lesson_id, warm=True):
        cold = {"day76": 2.5, "day78": 3.5}[lesson_id]
        return {
            "cold_s": cold,
            "same_kernel_again_s": 0.5,
            "goals": {"cold": cold <= tool.GOAL_COLD_S, "again": True},
            "cells": [{"cell": "page.run()", "cold_s": cold, "again_s": 0.5}],
        }

    monkeypatch.setattr(tool, "time_page", fake)
    monkeypatch.setattr(tool, "bytecode", lambda: {"compiled": ["course"]})
    out = tmp_path / "t.json"
    assert tool.main(["--out", str(out), "--no-warm", "day76", "day78"]) == 0
    report = json.loads(out.read_text())
    assert report["bytecode"] == {"compiled": ["course"]}  # what was compiled before the first page
    assert report["goals_s"] == {"cold": 3.0, "again": 1.0}
    assert report["machine"]["gpu"]  # the probe's line: a GPU's banner, or why there is none
    assert set(report["pages"]) == {"day76", "day78"}
    printed = capsys.readouterr().out
    assert "day76: Run All 2.50 s cold, 0.50 s again (meets" in printed
    assert "day78: Run All 3.50 s cold, 0.50 s again (misses" in printed


def test_an_unknown_lesson_stops_before_any_page_runs(tool, tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(tool, "time_page", lambda lesson_id, warm=True: ran.append(lesson_id))
    with pytest.raises(Exception, match="day99"):
        tool.main(["--out", str(tmp_path / "t.json"), "day76", "day99"])
    assert ran == []


def test_the_course_and_pythonpath_are_compiled_to_bytecode_unless_asked_not_to(tool, tmp_path, monkeypatch):
    wheels = tmp_path / "site"
    (wheels / "pkg").mkdir(parents=True)
    (wheels / "pkg" / "__init__.py").write_text("x = 1\n")
    monkeypatch.setenv("PYTHONPATH", str(wheels))
    compiled = []
    monkeypatch.setattr(tool.compileall, "compile_dir", lambda d, **kw: compiled.append(Path(d)) or True)
    said = tool.bytecode()
    assert compiled == [ROOT / "course", wheels] and said["compiled"] == [str(c) for c in compiled]
    monkeypatch.setattr(
        tool,
        "time_page",
        lambda lesson_id, warm=True: {
            "cold_s": 1.0,
            "same_kernel_again_s": 0.1,
            "goals": {"cold": True, "again": True},
            "cells": [],
        },
    )
    compiled.clear()
    out = tmp_path / "t.json"
    assert tool.main(["--out", str(out), "--no-warm", "--no-bytecode", "day76"]) == 0
    assert compiled == [] and json.loads(out.read_text())["bytecode"] is None
