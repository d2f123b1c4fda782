from course.page import Page
from course.snippets import parse_snippets
from course.view.listing import SnippetView


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
    from course.view.notes import Note

    snip = parse_snippets("// snippet: a\nint x;\n// end snippet\n", "k.cu")["a"]
    evil = Note("a", "int x", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", 2)
    html = SnippetView(snip, (evil,))._repr_html_()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_line_numbers_sit_in_their_own_column_one_row_per_line_and_never_wrap():
    import re

    from course.lessons import LESSONS
    from course.page import Page

    lesson = next(iter(LESSONS.values()))
    view = Page(lesson.id).snippet(lesson.snippets[0])
    html = view._repr_html_()
    numbers = re.search(r"<pre class='course-linenos' style='([^']*)'>(.*?)</pre>", html, re.S)
    code = re.search(r"<pre class='course-code' style='([^']*)'>(.*)</pre>", html, re.S)
    assert numbers and code
    for style in (numbers.group(1), code.group(1)):
        # The two columns: one font, one line height, no wrapping and no word-break (issue 22, items 2-3).
        assert "white-space:pre;" in style and "word-break:normal" in style and "line-height:1.4" in style
        assert "font-size:var(--jp-code-font-size" in style
    assert "overflow-x:auto" in code.group(1)  # a long line scrolls inside the code column
    rows_n = re.findall(r"<span style='display:block[^']*'>", numbers.group(2))
    rows_c = re.findall(r"<span style='display:block;min-height[^']*'>", code.group(2))
    assert len(rows_n) == len(rows_c) == len(view.snippet.lines)
    assert [int(n) for n in re.findall(r">(\d+)</span>", numbers.group(2))] == [
        n for n, _ in view.snippet.numbered()
    ]


def test_listing_colours_are_the_themes_variables():
    from course.page import Page

    html = Page("day76").snippet("issue-tma")._repr_html_()
    assert "--jp-mirror-editor-keyword-color" in html and "--jp-cell-editor-background" in html
    assert "#f8f8f8" not in html and "background: #" not in html  # no fixed light colour (Dark theme)


def test_hidden_lines_are_not_in_the_listing_and_a_note_on_them_goes_too():
    from course.view.listing import Hidden
    from course.view.notes import Note

    snip = parse_snippets("// snippet: a\nint x;\nint secret = 42;\nint y;\n// end snippet\n", "k.cu")["a"]
    note = Note("a", "secret", "the answer is 42", "cite", 3)
    view = SnippetView(snip, (note,), (Hidden(3, 3, "the lines you write"),))
    html = view._repr_html_()
    assert "secret" not in html and "42" not in html and "the answer" not in html
    assert "… the lines you write (1 line) …" in html and "</span> y<span" in html
    assert "secret" not in str(view)
    shown = SnippetView(snip, (note,))._repr_html_()
    assert "secret" in shown and "the answer is 42" in shown  # a control: without the fold it is there


def test_a_comment_on_the_last_line_is_a_comment():
    # Day 89's "pingpong" snippet ends on a // line: it showed as two '/' operators and plain text.
    from course.view.listing import code_lines

    last = "// which the other gives only after its sync."
    rows = code_lines(f"int x;\n{last}")
    assert len(rows) == 2
    assert rows[1] == f"<span class='cx-c'>{last}</span>"
    assert code_lines(last) == [f"<span class='cx-c'>{last}</span>"]
    assert code_lines("int x;\n") == ["<span class='cx-k'>int</span> x<span class='cx-u'>;</span>"]
