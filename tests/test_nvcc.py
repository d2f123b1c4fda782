"""Each kernel builds standalone with the nvcc line written in its header.

And every kernel with timeline stamps (course.timeline) builds that way with
and without -DCOURSE_TIMELINE, without a warning and without ptxas
serializing wgmma (C7519). The build without the macro is the header's build
line itself: one nvcc run serves both tests (``_build`` keeps its result for
the module), so each build costs one nvcc run, not two. The macro only
reaches device code (the test below checks that it is named nowhere outside
the timeline block), so the build with it is the header's line with
``-cubin``: nvcc's device half (cicc and ptxas, where C7519 comes from),
without compiling and linking the host half again, which the header's build
has just done with the same text. That is a second a kernel less.
"""

from __future__ import annotations

import functools
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from course import timeline as tl
from course.lessons import LESSONS, get_lesson

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH"),
]

INSTRUMENTED = [lesson for lesson in LESSONS.values() if tl.instrumented(lesson)]


def _build_line(lesson):
    for line in lesson.kernel_path.read_text().splitlines():
        if line.startswith("// Build: "):
            return shlex.split(line.removeprefix("// Build: "))
    raise AssertionError(f"{lesson.kernel_file} has no '// Build:' line")


@functools.cache
def _build(lesson_id: str, *extra: str) -> tuple[list[str], int, str, bool]:
    """nvcc with the header's build line (and ``extra`` flags), into a throwaway folder.

    The argv, the exit code, stderr, and whether the binary the line names was written.
    """
    lesson = get_lesson(lesson_id)
    argv = _build_line(lesson)
    assert argv[0] == "nvcc" and argv[-1] == lesson.kernel_file, argv
    with tempfile.TemporaryDirectory(prefix="nvcc-") as tmp:
        out = argv.index("-o") + 1
        binary = Path(tmp) / argv[out]
        argv = [*argv[:1], *extra, *argv[1:out], str(binary), *argv[out + 1 : -1], str(lesson.kernel_path)]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        return argv, r.returncode, r.stderr, binary.is_file()


@pytest.mark.parametrize("lesson", LESSONS.values(), ids=lambda lesson: lesson.id)
def test_header_build_line_builds(lesson):
    argv, returncode, stderr, built = _build(lesson.id)
    assert returncode == 0, stderr
    assert built and Path(argv[argv.index("-o") + 1]).name == lesson.kernel_file.removesuffix(".cu")


@pytest.mark.parametrize("lesson", INSTRUMENTED, ids=lambda lesson: lesson.id)
def test_the_macro_is_named_only_inside_the_timeline_block(lesson):
    """So the host half of the build cannot differ with -DCOURSE_TIMELINE (see the module's note)."""
    text = lesson.kernel_path.read_text(encoding="utf-8")
    start, end = text.index(tl.BLOCK_BEGIN), text.index(tl.BLOCK_END)
    outside = text[:start] + text[end:]
    assert tl.DEFINE in text[start:end]
    assert tl.DEFINE not in outside, f"{lesson.kernel_file} names {tl.DEFINE} outside its timeline block"


@pytest.mark.parametrize("timeline", [False, True], ids=["plain", "COURSE_TIMELINE"])
@pytest.mark.parametrize("lesson", INSTRUMENTED, ids=lambda lesson: lesson.id)
def test_standalone_nvcc_build_with_and_without_the_macro(lesson, timeline):
    extra = [f"-D{tl.DEFINE}", "-cubin"] if timeline else []
    argv, returncode, stderr, built = _build(lesson.id, *extra)
    assert (f"-D{tl.DEFINE}" in argv) == timeline
    assert returncode == 0 and built, stderr
    assert "C7519" not in stderr and "warning" not in stderr.lower(), stderr
