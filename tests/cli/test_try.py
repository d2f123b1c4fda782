"""``python -m course try``: exit codes and messages.

On this machine (no GPU that runs the lessons): 2 with the compile check for
a good copy, 3 with file:line for a broken one. On a Hopper GPU (marked gpu,
hopper; COURSE_REQUIRE_GPU=1 makes a skip a failure): 0 for the unchanged
copy, 1 with the right words for a fault and a hang, and the lesson's own
run passes right after.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest

from course.kernel import gate
from course.lessons import LESSONS, get_lesson
from course.tryout.outcome import outcome_words
from course.tryout.suggestions import load_suggestions
from course.tryout.workspace import WORKSPACE_ENV


def _try(*args: str, workspace, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **{WORKSPACE_ENV: str(workspace)})
    return subprocess.run(
        [sys.executable, "-m", "course", "try", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def _try_here(*args: str, workspace, monkeypatch, capsys) -> subprocess.CompletedProcess[str]:
    """The same command through ``course.cli.main`` in this process (what ``python -m course`` calls).

    For the cases that differ only in their arguments (every lesson, every bad
    timeout); the tests that use ``_try`` show the same in a fresh process.
    """
    from course.cli import main

    monkeypatch.setenv(WORKSPACE_ENV, str(workspace))
    capsys.readouterr()
    try:
        code = main(["try", *args])
    except SystemExit as e:  # argparse refusing the arguments
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["course", "try", *args], code, out, err)


def _not_here(lesson_id: str) -> None:
    if gate.verdict(get_lesson(lesson_id)).runs:
        pytest.skip(f"this machine runs {lesson_id}: the GPU tests below cover it")


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_a_good_copy_is_compile_checked_and_exits_2(lesson_id, tmp_path, monkeypatch, capsys):
    _not_here(lesson_id)
    lesson = get_lesson(lesson_id)
    mine = tmp_path / "mine.cu"
    mine.write_text(lesson.kernel_path.read_text())
    r = _try_here(lesson_id, str(mine), workspace=tmp_path / "work", monkeypatch=monkeypatch, capsys=capsys)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "not-run: Not run here:" in r.stdout
    assert (
        f"Compile check: your version compiles ({lesson.kernel_file} compiled for {lesson.arch}" in r.stdout
    )
    assert "Traceback" not in r.stdout + r.stderr


def test_a_broken_copy_exits_3_with_file_and_line(tmp_path):
    _not_here("day76")
    lesson = get_lesson("day76")
    text = "// my notes\n" + lesson.kernel_path.read_text().replace(
        "bar.wait(cuda::std::move(token));", "bar.wait(token);"
    )
    line = 1 + text.splitlines().index("    bar.wait(token);")
    mine = tmp_path / "broken.cu"
    mine.write_text(text)
    r = _try("day76", str(mine), workspace=tmp_path / "work")
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"compile-error: Your version does not compile: {mine}:{line}: an rvalue reference" in r.stdout
    assert f"{line} |     bar.wait(token);" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_without_a_file_it_makes_and_tries_my_copy(tmp_path):
    _not_here("day76")
    work = tmp_path / "work"
    r = _try("day76", "--diff", workspace=work)
    assert r.returncode == 2, r.stdout + r.stderr
    copy = work / "day76" / get_lesson("day76").kernel_file
    assert copy.exists()
    assert str(copy) in r.stdout and "(no changes)" in r.stdout


def test_a_suggested_compile_error_exits_3_and_is_confirmed(tmp_path):
    r = _try("day76", "--experiment", "token-not-moved", workspace=tmp_path / "work")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "token-not-moved.cu:" in r.stdout
    assert "As the page says: did not compile." in r.stdout


def test_list_shows_the_suggested_experiments(tmp_path, monkeypatch, capsys):
    r = _try_here("day78", "--list", workspace=tmp_path / "work", monkeypatch=monkeypatch, capsys=capsys)
    assert r.returncode == 0
    for s in load_suggestions(get_lesson("day78")):
        assert f"{s.name}: {s.title} (expected: {s.expect_text})" in r.stdout


def test_a_file_and_an_experiment_together_are_refused(tmp_path):
    r = _try("day76", "x.cu", "--experiment", "integer-one", workspace=tmp_path / "work")
    assert r.returncode == 2
    assert "not both" in r.stdout


def test_a_missing_file_is_a_clear_error(tmp_path):
    _not_here("day76")
    r = _try("day76", str(tmp_path / "nope.cu"), workspace=tmp_path / "work")
    assert r.returncode == 2
    assert "cannot read the kernel to try" in r.stderr
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.parametrize("bad", ["0", "-3", "soon"])
def test_the_timeout_must_be_positive_seconds(tmp_path, bad, monkeypatch, capsys):
    r = _try_here(
        "day76", "--timeout", bad, workspace=tmp_path / "work", monkeypatch=monkeypatch, capsys=capsys
    )
    assert r.returncode == 2
    assert "seconds" in r.stderr


def test_a_workspace_inside_the_course_is_refused(tmp_path):
    from course._paths import repo_root

    r = _try("day76", workspace=repo_root() / "kernels" / "mine")
    assert r.returncode == 2
    assert "outside the course's own files" in r.stderr
    assert not (repo_root() / "kernels" / "mine").exists()


# ---------------------------------------------------------------------------
# On a Hopper GPU.
# ---------------------------------------------------------------------------
def _first(kind: str) -> tuple[str, str]:
    for lid in LESSONS:
        for s in load_suggestions(get_lesson(lid)):
            if s.expect == (kind,):
                return lid, s.name
    raise AssertionError(f"no lesson suggests an experiment that ends in {kind}")


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    "kind, words", [("fault", "faulted while running"), ("timeout", "hung and was stopped after 10 s")]
)
def test_on_the_gpu_a_fault_or_hang_exits_1_and_the_next_run_passes(gpu_for, tmp_path, kind, words):
    lesson_id, name = _first(kind)
    gpu_for(lesson_id)
    r = _try(lesson_id, "--experiment", name, "--timeout", "10", workspace=tmp_path / "work")
    assert r.returncode == 1, r.stdout + r.stderr
    assert words in r.stdout and f"As the page says: {outcome_words(kind)}." in r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    run = subprocess.run(
        [sys.executable, "-m", "course", "run", lesson_id], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.gpu
@pytest.mark.hopper
def test_on_the_gpu_my_unchanged_copy_exits_0(gpu_for, tmp_path):
    gpu_for("day76")
    r = _try("day76", workspace=tmp_path / "work")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "passed: Your version ran and passed the lesson's check" in r.stdout


# ---------------------------------------------------------------------------
# Files that are not files, workspaces that cannot be written (issue 24).
# ---------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_to_try_is_refused_not_waited_on(bounded_course, tmp_path):
    fifo = tmp_path / "mine.cu"
    os.mkfifo(fifo)
    r = bounded_course("try", "day76", str(fifo), workspace=tmp_path / "work")
    assert r.returncode == 2, r.stderr
    assert "the kernel to try is not a regular file but a named pipe (FIFO)" in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_dev_zero_to_try_is_refused_not_read_until_memory_runs_out(bounded_course, tmp_path):
    r = bounded_course("try", "day76", "/dev/zero", workspace=tmp_path / "work")
    assert r.returncode == 2, r.stderr
    assert "/dev/zero: the kernel to try is not a regular file but a character device" in r.stderr


def test_a_workspace_that_is_a_file_is_a_message(tmp_path):
    work = tmp_path / "work"
    work.write_text("not a folder", encoding="utf-8")
    r = _try("day76", workspace=work)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "the workspace must be a folder, and this is a file" in r.stderr


@pytest.mark.parametrize(("code", "words"), [(errno.EROFS, "read-only"), (errno.ENOSPC, "the disk is full")])
def test_a_read_only_or_full_workspace_is_a_message(unwritable, tmp_path, monkeypatch, capsys, code, words):
    work = tmp_path / "work"
    unwritable(work, code)
    r = _try_here("day76", workspace=work, monkeypatch=monkeypatch, capsys=capsys)
    assert r.returncode == 2
    assert r.stderr.startswith("error: ") and words in r.stderr and "cannot write your file" in r.stderr


def test_a_read_only_workspace_still_tries_the_copy_already_there(unwritable, tmp_path, monkeypatch, capsys):
    _not_here("day76")
    from course.tryout.workspace import learner_copy

    work = tmp_path / "work"
    monkeypatch.setenv(WORKSPACE_ENV, str(work))
    learner_copy(get_lesson("day76"))
    unwritable(work)
    r = _try_here("day76", workspace=work, monkeypatch=monkeypatch, capsys=capsys)
    assert r.returncode == 2, r.stderr  # compile-checked here, as with a workspace that can be written
    assert "error:" not in r.stderr and "compile" in r.stdout.lower()
