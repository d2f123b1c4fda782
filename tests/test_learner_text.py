"""Text a learner reads speaks of the lesson, not of the course's own files.

Every string of every quiz, annotation, coding exercise, exercise and
suggested experiment (what the page shows from ``content/``), and every
markdown cell of every page, is searched for a path into the course's own
machinery: the package, its tools, tests, recorded evidence, scripts and
content files. The kernels (``kernels/...``) and the pages themselves are
the lesson's material and may be named. TOML comments are for authors and
are not read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course import _paths
from course._toml import read_toml

MACHINERY = re.compile(r"(?<![\w./-])(?:course|tools|tests|evidence|benchmarks|scripts|content|\.ci)/[\w.*-]")

CONTENT = sorted(
    p for kind in ("quizzes", "annotations", "coding", "exercises", "experiments")
    for p in (_paths.content_dir() / kind).glob("*.toml")
)  # fmt: skip
NOTEBOOKS = sorted(_paths.notebooks_dir().glob("*.ipynb"))


def _strings(value, where):
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def test_the_pattern_finds_machinery_paths_and_leaves_the_rest():
    for said in ("see course/lessons/day83/traffic.py", "(tools/try_gpu_check.py)", "in evidence/day78-race.txt",
                 "tests/lessons/day84/test_staging.py checks it", "format: content/quizzes/README.md"):  # fmt: skip
        assert MACHINERY.search(said), said
    for fine in ("kernels/gemm3_two_consumers.cu, snippet setup", "github.com/NVIDIA/cutlass/tree/main/tests/unit",
                 "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#async-proxy",
                 "examples/matmul/matmul_12.cuh", "recorded on an H200 on 2026-11-30"):  # fmt: skip
        assert not MACHINERY.search(fine), fine


@pytest.mark.parametrize("path", CONTENT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_content_text_names_the_courses_own_files(path: Path):
    _, data = read_toml(path, "content")
    found = [f"{where}: {m.group()!r} in {text[:120]!r}" for where, text in _strings(data, path.stem)
             for m in MACHINERY.finditer(text)]  # fmt: skip
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_page_prose_names_the_courses_own_files(path: Path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = [f"cell {c.get('id')}: {m.group()!r}" for c in cells if c["cell_type"] == "markdown"
             for m in MACHINERY.finditer("".join(c["source"]))]  # fmt: skip
    assert not found, "\n".join(found)
