"""The Day 78 annotation exercise: the key resolves against the current kernel,
checking is right about right, wrong and missed marks, broken files fail
clearly, and the widget works without a browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course.errors import CourseError
from course.exercises.annotation import (
    NONE,
    ExerciseError,
    check_marks,
    exercise_path,
    exercise_widget,
    load_exercise,
)
from course.lessons import get_lesson
from course.snippets import load_snippets

DAY78 = exercise_path("day78")


@pytest.fixture(scope="module")
def exercise():
    return load_exercise(DAY78)


@pytest.fixture(scope="module")
def key(exercise):
    return {item.line: item.role for item in exercise.items if item.role != NONE}


# --- the key against the kernel ---------------------------------------------------------------
def test_every_anchor_resolves_to_exactly_one_line_of_the_current_kernel(exercise):
    snippets = load_snippets(get_lesson("day78").kernel_path)
    lines = get_lesson("day78").kernel_path.read_text(encoding="utf-8").splitlines()
    for item in exercise.items:
        assert snippets[item.region].find(item.anchor) == item.line  # raises AnchorError on 0 or 2+
        assert lines[item.line - 1] == item.text
        anchor = item.anchor
        assert item.text.startswith(anchor) if anchor[:1].isspace() else anchor in item.text


def test_the_exercise_covers_the_pipeline_and_descriptor_regions(exercise):
    assert [s.name for s in exercise.snippets] == ["descriptor", "pipeline"]
    used = {item.role for item in exercise.items}
    assert {role.id for role in exercise.roles} <= used | {NONE}  # no role is a dead option
    for needed in (
        "issues-wgmma",
        "waits",
        "fence",
        "producer-copy",
        "commit",
        "barrier-prologue",
        "barrier-kstep",
    ):
        assert needed in used


def test_the_two_barriers_and_the_two_role_branches_are_told_apart(exercise):
    by_role = {}
    for item in exercise.items:
        by_role.setdefault(item.role, []).append(item)
    assert [i.text.strip() for i in by_role["barrier-prologue"] + by_role["barrier-kstep"]] == [
        "__syncthreads();"
    ] * 2
    assert by_role["barrier-prologue"][0].line < by_role["barrier-kstep"][0].line
    assert len({i.line for i in by_role["role-split"]}) == 2
    for item in by_role["barrier-prologue"] + by_role["barrier-kstep"]:
        assert item.separates


def test_markable_lines_start_statements(exercise):
    texts = {n: t.strip() for n, t in exercise.markable_lines()}
    assert not any(t.startswith("//") or t in {"}", "} else {"} for t in texts.values())
    assert "tileDesc(smB[s]) + off);" not in texts.values()  # continuation of the wgmma call
    assert "(uint64_t(1024 >> 4) << 32);" not in texts.values()  # continuation of the encode


# --- checking -----------------------------------------------------------------------------------
def test_a_correct_set_of_marks_scores_full(exercise, key):
    result = check_marks(exercise, key)
    assert result.full_marks
    assert result.score == result.total == len(key)
    assert "Full marks" in result.html()


def test_no_marks_misses_every_role(exercise, key):
    result = check_marks(exercise, {})
    assert result.score == 0 and not result.full_marks
    assert {v.line for v in result.verdicts if v.status == "missed"} == set(key)


def test_a_wrong_mark_is_reported_with_its_explanation(exercise, key):
    wait_line = next(i.line for i in exercise.items if i.role == "waits")
    marks = dict(key) | {wait_line: "fence"}
    result = check_marks(exercise, marks)
    (verdict,) = [v for v in result.verdicts if v.status != "right"]
    assert verdict.line == wait_line and verdict.status == "wrong"
    assert verdict.expected == "waits" and verdict.given == "fence"
    assert verdict.explanation == exercise.item_at(wait_line).explanation
    assert "Blocks until no committed wgmma-group is pending" in result.html()
    assert result.score == result.total - 1


def test_swapped_barriers_are_the_right_kind_with_the_wrong_separation(exercise, key):
    first = next(i for i in exercise.items if i.role == "barrier-prologue")
    second = next(i for i in exercise.items if i.role == "barrier-kstep")
    result = check_marks(exercise, dict(key) | {first.line: "barrier-kstep", second.line: "barrier-prologue"})
    wrong = {v.line: v for v in result.verdicts if v.status == "wrong"}
    assert set(wrong) == {first.line, second.line}
    assert wrong[first.line].explanation.startswith(
        f"Right kind, a barrier, but this one separates {first.separates}"
    )


def test_marking_a_line_that_has_no_role_is_wrong(exercise, key):
    loop = next(i for i in exercise.items if i.anchor.startswith("for (int kt"))
    result = check_marks(exercise, dict(key) | {loop.line: "issues-wgmma"})
    (verdict,) = [v for v in result.verdicts if v.status != "right"]
    assert verdict.expected == NONE and verdict.status == "wrong"
    assert result.score == result.total and not result.full_marks
    assert "marked line(s) with no role" in result.summary()


def test_result_html_escapes_code_and_text(exercise):
    loop = next(n for n, text in exercise.markable_lines() if "kt < kTiles" in text)
    role = next(r.id for r in exercise.roles if r.id != NONE)
    html = check_marks(exercise, {loop: role}).html()  # a line with no role, marked: listed as wrong
    assert "kt &lt; kTiles" in html and "kt < kTiles" not in html
    assert "smA[s]" in html


def test_result_lists_only_what_the_learner_must_read(exercise, key):
    result = check_marks(exercise, {})
    html = result.html()
    quiet = [v for v in result.verdicts if v.expected == NONE and v.status == "right"]
    assert quiet, "the exercise has lines with no role"
    assert html.count("<tr>") == 1 + sum(1 for v in result.verdicts if v not in quiet)
    assert "&#10004; right" not in html  # nothing right yet: unmarked no-role lines are not listed as right
    full = check_marks(exercise, dict(key)).html()
    assert "Full marks" in full and full.count("&#10004; right") == len(key)


def test_marks_on_unmarkable_lines_or_unknown_roles_are_refused(exercise, key):
    with pytest.raises(ExerciseError, match="not a line to mark"):
        check_marks(exercise, {1: "fence"})
    with pytest.raises(ExerciseError, match="unknown role 'magic'"):
        check_marks(exercise, {next(iter(key)): "magic"})


# --- broken exercise files -------------------------------------------------------------------
def broken(tmp_path: Path, old: str, new: str) -> Path:
    text = DAY78.read_text(encoding="utf-8")
    assert old in text, old
    path = tmp_path / "day78.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'role = "waits"',
            'role = "sleeps"',
            r"item \d+ \(anchor 'wgmma.wait_group.sync.aligned 0;'\): unknown role 'sleeps'",
        ),
        (
            'anchor = "const int s = kt & 1;"',
            'anchor = "const int s = kt % 2;"',
            r"matches no line of snippet 'pipeline'",
        ),
        (
            'anchor = "        __syncthreads();"',
            'anchor = "__syncthreads();"',
            r"matches 2 lines of snippet 'pipeline'",
        ),
        (
            'anchor = "wgmmaM64n64k16(acc, tileDesc(smA[s]) + off,"',
            'anchor = "tileDesc(smB[s]) + off);"',
            "does not start a statement",
        ),
        (
            "separates = \"the producer's stores into stage 0",
            "cite2 = \"the producer's stores into stage 0",
            r"unknown field\(s\) \['cite2'\]",
        ),
        (
            'regions = ["descriptor", "pipeline"]',
            'regions = ["descriptor", "pipelines"]',
            "region 'pipelines' is not a snippet",
        ),
        ('lesson = "day78"', 'lesson = "day99"', "no lesson named 'day99'"),
        ('title = "Annotate', 'title = 3  # "Annotate', "'title' must be non-empty text"),
        ('lesson = "day78"', "lesson = day78", "not valid TOML"),
        ('kind = "barrier"', 'kind = "fence"', "'kind' must be 'plain' or 'barrier'"),
    ],
)
def test_a_broken_exercise_file_gives_a_clear_error(tmp_path, old, new, message):
    path = broken(tmp_path, old, new)
    with pytest.raises(ExerciseError, match=message) as info:
        load_exercise(path)
    assert str(path) in str(info.value)  # the message names the file
    assert isinstance(info.value, CourseError)


def test_error_points_at_the_item_header_line(tmp_path):
    path = broken(tmp_path, 'role = "commit"', 'role = "commits"')
    with pytest.raises(ExerciseError) as info:
        load_exercise(path)
    header = info.value.line
    assert header is not None
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[header - 1] == "[[item]]"
    assert 'role = "commits"' in "\n".join(lines[header : header + 4])


def test_a_barrier_without_separates_is_refused(tmp_path):
    path = broken(tmp_path, "separates = \"the consumer's reads", "# separates = \"the consumer's reads")
    with pytest.raises(ExerciseError, match="a barrier needs 'separates'"):
        load_exercise(path)


def test_two_items_on_one_line_are_refused(tmp_path):
    path = broken(tmp_path, 'anchor = "const int s = kt & 1;"', 'anchor = "loadStage(0, 0);"')
    with pytest.raises(ExerciseError, match="already has an item"):
        load_exercise(path)


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ExerciseError, match="cannot read the exercise"):
        load_exercise(tmp_path / "nope.toml")


# --- the widget, headless -----------------------------------------------------------------------
@pytest.fixture
def own_workspace(tmp_path, monkeypatch):
    """An empty workspace: marks another test saved to progress are never restored here."""
    monkeypatch.setenv("COURSE_WORKSPACE", str(tmp_path / "workspace"))
    monkeypatch.delenv("COURSE_LEARNER", raising=False)
    return tmp_path / "workspace"


def test_widget_checks_marks_headless(exercise, key, own_workspace):
    widget = exercise_widget("day78")
    assert set(widget.dropdowns) == {n for n, _ in exercise.markable_lines()}
    widget.check_button.click()
    assert "0 of 14 roles right" in widget.result.value
    for line, role in key.items():
        widget.dropdowns[line].value = role
    widget.check_button.click()
    assert "Full marks" in widget.result.value
    wait_line = next(i.line for i in exercise.items if i.role == "waits")
    widget.dropdowns[wait_line].value = "commit"
    widget.check_button.click()
    assert re.search(
        r"expected: waits for the tensor cores; you chose: commits the issued wgmmas", widget.result.value
    )


def test_a_chosen_role_the_closed_drop_down_cuts_is_shown_in_full_under_its_line(exercise, own_workspace):
    """Issue 38: the 13em drop-down cut long role names; the column stays narrow (the code keeps
    its width) and the chosen name is written out under the line, only where it would be cut."""
    from course.exercises.annotation import NONE, SHOWN_CHARS

    widget = exercise_widget("day78")
    long = next(r for r in exercise.roles if len(r.label) > SHOWN_CHARS)
    short = next(r for r in exercise.roles if r.id != NONE and len(r.label) <= SHOWN_CHARS)
    line = next(iter(widget.dropdowns))
    caption = widget.captions[line]
    assert caption.layout.display == "none" and caption.value == ""
    widget.dropdowns[line].value = long.id
    assert caption.layout.display == "block" and f"line {line}: {long.label}" in caption.value
    widget.dropdowns[line].value = short.id  # shown whole by the drop-down itself
    assert caption.layout.display == "none" and caption.value == ""
    widget.dropdowns[line].value = long.id
    widget.dropdowns[line].value = NONE
    assert caption.layout.display == "none"
    listing = widget.children[1]
    assert caption in listing.children  # in the listing, under its line's row
    row = listing.children[listing.children.index(caption) - 1]
    assert widget.dropdowns[line] in row.children


def test_widget_refuses_an_exercise_for_another_lesson():
    with pytest.raises(ExerciseError, match="is for day78, not day76"):
        exercise_widget("day76", DAY78)
