"""What a learner sees: every page, executed on this machine, shows real outputs.

The pages are executed once per test run, by nbval (``notebooks/`` is in
``testpaths``, ``--nbval-lax``); the root ``conftest.py`` checks each cell's
outputs from that run with ``tests/page_checks.py``: no error, no traceback
printed, no bare object repr (``<Figure size ...>``, ``<... object at
0x...>``, an exception's repr), and a figure cell shows a PNG image of a
sensible size. A page that breaks one fails its cell's nbval item
(``notebooks/<page>.ipynb::Cell N``), naming what is wrong.

Here: the checks catch each of those on made-up outputs and pass good ones,
and a real nbval run of a small notebook fails exactly the cells that show
a bare repr or a figure cell without its picture (so the hook is wired).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from page_checks import png_size, problems

ROOT = Path(__file__).resolve().parents[2]


def _png(width: int, height: int) -> str:
    """A real (tiny to store) PNG of that size, base64 as a kernel sends it."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\x00" * width for _ in range(height))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def _shown(data: dict[str, str], kind: str = "display_data") -> dict[str, object]:
    return {"output_type": kind, "data": data, "metadata": {}}


def test_png_size_reads_the_header():
    assert png_size(base64.b64decode(_png(640, 480))) == (640, 480)
    with pytest.raises(AssertionError):
        png_size(b"GIF89a" + b"\x00" * 30)


def test_good_outputs_pass():
    assert problems("print('hi')", [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]) == []
    assert problems("x", [_shown({"text/plain": "42"}, "execute_result")]) == []
    table = _shown({"text/plain": "<object object at 0x7f00>", "text/html": "<table></table>"})
    assert problems("page.table()", [table]) == []  # a rich output may have any text/plain
    figure = _shown({"image/png": _png(800, 400), "text/plain": "<Figure size 800x400 with 1 Axes>"})
    assert problems("page.tile_figure()", [figure]) == []
    assert problems("x = 1", []) == []


@pytest.mark.parametrize(
    "text",
    [
        "<Figure size 640x480 with 1 Axes>",
        "<course.page.Page object at 0x7f3a2b1c0d90>",
        "<course.page.Page at 0x7f3a2b1c0d90>",  # how IPython shows object.__repr__
        "LaunchError('the kernel faulted')",
        "course.errors.CompileProblem('no nvrtc')",
    ],
)
def test_a_bare_repr_is_found(text):
    for kind in ("display_data", "execute_result"):
        (found,) = problems("x", [_shown({"text/plain": text}, kind)])
        assert "bare repr" in found and text[:20] in found


def test_an_error_or_a_printed_traceback_is_found():
    error = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}
    assert problems("f()", [error]) == ["an error: ValueError: bad"]
    printed = {"output_type": "stream", "name": "stderr", "text": "Traceback (most recent call last):\n  ..."}
    (found,) = problems("f()", [printed])
    assert found.startswith("a traceback in stderr")


def test_a_figure_cell_needs_a_picture_of_a_sensible_size():
    assert problems("page.tile_figure()", []) == ["no image from a figure cell (page.tile_figure())"]
    assert problems("page.tile_figure()", [_shown({"text/plain": "<Figure size 6x4>"})])
    (small,) = problems("page.tile_figure()", [_shown({"image/png": _png(120, 90)})])
    assert small == "an image of 120x90 px from a figure cell (page.tile_figure())"
    assert problems("page.tile_figure()\n# a comment after it is not a figure call", []) == []


@pytest.mark.slow
def test_nbval_fails_the_cells_that_show_a_bare_repr_or_no_picture(tmp_path):
    """The hook in the root conftest.py, in a real nbval run: 2 cells fail, 2 pass, the reason named."""
    cells = [
        "print('fine')",
        "class Figure:\n    def __repr__(self):\n        return '<Figure size 640x480 with 1 Axes>'\n\nFigure()",
        "def demo_figure():\n    return None\n\ndemo_figure()",
        "1 + 1",
    ]
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {},
                "source": s,
                "outputs": [],
                "execution_count": None,
            }
            for i, s in enumerate(cells)
        ],
    }
    path = tmp_path / "shows.ipynb"
    path.write_text(json.dumps(notebook), "utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest", "-o", "addopts=",
         "--nbval-lax", "--nbval-current-env", "-rf", str(path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])),
    )  # fmt: skip
    out = run.stdout + run.stderr
    assert run.returncode == 1, out[-3000:]
    assert "2 failed, 2 passed" in out, out[-3000:]
    assert "FAILED shows.ipynb::Cell 1" in out and "FAILED shows.ipynb::Cell 2" in out, out[-3000:]
    assert "what a learner sees: only a bare repr: '<Figure size 640x480 with 1 Axes>'" in out
    assert "what a learner sees: no image from a figure cell (demo_figure())" in out
