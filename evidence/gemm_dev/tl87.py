"""Development timelines of Day 87's promoting builds (issue 40, session 18): not the course's command.

`course timeline day87` records the lesson's own build (128 x 256, never promoting). This records the
builds named in TL87_BUILDS (chooser.DEV_BUILDS names, or "promote" / "bn192" / "blockbase" for the
chooser's promoting, 128 x 192 and block-scaled builds) at N = TL87_N (4096) and promote_every 1, each
checked against float64 as `course timeline` checks, into OUT/<name>/day87.{json,png}, and prints each
one's summary, so that where the promotion's time goes can be read off the consumers' rows.

    OUT=/tmp/tl TL87_BUILDS=promote,early python3 evidence/gemm_dev/tl87.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from course import timeline as tl
from course.lessons import get_lesson
from course.lessons.day87 import chooser
from course.timeline import gpu

BASES = {"promote": chooser.PROMOTE_BUILD, "bn192": chooser.BN192_BUILD, "blockbase": chooser.BLOCK_BUILD}


def main() -> int:
    out = Path(os.environ.get("OUT", "/tmp")) / "tl87"
    n = int(os.environ.get("TL87_N", "4096"))
    names = [x.strip() for x in os.environ.get("TL87_BUILDS", "promote,early").split(",") if x.strip()]
    lesson = get_lesson("day87")
    for name in names:
        defines = BASES.get(name) or chooser.DEV_BUILDS[name]
        print(f"=== {name}: {defines} at N = {n}, promote_every 1", flush=True)
        timeline = gpu.record(lesson, n, defines=defines, promote_every=1, command=f"tl87.py {name}")
        paths = tl.write(timeline, out / name)
        print("wrote", *paths)
        print(tl.summarize(timeline).text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
