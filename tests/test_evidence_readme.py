"""evidence/README.md (the dated log of what ran on real hardware) quotes recorded numbers; they must be the recorded ones."""

import re
from pathlib import Path

from course.bench import bench_dir, load
from course.bench.spec import bench_spec
from course.lessons import LESSONS

README = (Path(__file__).resolve().parents[1] / "evidence" / "README.md").read_text(encoding="utf-8")
H200 = bench_dir("h200")  # the runs the log quotes were the H200's


def _ladder_ratios(size: int) -> list[str]:
    out = []
    for lesson in LESSONS.values():
        if not lesson.previous or bench_spec(lesson) is None or bench_spec(lesson).unit != "TFLOP/s":
            continue
        result = load(lesson.id, H200)
        # The ladder of 2026-11-30: steps 1 to 6 (Days 79 to 84); Day 86 is quoted on its own line.
        if result is None or not 78 < lesson.day <= 84:
            continue
        out.append(f"{result.row(size).peers[0].ratio:.2f}x")
    return out


def test_the_ladder_ratios_quoted_are_the_recorded_ones():
    quoted = re.search(r"At N = 4096 the ladder runs at ([\d.x, and]+) of cuBLAS", README)
    assert quoted, "evidence/README.md no longer quotes the ladder at 4096"
    numbers = re.findall(r"\d\.\d\dx", quoted.group(1))
    assert numbers == _ladder_ratios(4096)
    last = re.search(r"at 8192 its last step runs at (\d\.\d\dx)", README)
    assert last and last.group(1) == _ladder_ratios(8192)[-1]
    day86 = load("day86", H200)
    quoted86 = f"Day 86 at 4096: {day86.row(4096).peers[0].ratio:.2f}x, at 8192: {day86.row(8192).peers[0].ratio:.2f}x"
    assert quoted86 in " ".join(README.split()), quoted86
    day78 = load("day78", H200).row(4096).peers[0].ratio
    assert f"Day 78's teaching kernel: {day78:.3f}x" in README
