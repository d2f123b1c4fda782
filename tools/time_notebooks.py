"""Time Run All of each lesson page, cold and warm, the Jupyter kernel's start excluded.

Cold: a fresh Jupyter kernel and an empty CuPy kernel cache (a new
CUPY_CACHE_DIR). Warm: another fresh Jupyter kernel over the cache the cold
run filled (what "Restart Kernel and Run All" costs a learner the second
time). The time is the sum of the cells' execute_input -> execute_reply
spans that nbclient records. Run on the GPU machine from the repo root.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course.lessons import LESSONS


def _stamp(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _spans(nb) -> tuple[float, list[tuple[str, float]]]:
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        t = cell.metadata.get("execution", {})
        span = (_stamp(t["shell.execute_reply"]) - _stamp(t["iopub.execute_input"])).total_seconds()
        first = cell.source.splitlines()[0] if cell.source else ""
        cells.append((first[:60], round(span, 3)))
    return round(sum(s for _, s in cells), 3), cells


def run_once(path: Path, cache_dir: str, twice: bool = False):
    """Run All in a fresh kernel; with ``twice``, Run All again in the same kernel."""
    os.environ["CUPY_CACHE_DIR"] = cache_dir
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=True,
                            resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        first = _spans(nb)
        if not twice:
            return first, None
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        return first, _spans(nb)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    results = {}
    for lesson in LESSONS.values():
        cache = tempfile.mkdtemp(prefix="cupy-cache-")
        (cold, cold_cells), (again, again_cells) = run_once(lesson.notebook_path, cache, twice=True)
        (warm, warm_cells), _ = run_once(lesson.notebook_path, cache)
        results[lesson.id] = {
            "cold_s": cold, "same_kernel_again_s": again, "fresh_kernel_warm_cache_s": warm,
            "cold_cells": cold_cells, "same_kernel_again_cells": again_cells, "fresh_kernel_warm_cache_cells": warm_cells,
        }
        print(f"{lesson.id}: Run All {cold:.2f} s cold (fresh kernel, empty kernel cache), "
              f"{again:.2f} s again in the same kernel, {warm:.2f} s in a fresh kernel with the warm cache")
        print("     cold  again  fresh+warm")
        for (src, c), (_, a), (_, w) in zip(cold_cells, again_cells, warm_cells, strict=True):
            print(f"    {c:5.2f}  {a:5.2f}  {w:5.2f}  {src}")
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
