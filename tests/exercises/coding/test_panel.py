"""The page's coding panel, headless: the editor holds the learner's file, Check saves and checks."""

from __future__ import annotations

import errno
import html

import pytest

from course.page import Page


@pytest.fixture(autouse=True)
def no_gpu_required(monkeypatch):
    monkeypatch.delenv("COURSE_REQUIRE_GPU", raising=False)


@pytest.mark.usefixtures("cxx")
def test_check_saves_the_editor_and_says_which_check_ran():
    panel = Page("day78").coding()
    assert repr(panel) == "CodingPanel(lesson='day78', exercise='core-offset')"
    assert panel.editor.value == panel.exercise.starter
    panel.editor.value = "return mn * 64 + k;"
    result = panel.check()
    assert result is not None and result.outcome in ("failed-check", "compile-error")
    assert panel.file.piece() == "return mn * 64 + k;"  # saved into the learner's file
    assert "(1 check of your code so far)" in panel.status.value and "✗" in panel.result.value
    if result.check == "cpu":
        assert "for mn = 0, k = 8: offset = 8, should be 64" in panel.result.value
    # A new panel (a restarted kernel, the page reopened) shows the saved piece.
    assert Page("day78").coding().editor.value == "return mn * 64 + k;"


def test_hints_come_one_at_a_time_and_start_again_keeps_a_backup():
    panel = Page("day78").coding()
    panel.editor.value = "return 1;"
    panel.file.save(panel.editor.value)
    panel.hint()
    assert "Hint 1" in panel.hints.value and "Hint 2" not in panel.hints.value
    panel.hint()
    assert "Hint 2" in panel.hints.value and panel.hint_button.disabled
    panel.reset()
    assert panel.editor.value == panel.exercise.starter
    assert panel.file.backup is not None and "return 1;" in panel.file.backup.read_text()


def test_a_file_that_lost_its_markers_is_named_and_nothing_is_lost():
    panel = Page("day78").coding()
    path = panel.file.path
    path.write_text("my own kernel, markers gone\n")
    again = Page("day78").coding()
    assert "marker line" in again.status.value and again.editor.value == again.exercise.starter
    again.editor.value = "return 2;"
    again.check()
    backups = list((path.parent / "backups").iterdir())
    assert any(b.read_text() == "my own kernel, markers gone\n" for b in backups)


def test_a_page_without_coding_exercises_says_so(monkeypatch):
    from course.exercises import coding

    monkeypatch.setattr(coding, "load_coding", lambda lesson: ())
    shown = Page("day76").coding()
    assert "has no coding exercise" in str(shown)


@pytest.mark.usefixtures("cxx")
def test_a_check_is_kept_in_progress_and_shown_again_after_a_restart(monkeypatch, capsys):
    from course.cli import main
    from course.exercises import progress

    monkeypatch.setenv(progress.LEARNER_ENV, "ada")
    panel = Page("day78").coding()
    panel.editor.value = panel.exercise.reference(panel.lesson.kernel_path.read_text())
    panel.check()
    panel.check()
    saved = progress.restore("day78", "coding", "core-offset")
    assert (
        saved is not None and saved["passed"] is True and saved["attempts"] == 2 and saved["check"] == "cpu"
    )
    again = Page("day78").coding()  # a restarted kernel: the piece from the file, the verdict from progress
    assert again.attempts == 2 and "Restored from your progress: ✓ passed" in again.result.value
    assert main(["progress", "--lesson", "day78"]) == 0
    out = capsys.readouterr().out
    assert "coding" in out and "1 of 1" in out, out


# ---- issue 22: the editor, compile errors once, Start again asks ----
def test_the_editor_is_a_code_editor_numbered_as_the_learners_file():
    from course.exercises.code_editor import CodeEditor

    panel = Page("day78").coding()
    assert isinstance(panel.editor, CodeEditor)  # CodeMirror, not a Textarea
    lines = panel.file.text().splitlines()
    first = panel.editor.first_line
    # The gutter's first number is the piece's own line in the file (just after the marker).
    assert lines[first - 2].strip() == panel.exercise.markers()[0]
    assert lines[first - 1].strip() == panel.editor.value.splitlines()[0].strip()


@pytest.mark.usefixtures("cxx")
def test_a_compile_error_is_shown_once_in_the_lines_of_the_learners_file():
    panel = Page("day78").coding()
    panel.editor.value = "int y = 1\nreturn mn + k;"
    result = panel.check()
    assert result is not None and result.outcome == "compile-error"
    shown = panel.result.value
    assert "did not compile" in shown and "compile-error" not in shown
    bad = panel.editor.first_line  # "int y = 1" is the piece's first line: the error is on the next
    assert f"{panel.file.path}:{bad + 1}: error" in shown
    assert shown.count(": error") == 1  # once: not again from a second compiler
    assert ".cpp" not in shown and "In function" not in shown and "warning" not in shown


@pytest.mark.usefixtures("cxx")
def test_start_again_over_a_passing_answer_asks_first_and_a_new_check_clears_the_old_verdict():
    panel = Page("day78").coding()
    panel.editor.value = panel.exercise.reference(panel.lesson.kernel_path.read_text())
    assert panel.check().passed and "✓ passed" in panel.result.value
    assert "the lesson's model" in html.unescape(panel.result.value) and "models:" not in panel.result.value
    panel.reset_button.click()
    assert panel.confirm.layout.display == "flex" and "passed" in panel.confirm_text.value
    assert panel.file.piece() == panel.editor.value != panel.exercise.starter  # nothing replaced yet
    panel.cancel_button.click()
    assert panel.confirm.layout.display == "none" and panel.file.backup is None
    panel.reset_button.click()
    panel.confirm_button.click()
    assert panel.editor.value == panel.exercise.starter and panel.file.backup is not None

    seen = []
    from course.exercises import coding_widget

    real = coding_widget.check_piece

    def spy(*args, **kwargs):
        seen.append(panel.result.value)
        return real(*args, **kwargs)

    panel.result.value = "<p>✓ passed</p>"
    coding_widget.check_piece = spy
    try:
        panel.check()
    finally:
        coding_widget.check_piece = real
    assert seen == [""]  # while the new check ran, no old verdict stood beside it


def test_the_panel_speaks_of_the_lesson_not_the_machinery(monkeypatch):
    from course.exercises import progress

    panel = Page("day78").coding()
    state = {"outcome": "failed-check", "check": "cpu", "passed": False, "message": "CPU check: wrong for 3"}
    progress.record("day78", "coding", "core-offset", {**state, "attempts": 1})
    shown = html.unescape(Page("day78").coding().result.value)
    assert "wrong result" in shown and "checked on the CPU against the lesson's model" in shown
    for word in ("failed-check", "(checked cpu)", "CPU check:", "models:"):
        assert word not in shown, word
    assert panel.exercise.cpu is not None


@pytest.mark.parametrize(("code", "words"), [(errno.EROFS, "read-only"), (errno.ENOSPC, "the disk is full")])
def test_a_workspace_that_cannot_be_written_is_said_in_the_panel(
    unwritable, monkeypatch, tmp_path, code, words
):
    work = tmp_path / "work"
    monkeypatch.setenv("COURSE_WORKSPACE", str(work))
    unwritable(work, code)
    panel = Page("day78").coding()  # no traceback: the panel opens, and says why it cannot save
    assert words in panel.status.value and "cannot be saved" in panel.status.value
    assert panel.editor.value == panel.exercise.starter
    assert panel.check() is None
    assert "Not checked" in panel.status.value and words in panel.status.value
    panel.reset()
    assert "Not started again" in panel.status.value


def test_shift_enter_in_the_editor_checks_and_ctrl_s_saves(monkeypatch):
    """The editor's key messages (course/static/code_editor.js sends them; the browser test presses
    the keys): "save" writes the piece into the learner's file without a check, "run" checks."""
    panel = Page("day78").coding()
    panel.editor.value = "return 2;"
    # The message carries the editor's text (it can overtake the keystrokes' own state updates).
    panel.editor._message(panel.editor, {"event": "save", "value": "return 3;"}, [])
    assert panel.file.piece() == "return 3;" and "Saved to" in panel.status.value
    assert panel.attempts == 0 and panel.result.value == ""  # saved, not checked
    assert panel.editor._on["run"] == [panel.check]  # Shift-Enter checks
    checked = []
    monkeypatch.setattr(panel, "check", lambda: checked.append(panel.editor.value))
    panel.editor._on["run"] = [panel.check]  # the panel's own callback, observed
    panel.editor._message(panel.editor, {"event": "run"}, [])
    panel.editor._message(panel.editor, {"event": "nothing of ours"}, [])
    assert checked == ["return 3;"]
    with pytest.raises(ValueError, match="no key event 'paste'"):
        panel.editor.press("paste")
