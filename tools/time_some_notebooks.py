"""Run All timings for some lessons (cold kernel cache + fresh kernel, then again in the same
kernel), written one JSON line per lesson as each finishes, so a run cut short keeps what it
measured. ``tools/time_notebooks.py`` times every lesson three ways; this is the quick form.

    python tools/time_some_notebooks.py OUT.jsonl day79 day80 ...
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from time_notebooks import run_once  # noqa: E402

from course.lessons import get_lesson  # noqa: E402


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    for lesson_id in argv[1:]:
        lesson = get_lesson(lesson_id)
        cache = tempfile.mkdtemp(prefix="cupy-cache-")
        (cold, cold_cells), (again, again_cells) = run_once(lesson.notebook_path, cache, twice=True)
        line = {"lesson": lesson_id, "cold_s": cold, "same_kernel_again_s": again, "cold_cells": cold_cells}
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        print(f"{lesson_id}: Run All {cold:.2f} s cold (fresh kernel, empty kernel cache), {again:.2f} s again", flush=True)
        slow = sorted(cold_cells, key=lambda c: -c[1])[:3]
        print("   slowest cold cells: " + "; ".join(f"{s:.2f} s {src!r}" for src, s in slow), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
