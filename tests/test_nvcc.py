"""Each kernel builds standalone with the nvcc line written in its header."""

import shlex
import shutil
import subprocess

import pytest

from course.lessons import LESSONS

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH"),
]


def _build_line(lesson):
    for line in lesson.kernel_path.read_text().splitlines():
        if line.startswith("// Build: "):
            return shlex.split(line.removeprefix("// Build: "))
    raise AssertionError(f"{lesson.kernel_file} has no '// Build:' line")


@pytest.mark.parametrize("lesson", LESSONS.values(), ids=lambda lesson: lesson.id)
def test_header_build_line_builds(lesson, tmp_path):
    argv = _build_line(lesson)
    assert argv[0] == "nvcc" and argv[-1] == lesson.kernel_file
    out = argv.index("-o") + 1
    argv[out] = str(tmp_path / argv[out])
    argv[-1] = str(lesson.kernel_path)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / lesson.kernel_file.removesuffix(".cu")).is_file()
