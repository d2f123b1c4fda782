"""course.exercises.coding and course.exercises.coding_check on their own: file validation, learner files, the checks."""

from __future__ import annotations

import errno
import json
import sys
import textwrap

import pytest

from course.errors import CourseError
from course.exercises import coding_check
from course.exercises.coding import (
    MAX_PIECE_BYTES,
    CodingError,
    check_piece_text,
    get_exercise,
    learner_file,
    load_coding,
    piece_of,
)
from course.exercises.coding_check import check_piece, cpu_check
from course.lessons import get_lesson
from course.tryout.sandbox import PROTOCOL_PREFIX

LESSON = get_lesson("day78")
needs_cxx = pytest.mark.usefixtures("cxx")

GOOD = textwrap.dedent(
    '''
    lesson = "day78"

    [[exercise]]
    id = "core-offset"
    title = "t"
    prompt = "p"
    first = "return ((mn / 8) * (kTileK / 8) + k / 8) * 64"
    starter = "return 0;"

    [exercise.cpu]
    model = "models:core_offset"
    args = { mn = [0, 64], k = [0, 64] }
    outputs = ["offset"]
    harness = """
    int coreOffset(int mn, int k) {
    {piece}
    }
    """
    eval = "out[0] = coreOffset(int(mn), int(k));"

    [[exercise.wrong]]
    name = "a"
    code = "return 1;"
    expect = "failed-check"

    [[exercise.wrong]]
    name = "b"
    code = "return 1 << 30;"
    expect = "fault"
    '''
)


def _load(tmp_path, text):
    path = tmp_path / "day78.toml"
    path.write_text(text)
    return load_coding(LESSON, path)


def test_a_good_file_loads(tmp_path):
    (ex,) = _load(tmp_path, GOOD)
    assert ex.id == "core-offset" and ex.cpu is not None and ex.cpu.points == 4096
    assert ex.line == 4  # its [[exercise]] line, for messages


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('first = "return ((mn', 'first = "no such line at all'), "must match exactly one line"),
        (('first = "return ((mn / 8) * (kTileK / 8) + k / 8) * 64"', 'first = "return"'), "matches 6 lines"),
        (('expect = "fault"', 'expect = "failed-check"'), "expect = 'fault'"),
        (('expect = "fault"', 'expect = "explodes"'), "expect must be one of"),
        (('model = "models:core_offset"', 'model = "models:no_such"'), "not a function"),
        (('model = "models:core_offset"', 'model = "nomodule:f"'), "cpu.model"),
        (("args = { mn = [0, 64], k = [0, 64] }", "args = { mn = [64, 0] }"), "start < stop"),
        (("{piece}", "{pieces}"), "{piece} exactly once"),
        (('title = "t"', 'title = "t"\ncolour = "red"'), "unknown field(s) colour"),
        (('id = "core-offset"', 'id = "Core Offset"'), "id must be lowercase"),
        (('lesson = "day78"', 'lesson = "day76"'), "lesson must be 'day78'"),
        (('starter = "return 0;"', ""), "missing field(s) starter"),
        (
            (
                'code = "return 1;"',
                'code = "// >>> core-offset: your code goes below this line; only the lines between the two markers are checked"',
            ),
            "marker lines",
        ),
    ],
)
def test_a_broken_file_is_refused_with_its_place(tmp_path, change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(CodingError) as e:
        _load(tmp_path, GOOD.replace(old, new, 1))
    assert message in str(e.value)
    assert str(tmp_path / "day78.toml") in str(e.value)


def test_a_toml_syntax_error_names_its_line(tmp_path):
    with pytest.raises(CodingError) as e:
        _load(tmp_path, GOOD.replace('title = "t"', 'title = = "t"'))
    assert e.value.line == 6 and "not valid TOML" in e.value.message


def test_the_learner_file_is_made_once_and_never_overwritten(ws):
    (ex,) = load_coding(LESSON)
    f = learner_file(LESSON, ex)
    assert f.created and f.piece() == ex.starter
    f.path.write_text(f.text().replace(ex.starter, "return mn;  // mine"))
    again = learner_file(LESSON, ex)
    assert not again.created and again.piece() == "return mn;  // mine"
    fresh = learner_file(LESSON, ex, reset=True)
    assert fresh.piece() == ex.starter
    assert fresh.backup is not None and "return mn;  // mine" in fresh.backup.read_text()


def test_saving_keeps_a_file_edited_outside_the_markers(ws):
    (ex,) = load_coding(LESSON)
    f = learner_file(LESSON, ex)
    f.path.write_text("// my notes\n" + f.text())
    backup = f.save("return 7;")
    assert backup is not None and backup.read_text().startswith("// my notes")
    assert f.piece() == "return 7;" and not f.text().startswith("// my notes")
    assert f.save("return 8;") is None  # nothing outside changed: no backup


def test_lost_markers_are_named(ws):
    (ex,) = load_coding(LESSON)
    f = learner_file(LESSON, ex)
    f.path.write_text(f.text().replace(ex.markers()[1], ""))
    with pytest.raises(CodingError, match="is missing"):
        f.piece()
    doubled = f.text() + ex.markers()[0] + "\n" + ex.markers()[1] + "\n"
    with pytest.raises(CodingError, match="more than once"):
        piece_of(doubled, ex)


def test_a_piece_is_text_of_bounded_size():
    (ex,) = load_coding(LESSON)
    with pytest.raises(CodingError, match="at most"):
        check_piece_text("x" * (MAX_PIECE_BYTES + 1), ex)
    with pytest.raises(CodingError, match="must be text"):
        check_piece_text(42, ex)
    with pytest.raises(CodingError, match="NUL"):
        check_piece_text("return 0;\x00", ex)


@needs_cxx
def test_the_cpu_check_names_the_first_wrong_case_and_maps_compile_errors():
    ex = get_exercise(LESSON, "core-offset")
    v = cpu_check(LESSON, ex, "return mn * 64 + k;")
    assert not v.passed and v.outcome == "failed-check"
    assert v.headline.startswith("wrong for ") and "for mn = 0, k = 8: offset = 8, should be 64" in v.headline
    bad = cpu_check(LESSON, ex, "int x = 0;\nreturn mn +;")
    assert bad.outcome == "compile-error" and "your code, line 2" in bad.headline


@needs_cxx
def test_a_piece_that_never_ends_on_the_cpu_is_stopped(monkeypatch):
    monkeypatch.setattr(coding_check, "CPU_RUN_TIMEOUT_S", 1.0)
    ex = get_exercise(LESSON, "core-offset")
    v = cpu_check(LESSON, ex, "volatile int spin = 1; while (spin) {} return 0;")
    assert v.outcome == "timeout" and "stopped" in v.headline


def test_without_a_compiler_the_cpu_check_says_it_did_not_run(monkeypatch):
    monkeypatch.setattr(coding_check, "find_compiler", lambda: None)
    ex = get_exercise(LESSON, "core-offset")
    v = cpu_check(LESSON, ex, "return 0;")
    assert not v.ran and not v.passed and "no C++ compiler" in v.headline


def _child(tmp_path, outcome, **facts):
    script = tmp_path / "child.py"
    events = [{"event": "compiled", "summary": "s"}, {"event": "result", "outcome": outcome, **facts}]
    script.write_text("".join(f"print({PROTOCOL_PREFIX + json.dumps(e)!r})\n" for e in events))
    return [sys.executable, str(script)]


@needs_cxx
def test_on_a_gpu_the_sandbox_decides_and_runs_the_spliced_kernel(tmp_path):
    ex = get_exercise(LESSON, "core-offset")
    src = tmp_path / "wgmma_gemm.cu"
    r = check_piece(
        LESSON, ex, "return 5;", use_gpu=True, source_path=src,
        command=_child(tmp_path, "failed-check", line="row 0, col 1: got 3.0, want 4.0"),
    )  # fmt: skip
    assert r.check == "gpu" and r.outcome == "failed-check"
    assert "row 0, col 1" in str(r)
    assert piece_of(src.read_text(), ex) == "return 5;"  # the sandbox was handed the spliced kernel
    ok = check_piece(LESSON, ex, ex.reference(LESSON.kernel_path.read_text()), use_gpu=True,
                     source_path=src, command=_child(tmp_path, "passed", line="PASS"))  # fmt: skip
    assert ok.passed and "passed the lesson's own check on the GPU" in ok.headline


@needs_cxx
def test_without_a_gpu_the_cpu_check_decides_and_says_so():
    ex = get_exercise(LESSON, "core-offset")
    r = check_piece(LESSON, ex, "return 0;", use_gpu=False, compile_check=False)
    assert r.check == "cpu" and r.outcome == "failed-check"
    assert "on the CPU" in r.which_check and "CPU check: wrong for" in r.headline
    assert "✗ wrong result" in r._repr_html_()


def test_with_neither_it_says_not_checked(monkeypatch):
    import dataclasses

    ex = dataclasses.replace(get_exercise(LESSON, "core-offset"), cpu=None)
    r = check_piece(LESSON, ex, "return 0;", use_gpu=False, compile_check=False)
    assert r.outcome == "not-checked" and not r.passed and "no CPU model" in r.headline


@pytest.mark.parametrize(("code", "words"), [(errno.EROFS, "read-only"), (errno.ENOSPC, "the disk is full")])
def test_a_workspace_that_cannot_take_the_copy_to_check_is_a_message(unwritable, ws, code, words):
    # No learner file holds this source, so the spliced copy goes to coding/.checked (failed before:
    # the OSError of the atomic write reached the caller bare).
    ex = get_exercise(LESSON, "core-offset")
    unwritable(ws, code)
    with pytest.raises(CourseError, match="cannot write the copy of your code to check") as caught:
        check_piece(
            LESSON, ex, ex.reference(LESSON.kernel_path.read_text()), use_gpu=False, compile_check=True
        )
    assert words in str(caught.value) and ".checked" in str(caught.value)
