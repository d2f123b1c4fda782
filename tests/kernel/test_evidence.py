import json
import re

import pytest
from recordings import NOT_RECORDED, NOT_RECORDED_ON

from course.errors import CourseError
from course.kernel import evidence
from course.kernel.gate import Gpu, Machine
from course.lessons import LESSONS, get_lesson

DAY76 = get_lesson("day76")
H200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {"cupy": "14.2.0"})


H100 = Machine(Gpu(0, "NVIDIA H100 80GB HBM3", (9, 0), 132, 227 * 1024, 80 * 2**30), None, None, {})
KEYS = ("h100-80gb-hbm3", "h200")  # the learners' GPU and the one the course was first recorded on


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize(
    "lesson", [x for x in LESSONS.values() if x.id not in NOT_RECORDED], ids=lambda x: x.id
)
def test_committed_evidence_is_a_passed_real_run_on_each_gpu(lesson, key):
    if lesson.id in NOT_RECORDED_ON.get(key, frozenset()):
        assert not evidence.path_of(lesson, key=key).exists(), (
            f"{lesson.id} is recorded on {key}: take it out"
        )
        return
    path = evidence.path_of(lesson, key=key)
    ev = evidence.load(lesson, path)
    assert ev is not None, f"{path} is missing: run `python -m course record` on that GPU"
    assert ev.passed and ev.lesson == lesson.id
    assert ev.compute_capability == "9.0"
    assert evidence.device_key(ev.device) == key, f"{path} was recorded on {ev.device}, not in its folder"
    assert ev.output[0] == f"GPU: {ev.device} (compute capability 9.0)" and "PASS" in ev.output[-1]


def test_device_keys_name_the_model():
    assert evidence.device_key("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3"
    assert evidence.device_key("NVIDIA H200") == "h200"
    assert evidence.device_key("NVIDIA H100 PCIe") == "h100-pcie"  # another model: not the SXM's folder
    with pytest.raises(CourseError, match="letters or digits"):
        evidence.device_key(" - ")


def test_a_machine_without_a_gpu_shows_the_h100_and_says_so(monkeypatch):
    monkeypatch.delenv(evidence.DEVICE_ENV, raising=False)
    shown = evidence.shown(Machine(None, "no driver", "get one", {}))
    assert shown.device == evidence.DEFAULT_DEVICE == "NVIDIA H100 80GB HBM3"
    assert shown.directory == evidence.recording_dir("h100-80gb-hbm3") and not shown.own
    assert "NVIDIA H100 80GB HBM3" in shown.sentence() and "has none" in shown.sentence()


def test_a_gpu_with_a_recording_shows_its_own(monkeypatch):
    monkeypatch.delenv(evidence.DEVICE_ENV, raising=False)
    for machine, key in ((H200, "h200"), (H100, "h100-80gb-hbm3")):
        shown = evidence.shown(machine)
        assert shown.own and shown.key == key and "this GPU's model" in shown.sentence()
        assert evidence.load(DAY76, evidence.path_of(DAY76, key=shown.key)).device == machine.gpu.name


def test_a_gpu_without_a_recording_shows_the_h100_saying_it_is_another_gpus(monkeypatch):
    monkeypatch.delenv(evidence.DEVICE_ENV, raising=False)
    pcie = Machine(Gpu(0, "NVIDIA H100 PCIe", (9, 0), 114, 227 * 1024, 80 * 2**30), None, None, {})
    shown = evidence.shown(pcie)
    assert shown.key == "h100-80gb-hbm3" and not shown.own
    assert (
        "another GPU's, the NVIDIA H100 80GB HBM3" in shown.sentence()
        and "NVIDIA H100 PCIe" in shown.sentence()
    )


def test_the_environment_names_another_gpus_recordings(monkeypatch):
    monkeypatch.setenv(evidence.DEVICE_ENV, "h200")
    assert evidence.shown(H100).device == "NVIDIA H200"
    assert evidence.recording_dir() == evidence.recording_dir("h200")
    monkeypatch.setenv(evidence.DEVICE_ENV, "a100")
    with pytest.raises(CourseError, match="names no GPU with recordings here; the recorded ones are h100"):
        evidence.shown(H100)


def test_record_writes_into_the_folder_of_the_gpu_it_ran_on(tmp_path, monkeypatch):
    monkeypatch.setattr("course._paths.evidence_dir", lambda: tmp_path)
    evidence.record(DAY76, H100, ["GPU: x", "PASS"], True, "cmd")
    evidence.record(DAY76, H200, ["GPU: y", "PASS"], True, "cmd")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")) == [
        "h100-80gb-hbm3/day76.json",
        "h200/day76.json",
    ]
    assert evidence.recorded_keys() == ["h100-80gb-hbm3", "h200"]
    # Folders of evidence/ that hold no recording (screenshots, a development record) are no GPU's.
    (tmp_path / "screenshots").mkdir()
    (tmp_path / "screenshots" / "page.png").write_bytes(b"\x89PNG")
    (tmp_path / "gemm_dev" / "runs").mkdir(parents=True)
    (tmp_path / "gemm_dev" / "bench.py").write_text("")
    (tmp_path / "h100-80gb-hbm3" / "bench").mkdir()
    assert evidence.recorded_keys() == ["h100-80gb-hbm3", "h200"]
    (tmp_path / "h300" / "bench").mkdir(parents=True)
    (tmp_path / "h300" / "bench" / "day76.json").write_text("{}")
    assert evidence.recorded_keys() == ["h100-80gb-hbm3", "h200", "h300"]


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
        f"{evidence.path_of(lesson)} is recorded now: take {lesson_id} out of NOT_RECORDED"
    )
    from course.page import Page  # the page's own wording, only for this test

    shown = Page(lesson_id).evidence()
    assert "Not recorded yet" in str(getattr(shown, "text", shown))
