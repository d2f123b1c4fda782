"""The quiz loader under hostile input (course/quiz/loader.py).

Every input either loads into a self-consistent ``Quiz`` or is refused
with a ``QuizError`` that names the file and, for each problem, the line
(or the question and field); nothing else escapes: no TypeError, no
RecursionError, no traceback.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from course.quiz.loader import load_quiz, parse_quiz
from course.quiz.model import QuizError
from course.quiz.release import dumps_quiz

from ._util import ROOT, assert_located, budget, mutated_bytes, mutated_lines, seen

QUIZZES = {
    name: (ROOT / "content" / "quizzes" / f"{name}.toml").read_text("utf-8") for name in ("day76", "day78")
}
FAKE = Path("content/quizzes/under-test.toml")
# Problems that concern the whole file, so a missing line number is right.
WHOLE_FILE = ("[quiz] table", "[[questions]]", "nest too deeply", "end of document")


def check_outcome(text: str, path: Path) -> None:
    try:
        quiz = parse_quiz(text, path)
    except QuizError as e:
        assert_located(e, path, QuizError)
        assert e.problems
        for problem in e.problems:
            assert problem.path == path
            assert problem.message.strip()
            # A problem inside a question names the question; one that is
            # located has a line inside the file.
            if problem.line is not None:
                assert 1 <= problem.line <= max(1, len(text.splitlines()) + 1), problem
            else:
                # No line: a question problem names the question; otherwise
                # it is about the file as a whole.
                assert problem.question is not None or any(w in problem.message for w in WHOLE_FILE), problem
        return
    # Loaded: the object must be what the text says, and stable. Writing it
    # back out with its key and reading that gives the same quiz.
    assert quiz.questions
    assert len({q.id for q in quiz.questions}) == len(quiz.questions)
    again = parse_quiz(dumps_quiz(quiz, include_key=not quiz.released), path)
    assert again.version == quiz.version
    assert [q.key() for q in again.questions] == [q.key() for q in quiz.questions]


def test_the_shipped_quizzes_load():
    for name, text in QUIZZES.items():
        assert parse_quiz(text, FAKE).id == name


@budget("quiz_mutated")
@given(st.sampled_from(sorted(QUIZZES)).flatmap(lambda name: mutated_lines(QUIZZES[name])))
def test_mutated_quiz_loads_or_is_refused_with_a_place(text: str):
    seen("quiz_mutated")
    check_outcome(text, FAKE)


# Random TOML-ish text: keys, headers and values from the quiz vocabulary.
_WORDS = st.sampled_from(
    "[quiz]|[[questions]]|id|type|prompt|points|options|answer|answers|=|\"|'|[|]|{|}|,|\n| |single|multiple"
    '|numeric|text|line|day76|1|0|-1|nan|inf|true|#|\\u0000|\\|"""|\u202e|\x00'.split("|")
)


@budget("quiz_random_text")
@given(st.lists(_WORDS, max_size=80).map("".join) | st.text(max_size=300))
def test_random_text_never_escapes_as_a_traceback(text: str):
    seen("quiz_random_text")
    check_outcome(text, FAKE)


@budget("quiz_file_bytes")
@given(data=st.data())
def test_load_quiz_on_corrupted_bytes(scratch, data):
    seen("quiz_file_bytes")
    name = data.draw(st.sampled_from(sorted(QUIZZES)))
    raw = data.draw(mutated_bytes(QUIZZES[name].encode("utf-8")) | st.binary(max_size=200))
    path = scratch / "corrupt.toml"
    path.write_bytes(raw)
    try:
        quiz = load_quiz(path)
    except QuizError as e:
        assert_located(e, path, QuizError)
        return
    assert quiz.path == path


def test_missing_file_and_folder_are_refused(tmp_path):
    for path in (tmp_path / "nope.toml", tmp_path):
        try:
            load_quiz(path)
        except QuizError as e:
            assert_located(e, path, QuizError)
        else:
            raise AssertionError(f"{path} loaded")


def test_deep_nesting_is_refused_not_a_recursion_error():
    text = QUIZZES["day76"] + "\nextra = " + "[" * 5000 + "]" * 5000 + "\n"
    try:
        parse_quiz(text, FAKE)
    except QuizError as e:
        assert_located(e, FAKE, QuizError)
        assert "nest" in str(e)
    else:
        raise AssertionError("a 5000-deep array loaded")


def test_an_id_with_a_trailing_newline_is_refused():
    # `$` in a regex matches before a final newline; an id "day76\n" must not pass.
    text = QUIZZES["day76"].replace('id = "day76"', 'id = "day76\\n"', 1)
    try:
        parse_quiz(text, FAKE)
    except QuizError as e:
        assert_located(e, FAKE, QuizError)
        assert e.field == "id"
    else:
        raise AssertionError("quiz id 'day76\\n' was accepted")
