"""Committed notebooks are small and reviewable: no outputs, no widget state."""

import json
from pathlib import Path

import pytest

from course.page.contents import START

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs_and_no_widget_state(path):
    nb = json.loads(path.read_text())
    assert "widgets" not in nb.get("metadata", {}), "widget state is committed"
    for cell in nb["cells"]:
        assert "id" in cell, "cells need ids (nbformat 4.5)"
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"cell {cell['id']} has outputs"
            assert cell["execution_count"] is None, f"cell {cell['id']} has an execution count"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name != START], ids=lambda p: p.name)
def test_notebook_follows_the_lesson_shape(path):
    nb = json.loads(path.read_text())
    text = "\n".join("".join(c["source"]) for c in nb["cells"])
    for heading in ("Main takeaways", "Quiz"):
        assert f"## {heading}" in text
    assert "page.run(" in text and "page.quiz()" in text
    assert "Page(" in text
