import pytest

from course.errors import AnchorError, SnippetError
from course.lessons import LESSONS
from course.snippets import get_snippet, load_snippets, parse_snippets

GOOD = """line one
// snippet: alpha
int a = 1;
int b = 2;
// end snippet
    // snippet: beta
    x();
    // end snippet
"""


def test_parse_keeps_file_line_numbers():
    snips = parse_snippets(GOOD, "k.cu")
    assert snips["alpha"].start == 3 and snips["alpha"].end == 4
    assert snips["alpha"].numbered() == [(3, "int a = 1;"), (4, "int b = 2;")]
    assert snips["beta"].lines == ("    x();",)


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("// snippet: a\nx\n", 1, "never closed"),
        ("// snippet: a\n// snippet: b\nx\n// end snippet\n", 2, "cannot nest"),
        ("// snippet: a\nx\n// end snippet\n// snippet: a\ny\n// end snippet\n", 4, "defined twice"),
        ("// snippet: a\n\n   \n// end snippet\n", 1, "empty"),
        ("x\n// end snippet\n", 2, "no open region"),
        ("// snippet: bad name!\nx\n// end snippet\n", 1, "snippet name"),
    ],
)
def test_malformed_regions_name_file_line_and_region(text, line, words):
    with pytest.raises(SnippetError) as info:
        parse_snippets(text, "kernels/k.cu")
    err = info.value
    assert err.line == line
    assert words in str(err)
    assert str(err).startswith(f"kernels/k.cu:{line}: ")


def test_unknown_name_lists_the_known_ones(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(GOOD)
    with pytest.raises(SnippetError, match=r"no snippet named 'gamma' \(this file has: alpha, beta\)"):
        get_snippet(f, "gamma")


def test_unreadable_file_is_a_clear_error(tmp_path):
    with pytest.raises(SnippetError, match="cannot read"):
        load_snippets(tmp_path / "missing.cu")
    bad = tmp_path / "bin.cu"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SnippetError, match="not UTF-8"):
        load_snippets(bad)


def test_anchor_must_match_exactly_one_line():
    s = parse_snippets("// snippet: a\n  f();\n  f();\n  g();\n    f();\n// end snippet\n")["a"]
    assert s.find("g();") == 4
    with pytest.raises(AnchorError, match="matches 3 lines"):
        s.find("f();")
    with pytest.raises(AnchorError, match="matches no line"):
        s.find("h();")
    # A leading space anchors at the start of the line: indentation counts.
    assert s.find("    f();") == 5
    with pytest.raises(AnchorError, match="matches 2 lines"):
        s.find("  f();")


@pytest.mark.parametrize("lesson", LESSONS.values(), ids=lambda lesson: lesson.id)
def test_every_lesson_kernel_has_the_regions_its_page_shows(lesson):
    snips = load_snippets(lesson.kernel_path)
    assert lesson.snippets and set(lesson.snippets) <= set(snips)


def test_every_region_of_every_kernel_is_shown_by_some_lesson():
    shown: dict[str, set[str]] = {}
    for lesson in LESSONS.values():
        shown.setdefault(lesson.kernel_file, set()).update(lesson.snippets)
    for lesson in LESSONS.values():
        assert set(load_snippets(lesson.kernel_path)) == shown[lesson.kernel_file], lesson.kernel_file
