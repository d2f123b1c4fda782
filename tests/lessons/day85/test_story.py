"""Day 85's sentences: computed from the rows they are given, and true of the shipped recordings."""

from __future__ import annotations

import json
import re

import pytest

from course.bench.climb import DATASHEET_PEAK_TFLOPS, ClimbRow, recorded_climb
from course.bench.result import BenchResult, Measurement, SizeRow, Timing
from course.kernel.provenance import Provenance
from course.lessons import LESSONS, get_lesson
from course.lessons.day85 import story
from course.lessons.day85.story import SAME_WITHIN, format_rate, format_ratio, what_each_step_bought

OLD_PEER = "cuBLAS old call"  # a different cuBLAS call, as Day 78's FP32-out gemmEx is for the ladder
PEER = "cuBLAS same call"


def _row(n: int, kernel: float, peer: float, peer_name: str) -> SizeRow:
    timing = Timing(1.0, 0.9, 1.1, 20, 4, 8, 0)
    return SizeRow(
        n,
        2.0 * n**3,
        0.1,
        False,
        "checked",
        Measurement("kernel", timing, kernel),
        (Measurement(peer_name, timing, peer, kernel / peer),),
    )


def _climb(table: dict[str, dict[int, tuple[float, float, str]]]) -> list[ClimbRow]:
    """ClimbRows of real lessons with made-up results: {lesson: {N: (kernel, cuBLAS, cuBLAS name)}}."""
    rows = []
    for lesson_id, sizes in table.items():
        result = BenchResult(
            lesson=lesson_id,
            provenance=Provenance("2030-01-02T03:04:05+00:00", "test", "Test GPU", "9.0", 132, {}),
            l2_bytes=50 * 2**20,
            unit="TFLOP/s",
            kernel_name="k",
            rows=tuple(_row(n, *v) for n, v in sorted(sizes.items())),
        )
        rows.append(ClimbRow(get_lesson(lesson_id), result))
    return rows


# Kernel rates and cuBLAS in the same run, chosen so each verdict rule is exercised:
SYNTHETIC = {
    "day78": {4096: (10.0, 500.0, OLD_PEER)},
    "day79": {4096: (300.0, 600.0, PEER), 8192: (320.0, 640.0, PEER)},  # vs Day 78: rates (peers differ)
    "day80": {4096: (600.0, 600.0, PEER)},  # 2x rate, 2x ratio: faster; not measured at 8192
    "day81": {4096: (570.0, 500.0, PEER), 8192: (640.0, 640.0, PEER)},  # rate down, ratio up: faster
    "day82": {4096: (550.0, 500.0, PEER), 8192: (600.0, 640.0, PEER)},  # ratio 1.10 from 1.14: slower
    "day83": {4096: (500.0, 450.0, PEER), 8192: (606.0, 640.0, PEER)},  # ratio ~1.01x: no faster
}


def test_each_sentence_carries_its_own_numbers():
    s = what_each_step_bought(4096, _climb(SYNTHETIC))
    assert [x.day for x in s.steps] == [78, 79, 80, 81, 82, 83]
    rates = [SYNTHETIC[f"day{x.day}"][4096][0] for x in s.steps]
    for sentence, rate in zip(s.steps, rates, strict=True):
        assert sentence.rate == rate
        assert format_rate(rate) in sentence.text
    by_day = {x.day: x for x in s.steps}
    assert "0.02x cuBLAS (500 TFLOP/s in the same run)" in by_day[78].text
    assert by_day[78].verdict == story.FIRST and not by_day[78].not_faster
    # Day 79 against Day 78: different cuBLAS calls, so the rates decide (30x)
    assert by_day[79].ratio_gain is None and by_day[79].gain == pytest.approx(30.0)
    assert "30.00x the rate" in by_day[79].text and OLD_PEER in by_day[79].text
    assert by_day[79].verdict == story.FASTER
    # Day 80: 2x the rate and 2x the ratio
    assert "2.00x the rate, 2.00x the ratio to cuBLAS (Day 79: 0.50x)" in by_day[80].text
    # Day 81: slower in TFLOP/s but faster against its own run's cuBLAS: the ratio decides
    assert by_day[81].gain == pytest.approx(0.95) and by_day[81].ratio_gain == pytest.approx(1.14)
    assert by_day[81].verdict == story.FASTER and not by_day[81].not_faster
    # Day 82: the ratio fell by 3.5%: slower
    assert by_day[82].verdict == story.SLOWER and by_day[82].not_faster
    assert "Slower than Day 81" in by_day[82].text
    # Day 83: the rate fell 9%, but so did cuBLAS; the ratio moved by 1%: no faster, and said why
    assert by_day[83].verdict == story.SAME and by_day[83].not_faster
    assert "Not faster than Day 82" in by_day[83].text
    assert "500 TFLOP/s then, 450 TFLOP/s now" in by_day[83].text


def test_the_step_before_is_the_last_one_measured_at_that_size():
    s = what_each_step_bought(8192, _climb(SYNTHETIC))
    assert [x.day for x in s.steps] == [79, 81, 82, 83]  # Day 78 and Day 80 have no row at 8192
    assert s.steps[0].verdict == story.FIRST
    assert "Against Day 79: 2.00x the rate, 2.00x the ratio" in s.steps[1].text
    assert s.steps[3].verdict == story.SAME  # 606/640 against 600/640: 1.01x


def test_the_closing_lines_measure_the_distance_left():
    s = what_each_step_bought(4096, _climb(SYNTHETIC))
    first, left_cublas, left_peak = s.closing
    assert first == "From Day 78 to Day 83 at N = 4096: 10 TFLOP/s to 500 TFLOP/s, 50.00x."
    assert "Day 83 runs at 1.11x cuBLAS, 50 TFLOP/s above it (450 TFLOP/s in the same run)" in left_cublas
    assert (
        f"{500 / DATASHEET_PEAK_TFLOPS:.0%} of it, {format_rate(DATASHEET_PEAK_TFLOPS - 500)} below"
        in left_peak
    )
    assert f"cuBLAS reaches {450 / DATASHEET_PEAK_TFLOPS:.0%} of it" in left_peak
    behind = _climb({"day79": {4096: (300.0, 600.0, PEER)}})
    closing = what_each_step_bought(4096, behind).closing
    assert len(closing) == 2  # one step: no "from ... to ..." line
    assert "Day 79 runs at 0.50x cuBLAS, 300 TFLOP/s below it" in closing[0]


def test_other_numbers_give_other_sentences():
    # the function must follow the numbers: move one rate and the sentences move with it
    changed = json.loads(json.dumps(SYNTHETIC))
    changed["day83"]["4096"] = [540.0, 450.0, PEER]
    table = {k: {int(n): tuple(v) for n, v in d.items()} for k, d in changed.items()}
    s = what_each_step_bought(4096, _climb(table))
    last = s.steps[-1]
    assert format_rate(540.0) in last.text and last.verdict == story.FASTER
    assert "1.20x cuBLAS" in last.text
    assert s.closing[0].endswith("54.00x.")


def test_html_and_text():
    s = what_each_step_bought(4096, _climb(SYNTHETIC))
    html = s._repr_html_()
    assert html.count("<li>") == len(s.steps)
    assert html.count("not faster:</b>") == 1 and html.count("slower:</b>") == 1
    assert "Test GPU, 2030-01-02" in html
    text = str(s)
    assert text.splitlines()[0].startswith("What each step bought at N = 4096")
    assert all(x.text in text for x in s.steps) and repr(s) == text


def test_nothing_recorded():
    s = what_each_step_bought(4096, [])
    assert s.steps == () and s.closing == () and "nothing recorded yet" in str(s)


def test_the_judgement_threshold():
    assert story._judge(1 + SAME_WITHIN * 1.01) == story.FASTER
    assert story._judge(1 + SAME_WITHIN * 0.99) == story.SAME
    assert story._judge(1 - SAME_WITHIN * 0.99) == story.SAME
    assert story._judge(1 - SAME_WITHIN * 1.01) == story.SLOWER


# --- the shipped recordings ----------------------------------------------------------------
SHIPPED = recorded_climb(get_lesson("day85"), LESSONS.values())


def _expected_verdict(prev: SizeRow, at: SizeRow) -> str:
    """The rule, restated: ratios when both used the same cuBLAS call, rates otherwise."""
    if prev.peers and at.peers and prev.peers[0].name == at.peers[0].name:
        change = at.peers[0].ratio / prev.peers[0].ratio
    else:
        change = at.kernel.rate / prev.kernel.rate
    if change > 1 + SAME_WITHIN:
        return story.FASTER
    return story.SLOWER if change < 1 - SAME_WITHIN else story.SAME


@pytest.mark.parametrize("size", [4096, 8192])
def test_shipped_sentences_quote_the_recordings(size):
    assert SHIPPED, "the climb's recordings are shipped in evidence/<GPU>/bench/"
    measured = [(row, row.result.row(size)) for row in SHIPPED if size in row.result.sizes]
    s = what_each_step_bought(size)
    assert [x.day for x in s.steps] == [row.lesson.day for row, _ in measured]
    prev = None
    for sentence, (row, at) in zip(s.steps, measured, strict=True):
        assert sentence.text.startswith(f"Day {row.lesson.day}, {row.lesson.title}")
        assert format_rate(at.kernel.rate) in sentence.text
        assert f"{format_ratio(at.peers[0].ratio)} cuBLAS ({format_rate(at.peers[0].rate)}" in sentence.text
        assert sentence.verdict == (story.FIRST if prev is None else _expected_verdict(prev, at))
        prev = at
    last_row, last = measured[-1]
    assert (
        f"Day {last_row.lesson.day} reaches {last.kernel.rate / DATASHEET_PEAK_TFLOPS:.0%}" in s.closing[-1]
    )
    assert f"runs at {format_ratio(last.peers[0].ratio)} cuBLAS" in s.closing[-2]
    assert s.source.startswith(f"recorded on {SHIPPED[0].result.device}")


def test_the_page_quotes_no_recorded_number():
    # the notebook's prose must hold when the steps are recorded again: numbers come from cells
    nb = json.loads(get_lesson("day85").notebook_path.read_text(encoding="utf-8"))
    prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    recorded = {round(m.rate) for row in SHIPPED for at in row.result.rows for m in (at.kernel, *at.peers)}
    # numbers the prose may name whatever a recording says: tile sizes, problem sizes, the SM count, a clock
    constants = {128, 256, 1024, 2048, 4096, 8192, 132, 1830}
    for number in re.findall(r"(?<![\w.])\d[\d,]*(?![\w.])", prose):
        value = int(number.replace(",", ""))
        if value >= 100 and value not in constants:
            assert value not in recorded, f"the page's markdown quotes a recorded rate: {number}"
    # rates, ratios and shares of the peak are rendered, never written
    assert not re.search(r"\d\s*TFLOP/s", prose), "the page's markdown quotes a rate"
    assert not re.search(r"\d\.\d+x", prose), "the page's markdown quotes a ratio"
    assert not re.search(r"\d\s*%", prose.replace("2% either way", "")), (
        "the page's markdown quotes a percentage"
    )
