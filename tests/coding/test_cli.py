"""``python -m course coding``: list, check (exit codes), validate (located errors)."""

from __future__ import annotations

import pytest

from course.cli import main
from course.coding import get_exercise, learner_file
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
