"""The learner's copies: made once, never overwritten, reset keeps a backup, diffs that escape."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path

import pytest

from course._paths import repo_root
from course.errors import CourseError
from course.lessons import LESSONS, get_lesson
from course.tryout import workspace
from course.tryout.workspace import (
    DEFAULT_WORKSPACE,
    WORKSPACE_ENV,
    diff_html,
    experiment_copy,
    jupyterlab_link,
    learner_copy,
    unified_diff,
    workspace_root,
)

LESSON = get_lesson("day76")


@pytest.fixture
def ws(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "work"
    monkeypatch.setenv(WORKSPACE_ENV, str(root))
    return root


def test_the_default_workspace_is_in_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(WORKSPACE_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert workspace_root() == (tmp_path / Path(DEFAULT_WORKSPACE).name).resolve()


def test_the_environment_overrides_the_workspace(ws):
    assert workspace_root() == ws.resolve()


@pytest.mark.parametrize("inside", [".", "kernels", "notebooks/work"])
def test_a_workspace_inside_the_course_is_refused(monkeypatch, inside):
    monkeypatch.setenv(WORKSPACE_ENV, str(repo_root() / inside))
    with pytest.raises(CourseError, match="outside the course's own files"):
        workspace_root()


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_the_copy_is_made_from_the_lessons_kernel_on_first_use(ws, lesson_id):
    lesson = get_lesson(lesson_id)
    copy = learner_copy(lesson)
    assert copy.created and copy.backup is None
    assert copy.path == ws.resolve() / lesson.id / lesson.kernel_file
    assert copy.path.read_text() == lesson.kernel_path.read_text()
    assert not copy.changed and copy.diff() == ""
    assert "unchanged so far" in learner_copy(lesson).describe()


def test_an_edited_copy_is_never_overwritten(ws):
    path = learner_copy(LESSON).path
    path.write_text(path.read_text().replace("+ 1.0f;", "+ 2.0f;"))
    again = learner_copy(LESSON)
    assert not again.created
    assert "+ 2.0f;" in again.source() and again.changed
    assert "with your changes" in again.describe()


def test_an_existing_file_is_kept_even_when_it_appeared_first(ws):
    # Another page made it a moment ago: the exclusive create must not replace it.
    path = ws.resolve() / LESSON.id / LESSON.kernel_file
    path.parent.mkdir(parents=True)
    path.write_text("mine\n")
    copy = learner_copy(LESSON)
    assert not copy.created and path.read_text() == "mine\n"
    assert [p.name for p in path.parent.iterdir()] == [LESSON.kernel_file]  # no temporary file left


def test_reset_moves_the_old_copy_to_a_timestamped_backup_first(ws):
    path = learner_copy(LESSON).path
    path.write_text("my edit\n")
    fresh = learner_copy(LESSON, reset=True)
    assert fresh.created and fresh.path.read_text() == LESSON.kernel_path.read_text()
    assert fresh.backup is not None and fresh.backup.read_text() == "my edit\n"
    assert fresh.backup.parent == path.parent / "backups"
    assert re.fullmatch(r"tma_tile\.\d{8}-\d{6}\.cu", fresh.backup.name)
    assert "previous one is kept" in fresh.describe()


def test_two_resets_in_the_same_second_keep_both_backups(ws, monkeypatch):
    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 11, 30, 12, 0, 0)

    monkeypatch.setattr(workspace, "datetime", Frozen)
    path = learner_copy(LESSON).path
    path.write_text("first\n")
    b1 = learner_copy(LESSON, reset=True).backup
    path.write_text("second\n")
    b2 = learner_copy(LESSON, reset=True).backup
    assert b1 is not None and b2 is not None and b1 != b2
    assert b1.name == "tma_tile.20261130-120000.cu" and b2.name == "tma_tile.20261130-120000-2.cu"
    assert (b1.read_text(), b2.read_text()) == ("first\n", "second\n")


def test_reset_without_a_copy_just_makes_one(ws):
    copy = learner_copy(LESSON, reset=True)
    assert copy.created and copy.backup is None


def test_the_diff_shows_what_the_learner_changed(ws):
    copy = learner_copy(LESSON)
    copy.path.write_text(copy.path.read_text().replace("tile[r][c] + 1.0f;", "tile[r][c] + 1;"))
    diff = copy.diff()
    assert diff.startswith(f"--- kernels/{LESSON.kernel_file} (the lesson's)\n+++ {copy.path}\n")
    assert "-        out[(rowBase + r) * kGmemWidth + colBase + c] = tile[r][c] + 1.0f;" in diff
    assert "+        out[(rowBase + r) * kGmemWidth + colBase + c] = tile[r][c] + 1;" in diff


def test_unified_diff_of_equal_texts_is_empty():
    assert unified_diff("a\nb\n", "a\nb\n", "x", "y") == ""
    assert unified_diff("a", "b", "x", "y").endswith("+b\n")  # no newline at the end still ends a line


def _text(markup: str) -> str:
    import html
    import re

    return html.unescape(re.sub(r"<style>.*?</style>|<[^>]+>", "", markup, flags=re.S))


def test_the_side_by_side_diff_escapes_markup_and_bidi_controls():
    original = "int a;\nint b;\n"
    changed = "int a;\n<script>alert(1)</script> \u202e int b;\n"
    html = diff_html(original, changed, "kernels/k.cu", "/home/me/<k>.cu")
    assert "<script>" not in html and "<script>alert(1)</script>" in _text(html)
    assert "\u202e" not in html and "&lt;U+202E&gt;" in html
    assert "/home/me/&lt;k&gt;.cu" in html
    assert "class='n d-replace'" in html  # the changed line is coloured


def test_the_side_by_side_diff_shows_hunks_and_folds_unchanged_runs():
    import re

    lines = [f"line {i}" for i in range(100)]
    changed = list(lines)
    changed[10], changed[80] = "changed 10", "changed 80"
    html = diff_html("\n".join(lines), "\n".join(changed), "a", "b", context=2)
    folds = re.findall(r"<details class='course-diff-fold'[^>]*>(.*?)</details>", html, re.S)
    # Before the first hunk, between the two, after the last: each a closed <details>, in the
    # side-by-side view and again in the unified one (the page's width picks which shows).
    assert [re.search(r"(\d+) unchanged lines", f).group(1) for f in folds] == ["8", "65", "17"] * 2
    assert "line 50" in _text(folds[1]) and "line 50" not in _text(
        re.sub(r"<details.*?</details>", "", html, flags=re.S)
    )
    shown = _text(re.sub(r"<details.*?</details>", "", html, flags=re.S))
    assert "line 8" in shown and "line 82" in shown and "changed 10" in shown
    assert "<details open" not in html


def test_the_diff_hides_an_answer_on_both_sides():
    from course.view.listing import Hidden

    original = "a\nsecret answer\nb\nc\n"
    changed = "a\nsecret answer\nb\nC\n"
    html = diff_html(original, changed, "x", "y", hidden=(Hidden(2, 2, "the lines you write"),))
    assert "secret" not in html and "… the lines you write (1 line) …" in _text(html)
    assert "secret" in diff_html(original, changed, "x", "y")  # a control


def test_a_wrapped_diff_line_keeps_its_indentation():
    html = diff_html("x\n", "x\n        y = 1;\n", "a", "b")
    assert "padding-left:calc(12ch + 6px);text-indent:-12ch" in html  # 8 spaces + the hang of 4


def test_an_unchanged_copy_says_so(ws):
    assert "No changes" in learner_copy(LESSON).diff_html()


def test_experiment_copies_are_regenerated_and_a_hand_edit_is_kept(ws):
    first = experiment_copy(LESSON, "integer-one", "v1\n")
    assert first.created and first.path == ws.resolve() / LESSON.id / "experiments" / "integer-one.cu"
    same = experiment_copy(LESSON, "integer-one", "v1\n")
    assert not same.created and same.backup is None
    first.path.write_text("edited by hand\n")
    again = experiment_copy(LESSON, "integer-one", "v1\n")
    assert again.path.read_text() == "v1\n"
    assert again.backup is not None and again.backup.read_text() == "edited by hand\n"


@pytest.mark.parametrize("name", ["", "../escape", "Upper", "a b", "a/b"])
def test_experiment_names_cannot_leave_the_folder(ws, name):
    with pytest.raises(CourseError, match="experiment name"):
        experiment_copy(LESSON, name, "x")


def test_the_jupyterlab_link_is_relative_to_the_servers_root(tmp_path):
    path = tmp_path / "work" / "day76" / "my kernel.cu"
    servers = [
        {"root_dir": str(tmp_path / "elsewhere"), "base_url": "/"},
        {"root_dir": str(tmp_path), "base_url": "/user/ada"},
    ]
    assert jupyterlab_link(path, servers) == "/user/ada/lab/tree/work/day76/my%20kernel.cu"
    assert jupyterlab_link(path, [{"root_dir": str(tmp_path / "elsewhere"), "base_url": "/"}]) is None
    assert jupyterlab_link(path, []) is None


def test_running_servers_are_read_as_jupyter_server_reads_them(tmp_path, monkeypatch):
    """The server files read without importing jupyter_server.serverapp agree with its own reader."""
    import json
    import subprocess
    import sys

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    files = {
        "jpserver-1.json": {"pid": os.getpid(), "root_dir": "/srv/a", "base_url": "/"},
        "jpserver-2.json": {"pid": gone.pid, "root_dir": "/srv/gone", "base_url": "/"},
        "jpserver-3.json": {"root_dir": "/srv/no-pid"},
        "jpserver-4.json": "{ half written",
        "jupyter-5.json": {"pid": os.getpid(), "root_dir": "/srv/other-kind"},
    }
    for name, info in files.items():
        text = info if isinstance(info, str) else json.dumps(info)
        (tmp_path / name).write_text(text, "utf-8")
    mine = workspace._running_servers()
    assert [s["root_dir"] for s in mine] == ["/srv/a"]
    assert (tmp_path / "jpserver-2.json").exists(), "a stale file is not ours to delete"
    from jupyter_server.serverapp import list_running_servers

    assert list(list_running_servers()) == mine


def test_the_copy_says_where_it_is_in_html(ws, monkeypatch):
    monkeypatch.setattr(
        workspace, "_running_servers", lambda: [{"root_dir": str(ws.parent), "base_url": "/"}]
    )
    copy = learner_copy(LESSON)
    html = copy._repr_html_()
    assert f"href='/lab/tree/{ws.name}/{LESSON.id}/{LESSON.kernel_file}'" in html
    assert "opens in JupyterLab's editor" in html
    monkeypatch.setattr(workspace, "_running_servers", lambda: [])
    assert "outside the folder JupyterLab serves" in copy._repr_html_()


def test_the_course_script_serves_a_folder_holding_the_course_and_the_workspace(tmp_path, monkeypatch):
    """scripts/course.sh serves served_root(); the learner's files are then under it, with links (issue 22)."""
    from course.tryout.workspace import served_root, served_url, where_html

    course = tmp_path / "home" / "hopper-course"
    (course / "kernels").mkdir(parents=True)
    (course / "notebooks").mkdir()
    monkeypatch.setenv("COURSE_ROOT", str(course))
    monkeypatch.setenv("COURSE_WORKSPACE", str(tmp_path / "home" / "hopper-course-work"))
    assert served_root() == (tmp_path / "home").resolve()
    assert served_url("notebooks") == "/lab/tree/hopper-course/notebooks"
    mine = tmp_path / "home" / "hopper-course-work" / "day78" / "coding" / "core-offset.cu"
    server = {"root_dir": str(served_root()), "base_url": "/"}
    shown = where_html(mine, [server])
    assert "href='/lab/tree/hopper-course-work/day78/coding/core-offset.cu'" in shown
    # The notebooks' folder alone (what course.sh served before) does not hold the workspace.
    alone = where_html(mine, [{"root_dir": str(course / "notebooks"), "base_url": "/"}])
    assert "href" not in alone and "outside the folder JupyterLab serves" in alone


def test_a_region_new_in_a_step_is_shown_as_a_listing_not_half_a_diff():
    """Day 85 against Day 78: the constants region is new, so there is nothing on the left side:
    it is the page's listing (numbers column beside the code), the width of the page."""
    import re

    from course.lessons import LESSONS
    from course.view.diff import kernel_diff

    diff = kernel_diff(LESSONS["day78"], LESSONS["day84"], ("constants",))
    region = next(r for r in diff.regions if r.name == "constants")
    assert region.old is None and region.new is not None
    html = diff._repr_html_()
    assert "new in this step" in html and "course-diff'" not in html
    numbers = re.search(r"<pre class='course-linenos'[^>]*>(.*?)</pre>", html, re.S)
    assert numbers is not None
    assert [int(n) for n in re.findall(r">(\d+)</span>", numbers.group(1))] == [
        n for n, _ in region.new.numbered()
    ]


def test_a_deeply_indented_line_wraps_with_room_to_read():
    """The continuation of a wrapped line hangs at most _MAX_HANG columns in, however deep the line's
    own indentation (a 40-column one left 8 characters a row in half of a 1280 px page)."""
    import re

    from course.view.diff import _MAX_HANG, side_by_side

    deep = " " * 40 + "swizzledDesc(&s.a[stage][(cons * kMmaM + mi) * kWgmmaM * kBK + ks * kWgmmaK]),"
    html = side_by_side(["int a;", deep], ["int b;", deep.replace("a[", "b[")], "old.cu", "new.cu")
    hangs = [int(h) for h in re.findall(r"padding-left:calc\((\d+)ch", html)]
    assert hangs and max(hangs) == _MAX_HANG and min(hangs) == 4


def test_the_default_workspace_is_set_back_to_its_owner_alone_and_a_named_one_is_left(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("COURSE_WORKSPACE", raising=False)
    default = tmp_path / "hopper-course-work"
    assert workspace.workspace_root() == default.resolve() and not default.exists()  # reading makes nothing
    default.mkdir(mode=0o755)
    os.chmod(default, 0o755)
    workspace.workspace_root()
    assert default.stat().st_mode & 0o777 == 0o700
    named = tmp_path / "mine"
    named.mkdir()
    os.chmod(named, 0o755)
    monkeypatch.setenv("COURSE_WORKSPACE", str(named))
    workspace.workspace_root()
    assert named.stat().st_mode & 0o777 == 0o755  # the learner's choice, never changed


def test_below_a_width_the_diff_is_unified_and_no_token_is_split():
    """Issue 38: at 1024 px each half of a side-by-side diff held 12-27 characters, tokens split
    mid-word. The output holds both views; a container query shows the side-by-side one only where
    the output is SIDE_BY_SIDE_PX wide; code wraps between words only (a longer word scrolls)."""
    import re

    from course.view.diff import SIDE_BY_SIDE_PX, side_by_side

    html = side_by_side(["int a = 1;", "keep();", "old_call(TL_WAIT_EMPTY);"],
                        ["int a = 2;", "keep();", "new_call(TL_WAIT_EMPTY);", "added();"], "old.cu", "new.cu")  # fmt: skip
    assert f"@container (min-width:{SIDE_BY_SIDE_PX}px)" in html and "container-type:inline-size" in html
    assert "overflow-wrap:anywhere" not in html and "word-break:break-all" not in html
    assert "overflow-wrap:normal" in html
    unified = html[html.index("<div class='cx-unified'>") :]
    rows = [
        (m, _text(c)) for m, c in re.findall(r"<td class='m[^']*'>(.)</td>(<td class='c.*?</td>)", unified)
    ]
    assert rows == [
        ("-", "int a = 1;"), ("+", "int a = 2;"), (" ", "keep();"),
        ("-", "old_call(TL_WAIT_EMPTY);"), ("+", "new_call(TL_WAIT_EMPTY);"), ("+", "added();"),
    ]  # fmt: skip


def test_a_kernel_diff_is_a_summary_with_each_region_one_click_away():
    """Issue 38: Days 84, 86 and 87 opened with 10-19 screens of diff. Each changed region is one
    summary line (its name, lines removed and added) of a closed <details> holding its diff."""
    import re

    from course.lessons import LESSONS
    from course.view.diff import kernel_diff

    diff = kernel_diff(LESSONS["day84"], LESSONS["day86"])
    html = diff._repr_html_()
    changed = [r for r in diff.regions if r.changed]
    assert changed and len(changed) < len(diff.regions) + 1
    summaries = re.findall(r"<details class='course-region'[^>]*><summary[^>]*>(.*?)</summary>", html, re.S)
    assert [_text(t).split(":")[0] for t in summaries] == [r.name for r in changed if r.new is not None]
    for region, summary in zip((r for r in changed if r.new is not None), summaries, strict=True):
        removed, added = region.counts()
        if region.old is not None:
            assert f"{removed} line" in _text(summary) and f"{added} line" in _text(summary)
    assert "<details open" not in html and "<details class='course-region' open" not in html
    before_first = html[: html.index("<details")]
    assert "course-diff" not in before_first  # nothing of a diff above the summary lines
