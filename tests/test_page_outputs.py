"""What a learner sees: every page, executed on this machine, shows real outputs.

Each registry page is executed with nbclient (no GPU here: the pages show
their recordings). Every output must be something a person can read: a
figure cell shows a PNG image of a sensible size; no output anywhere is a
bare object repr (``<Figure size ...>``, ``<... object at 0x...>``, an
exception's repr) or a traceback.
"""

from __future__ import annotations

import base64
import re
import struct

import nbformat
import pytest
from nbclient import NotebookClient

from course.lessons import LESSONS

pytestmark = pytest.mark.slow

_BARE_REPR = re.compile(
    r"^(<Figure size [^>]*>|<[\w.]+ object at 0x[0-9a-f]+>|(?:[\w.]+\.)?[A-Z]\w*(Error|Exception|Problem|Failed)\(.*\))$",
    re.S,
)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module", params=list(LESSONS), ids=str)
def executed(request, tmp_path_factory):
    lesson = LESSONS[request.param]
    nb = nbformat.read(lesson.notebook_path, as_version=4)
    NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        allow_errors=True,
        resources={"metadata": {"path": str(lesson.notebook_path.parent)}},
    ).execute()
    return lesson, nb


def _outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            for out in cell.outputs:
                yield cell, out


def test_no_cell_raises_or_prints_a_traceback(executed):
    lesson, nb = executed
    for cell, out in _outputs(nb):
        assert out.output_type != "error", (
            f"{lesson.notebook}, cell {cell.id}: {out.get('ename')}: {out.get('evalue')}"
        )
        if out.output_type == "stream":
            assert "Traceback" not in out.text, f"{lesson.notebook}, cell {cell.id}: {out.text[:300]}"


def test_no_output_is_a_bare_object_repr(executed):
    lesson, nb = executed
    for cell, out in _outputs(nb):
        if out.output_type not in ("display_data", "execute_result"):
            continue
        data = out.data
        rich = set(data) - {"text/plain"}
        text = data.get("text/plain", "").strip()
        assert rich or not _BARE_REPR.match(text), (
            f"{lesson.notebook}, cell {cell.id} shows only {text[:120]!r}"
        )


def test_every_figure_cell_shows_an_image(executed):
    lesson, nb = executed
    figure_cells = [
        c for c in nb.cells if c.cell_type == "code" and re.search(r"\w+_figure\(\)\s*$", c.source)
    ]
    for cell in figure_cells:
        images = [out.data["image/png"] for out in cell.outputs if "image/png" in out.get("data", {})]
        assert images, f"{lesson.notebook}, cell {cell.id} ({cell.source.splitlines()[-1]}) shows no image"
        width, height = png_size(base64.b64decode(images[0]))
        assert width >= 300 and height >= 200, f"{lesson.notebook}, cell {cell.id}: {width}x{height} px"
