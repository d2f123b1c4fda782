"""Reading quiz files (course/quiz/loader.py), the shipped quizzes included."""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course.lessons import LESSONS
from course.quiz.loader import load_quiz, parse_quiz
from course.quiz.model import (
    QUESTION_TYPES,
    MultipleSelect,
    Numeric,
    QuizError,
    ShortText,
    SingleChoice,
    WhichLine,
)

from ._data import SAMPLE_QUIZ

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line number of the nth line containing ``needle``."""
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hits[nth - 1]


def problem(path: Path) -> QuizError:
    with pytest.raises(QuizError) as info:
        load_quiz(path)
    return info.value


# ---- the sample quiz ---------------------------------------------------------


def test_sample_quiz_parses_into_typed_questions(sample_quiz):
    quiz = load_quiz(sample_quiz)
    assert [type(q) for q in quiz.questions] == [SingleChoice, MultipleSelect, Numeric, ShortText, WhichLine]
    assert quiz.id == "day76" and quiz.lesson == "day76" and not quiz.released
    assert quiz.max_points == 6.0
    numeric = quiz.question("n1")
    assert (numeric.answer, numeric.rtol, numeric.atol, numeric.unit) == (16384.0, 0.0, 0.5, "bytes")


def test_line_key_is_resolved_through_the_snippet(sample_quiz):
    q = load_quiz(sample_quiz).question("l1")
    assert isinstance(q, WhichLine)
    assert q.lines == frozenset({5})  # KERNEL_76 line 5 holds barrier_arrive_tx
    assert q.listing[0] == (3, "    BlockBarrier::arrival_token token;")
    assert q.fraction(5) == 1.0


def test_numeric_and_text_defaults(write_quiz):
    text = SAMPLE_QUIZ.replace("rtol = 0\natol = 0.5\n", "")
    quiz = load_quiz(write_quiz(text))
    n, t = quiz.question("n1"), quiz.question("t1")
    assert n.rtol == 1e-9 and n.atol == 0.0
    assert t.case_sensitive is False and t.spaces == "collapse"
    assert quiz.question("m1").partial == "net-correct"


def test_a_kernel_edit_moves_the_key_with_the_anchor(sample_quiz, course_root):
    kernel = course_root / "kernels" / "tma_tile.cu"
    kernel.write_text("// a new first line\n// and a second\n" + kernel.read_text())
    q = load_quiz(sample_quiz).question("l1")
    assert q.lines == frozenset({7})
    assert q.fraction(5) == 0.0  # the old line number is no longer the answer


def test_a_kernel_edit_that_removes_the_anchor_fails_the_load(sample_quiz, course_root):
    kernel = course_root / "kernels" / "tma_tile.cu"
    kernel.write_text(kernel.read_text().replace("barrier_arrive_tx(bar, 1", "barrier_arrive_tx(bar, 2"))
    err = problem(sample_quiz)
    assert err.question == "l1" and err.field == "anchors"
    assert err.line == line_of(SAMPLE_QUIZ, "anchors = ")
    assert "matches no line" in str(err)


def test_an_ambiguous_anchor_fails_the_load(write_quiz):
    path = write_quiz(SAMPLE_QUIZ.replace('anchors = ["barrier_arrive_tx(bar, 1"]', 'anchors = ["token ="]'))
    err = problem(path)
    assert err.field == "anchors" and "matches 2 lines" in str(err)


def test_two_anchors_on_one_line_are_refused(write_quiz):
    path = write_quiz(
        SAMPLE_QUIZ.replace(
            'anchors = ["barrier_arrive_tx(bar, 1"]', 'anchors = ["barrier_arrive_tx(bar, 1", "sizeof(tile)"]'
        )
    )
    assert "both match line 5" in str(problem(path))


def test_snippet_must_exist_and_be_shown_by_the_lesson(write_quiz):
    err = problem(write_quiz(SAMPLE_QUIZ.replace('snippet = "issue-tma"', 'snippet = "nowhere"')))
    assert err.field == "snippet" and "issue-tma, plain-store, encode-map" in str(err)


def test_a_missing_kernel_is_a_quiz_error_on_the_question(sample_quiz, course_root):
    (course_root / "kernels" / "tma_tile.cu").unlink()
    err = problem(sample_quiz)
    assert (err.question, err.field) == ("l1", "snippet")
    assert "cannot read the snippets of day76" in str(err)


def test_a_line_question_can_name_another_lesson(write_quiz):
    text = SAMPLE_QUIZ.replace('snippet = "issue-tma"', 'lesson = "day78"\nsnippet = "gate"').replace(
        'anchors = ["barrier_arrive_tx(bar, 1"]', 'anchors = ["prop.major != 9"]'
    )
    q = load_quiz(write_quiz(text)).question("l1")
    assert q.lesson == "day78" and q.lines == frozenset({9})


# ---- errors name the file, the line, the question and the field ---------------


def test_toml_syntax_error_carries_its_line(write_quiz):
    text = SAMPLE_QUIZ.replace('prompt = "How many bytes?"', 'prompt = "How many bytes?')
    err = problem(write_quiz(text))
    assert err.line == line_of(text, 'prompt = "How many bytes?')
    assert "not valid TOML" in str(err)
    assert str(err).startswith(str(err.path))


def test_unknown_field_is_refused_with_a_suggestion_and_its_line(write_quiz):
    text = SAMPLE_QUIZ.replace("rtol = 0\n", "rtoll = 0\n")
    path = write_quiz(text)
    err = problem(path)
    assert (err.question, err.field) == ("n1", "rtoll")
    assert err.line == line_of(text, "rtoll")
    message = str(err)
    assert f"{path}:{err.line}: question 'n1', field 'rtoll': unknown field 'rtoll'" in message
    assert "did you mean 'rtol'?" in message


def test_duplicate_ids_are_refused_at_the_second_question(write_quiz):
    text = SAMPLE_QUIZ.replace('id = "m1"', 'id = "s1"')
    err = problem(write_quiz(text))
    assert err.question == "s1" and err.field == "id"
    assert err.line == line_of(text, 'id = "s1"', nth=2)
    assert "used twice" in str(err) and f"at line {line_of(text, '[[questions]]')}" in str(err)


def test_schema_error_without_the_field_line_points_at_the_header(write_quiz):
    text = SAMPLE_QUIZ.replace('answer = "b"\n', "")
    err = problem(write_quiz(text))
    assert (err.question, err.field) == ("s1", "answer")
    assert err.line == line_of(text, "[[questions]]", nth=1)
    assert "answer is required" in str(err)


@pytest.mark.parametrize(
    ("old", "new", "question", "field", "words"),
    [
        ('answer = "b"', 'answer = "z"', "s1", "answer", "one of the option ids a, b, c"),
        ('answers = ["a", "b"]', 'answers = ["a", "x"]', "m1", "answers", "option id of a, b, c, d"),
        ('answers = ["a", "b"]', "answers = []", "m1", "answers", "non-empty array"),
        (
            'partial = "net-correct"',
            'partial = "some"',
            "m1",
            "partial",
            "off, net-correct, coverage, each-answer",
        ),
        ("answer = 16384", 'answer = "16384"', "n1", "answer", "finite number"),
        ("atol = 0.5", "atol = -1", "n1", "atol", "0 or more"),
        ("atol = 0.5", "atol = nan", "n1", "atol", "finite number"),
        ('id = "t1"', 'id = "T 1"', "T 1", "id", "lower-case letters"),
        ('type = "text"', 'type = "essay"', "t1", "type", "single, multiple, numeric, text, line"),
        (
            'accept = ["SECRET-ANSWER.bulk", "secret answer two"]',
            'accept = ["a b", "A  B"]',
            "t1",
            "accept",
            "the same once normalised",
        ),
        ("points = 2", "points = 0", "m1", "points", "greater than 0"),
        ("points = 2", "points = true", "m1", "points", "must be a number (got a boolean"),
        ('prompt = "Pick a and b."', 'prompt = "   "', "m1", "prompt", "non-empty"),
        ('reference = "REF-S1"\n', "", "s1", "reference", "reference is required"),
        ('reference = "REF-S1"', 'reference = "See (#anchor)"', "s1", "reference", "follows no document"),
        ('explanation = "EXPLAIN-S1 because b."\n', "", "s1", "explanation", "explanation is required"),
        ('{ id = "c", text = "Option C" },', '{ id = "b", text = "Option C" },', "s1", "options", "twice"),
        (
            '{ id = "c", text = "Option C" },',
            '{ id = "c", text = "`Option  B`" },',
            "s1",
            "options",
            "options 'b' and 'c' read the same",
        ),
        (
            '{ id = "c", text = "Option C" },',
            '{ id = "c", text = "C", feedback = "x" },',
            "s1",
            "options",
            "unknown field 'feedback'",
        ),
    ],
)
def test_schema_errors_name_question_field_and_line(write_quiz, old, new, question, field, words):
    assert old in SAMPLE_QUIZ
    text = SAMPLE_QUIZ.replace(old, new, 1)
    err = problem(write_quiz(text))
    assert (err.question, err.field) == (question, field)
    assert words in str(err)
    assert err.line is not None and 1 <= err.line <= len(text.splitlines())


def test_the_retired_integer_forms_field_is_refused_with_what_to_do(write_quiz):
    text = SAMPLE_QUIZ.replace('unit = "bytes"', 'unit = "bytes"\ninteger_forms = ["hex", "bin"]')
    err = problem(write_quiz(text))
    assert (err.question, err.field) == ("n1", "integer_forms")
    assert "unknown field 'integer_forms'" in str(err) and "delete the line" in str(err)
    assert err.line == line_of(text, "integer_forms =")


def test_every_bad_question_is_reported_together(write_quiz):
    text = SAMPLE_QUIZ.replace('answer = "b"', 'answer = "z"').replace("rtol = 0", "rtoll = 0")
    err = problem(write_quiz(text))
    assert [(p.question, p.field) for p in err.problems] == [("s1", "answer"), ("n1", "rtoll")]
    assert len(str(err).splitlines()) == 2


@pytest.mark.parametrize(
    ("old", "new", "field", "words"),
    [
        ('lesson = "day76"\n\n', 'lesson = "day99"\n\n', "lesson", "no lesson named 'day99'"),
        ('title = "Sample quiz"', 'title = "Sample quiz"\nauthor = "me"', "author", "unknown field 'author'"),
        ('id = "day76"', 'id = "Day 76"', "id", "lower-case letters"),
        ('title = "Sample quiz"', 'title = "Sample quiz"\nreleased = "yes"', "released", "true or false"),
    ],
)
def test_quiz_table_errors_point_into_the_quiz_table(write_quiz, old, new, field, words):
    text = SAMPLE_QUIZ.replace(old, new, 1)
    err = problem(write_quiz(text))
    assert err.field == field and err.question is None
    assert words in str(err)
    assert err.line == line_of(text, f"{field} =")


def test_missing_quiz_table_and_empty_questions(write_quiz):
    assert "start with a [quiz] table" in str(problem(write_quiz('[[questions]]\nid = "a"\n')))
    assert "at least one [[questions]]" in str(
        problem(write_quiz('[quiz]\nid = "a"\ntitle = "t"\nlesson = "day76"\n'))
    )


def test_unknown_top_level_table_is_located(write_quiz):
    text = SAMPLE_QUIZ + "\n[extra]\nx = 1\n"
    err = problem(write_quiz(text))
    assert err.field == "extra" and err.line == line_of(text, "[extra]")


def test_inline_question_array_still_names_question_and_field(write_quiz):
    text = 'questions = [{ id = "a", type = "nope" }]\n[quiz]\nid = "q"\ntitle = "t"\nlesson = "day76"\n'
    err = problem(write_quiz(text))
    assert (err.question, err.field, err.line) == ("a", "type", None)


def test_unreadable_and_non_utf8_files(tmp_path):
    err = problem(tmp_path / "missing.toml")
    assert "cannot read the quiz file" in str(err)
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'[quiz]\nid = "\xff"\n')
    err = problem(bad)
    assert err.line == 2 and "UTF-8" in str(err)


# ---- released learner copies ------------------------------------------------


def test_a_released_copy_loads_without_key_and_refuses_key_fields(write_quiz):
    stripped = re.sub(r"^(answer|answers|accept|anchors|explanation) = .*\n", "", SAMPLE_QUIZ, flags=re.M)
    learner = stripped.replace('lesson = "day76"\n', 'lesson = "day76"\nreleased = true\n', 1)
    quiz = load_quiz(write_quiz(learner))
    assert quiz.released and all(not q.has_key for q in quiz.questions)
    leaked = learner.replace('reference = "REF-T1"', 'reference = "REF-T1"\naccept = ["x"]')
    err = problem(write_quiz(leaked))
    assert (err.question, err.field) == ("t1", "accept")
    assert "must not carry key field 'accept'" in str(err)


# ---- fuzzing: a bad file is a QuizError, never a crash ------------------------

_FRAGMENTS = st.sampled_from(
    [
        "[quiz]",
        "[[questions]]",
        'id = "a"',
        "id = 1",
        'type = "single"',
        'type = "line"',
        'snippet = "gate"',
        "points = 1",
        "points = -1",
        'prompt = "p"',
        'reference = "r"',
        'explanation = "e"',
        'answer = "a"',
        'options = [{ id = "a", text = "A" }, { id = "b", text = "B" }]',
        "options = [1, 2]",
        'answers = ["a"]',
        'anchors = ["if"]',
        'lesson = "day76"',
        'lesson = "day78"',
        'title = "t"',
        "released = true",
        "[x]",
        "= =",
        'accept = ["a"]',
        'type = "numeric"',
        "answer = 1.5",
        'partial = "off"',
        'type = "multiple"',
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_FRAGMENTS, max_size=14))
def test_any_text_gives_a_quiz_or_a_quiz_error(course_root, lines):
    try:
        quiz = parse_quiz("\n".join(lines) + "\n", "fuzz.toml")
    except QuizError as e:
        assert e.problems and all(p.message for p in e.problems)
    else:
        assert quiz.questions


# ---- the shipped quizzes ------------------------------------------------------

SHIPPED = ["day76", "day78"]


def _constants(kernel: str) -> dict[str, int]:
    found = {m[0]: int(m[1]) for m in re.findall(r"constexpr (?:int|size_t) (k\w+) = (\d+);", kernel)}
    found.update({m[0]: int(m[1]) for m in re.findall(r"#define (\w+_DIM) (\d+)", kernel)})
    return found


@pytest.fixture(params=SHIPPED)
def shipped(request, monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    lesson = LESSONS[request.param]
    return lesson, load_quiz(lesson.quiz_path)


def test_shipped_quiz_has_ten_questions_with_references_and_a_line_question(shipped):
    lesson, quiz = shipped
    assert quiz.id == lesson.id and quiz.lesson == lesson.id and not quiz.released
    assert len(quiz.questions) >= 10
    assert all(q.reference.strip() and q.explanation and q.explanation.strip() for q in quiz.questions)
    assert any(isinstance(q, WhichLine) for q in quiz.questions)


def test_shipped_quiz_covers_every_snippet_region(shipped):
    lesson, quiz = shipped
    for name in lesson.snippets:
        covering = [
            q.id
            for q in quiz.questions
            if (isinstance(q, WhichLine) and q.snippet == name) or f"snippet {name}" in q.reference
        ]
        assert covering, f"no question of {quiz.id} covers snippet {name!r}"


def test_shipped_line_keys_point_at_their_anchor_text(shipped):
    _, quiz = shipped
    for q in quiz.questions:
        if isinstance(q, WhichLine):
            listed = dict(q.listing)
            assert q.anchors and len(q.lines) == len(q.anchors)
            for number in q.lines:
                assert any(a in listed[number] for a in q.anchors)


def test_shipped_quiz_is_valid_toml_with_only_known_fields(shipped):
    lesson, _ = shipped
    data = tomllib.loads(lesson.quiz_path.read_text(encoding="utf-8"))
    assert set(data) == {"quiz", "questions"}


def test_day76_numeric_keys_follow_from_the_kernel_constants(monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    lesson = LESSONS["day76"]
    c = _constants(lesson.kernel_path.read_text(encoding="utf-8"))
    quiz = load_quiz(lesson.quiz_path)
    float_bytes = 4
    tile_bytes = c["kTileWidth"] * c["kTileHeight"] * float_bytes
    assert quiz.question("expect-bytes").answer == tile_bytes == 16384
    assert quiz.question("per-thread").answer == c["kTileWidth"] * c["kTileHeight"] / c["kThreadsPerBlock"]
    assert quiz.question("tile-count").answer == (c["TMA_DIM"] // c["kTileWidth"]) * (
        c["TMA_DIM"] // c["kTileHeight"]
    )
    assert quiz.question("stride-value").answer == c["TMA_DIM"] * float_bytes
    assert quiz.question("warp-bytes").answer == 32 * float_bytes
    assert quiz.question("one-thread").answer == "one"
    assert quiz.question("coords-order").answer == "inner"


def test_day78_numeric_keys_follow_from_the_kernel_constants(monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    lesson = LESSONS["day78"]
    kernel = lesson.kernel_path.read_text(encoding="utf-8")
    c = _constants(kernel)
    quiz = load_quiz(lesson.quiz_path)
    half = 2
    assert "(uint64_t(128 >> 4) << 16)" in kernel and "(uint64_t(1024 >> 4) << 32)" in kernel
    assert quiz.question("desc-lbo").answer == 128 >> 4 == 8
    assert quiz.question("desc-sbo").answer == 1024 >> 4 == 64
    assert "uint64_t(ks) * (2 * 128 >> 4)" in kernel
    assert quiz.question("k-step-encoded").answer == (2 * 128 >> 4) == 16
    assert quiz.question("k-step-bytes").answer == (2 * 128 >> 4) * 16 == 256
    assert quiz.question("wgmma-per-tile").answer == c["kTileK"] // c["kWgmmaK"]
    stage = (c["kTileM"] + c["kTileN"]) * c["kTileK"] * half
    assert quiz.question("smem-bytes").answer == 2 * stage == 32768
    assert quiz.question("acc-regs").answer == c["kTileM"] * c["kTileN"] / 128 == c["kAccRegs"]
    assert quiz.question("issuer").answer == "wg0" and "0 eats, 1 feeds" in kernel


def test_the_readme_examples_are_valid_questions(monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(REPO))
    readme = (REPO / "content" / "quizzes" / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", readme, flags=re.S) if "[[questions]]" in b]
    assert len(blocks) >= 5
    header = '[quiz]\nid = "readme"\ntitle = "t"\nlesson = "day76"\n\n'
    types = set()
    for block in blocks:
        text = block if block.startswith("[quiz]") else header + block
        quiz = parse_quiz(text, "README.md")
        types.update(q.type for q in quiz.questions)
    assert types == set(QUESTION_TYPES)  # every type has a README example that loads
