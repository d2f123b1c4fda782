"""One TOML reader on Python 3.10 to 3.13: tomllib or tomli, the same refusals.

Python 3.11+ parses with ``tomllib``; 3.10 with ``tomli`` (course/_toml.py).
Both paths run here on any interpreter: the tomli one by putting tomli in
tomllib's place (``force_tomli``), and the import itself by loading a copy
of course/_toml.py under a Python 3.10 ``sys.version_info``. The two ways a
parser says where an error is (fields in tomli 2.1+ and tomllib 3.14+, the
end of the message in tomllib 3.11 to 3.13) are each tested too, whatever
this interpreter's tomllib does.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course._toml as course_toml
from course._toml import TomlSyntaxError, loads, read_toml
from course.errors import CourseError
from course.quiz.grade import load_overrides
from course.quiz.loader import parse_quiz
from course.quiz.model import QuizError

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# The test extra installs tomli on every Python (pyproject.toml); a GPU
# machine's own environment may lack it.
tomli = pytest.importorskip("tomli", reason="tomli is not installed (pip install -e '.[test]' brings it)")

ROOT = Path(__file__).resolve().parents[1]

# Invalid TOML, one per kind of place: a line and column, the end of the
# document, CRLF line ends, a byte-order mark, a control character.
BAD = {
    "unclosed array table": ("[[note]\n", 1, 7),
    "missing value": ("a = 1\nb = \n", 2, 5),
    "redefined key": ("a = 1\na = 2\n", 2, 6),
    "redefined table": ("[a]\n[a]\n", 2, 3),
    "two statements on a line": ("a = 1 b = 2", 1, 7),
    "crlf": ("a = 1\r\nb = @\r\n", 2, 5),
    "byte-order mark": ("\ufeffa = 1", 1, 1),
    "control character": ("k = '\x01'\n", 1, 6),
    "newline in an inline table (TOML 1.1)": ("a = {b = 1,\n c = 2}\n", 1, 12),
    "\\e escape (TOML 1.1)": ('a = "\\e"\n', 1, 8),
    "unterminated string": ('a = "x', None, None),
    "unterminated array": ("x = [1,\n", None, None),
    "key at the very end": ("x = 1\n\n\n  y", None, None),
}


@pytest.fixture
def force_tomli(monkeypatch):
    """The course reads TOML with tomli, as it does on Python 3.10."""
    monkeypatch.setattr(course_toml, "tomllib", tomli)


class _MessageOnlyError(ValueError):
    """A TOMLDecodeError as tomllib 3.11 to 3.13 raise it: no lineno/colno, only the message."""


class _MessageOnlyParser:
    TOMLDecodeError = _MessageOnlyError

    @staticmethod
    def loads(text: str) -> dict:
        try:
            return tomli.loads(text)
        except tomli.TOMLDecodeError as e:
            raise _MessageOnlyError(str(e)) from None


def _outcome(text: str) -> object:
    try:
        return ("loaded", loads(text))
    except TomlSyntaxError as e:
        return ("refused", e.message, e.line, e.column, e.at_end, str(e))
    except RecursionError:
        return ("too deep",)


def _both(monkeypatch, fn):
    """fn() with this Python's tomllib, then with tomli in its place."""
    first = fn()
    with monkeypatch.context() as m:
        m.setattr(course_toml, "tomllib", tomli)
        second = fn()
    return first, second


def test_the_pinned_tomli_is_what_python_3_10_gets():
    assert tuple(int(p) for p in tomli.__version__.split(".")[:2]) < (2, 4)


@pytest.mark.parametrize("name", BAD)
@pytest.mark.parametrize("parser", ["tomllib", "tomli", "message only"])
def test_every_parser_locates_the_error_the_same_way(monkeypatch, name, parser):
    text, line, column = BAD[name]
    monkeypatch.setattr(
        course_toml,
        "tomllib",
        {"tomllib": tomllib, "tomli": tomli, "message only": _MessageOnlyParser}[parser],
    )
    with pytest.raises(TomlSyntaxError) as info:
        loads(text)
    e = info.value
    assert (e.line, e.column) == (line, column)
    assert e.at_end == (line is None)
    assert "(at " not in e.message and e.message.strip()
    assert e.detail == (
        f"{e.message} (at end of document)" if line is None else f"{e.message} (column {column})"
    )


@pytest.mark.parametrize("name", BAD)
def test_the_refusals_read_the_same_with_tomllib_and_tomli(monkeypatch, tmp_path, name):
    text = BAD[name][0]
    f = tmp_path / "notes.toml"
    f.write_bytes(text.encode())

    def refusals():
        out = [_outcome(text)]
        with pytest.raises(CourseError) as info:
            read_toml(f, "the annotations")
        out.append(str(info.value))
        with pytest.raises(QuizError) as quiz_info:
            parse_quiz(text, f)
        out.append([(p.path, p.line, p.message) for p in quiz_info.value.problems])
        overrides = tmp_path / "over.toml"
        overrides.write_bytes(text.encode())
        with pytest.raises(CourseError) as over_info:
            load_overrides(overrides, None)  # type: ignore[arg-type]  # refused before the quiz is used
        out.append(str(over_info.value))
        return out

    with_tomllib, with_tomli = _both(monkeypatch, refusals)
    assert with_tomllib == with_tomli
    line = BAD[name][1]
    read_message = with_tomllib[1]
    assert read_message.startswith(f"{f}:{line}: not valid TOML: " if line else f"{f}: not valid TOML: ")
    assert with_tomllib[2][0][1] == line


def test_a_valid_file_reads_the_same(monkeypatch):
    text = (ROOT / "content" / "quizzes" / "day76.toml").read_text(encoding="utf-8")
    a, b = _both(monkeypatch, lambda: loads(text))
    assert a == b == tomllib.loads(text)


def test_too_deep_is_a_whole_file_refusal_with_either_parser(monkeypatch, tmp_path):
    f = tmp_path / "deep.toml"
    f.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")

    def refusal():
        with pytest.raises(CourseError) as info:
            read_toml(f, "the exercise")
        return str(info.value)

    a, b = _both(monkeypatch, refusal)
    assert a == b == f"{f}: not valid TOML here: arrays or tables nest too deeply"


_PIECES = st.sampled_from(
    ["[quiz]", "[[questions]]", "a", "b.c", "=", " ", "\n", "\r\n", '"', "'", '"""', "[", "]", "{", "}", ","]
    + ["1", "-0.5", "true", "1979-05-27", "07:32:00", "#", "\\", "\\e", "\t", "\x01", "é"]
)


# Derandomized under CI, as the hardening suite is (tests/hardening/conftest.py).
@settings(max_examples=300, deadline=None, derandomize=bool(os.environ.get("CI")))
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_any_text_loads_or_is_refused_the_same_way_by_both(text):
    first = _outcome(text)
    saved = course_toml.tomllib
    course_toml.tomllib = tomli
    try:
        second = _outcome(text)
    finally:
        course_toml.tomllib = saved
    assert first == second


def test_on_python_3_10_the_import_is_tomli(monkeypatch):
    # Load a second copy of the module as Python 3.10 would run it.
    monkeypatch.setattr(sys, "version_info", (3, 10, 14, "final", 0))
    spec = importlib.util.spec_from_file_location("course._toml_on_310", ROOT / "course" / "_toml.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.undo()
    assert module.tomllib is tomli
    with pytest.raises(module.TomlSyntaxError) as info:
        module.loads("[[note]\n")
    assert (info.value.line, info.value.column) == (1, 7)
