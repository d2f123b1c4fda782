from course.page import Page
from course.render import SnippetView
from course.snippets import parse_snippets


def test_rendered_snippet_has_real_line_numbers_and_notes():
    view = Page("day76").snippet("issue-tma")
    html = view._repr_html_()
    first, last = view.snippet.start, view.snippet.end
    assert f"lines {first}&ndash;{last}" in html
    assert f">{last}<" in html or f"{last} " in html  # pygments inline line numbers
    for note in view.notes:
        assert f"<b>{note.line}</b>" in html
    text = str(view)
    assert f"*{view.notes[0].line}" in text.replace(" ", "")


def test_hostile_note_text_is_escaped():
    from course.annotations import Note

    snip = parse_snippets("// snippet: a\nint x;\n// end snippet\n", "k.cu")["a"]
    evil = Note("a", "int x", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", 2)
    html = SnippetView(snip, (evil,))._repr_html_()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_line_numbers_sit_in_their_own_column_apart_from_the_code():
    from course.lessons import LESSONS
    from course.page import Page

    lesson = next(iter(LESSONS.values()))
    html = Page(lesson.id).snippet(lesson.snippets[0])._repr_html_()
    assert '<td class="linenos" style="text-align:right;padding-right:12px">' in html
    assert '<td class="code" style="text-align:left">' in html
