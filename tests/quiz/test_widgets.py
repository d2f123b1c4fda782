"""The quiz as widgets, driven headless (course/quiz/widgets.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import ipywidgets as widgets
import pytest

from course.errors import CourseError
from course.quiz import show_quiz
from course.quiz.grade import grade_submissions
from course.quiz.loader import load_quiz
from course.quiz.release import release_quiz
from course.quiz.widgets import QuizPanel

from ._data import KEY_SENTINELS, SAMPLE_QUIZ

PERFECT = {"s1": "b", "m1": ["a", "b"], "n1": "16384", "t1": "Secret Answer Two", "l1": 5}


def tree(widget: widgets.Widget) -> list[widgets.Widget]:
    found = [widget]
    for child in getattr(widget, "children", ()):
        found += tree(child)
    return found


def all_state(panel: QuizPanel) -> str:
    """Every trait of every widget on the page, as one JSON string."""
    return json.dumps([w.get_state() for w in tree(panel)], default=str)


def html_values(panel: QuizPanel) -> list[str]:
    return [w.value for w in tree(panel) if isinstance(w, widgets.HTML)]


@pytest.fixture
def practice(sample_quiz, tmp_path) -> QuizPanel:
    return show_quiz(sample_quiz, learner_id="alice", submissions_dir=tmp_path / "subs")


def test_show_quiz_returns_a_widget_with_one_panel_per_question(practice):
    assert isinstance(practice, widgets.VBox)
    assert list(practice.panels) == ["s1", "m1", "n1", "t1", "l1"]
    assert all(p.check_button is not None for p in practice.panels.values())


def test_text_plain_output_is_short_and_stable(practice):
    bundle = practice._repr_mimebundle_()
    assert bundle["text/plain"] == "QuizPanel(quiz='day76', mode='practice', questions=5)"


def test_check_shows_right_with_the_explanation(practice):
    panel = practice.panels["s1"]
    panel.input.value = "b"
    panel.check_button.click()
    assert "Right." in panel.feedback.value and "EXPLAIN-S1 because b." in panel.feedback.value
    assert "REF-S1" in panel.feedback.value
    assert panel.attempts == 1


def test_check_shows_wrong_and_partial(practice):
    single = practice.panels["s1"]
    single.input.value = "a"
    single.check_button.click()
    assert "Not right." in single.feedback.value
    multi = practice.panels["m1"]
    multi.checkboxes["a"].value = True
    multi.check_button.click()
    assert "Partly right: 1 of 2 points (1 of 2 right options chosen)." in multi.feedback.value


def test_a_partial_score_reads_as_a_fraction_not_four_decimals(write_quiz, tmp_path):
    """Issue 22: "0.6667 of 2 points" became "1⅓ of 2 points" with what was counted."""
    text = SAMPLE_QUIZ.replace('answers = ["a", "b"]', 'answers = ["a", "b", "c"]')
    panel = show_quiz(write_quiz(text, "day76.toml"), submissions_dir=tmp_path).panels["m1"]
    panel.set_response(["a", "b"])
    panel.check_button.click()
    assert "Partly right: 1\u2153 of 2 points (2 of 3 right options chosen)." in panel.feedback.value
    assert "0.6667" not in panel.feedback.value and "1.3333" not in panel.feedback.value


def test_practice_mode_keeps_a_running_total(practice):
    assert practice.total.value == ""
    practice.panels["s1"].set_response("b")
    practice.panels["s1"].check_button.click()
    assert "So far: 1 of 5 right</b>, 1 of 6 points; 4 not checked yet." in practice.total.value
    practice.panels["m1"].set_response(["a"])
    practice.panels["m1"].check_button.click()
    practice.panels["n1"].text.value = "0x4000"
    practice.panels["n1"].check_button.click()
    assert "So far: 2 of 5 right</b>, 3 of 6 points; 2 not checked yet." in practice.total.value
    practice.panels["s1"].set_response("a")  # a wrong answer checked replaces the right one
    practice.panels["s1"].check_button.click()
    assert "So far: 1 of 5 right</b>, 2 of 6 points" in practice.total.value


def test_graded_mode_shows_no_total(sample_quiz, tmp_path):
    learner = tmp_path / "learner.toml"
    release_quiz(sample_quiz, learner)
    panel = show_quiz(learner, mode="graded", learner_id="bob", submissions_dir=tmp_path / "subs")
    panel.show_total()
    assert panel.total.value == ""


def test_every_question_type_can_be_answered_headless(practice):
    for qid, response in PERFECT.items():
        panel = practice.panels[qid]
        panel.set_response(response)
        panel.check_button.click()
        assert "Right." in panel.feedback.value, qid


def test_check_with_no_answer_or_a_non_number_counts_no_attempt(practice):
    panel = practice.panels["n1"]
    panel.check_button.click()
    assert "answer first" in panel.feedback.value
    panel.text.value = "sixteen k"
    panel.check_button.click()
    assert "is not a number" in panel.feedback.value
    panel.text.value = "inf"
    panel.check_button.click()
    assert "not a finite number" in panel.feedback.value
    assert panel.attempts == 0
    panel.text.value = "1.6384e4"
    panel.check_button.click()
    assert "Right." in panel.feedback.value and panel.attempts == 1


def test_every_numeric_box_takes_hex_binary_and_octal_and_a_refusal_keeps_the_answer_back(
    write_quiz, tmp_path
):
    panel = show_quiz(write_quiz(SAMPLE_QUIZ, "day76.toml"), learner_id="alice", submissions_dir=tmp_path)
    n1 = panel.panels["n1"]
    for typed in ("0x4000", "0b100000000000000", "0o40000", "16384", "16_384"):
        n1.text.value = typed
        n1.check_button.click()
        assert "Right." in n1.feedback.value, typed
    assert panel.responses()["n1"] == 16384
    n1.text.value = "16384 bytes"
    n1.check_button.click()
    assert "is not a number" in n1.feedback.value and "Right." not in n1.feedback.value
    assert n1.feedback.value.count("16384") == 1  # the echo of what was typed, nothing more


def test_practice_page_holds_no_explanation_before_a_check(practice):
    state = all_state(practice)
    assert "EXPLAIN-" not in state and "SECRET-ANSWER" not in state


def test_graded_mode_holds_no_key_in_any_widget(sample_quiz, tmp_path):
    panel = show_quiz(sample_quiz, mode="graded", learner_id="alice", submissions_dir=tmp_path)
    assert panel.quiz.released
    assert all(p.check_button is None for p in panel.panels.values())
    for qid, response in PERFECT.items():
        panel.panels[qid].set_response(response)
    state = all_state(panel)
    for sentinel in KEY_SENTINELS:
        if sentinel == "barrier_arrive_tx(bar, 1":
            continue  # the listing shows every line of the snippet, by design
        assert sentinel not in state, sentinel
    assert not [w for w in tree(panel) if isinstance(w, widgets.Button) and w.description == "Check"]


def test_graded_mode_from_a_released_copy(sample_quiz, tmp_path):
    learner = tmp_path / "learner.toml"
    release_quiz(sample_quiz, learner)
    panel = show_quiz(learner, mode="graded", learner_id="bob", submissions_dir=tmp_path / "subs")
    for qid, response in PERFECT.items():
        panel.panels[qid].set_response(response)
    panel.submit_button.click()
    report = grade_submissions(load_quiz(sample_quiz), tmp_path / "subs")
    assert report.results[0].total == 6.0
    assert report.results[0].items[0].attempts == 1  # graded attempts count submits


def test_practice_mode_refuses_a_released_copy(sample_quiz, tmp_path):
    learner = tmp_path / "learner.toml"
    release_quiz(sample_quiz, learner)
    with pytest.raises(CourseError, match="practice mode .* needs the key"):
        show_quiz(learner)


def test_quiz_text_is_escaped_in_every_html_widget(write_quiz, tmp_path):
    evil = "<script>alert(1)</script>"
    text = (
        SAMPLE_QUIZ.replace("Pick `b`.", f"Pick {evil} `<b>`")
        .replace("EXPLAIN-S1 because b.", f"{evil} <img src=x onerror=alert(2)>")
        .replace("Sample quiz", f"Title {evil}")
        .replace("REF-S1", evil)
    )
    panel = show_quiz(write_quiz(text, "day76.toml"), submissions_dir=tmp_path)
    s1 = panel.panels["s1"]
    s1.input.value = "b"
    s1.check_button.click()
    joined = "\n".join(html_values(panel))
    assert "<script" not in joined and "<img" not in joined
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in joined
    assert "<code>&lt;b&gt;</code>" in joined  # backticks become code, after escaping


def test_submit_writes_responses_never_a_score(practice, sample_quiz, tmp_path, monkeypatch):
    monkeypatch.setattr("course.quiz.widgets._now", lambda: "2025-02-03T04:05:06+00:00")
    for qid, response in PERFECT.items():
        practice.panels[qid].set_response(response)
    practice.panels["s1"].check_button.click()
    practice.panels["s1"].check_button.click()
    path = practice.submit()
    assert path == tmp_path / "subs" / "day76" / "alice.json"
    data = json.loads(path.read_text())
    assert set(data) == {"format", "quiz", "quiz_version", "learner", "submitted_at", "responses", "attempts"}
    assert data["quiz_version"] == load_quiz(sample_quiz).version
    assert data["responses"] == {**PERFECT, "n1": 16384}
    assert data["attempts"] == {"s1": 2, "m1": 0, "n1": 0, "t1": 0, "l1": 0}
    assert data["submitted_at"] == "2025-02-03T04:05:06+00:00"
    assert [p.name for p in path.parent.iterdir()] == ["alice.json"]  # no temp file left behind
    assert "Saved 5 of 5 answers as learner <b>alice</b>" in practice.status.value
    assert "upload this file to your course's assignment" in practice.status.value
    assert f"<code>{path}</code>" in practice.status.value


def test_submit_says_who_the_learner_is_and_where_the_id_came_from(sample_quiz, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_LEARNER", "dana")
    by_env = show_quiz(sample_quiz, learner_id="dana", submissions_dir=tmp_path)
    assert "as learner <b>dana</b> (set by COURSE_LEARNER)" in by_env.submit_note.value
    monkeypatch.delenv("COURSE_LEARNER")
    monkeypatch.setenv("JUPYTERHUB_USER", "erin")
    monkeypatch.setenv("HOME", str(tmp_path))  # the workspace (conftest) is in erin's home
    by_hub = show_quiz(sample_quiz, learner_id="erin", submissions_dir=tmp_path)
    assert "as learner <b>erin</b> (your JupyterHub user name)" in by_hub.submit_note.value
    monkeypatch.delenv("JUPYTERHUB_USER")  # on a hub the page's id is ignored (tests/quiz/test_hub.py)
    given = show_quiz(sample_quiz, learner_id="frank", submissions_dir=tmp_path)
    assert "(the id this page was given)" in given.submit_note.value


def test_submitting_again_replaces_the_file(practice):
    practice.panels["s1"].set_response("a")
    first = practice.submit()
    practice.panels["s1"].set_response("b")
    practice.submit_button.click()
    assert json.loads(first.read_text())["responses"] == {"s1": "b"}


def test_submit_refuses_an_unreadable_number_and_writes_nothing(practice, tmp_path):
    practice.panels["n1"].text.value = "12 bytes"
    assert practice.submit() is None
    assert "Nothing was saved" in practice.status.value and "&#x27;n1&#x27;" in practice.status.value
    assert not (tmp_path / "subs").exists()


def test_submit_without_a_learner_id_saves_nothing(sample_quiz, tmp_path):
    panel = show_quiz(sample_quiz, submissions_dir=tmp_path / "subs")
    panel.submit_button.click()
    assert "needs a learner id" in panel.status.value
    assert not (tmp_path / "subs").exists()


@pytest.mark.parametrize(
    "bad", ["../evil", "/etc/passwd", ".hidden", "a/b", "a\\b", "", "x" * 65, "al ice", 7]
)
def test_a_learner_id_cannot_leave_the_submissions_folder(sample_quiz, tmp_path, bad):
    with pytest.raises(CourseError, match="a learner id must be"):
        show_quiz(sample_quiz, learner_id=bad, submissions_dir=tmp_path / "subs")
    assert not (tmp_path / "subs").exists()


def test_bad_mode_is_refused(sample_quiz):
    with pytest.raises(CourseError, match="mode must be one of practice, graded"):
        show_quiz(sample_quiz, mode="exam")


def test_lesson_id_finds_the_quiz_and_the_default_submissions_folder(sample_quiz, course_root):
    panel = show_quiz("day76")
    assert panel.quiz.path == sample_quiz
    assert panel.submissions_dir == course_root / "submissions"


def _listings(panel: QuizPanel) -> list[str]:
    return [v for v in html_values(panel) if "<pre" in v]


def test_line_question_lists_the_snippet_with_file_line_numbers(practice):
    panel = practice.panels["l1"]
    values = [value for _, value in panel.input.options]
    assert values == [3, 4, 5, 6, 7, 8]
    (listing,) = _listings(practice)
    # The page's own listing (course.view.listing.listing_html): the file's numbers in their own column,
    # one row per line, beside the code's rows.
    assert "class='course-listing" in listing
    numbers = re.search(r"<pre class='course-linenos'[^>]*>(.*?)</pre>", listing, re.S)
    code = re.search(r"<pre class='course-code'[^>]*>(.*)</pre>", listing, re.S)
    assert numbers and code
    assert [int(n) for n in re.findall(r">(\d+)</span>", numbers.group(1))] == values
    rows = re.findall(
        r"<span style='display:block;min-height[^']*'>(.*?)</span>(?=<span style='display:block|</span>$)",
        code.group(1),
        re.S,
    )
    assert len(rows) == len(values)
    assert "barrier_arrive_tx" in rows[values.index(5)]
    assert "The listing for question 5," in listing


def test_a_listing_is_shown_once_for_every_question_about_it(write_quiz, tmp_path):
    """Issue 22: a 60-90-line listing was repeated under each "which line" question."""
    second = SAMPLE_QUIZ.replace('id = "l1"', 'id = "l2"').split("[[questions]]")[-1]
    text = SAMPLE_QUIZ + "\n[[questions]]" + second + "\n[[questions]]" + second.replace('"l2"', '"l3"')
    panel = show_quiz(write_quiz(text, "day76.toml"), submissions_dir=tmp_path)
    (listing,) = _listings(panel)
    assert "The listing for questions 5, 6 and 7," in listing
    assert listing.count("barrier_arrive_tx") == 1
    notes = [html_values(panel.panels[q].box) for q in ("l1", "l2", "l3")]
    assert any("listing just above" in v for v in notes[0])
    assert all(any("listing above question 5" in v for v in n) for n in notes[1:])
    # The listing sits right before the first question that asks about it.
    boxes = list(panel.children)
    assert boxes.index(panel.panels["l1"].box) - 1 == next(
        i for i, w in enumerate(boxes) if isinstance(w, widgets.HTML) and "<pre" in w.value
    )


def test_the_shipped_quizzes_render(monkeypatch):
    monkeypatch.setenv("COURSE_ROOT", str(Path(__file__).resolve().parents[2]))
    for lesson_id in ("day76", "day78"):
        panel = show_quiz(lesson_id)
        assert len(panel.panels) >= 10


# ---- what a learner sees: option order, option text, feedback ---------------------------

FOUR = SAMPLE_QUIZ.replace(
    '  { id = "c", text = "Option C" },\n]',
    '  { id = "c", text = "Option C" },\n  { id = "d", text = "Option D" },\n]',
)


def shown_single(panel: QuizPanel, qid: str) -> list[str]:
    return [value for _, value in panel.panels[qid].input.options]


def shown_multiple(panel: QuizPanel, qid: str) -> list[str]:
    return list(panel.panels[qid].checkboxes)


def test_options_are_shuffled_per_learner_and_stable(write_quiz, tmp_path):
    path = write_quiz(FOUR, "day76.toml")
    orders = {}
    for learner in ("alice", "bob", "carol", "dave", "erin", "fay"):
        first = show_quiz(path, learner_id=learner, submissions_dir=tmp_path)
        again = show_quiz(path, learner_id=learner, submissions_dir=tmp_path)
        assert shown_single(first, "s1") == shown_single(again, "s1"), "the order must be stable per learner"
        assert shown_multiple(first, "m1") == shown_multiple(again, "m1")
        assert sorted(shown_single(first, "s1")) == ["a", "b", "c", "d"]
        orders[learner] = (tuple(shown_single(first, "s1")), tuple(shown_multiple(first, "m1")))
    assert len({o[0] for o in orders.values()}) >= 3, orders
    assert len({o[1] for o in orders.values()}) >= 3, orders


def test_the_key_position_is_not_predictable_across_learners():
    from course.quiz.model import Option, option_order

    options = tuple(Option(i, i) for i in "abcd")
    learners = [f"learner{n}" for n in range(400)]
    positions = [[o.id for o in option_order(options, "day76", "s1", who)].index("b") for who in learners]
    counts = [positions.count(p) for p in range(4)]
    assert all(60 <= c <= 140 for c in counts), counts  # about 100 each
    # Another question of the same learner gets its own order.
    same = sum(
        option_order(options, "day76", "s1", who) == option_order(options, "day76", "s2", who)
        for who in learners
    )
    assert same < 60, same


def test_grading_is_unchanged_by_the_order_shown(sample_quiz, tmp_path):
    key = load_quiz(sample_quiz)
    for learner in ("alice", "bob", "carol", "dave"):
        panel = show_quiz(sample_quiz, learner_id=learner, submissions_dir=tmp_path / "subs")
        for qid, response in PERFECT.items():
            panel.panels[qid].set_response(response)
        for qid in ("s1", "m1"):
            panel.panels[qid].check_button.click()
            assert "Right." in panel.panels[qid].feedback.value, (learner, qid)
        path = panel.submit()
        assert json.loads(path.read_text())["responses"]["s1"] == "b"  # an option id, not a position
    report = grade_submissions(key, tmp_path / "subs")
    assert [r.total for r in report.results] == [6.0] * 4


def test_without_a_learner_id_the_order_is_still_shuffled_and_stable(write_quiz, tmp_path):
    path = write_quiz(FOUR, "day76.toml")
    a = show_quiz(path, submissions_dir=tmp_path)
    b = show_quiz(path, submissions_dir=tmp_path)
    assert shown_single(a, "s1") == shown_single(b, "s1")


def test_option_text_backticks_render_as_code_and_markup_never_passes(write_quiz, tmp_path):
    text = SAMPLE_QUIZ.replace('text = "A" }', 'text = "`out` <b>bold</b>" }').replace(
        'text = "Option A"', 'text = "`bar.arrive()` for <i>all</i>"'
    )
    panel = show_quiz(write_quiz(text, "day76.toml"), submissions_dir=tmp_path)
    box = panel.panels["m1"].checkboxes["a"]
    assert box.description_allow_html is True
    assert box.description == "<code>out</code> &lt;b&gt;bold&lt;/b&gt;"
    # A radio label is plain text (ipywidgets shows it as text): the backticks go, the words stay.
    labels = dict((value, label) for label, value in panel.panels["s1"].input.options)
    assert labels["a"] == "bar.arrive() for <i>all</i>"


def test_feedback_shows_right_wrong_and_partial_each_with_its_own_mark_and_colour(practice):
    looks = {}
    for verdict, (qid, response) in {
        "right": ("s1", "b"),
        "wrong": ("t1", "nope"),
        "partial": ("m1", ["a"]),
    }.items():
        panel = practice.panels[qid]
        panel.set_response(response)
        panel.check_button.click()
        value = panel.feedback.value
        assert f'class="quiz-result {verdict}"' in value, value
        looks[verdict] = value
    assert "\u2713" in looks["right"] and "\u2717" in looks["wrong"] and "~" in looks["partial"]
    colours = {
        v: re.search(r"border-left: *4px solid (#[0-9a-f]{6})", html).group(1) for v, html in looks.items()
    }
    assert len(set(colours.values())) == 3, colours


def test_the_reference_shows_links_not_raw_anchors(write_quiz, tmp_path):
    text = SAMPLE_QUIZ.replace(
        'reference = "REF-S1"', 'reference = "PTX ISA, wgmma.fence (#wgmma-fence-anchor)"'
    )
    panel = show_quiz(write_quiz(text, "day76.toml"), submissions_dir=tmp_path)
    panel.panels["s1"].set_response("b")
    panel.panels["s1"].check_button.click()
    value = panel.panels["s1"].feedback.value
    assert (
        '<a href="https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#wgmma-fence-anchor"'
        in value
    )
    assert "(#" not in value


def test_long_options_get_a_layout_that_wraps(practice):
    assert "course-quiz" in practice._dom_classes
    styles = [w for w in tree(practice) if isinstance(w, widgets.HTML) and w.value.startswith("<style>")]
    assert len(styles) == 1 and ".course-quiz .widget-radio-box label" in styles[0].value
    assert "height: auto" in styles[0].value and "white-space: normal" in styles[0].value


def test_a_saved_time_is_shown_in_the_machines_time_zone(monkeypatch):
    import time

    from course.quiz._look import local_time

    try:
        monkeypatch.setenv("TZ", "CET-1")
        time.tzset()
        assert local_time("2025-02-03T04:05:06+00:00") == "2025-02-03 05:05 CET"
        monkeypatch.setenv("TZ", "UTC0")
        time.tzset()
        assert local_time("2025-02-03T04:05:06+00:00") == "2025-02-03 04:05 UTC"
        assert local_time("not a time") == "an unknown time"
    finally:
        monkeypatch.undo()
        time.tzset()  # the process's own zone again, for the tests after this one
