"""The command line on this machine: clear messages and exit codes, no traceback."""

import subprocess
import sys

import pytest

from course import gate
from course.cli import main
from course.lessons import get_lesson


def _python_m(*args, env_extra=None):
    import os

    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "course", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_doctor_prints_versions_and_lessons():
    r = _python_m("doctor")
    assert r.returncode == 0, r.stderr
    for word in ("GPU:", "cupy:", "cuda-bindings:", "nvrtc:", "driver (CUDA):", "day76", "day78"):
        assert word in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_doctor_compile_checks_both_kernels():
    r = _python_m("doctor", "--compile")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tma_tile.cu compiled for sm_90 without a GPU" in r.stdout
    assert "wgmma_gemm.cu compiled for sm_90a without a GPU" in r.stdout


@pytest.mark.skipif(gate.verdict(get_lesson("day76")).runs, reason="this machine can run day76")
def test_run_without_the_hardware_exits_2_and_says_why():
    r = _python_m("run", "day76")
    assert r.returncode == 2
    assert "Cannot run day76 here." in r.stdout
    assert "Recorded on a real GPU (not run here)" in r.stdout  # the evidence follows
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.skipif(gate.verdict(get_lesson("day76")).runs, reason="this machine can run day76")
def test_record_without_a_gpu_writes_nothing(tmp_path):
    r = _python_m("record", "--out", str(tmp_path))
    assert r.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_unknown_lesson_is_refused_by_argparse(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "day99"])
    assert info.value.code == 2
    assert "invalid choice: 'day99'" in capsys.readouterr().err


def test_course_error_becomes_a_message_not_a_traceback(tmp_path):
    # A checkout without its material: the doctor still reports, and says so.
    r = _python_m("doctor", "--compile", env_extra={"COURSE_ROOT": str(tmp_path)})
    assert r.returncode == 1 and "no kernels/ folder" in r.stdout
    r = _python_m("record", "--out", str(tmp_path), env_extra={"COURSE_ROOT": str(tmp_path)})
    assert "Traceback" not in r.stdout + r.stderr
    if not gate.verdict(get_lesson("day76")).runs:
        r = _python_m("run", "day76", env_extra={"COURSE_ROOT": str(tmp_path)})
        assert r.returncode == 2
        assert r.stderr.startswith("error: ") and "no kernels/ folder" in r.stderr
        assert "Traceback" not in r.stderr
