"""Suggested experiments: every lesson's, against its current kernel, without a GPU.

Each change must match exactly once in the kernel as it is now, and each
variant must still compile (offline, NVRTC) unless the page says it does
not. Whether a GPU then does what the page says is tools/try_gpu_check.py's
job, on the H200.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course._html import escape
from course.errors import CourseError
from course.kernel import evidence
from course.kernel.compile import CompileError, compile_offline
from course.kernel.gate import Gpu, Machine
from course.kernel.variants import _pattern
from course.lessons import LESSONS, get_lesson
from course.tryout import suggestions as suggested
from course.tryout.outcome import outcome_words
from course.tryout.sandbox import map_compile_log
from course.tryout.suggestions import (
    EXPECTABLE,
    get_suggestion,
    load_suggestions,
    recorded_words,
    suggestions_html,
)


def _declared() -> list[tuple[str, str]]:
    return [(lid, s.name) for lid in LESSONS for s in load_suggestions(get_lesson(lid))]


# Issue 38, "Break it and see": from this day on, every lesson shows its new idea failing.
FIRST_BREAK_IT_DAY = 79
FAILURES = {"failed-check", "fault", "timeout"}


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_every_lesson_suggests_experiments_that_break_its_kernel(lesson_id):
    lesson = get_lesson(lesson_id)
    found = load_suggestions(lesson)
    where = f"content/experiments/{suggested.suggestions_path(lesson).name}"
    assert found, f"{lesson_id} declares no suggested experiments: add {where}"
    # Each lesson shows at least one way its kernel visibly breaks: a wrong result, a fault or a hang.
    assert {e for s in found for e in s.expect} & FAILURES, lesson_id
    if lesson.day < FIRST_BREAK_IT_DAY:
        return
    breaking = [s for s in found if "passed" not in s.expect and set(s.expect) & FAILURES]
    assert len(breaking) >= 2, (
        f"{lesson_id} declares {len(breaking)} experiment(s) that break it "
        f"({', '.join(s.name for s in breaking) or 'none'}); every lesson from Day {FIRST_BREAK_IT_DAY} "
        f"on needs at least two in {where}"
    )
    for s in breaking:
        # Recorded on the GPU by `python -m course record` (the page shows the run or says it is missing),
        # and explained with the PTX ISA section the failure is about.
        assert s.record, f"{lesson_id}/{s.name}: set record = true so `course record` keeps its run"
        assert "PTX ISA" in s.explain, f"{lesson_id}/{s.name}: name the PTX ISA section it is about"


@pytest.mark.parametrize("lesson_id, name", _declared())
def test_each_change_matches_exactly_once_in_the_current_kernel(lesson_id, name):
    lesson = get_lesson(lesson_id)
    s = get_suggestion(lesson, name)
    text = lesson.kernel_path.read_text()
    for change in s.changes:
        assert len(_pattern(change.old).findall(text)) == 1, change.old
        text = _pattern(change.old).sub(lambda _m, new=change.new: new, text, count=1)
    assert s.source(lesson.kernel_path.read_text()) == text
    assert text != lesson.kernel_path.read_text()


@pytest.mark.parametrize("lesson_id, name", _declared())
def test_each_variant_compiles_unless_the_page_says_it_does_not(lesson_id, name, tmp_path):
    lesson = get_lesson(lesson_id)
    s = get_suggestion(lesson, name)
    source = s.source(lesson.kernel_path.read_text())
    if "compile-error" not in s.expect:
        compile_offline(lesson, source=source)
        return
    with pytest.raises(CompileError) as info:
        compile_offline(lesson, source=source)
    # The error points at a line the experiment changed, in the learner's file.
    mine = tmp_path / f"{name}.cu"
    problem = map_compile_log(info.value.log, source, mine, (lesson.kernel_file,))
    assert problem.line is not None
    changed = source.splitlines()[problem.line - 1]
    assert any(line.strip() and line.strip() in changed for c in s.changes for line in c.new.splitlines())


def test_the_table_lists_every_experiment_escaped():
    lesson = get_lesson("day76")
    html = suggestions_html(load_suggestions(lesson))
    for s in load_suggestions(lesson):
        assert f"<code>{s.name}</code>" in html
    assert "<script" not in html
    assert "`" not in html  # `code` spans are shown as code, not as backticks


def test_the_table_shows_each_kept_run_and_says_where_none_is_kept(tmp_path, monkeypatch):
    day81 = load_suggestions(get_lesson("day81"))
    kept = {s.name: s.recording() for s in day81}
    assert kept["without-setmaxnreg"] is None  # not marked record = true
    count = kept["count-too-low"]
    if count is not None:  # the recording in evidence/ (the per-device layout may move it)
        assert count.outcome is not None
        assert recorded_words(day81[0]).startswith(f"{outcome_words(count.outcome)} on {count.device} (")
    # Against a folder of our own: nothing kept, then one run that did what the page says, then
    # one that did not; the table never shows an outcome no run produced.
    monkeypatch.setattr(suggested._paths, "evidence_dir", lambda: tmp_path)
    lesson = get_lesson("day79")
    s = get_suggestion(lesson, "expect-tx-one-row-more")
    assert recorded_words(s) == "not recorded yet: no GPU run of it is kept in this checkout"
    html = suggestions_html(load_suggestions(lesson))
    assert html.count("not recorded yet") == len(load_suggestions(lesson)) and "recorded on a GPU" in html
    h200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {"cupy": "14.2.0"})
    for outcome, tail in (("timeout", ""), ("failed-check", ": not what the page expects")):
        path = evidence.path_of(lesson, s.name)
        ev = evidence.record(lesson, h200, ["x"], False, command="c", path=path, outcome=outcome)
        assert recorded_words(s) == f"{outcome_words(outcome)} on NVIDIA H200 ({ev.recorded_at[:10]}){tail}"
        assert escape(recorded_words(s)) in suggestions_html((s,))


def _write(tmp_path: Path, text: str, monkeypatch) -> None:
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "day76.toml").write_text(text)
    monkeypatch.setattr(suggested._paths, "content_dir", lambda: tmp_path)


GOOD = """
[[experiment]]
name = "x"
title = "t"
expect = "passed"
explain = "e"
[[experiment.change]]
old = "tile[r][c] + 1.0f;"
new = "tile[r][c] + 1;"
"""


@pytest.mark.parametrize(
    "replace, words",
    [
        (('expect = "passed"', 'expect = "exploded"'), "expect must be one of"),
        (('expect = "passed"', "expect = []"), "expect must be one of"),
        (('expect = "passed"', 'expect = "not-run"'), "expect must be one of"),
        (('name = "x"', 'name = "Bad Name"'), "name must be lowercase"),
        (('title = "t"', 'title = ""'), "title must be a non-empty string"),
        (('new = "tile[r][c] + 1;"', "new = 3"), "new must be a string"),
        (("[[experiment.change]]", "[[experiment.other]]"), "at least one [[experiment.change]]"),
    ],
)
def test_a_malformed_file_is_refused_with_the_experiment_named(tmp_path, monkeypatch, replace, words):
    _write(tmp_path, GOOD.replace(*replace), monkeypatch)
    with pytest.raises(CourseError, match=words.replace("[", r"\[").replace("]", r"\]")) as info:
        load_suggestions(get_lesson("day76"))
    assert info.value.path == tmp_path / "experiments" / "day76.toml"


def test_a_name_declared_twice_is_refused(tmp_path, monkeypatch):
    _write(tmp_path, GOOD + GOOD, monkeypatch)
    with pytest.raises(CourseError, match="declared twice"):
        load_suggestions(get_lesson("day76"))


def test_a_change_that_no_longer_matches_names_the_experiment(tmp_path, monkeypatch):
    _write(tmp_path, GOOD.replace("tile[r][c] + 1.0f;", "text that is not in the kernel;"), monkeypatch)
    (s,) = load_suggestions(get_lesson("day76"))
    with pytest.raises(CourseError, match="variant 'x': the text to replace must occur exactly once"):
        s.source(get_lesson("day76").kernel_path.read_text())


def test_an_unknown_experiment_lists_the_known_ones():
    with pytest.raises(CourseError, match="its experiments: integer-one"):
        get_suggestion(get_lesson("day76"), "nope")


def test_expectable_outcomes_are_sandbox_outcomes():
    from course.tryout.sandbox import OUTCOMES

    assert set(EXPECTABLE) <= set(OUTCOMES)
    assert "crashed" not in EXPECTABLE and "not-run" not in EXPECTABLE
