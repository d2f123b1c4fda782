"""``python -m course coding``: list, check (exit codes), validate (located errors)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from course.cli import main
from course.exercises.coding import get_exercise, learner_file
from course.lessons import get_lesson

needs_cxx = pytest.mark.usefixtures("cxx")


def test_list_names_every_exercise_and_how_it_is_checked(capsys):
    assert main(["coding", "list", "day78"]) == 0
    assert "day78 core-offset:" in capsys.readouterr().out


@needs_cxx
def test_check_exit_codes_follow_the_outcome(capsys, tmp_path):
    lesson = get_lesson("day78")
    ex = get_exercise(lesson, "core-offset")
    assert main(["coding", "check", "day78", "core-offset"]) == 1  # the starter is wrong
    out = capsys.readouterr().out
    assert "made your file from the starter" in out and "should be" in out
    mine = learner_file(lesson, ex)
    mine.save(ex.reference(lesson.kernel_path.read_text()))
    assert main(["coding", "check", "day78", "core-offset"]) == 0
    mine.save("return mn +;")
    assert main(["coding", "check", "day78", "core-offset", "--file", str(mine.path)]) == 3
    assert "your code, line 1" in capsys.readouterr().out


def test_validate_names_the_file_and_line(tmp_path, capsys):
    bad = tmp_path / "day78.toml"
    bad.write_text('lesson = "day78"\n\n[[exercise]]\nid = "x"\n')
    assert main(["coding", "validate", str(bad)]) == 1
    assert f"{bad}:3: exercise 'x': missing field(s)" in capsys.readouterr().err
    assert main(["coding", "validate"]) == 0


def test_a_refused_piece_is_named_by_its_line_in_the_file(capsys):
    lesson = get_lesson("day78")
    ex = get_exercise(lesson, "core-offset")
    mine = learner_file(lesson, ex)
    mine.save("return 0;\n}\nstatic int evil = 1;\nint more() {\nreturn 0;")
    assert main(["coding", "check", "day78", "core-offset"]) == 1
    lines = [ln.strip() for ln in mine.text().splitlines()]
    brace = lines.index(ex.markers()[0]) + 3  # 1-based: the marker's line, then the piece's line 2
    out = capsys.readouterr().out
    assert f"refused: {mine.path}:{brace}: this '}}' closes a '{{' your code did not open" in out
    assert main(["coding", "check", "day78", "core-offset", "--file", str(mine.path)]) == 1


# ---- issue 24: files that are not files, workspaces that cannot be written ---------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_as_the_file_or_as_the_exercise_file_is_refused_not_waited_on(bounded_course, ws, tmp_path):
    fifo = tmp_path / "piece.cu"
    os.mkfifo(fifo)
    r = bounded_course("coding", "check", "day78", "core-offset", "--file", str(fifo), workspace=ws)
    assert r.returncode == 2, r.stderr
    assert "not a regular file but a named pipe (FIFO)" in r.stderr and "Traceback" not in r.stderr
    mine = ws / "day78" / "coding" / "core-offset.cu"
    mine.parent.mkdir(parents=True)
    os.mkfifo(mine)  # the learner's own exercise file, replaced by a FIFO
    r = bounded_course("coding", "check", "day78", "core-offset", workspace=ws)
    assert r.returncode == 2, r.stderr
    assert "your exercise file is not a regular file but a named pipe" in r.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_as_the_file_is_refused_not_read_until_memory_runs_out(bounded_course, ws):
    r = bounded_course("coding", "check", "day78", "core-offset", "--file", "/dev/zero", workspace=ws)
    assert r.returncode == 2, r.stderr
    assert "/dev/zero: the file to check is not a regular file but a character device" in r.stderr


def test_a_workspace_that_is_a_file_is_a_message(ws, capsys):
    ws.write_text("not a folder", encoding="utf-8")
    assert main(["coding", "check", "day78", "core-offset"]) == 2
    err = capsys.readouterr().err
    assert f"error: {ws}: the workspace must be a folder, and this is a file" in err


@pytest.mark.parametrize(("code", "words"), [(errno.EROFS, "read-only"), (errno.ENOSPC, "the disk is full")])
def test_a_read_only_or_full_workspace_is_a_message(unwritable, ws, capsys, code, words):
    unwritable(ws, code)
    assert main(["coding", "check", "day78", "core-offset"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and "cannot write your file" in err


@needs_cxx
def test_a_read_only_workspace_still_checks_the_file_already_there(unwritable, ws, capsys):
    lesson = get_lesson("day78")
    ex = get_exercise(lesson, "core-offset")
    learner_file(lesson, ex).save(ex.reference(lesson.kernel_path.read_text()))
    unwritable(ws)
    assert main(["coding", "check", "day78", "core-offset"]) == 0, capsys.readouterr()
