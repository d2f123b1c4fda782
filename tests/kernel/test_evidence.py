import json
import re

import pytest
from recordings import NOT_RECORDED

from course.errors import CourseError
from course.kernel import evidence
from course.kernel.gate import Gpu, Machine
from course.lessons import LESSONS, get_lesson

DAY76 = get_lesson("day76")
H200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {"cupy": "14.2.0"})


@pytest.mark.parametrize(
    "lesson", [x for x in LESSONS.values() if x.id not in NOT_RECORDED], ids=lambda x: x.id
)
def test_committed_evidence_is_a_passed_real_run(lesson):
    ev = evidence.load(lesson)
    assert ev is not None, f"evidence/{lesson.id}.json is missing: run `python -m course record` on a GPU"
    assert ev.passed and ev.lesson == lesson.id
    assert ev.compute_capability == "9.0"
    assert ev.output[0].startswith("GPU: ") and "PASS" in ev.output[-1]


def test_record_refuses_a_machine_without_a_gpu(tmp_path):
    no_gpu = Machine(None, "no driver", "get one", {})
    with pytest.raises(CourseError, match="only from a run on a real GPU"):
        evidence.record(DAY76, no_gpu, ["x"], True, "cmd", path=tmp_path / "e.json")
    assert not (tmp_path / "e.json").exists()


def test_record_then_load_round_trips(tmp_path):
    path = tmp_path / "day76.json"
    written = evidence.record(
        DAY76, H200, ["GPU: NVIDIA H200", "round trip: PASS."], True, "cmd", {"run": 0.1}, path=path
    )
    assert evidence.load(DAY76, path) == written
    assert "Recorded on a real GPU" in written._repr_html_()
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


@pytest.mark.parametrize(
    "content, words",
    [
        ("{not json", "not valid JSON"),
        ("[]", "must be a JSON object"),
        ('{"schema_version": 99}', "schema_version must be 1"),
        ('{"schema_version": 1, "lesson": "day78"}', "is for lesson 'day78'"),
        ('{"schema_version": 1, "lesson": "day76", "recorded_at": 5}', "'recorded_at' must be str"),
    ],
)
def test_broken_evidence_is_a_clear_error(tmp_path, content, words):
    path = tmp_path / "e.json"
    path.write_text(content)
    with pytest.raises(CourseError, match=words) as info:
        evidence.load(DAY76, path)
    assert str(path) in str(info.value)


def test_evidence_html_escapes_recorded_text(tmp_path):
    path = tmp_path / "e.json"
    evil = Machine(Gpu(0, "<script>x</script>", (9, 0), 1, 1, 1), None, None, {"v": "<b>"})
    evidence.record(DAY76, evil, ["<img src=x>"], True, "cmd", path=path)
    html = evidence.load(DAY76, path)._repr_html_()
    assert "<script>" not in html and "<img" not in html
    assert html.count("<b>") == 1 and "&lt;b&gt;" in html  # only the page's own bold survives
    assert json.loads(path.read_text())["device"] == "<script>x</script>"


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("output", [1], "'output' must hold text lines (item 0 is int)"),
        ("versions", {"cupy": 14}, "versions 'cupy' must be text or null"),
    ],
)
def test_evidence_fields_hold_text(tmp_path, field, value, words):
    path = tmp_path / "e.json"
    evidence.record(DAY76, H200, ["GPU: x", "PASS"], True, "cmd", path=path)
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))
    with pytest.raises(CourseError, match=re.escape(words)):
        evidence.load(DAY76, path)


@pytest.mark.parametrize("lesson_id", sorted(NOT_RECORDED))
def test_a_lesson_not_recorded_yet_has_no_evidence_and_its_page_says_so(lesson_id):
    lesson = get_lesson(lesson_id)
    assert evidence.load(lesson) is None, (
        f"evidence/{lesson_id}.json is recorded now: take {lesson_id} out of NOT_RECORDED"
    )
    from course.page import Page  # the page's own wording, only for this test

    shown = Page(lesson_id).evidence()
    assert "Not recorded yet" in str(getattr(shown, "text", shown))
