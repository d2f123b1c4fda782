"""The pictures kept with the evidence are today's drawings of today's recordings (issue 28)."""

from __future__ import annotations

import pytest

from course import _kept
from course import timeline as tl
from course._kept import Rendering, keep_rendering, kept_rendering, rendering_key
from course.bench.climb import climb_rendering_key, climb_upto, recorded_climb, recorded_climb_picture
from course.kernel import evidence
from course.lessons import LESSONS, get_lesson
from course.page.renderings import kept_files, page_renderings
from course.picture import Picture
from course.timeline import section


@pytest.mark.kept_renderings
def test_every_kept_rendering_is_the_drawing_of_the_current_recordings_byte_for_byte():
    wanted = page_renderings()
    assert wanted, "no page draws a recorded climb or timeline: the check below would prove nothing"
    drawn_with = _kept.drawn_with()
    assert drawn_with is not None, (
        f"evidence/renderings/{_kept.DRAWN_WITH} does not say which matplotlib drew them"
    )
    if drawn_with != _kept.matplotlib_version():
        # Another matplotlib (the test extra pins the one that drew them where it can: Python
        # >= 3.11): every key names the version, so no page shows a kept rendering here; each
        # draws its picture live. That is what is checked then; the byte-for-byte check needs
        # the matplotlib they were drawn with.
        assert set(wanted).isdisjoint(kept_files()), (
            "a kept rendering would be shown under another matplotlib"
        )
        return
    assert set(wanted) == kept_files(), (
        "the kept renderings do not match the recordings and drawing code: "
        "run `python tools/keep_renderings.py` and commit evidence/renderings/"
    )
    for key, draw in wanted.items():
        data, text = draw()
        kept = kept_rendering(key)
        assert kept is not None and kept.data == data, f"{key}: the kept PNG is not today's drawing"
        assert kept.text == text, key


@pytest.mark.kept_renderings
@pytest.mark.parametrize("key", ["h100-80gb-hbm3", "h200"])
def test_every_page_with_a_recorded_climb_shows_the_kept_one(key):
    lessons = tuple(LESSONS.values())
    # Under another matplotlib than the one that drew them (Python 3.10, where the test extra
    # cannot pin it), no key names a kept file: every page draws its climb live instead.
    kept_here = _kept.drawn_with() == _kept.matplotlib_version()
    with evidence.showing(key) as shown:
        climbing = [lesson for lesson in lessons if recorded_climb(lesson, lessons)]
        assert "day85" in {lesson.id for lesson in climbing}  # the finale has no benchmark of its own
        for lesson in climbing:
            picture = recorded_climb_picture(lesson, lessons)
            if kept_here:
                assert isinstance(picture, Rendering), lesson.id
                assert shown.device in repr(picture), (
                    f"{lesson.id}: the kept climb is not the {shown.device}'s"
                )
            else:
                assert isinstance(picture, Picture) and picture.png()[:4] == b"\x89PNG", lesson.id


@pytest.mark.kept_renderings
def test_the_finales_attention_climb_is_its_last_steps_kept_one_where_recorded():
    # Day 85 shows attention's climb up to its last step (issue 42): that step's own page's climb,
    # kept for the GPU that recorded it; none is drawn for a GPU with no attention recording.
    lessons = tuple(LESSONS.values())
    upto = climb_upto(get_lesson("day85"), lessons, "attention")
    assert upto.day > 85 and recorded_climb(upto, lessons, "attention") == recorded_climb(upto, lessons)
    wanted = page_renderings()
    for gpu in evidence.recorded_keys():
        with evidence.showing(gpu):
            recorded = recorded_climb(upto, lessons, "attention")
            assert (climb_rendering_key(upto, lessons, "attention") in wanted) == bool(recorded), gpu
    with evidence.showing("h100-80gb-hbm3"):
        key = climb_rendering_key(upto, lessons, "attention")
        assert key == climb_rendering_key(upto, lessons) and key in wanted
        if _kept.drawn_with() == _kept.matplotlib_version():
            picture = recorded_climb_picture(upto, lessons, "attention")
            assert isinstance(picture, Rendering) and "The attention climb up to Day" in repr(picture)


def test_a_page_shows_a_kept_climb_and_draws_one_whose_recordings_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(_kept, "renderings_dir", lambda: tmp_path)
    upto, lessons = get_lesson("day80"), tuple(LESSONS.values())
    drawn = recorded_climb_picture(upto, lessons)
    assert isinstance(drawn, Picture)  # nothing kept: drawn here
    keep_rendering(climb_rendering_key(upto, lessons), b"\x89PNG kept", "Picture('kept', 1x1 px)")
    shown = recorded_climb_picture(upto, lessons)
    assert isinstance(shown, Rendering)
    assert shown._repr_png_() == shown.png() == b"\x89PNG kept" and repr(shown) == "Picture('kept', 1x1 px)"
    # A later step's climb is drawn from more recordings: another key, so never this rendering.
    assert climb_rendering_key(get_lesson("day81"), lessons) != climb_rendering_key(upto, lessons)


def test_a_key_changes_with_any_input_and_the_code(tmp_path):
    recording, code = tmp_path / "run.json", tmp_path / "draw.py"
    recording.write_text("{}")
    code.write_text("x = 1")
    first = rendering_key("timeline", [code], ["day80", recording])
    assert rendering_key("timeline", [code], ["day80", recording]) == first
    recording.write_text('{"again": 1}')
    assert rendering_key("timeline", [code], ["day80", recording]) != first
    recording.write_text("{}")
    code.write_text("x = 2")
    assert rendering_key("timeline", [code], ["day80", recording]) != first
    code.write_text("x = 1")
    assert rendering_key("timeline", [code], ["day81", recording]) != first
    assert rendering_key("climb", [code], ["day80", recording]) != first


def test_a_lessons_figure_is_kept_for_its_page_call_and_drawn_for_any_other(tmp_path, monkeypatch):
    from course.lessons.day78 import figures

    monkeypatch.setattr(_kept, "renderings_dir", lambda: tmp_path)
    assert isinstance(figures.descriptor_figure(), Picture)  # nothing kept: drawn here
    keep_rendering(figures.descriptor_figure.rendering_key(), b"\x89PNG kept", "Picture('kept', 1x1 px)")
    assert repr(figures.descriptor_figure()) == "Picture('kept', 1x1 px)"
    assert isinstance(figures.descriptor_figure(0x400, 1), Picture)  # another call: drawn
    assert figures.descriptor_figure.rendering_key() != figures.fragment_figure.rendering_key()


def test_a_figure_drawn_from_a_recording_is_keyed_by_its_bytes(tmp_path, monkeypatch):
    recording = tmp_path / "run.json"
    recording.write_text("{}")
    drawn = []

    @_kept.rendered(reads=lambda: [recording])
    def picture_of_the_recording() -> Picture:
        drawn.append(1)
        return Picture()

    _kept.RENDERED.remove(picture_of_the_recording)  # a test's figure is no page's
    first = picture_of_the_recording.rendering_key()
    recording.write_text('{"recorded": "again"}')
    assert picture_of_the_recording.rendering_key() != first
    picture_of_the_recording().png()  # shown (drawn) once, as a page shows it
    picture_of_the_recording()
    assert len(drawn) == 1  # kept in the kernel while the recording stays
    recording.write_text('{"recorded": "once more, longer"}')
    picture_of_the_recording()
    assert len(drawn) == 2  # drawn again: the recording changed


def test_a_recorded_timeline_section_shows_the_kept_png(tmp_path, monkeypatch):
    lesson = get_lesson("day80")
    monkeypatch.setattr(_kept, "renderings_dir", lambda: tmp_path)
    monkeypatch.setattr(section, "_DRAWN", {})
    keep_rendering(tl.timeline_rendering_key(lesson), b"\x89PNG kept timeline", "")
    shown = tl.timeline_section(lesson)
    assert shown.png == b"\x89PNG kept timeline" and shown.timeline is not None
    monkeypatch.setattr(section, "_DRAWN", {})
    monkeypatch.setattr(_kept, "renderings_dir", lambda: tmp_path / "none")
    drawn = tl.timeline_section(lesson)
    assert drawn.png is not None and drawn.png.startswith(b"\x89PNG\r\n\x1a\n")
