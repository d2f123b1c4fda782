"""Time Run All of each page, per cell: cold, again in the same kernel, and in a fresh warm kernel.

    python tools/time_notebooks.py --out timings.json [LESSON ...] [--no-warm] [--require-gpu] [--no-bytecode]

For every page (the registry's, or the lessons named), with nbclient:

- cold: a fresh Jupyter kernel, an empty CuPy kernel cache (a new
  ``CUPY_CACHE_DIR``) and an empty course compile cache (a new
  ``COURSE_CACHE_DIR``, course/compile.py), then Run All;
- again: Run All a second time in the same kernel (what a learner's second
  Run All costs);
- warm (unless ``--no-warm``): a fresh kernel over the caches the cold run
  filled (what "Restart Kernel and Run All" costs).

A page's time is the sum of its code cells' ``iopub.execute_input`` ->
``shell.execute_reply`` spans that nbclient records: the kernel's own start
is not in it. The JSON (rewritten after each page, so a run cut short keeps
what it measured) holds, per lesson, the three totals, every cell's time
(its first source line and seconds), whether the issue-28 goals hold
(``GOAL_COLD_S`` cold, ``GOAL_AGAIN_S`` again) and, for the whole run, the
machine (``course doctor``'s GPU line, Python, the time). ``--require-gpu``
sets ``COURSE_REQUIRE_GPU=1``, so a page that finds no GPU fails instead of
showing the recorded output. Run from the repository root (on the GPU
machine, ``tools/gpu_session.sh`` runs it).

Before the first page, the course's Python and every folder on ``PYTHONPATH``
are compiled to bytecode (``compileall``), as ``pip install`` compiles a
package and as Python itself does on a first import: where bytecode is never
written (``PYTHONDONTWRITEBYTECODE``, or a wheel folder installed with
``--no-compile``, as on the GPU machine), every fresh kernel compiled the
course's modules from source again, 0.6-0.85 s of each cold page on the H200
(profiled, issue 28). The JSON says what was compiled; ``--no-bytecode``
leaves it out.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from course.lessons import LESSONS, get_lesson

GOAL_COLD_S = 3.0  # issue 28: Run All of a page, cold (fresh kernel, empty caches)
GOAL_AGAIN_S = 1.0  # issue 28: Run All again in the same kernel


def _stamp(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _spans(nb: Any) -> tuple[float, list[tuple[str, float]]]:
    """(total seconds, [(first source line, seconds)]) over the code cells of a notebook just run."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        t = cell.metadata.get("execution", {})
        span = (_stamp(t["shell.execute_reply"]) - _stamp(t["iopub.execute_input"])).total_seconds()
        first = cell.source.splitlines()[0] if cell.source else ""
        cells.append((first[:60], round(span, 3)))
    return round(sum(s for _, s in cells), 3), cells


def run_once(path: Path, caches: dict[str, str], twice: bool = False) -> tuple[Any, Any]:
    """Run All in a fresh kernel with ``caches`` (env name -> folder); with ``twice``, again in it."""
    os.environ.update(caches)  # the kernel nbclient starts inherits this environment
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        first = _spans(nb)
        if not twice:
            return first, None
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        return first, _spans(nb)


def fresh_caches() -> dict[str, str]:
    """Empty CuPy and course compile caches, in new temporary folders."""
    return {
        "CUPY_CACHE_DIR": tempfile.mkdtemp(prefix="cupy-cache-"),
        "COURSE_CACHE_DIR": tempfile.mkdtemp(prefix="course-cache-"),
    }


def time_page(lesson_id: str, warm: bool = True) -> dict[str, Any]:
    lesson = get_lesson(lesson_id)
    caches = fresh_caches()
    (cold, cold_cells), (again, again_cells) = run_once(lesson.notebook_path, caches, twice=True)
    entry: dict[str, Any] = {
        "cold_s": cold,
        "same_kernel_again_s": again,
        "goals": {"cold": cold <= GOAL_COLD_S, "again": again <= GOAL_AGAIN_S},
        "cells": [
            {"cell": src, "cold_s": c, "again_s": a}
            for (src, c), (_, a) in zip(cold_cells, again_cells, strict=True)
        ],
    }
    if warm:
        (fresh, fresh_cells), _ = run_once(lesson.notebook_path, caches)
        entry["fresh_kernel_warm_cache_s"] = fresh
        for row, (_, w) in zip(entry["cells"], fresh_cells, strict=True):
            row["fresh_kernel_warm_cache_s"] = w
    return entry


def bytecode() -> dict[str, Any]:
    """Compile the course package and the PYTHONPATH folders to bytecode; what was compiled."""
    import course

    folders = [Path(course.__file__).parent]
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and Path(entry).is_dir() and Path(entry).resolve() != folders[0].parent.resolve():
            folders.append(Path(entry))
    ok = all(compileall.compile_dir(str(f), quiet=1, workers=0) for f in folders)
    return {
        "compiled": [str(f) for f in folders],
        "all_compiled": bool(ok),
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
    }


def _machine() -> dict[str, Any]:
    from course.kernel import gate

    machine = gate.probe()
    gpu = machine.gpu.banner if machine.gpu is not None else f"no GPU: {machine.problem}"
    return {
        "gpu": gpu,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "versions": machine.versions,
        "COURSE_REQUIRE_GPU": os.environ.get("COURSE_REQUIRE_GPU", ""),
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),  # noqa: UP017
    }


def _print(lesson_id: str, entry: dict[str, Any]) -> None:
    warm = entry.get("fresh_kernel_warm_cache_s")
    ok = "meets" if all(entry["goals"].values()) else "misses"
    print(
        f"{lesson_id}: Run All {entry['cold_s']:.2f} s cold, {entry['same_kernel_again_s']:.2f} s again"
        + (f", {warm:.2f} s fresh kernel + warm caches" if warm is not None else "")
        + f" ({ok} the goals {GOAL_COLD_S:g} s / {GOAL_AGAIN_S:g} s)",
        flush=True,
    )
    print("     cold  again" + ("  fresh+warm" if warm is not None else ""))
    for row in entry["cells"]:
        w = row.get("fresh_kernel_warm_cache_s")
        print(
            f"    {row['cold_s']:5.2f}  {row['again_s']:5.2f}"
            + (f"  {w:10.2f}" if w is not None else "")
            + f"  {row['cell']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON to write")
    parser.add_argument("lessons", nargs="*", help=f"lesson ids (default: all of {', '.join(LESSONS)})")
    parser.add_argument("--no-warm", action="store_true", help="skip the fresh-kernel, warm-cache run")
    parser.add_argument("--require-gpu", action="store_true", help="COURSE_REQUIRE_GPU=1 in the kernels")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="do not compile the course and PYTHONPATH to bytecode first",
    )
    args = parser.parse_args(argv)
    if args.require_gpu:
        os.environ["COURSE_REQUIRE_GPU"] = "1"
    ids = args.lessons or list(LESSONS)
    for lesson_id in ids:
        get_lesson(lesson_id)  # an unknown id stops here, before any page runs
    results: dict[str, Any] = {"machine": _machine(), "goals_s": {"cold": GOAL_COLD_S, "again": GOAL_AGAIN_S}}
    results["bytecode"] = None if args.no_bytecode else bytecode()
    results["pages"] = {}
    for lesson_id in ids:
        entry = time_page(lesson_id, warm=not args.no_warm)
        results["pages"][lesson_id] = entry
        args.out.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
        _print(lesson_id, entry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
