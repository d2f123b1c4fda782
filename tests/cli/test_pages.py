"""`python -m course pages DEST`: copies the pages out, again and again, never over a learner's edit."""

from __future__ import annotations

import json

import pytest

from course.cli import main
from course.cli.pages import MANIFEST, copy_pages
from course.errors import CourseError


@pytest.fixture
def shipped(tmp_path):
    src = tmp_path / "shipped"
    src.mkdir()
    (src / "a.ipynb").write_text('{"cells": ["a"]}')
    (src / "b.ipynb").write_text('{"cells": ["b"]}')
    return src


def test_pages_copies_every_page_and_is_idempotent(tmp_path, capsys):
    dest = tmp_path / "mine"
    assert main(["pages", str(dest)]) == 0
    first = {p.name: p.read_bytes() for p in dest.glob("*.ipynb")}
    assert "day80_pipeline.ipynb" in first and len(first) >= 9
    assert "copied: " in capsys.readouterr().out
    assert main(["pages", str(dest)]) == 0
    said = capsys.readouterr().out
    assert "already up to date: " in said and "copied:" not in said
    assert {p.name: p.read_bytes() for p in dest.glob("*.ipynb")} == first
    assert set(json.loads((dest / MANIFEST).read_text())["pages"]) == set(first)


def test_an_edited_page_is_kept_and_an_unedited_one_updated(shipped, tmp_path):
    dest = tmp_path / "mine"
    assert copy_pages(dest, shipped).copied == ["a.ipynb", "b.ipynb"]
    (dest / "a.ipynb").write_text('{"cells": ["a", "my notes"]}')  # the learner's edit
    (shipped / "a.ipynb").write_text('{"cells": ["a2"]}')  # a new version of the course
    (shipped / "b.ipynb").write_text('{"cells": ["b2"]}')
    done = copy_pages(dest, shipped)
    assert done.kept == ["a.ipynb"] and done.updated == ["b.ipynb"]
    assert (dest / "a.ipynb").read_text() == '{"cells": ["a", "my notes"]}'
    assert (dest / "b.ipynb").read_text() == '{"cells": ["b2"]}'
    again = copy_pages(dest, shipped)  # the edit stays the learner's on every later run
    assert again.kept == ["a.ipynb"] and again.current == ["b.ipynb"]
    assert (dest / "a.ipynb").read_text() == '{"cells": ["a", "my notes"]}'


def test_a_page_that_was_there_before_is_not_overwritten(shipped, tmp_path):
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "a.ipynb").write_text("someone else's page")
    (dest / "notes.txt").write_text("mine")
    done = copy_pages(dest, shipped)
    assert done.kept == ["a.ipynb"] and done.copied == ["b.ipynb"]
    assert (dest / "a.ipynb").read_text() == "someone else's page" and (
        dest / "notes.txt"
    ).read_text() == "mine"


def test_a_broken_manifest_or_a_file_as_dest_is_one_message(shipped, tmp_path, capsys):
    dest = tmp_path / "mine"
    copy_pages(dest, shipped)
    (dest / MANIFEST).write_text("{not json")
    with pytest.raises(CourseError, match="cannot read what was last copied"):
        copy_pages(dest, shipped)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["pages", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is a file, not a folder" in err and "Traceback" not in err
