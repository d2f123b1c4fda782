import pytest

from course.errors import AnchorError, CourseError
from course.lessons import LESSONS, get_lesson
from course.view.notes import load_notes


@pytest.mark.parametrize("lesson", LESSONS.values(), ids=lambda lesson: lesson.id)
def test_every_note_resolves_to_one_line_of_its_snippet(lesson):
    notes = load_notes(lesson)
    # every region the page shows is annotated
    assert all(notes[name] for name in lesson.snippets)
    for name, items in notes.items():
        lines = [n.line for n in items]
        assert len(set(lines)) == len(lines), f"two notes on one line in {name}"
        for note in items:
            text = lesson.kernel_path.read_text().splitlines()[note.line - 1]
            assert note.anchor.strip() in text


def _write(tmp_path, body):
    f = tmp_path / "notes.toml"
    f.write_text(body)
    return f


def test_anchor_that_matches_nothing_names_file_note_and_line(tmp_path):
    f = _write(
        tmp_path, '# c\n\n[[note]]\nsnippet = "issue-tma"\nanchor = "no such text"\ntext = "t"\ncite = "c"\n'
    )
    with pytest.raises(AnchorError) as info:
        load_notes(get_lesson("day76"), f)
    assert str(info.value).startswith(f"{f}:3: note 1: anchor 'no such text' matches no line")


def test_ambiguous_anchor_is_refused(tmp_path):
    f = _write(tmp_path, '[[note]]\nsnippet = "issue-tma"\nanchor = "token"\ntext = "t"\ncite = "c"\n')
    with pytest.raises(AnchorError, match="matches .* lines"):
        load_notes(get_lesson("day76"), f)


@pytest.mark.parametrize(
    "body, words",
    [
        ('[[note]]\nsnippet = "nope"\nanchor = "a"\ntext = "t"\ncite = "c"\n', "snippet 'nope' is not in"),
        (
            '[[note]]\nsnippet = "issue-tma"\nanchor = "bar.wait"\ntext = "t"\ncite = "c"\nextra = 1\n',
            "unknown field",
        ),
        (
            '[[note]]\nsnippet = "issue-tma"\nanchor = "bar.wait"\ntext = ""\ncite = "c"\n',
            "'text' must be non-empty",
        ),
        ("[[note]\n", "not valid TOML"),
        ('title = "x"\n', "unknown top-level"),
    ],
)
def test_broken_annotation_files(tmp_path, body, words):
    with pytest.raises(CourseError, match=words):
        load_notes(get_lesson("day76"), _write(tmp_path, body))
