"""Every sentence a page renders that quotes a number agrees with the recorded evidence.

The pages quote numbers only through sentences the lesson packages render
from the recordings: the speed section's findings (``BenchSpec.findings``:
the ladder's in ``course.lessons._ladder``, Day 76's and Day 78's own) and Day 85's
"what each step bought". These tests read every such sentence, take its
numbers apart, and compare each with the evidence, computed here on their
own: a sentence written by hand, or one that kept an old number, fails. Each
check also runs on a copy of the recording with every rate changed, so a
sentence that does not follow the evidence cannot pass by luck.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from course.bench.report import findings
from course.bench.result import BenchResult, Measurement, Reason, SizeRow, load
from course.bench.spec import bench_spec
from course.lessons import LESSONS, get_lesson
from course.lessons._ladder import VARIANT_SIZES

NUM = r"[\d,]+(?:\.\d+)?"
LADDER = [lid for lid, lesson in LESSONS.items() if lesson.has_module("bench") and load(lid) is not None]
LADDER_STEPS = [lid for lid in LADDER if "ladder_spec" in get_lesson(lid).module("bench").__dict__]


def _n(text: str) -> float:
    return float(text.replace(",", ""))


def _r0(x: float) -> str:
    return f"{x:,.0f}"


def _r2(x: float) -> str:
    return f"{x:.2f}"


def _scaled(result: BenchResult, k: float, p: float) -> BenchResult:
    """The same recording with every kernel rate times k and every peer rate times p."""

    def m(x: Measurement, f: float, ratio: float | None = None) -> Measurement:
        return replace(x, rate=x.rate * f, ratio=ratio)

    rows = []
    for row in result.rows:
        kernel = m(row.kernel, k)
        peers = tuple(m(q, p, kernel.rate / (q.rate * p)) for q in row.peers)
        rows.append(replace(row, kernel=kernel, peers=peers))
    reasons = tuple(
        replace(r, value=r.value * 0.97, low=r.low * 0.95, high=r.high * 0.99)
        if r.low is not None and r.high is not None and r.value is not None
        else r
        for r in result.reasons
    )
    return replace(result, rows=tuple(rows), reasons=reasons)


def _versions(lesson_id: str) -> list[tuple[str, BenchResult]]:
    recorded = load(lesson_id)
    assert recorded is not None
    return [("recorded", recorded), ("changed", _scaled(recorded, 1.07, 0.93))]


def _row(result: BenchResult, n: int) -> SizeRow:
    return result.row(n)


def _check_ladder_sentence(lesson_id: str, result: BenchResult, sentence: str) -> None:
    m = re.fullmatch(rf"N = (\d+): ({NUM}) TFLOP/s, ({NUM})x cuBLAS \(({NUM}) TFLOP/s\)\.", sentence)
    if m:
        row = _row(result, int(m[1]))
        peer = row.peers[0]
        assert (m[2], m[3], m[4]) == (_r0(row.kernel.rate), _r2(row.kernel.rate / peer.rate), _r0(peer.rate))
        return
    m = re.fullmatch(
        rf"Against the previous step's recording at N = (\d+) \((\S+)\): ({NUM}) -> ({NUM}) TFLOP/s \(({NUM})x\)"
        rf"(?:; ratio to the cuBLAS timed beside each: ({NUM})x -> ({NUM})x)?\.",
        sentence,
    )
    if m:
        before = load(get_lesson(lesson_id).previous)
        assert before is not None
        n = int(m[1])
        old, new = _row(before, n), _row(result, n)
        assert m[2] == before.recorded_at[:10]
        assert (m[3], m[4], m[5]) == (
            _r0(old.kernel.rate),
            _r0(new.kernel.rate),
            _r2(new.kernel.rate / old.kernel.rate),
        )
        if m[6] is not None:
            assert (m[6], m[7]) == (_r2(old.peers[0].ratio), _r2(new.kernel.rate / new.peers[0].rate))
        return
    reasons = {r.title: r for r in result.reasons}
    m = re.fullmatch(
        rf"(.+) at N = (\d+): ({NUM})x the step as written \(({NUM})x to ({NUM})x over the interleaved repeats\), "
        rf"(within noise: the spread covers 1\.00x|faster in every repeat|slower in every repeat)"
        rf"(?:; ({NUM})x cuBLAS)?\.",
        sentence,
    )
    if m:
        name = m[1][0].lower() + m[1][1:]
        r = reasons[f"{name} at N={m[2]}"]
        assert (m[3], m[4], m[5]) == (_r2(r.value), _r2(r.low), _r2(r.high))
        noise = r.low <= 1.0 <= r.high
        assert m[6].startswith("within noise") == noise
        if not noise:
            assert m[6].startswith("faster") == (r.low > 1.0)
        if m[7] is not None:
            assert m[7] == _r2(reasons[f"{name} at N={m[2]} against cuBLAS"].value)
        return
    m = re.fullmatch(
        rf"(.+) at N = (\d+): ({NUM}) TFLOP/s against the step as written \(({NUM})x its ({NUM})\), timed alone "
        r"after the step in this recording, so no spread was recorded and the ratio cannot be told apart from "
        r"run-to-run drift\.",
        sentence,
    )
    if m:
        name = m[1][0].lower() + m[1][1:]
        r = reasons[f"{name} at N={m[2]}"]
        base = _row(result, int(m[2])).kernel.rate
        assert r.low is None and r.unit == "TFLOP/s"
        assert (m[3], m[4], m[5]) == (_r0(r.value), _r2(r.value / base), _r0(base))
        return
    pytest.fail(f"{lesson_id}: a sentence no check knows, so its numbers are not checked: {sentence!r}")


@pytest.mark.parametrize("lesson_id", LADDER_STEPS)
def test_every_ladder_finding_agrees_with_the_recording(lesson_id):
    lesson = get_lesson(lesson_id)
    for label, result in _versions(lesson_id):
        said = findings(lesson, result)
        assert said, f"{lesson_id} ({label}): no findings"
        for sentence in said:
            _check_ladder_sentence(lesson_id, result, sentence)
        # One sentence per size, and one per variant and variant size the recording holds.
        assert sum(s.startswith("N = ") for s in said) == len(result.rows)


def test_the_checks_catch_a_sentence_that_disagrees():
    result = load("day81")
    assert result is not None
    row = result.rows[-1]
    wrong = f"N = {row.size}: {_r0(row.kernel.rate + 5)} TFLOP/s, {_r2(row.peers[0].ratio)}x cuBLAS ({_r0(row.peers[0].rate)} TFLOP/s)."
    with pytest.raises(AssertionError):
        _check_ladder_sentence("day81", result, wrong)
    spread = (Reason("without setmaxnreg at N=4096", 0.98, "x", "measured", "", 0.96, 1.01),)
    noisy = replace(result, reasons=spread)
    with pytest.raises(AssertionError):  # the spread covers 1.0, so "slower in every repeat" is wrong
        _check_ladder_sentence(
            "day81",
            noisy,
            "Without setmaxnreg at N = 4096: 0.98x the step as written (0.96x to 1.01x over the "
            "interleaved repeats), slower in every repeat.",
        )
    with pytest.raises(pytest.fail.Exception):
        _check_ladder_sentence("day81", result, "At 8192 this step is within a few percent of step 4.")


@pytest.mark.parametrize("lesson_id", [lid for lid in ("day76", "day78") if lid in LADDER])
def test_the_seed_lessons_findings_quote_only_rates_and_ratios_of_the_recording(lesson_id):
    lesson = get_lesson(lesson_id)
    for label, result in _versions(lesson_id):
        for sentence in findings(lesson, result):
            if "peak" in sentence:  # a ceiling of the run, by its name
                name, value = sentence.rsplit(": ", 1)
                assert value == f"{result.ceilings[name]:,.0f} TFLOP/s.", (label, sentence)
                continue
            sizes = [int(s) for s in re.findall(r"N ?= ?(\d+)", sentence)]
            assert sizes, f"{lesson_id} ({label}): a finding that names no size: {sentence!r}"
            row = _row(result, sizes[0])
            rates = [row.kernel.rate, *(q.rate for q in row.peers)]
            for value in re.findall(rf"({NUM}) µs", sentence):
                assert value == f"{row.kernel.timing.median_ms * 1e3:.1f}", (label, sentence)
            for value in re.findall(rf"({NUM}) MB", sentence):
                assert value == f"{row.work / 1e6:.2f}", (label, sentence)
            for value, _unit in re.findall(rf"({NUM}) (GB/s|TFLOP/s)", sentence):
                digits = len(value.split(".")[1]) if "." in value else 0
                assert value in {f"{x:,.{digits}f}" for x in rates}, (label, sentence, value)
            ratios = {f"{a / b:.{d}f}" for a in rates for b in rates if b for d in (2, 3)}
            for value in re.findall(rf"({NUM})x", sentence):
                assert value in ratios, (label, sentence, value)


def test_day85_what_each_step_bought_agrees_with_each_steps_recording():
    from course.bench.climb import recorded_climb
    from course.lessons.day85 import LESSON
    from course.lessons.day85.story import SAME_WITHIN, what_each_step_bought

    rows = recorded_climb(LESSON, LESSONS.values())
    for size in VARIANT_SIZES:
        story = what_each_step_bought(size, rows)
        assert story.steps
        before = None
        for step in story.steps:
            recorded = load(next(lid for lid, lesson in LESSONS.items() if lesson.day == step.day))
            at = recorded.row(size)
            peer = at.peers[0]
            assert (
                f"{_r0(at.kernel.rate)} TFLOP/s, {_r2(at.kernel.rate / peer.rate)}x cuBLAS ({_r0(peer.rate)} TFLOP/s"
                in step.text
            )
            if before is not None:
                assert f"{_r2(at.kernel.rate / before.kernel.rate)}x the rate" in step.text
                if peer.name == before.peers[0].name:
                    change = (at.kernel.rate / peer.rate) / (before.kernel.rate / before.peers[0].rate)
                    assert f"{_r2(change)}x the ratio to cuBLAS" in step.text
                    same = 1 - SAME_WITHIN <= change <= 1 + SAME_WITHIN
                    assert ("Not faster than" in step.text) == same, step.text
            before = at
        last = story.steps[-1]
        gap = abs(last.cublas.rate - last.rate)
        assert any(
            f"{_r0(gap)} TFLOP/s {'below' if last.cublas.rate > last.rate else 'above'} it" in c
            for c in story.closing
        )


@pytest.mark.parametrize(
    "lesson_id", [lid for lid in LADDER if bench_spec(get_lesson(lid)).unit == "TFLOP/s"]
)
def test_the_timing_checks_floor_the_notes_state_is_the_one_the_recorded_checks_used(lesson_id):
    from course.kernel.host import timing_floor

    spec = bench_spec(get_lesson(lesson_id))
    note = next(n for n in spec.notes if "before timing" in n)
    recorded = load(lesson_id)
    fixed = "(kRelTolerance, floor 1)" in note  # attention (Days 88, 89): one floor at every S
    for row in recorded.rows:
        used = [float(x) for x in re.findall(r"max\(\|ref\|, ([\d.]+)\) floor", row.check)]
        want = 1.0 if fixed else timing_floor(row.size)
        assert used and all(u == pytest.approx(want, rel=1e-4) for u in used), row.check
        if row.size in spec.sizes and not fixed:
            assert f"{timing_floor(row.size):.4g} at N = {row.size}" in note, note


@pytest.mark.parametrize("lesson_id", [lid for lid in ("day86",) if lid in LADDER])
def test_day86s_shape_findings_agree_with_the_recording(lesson_id):
    """Day 86 says in a sentence only what its shape table does not (issue 38): how many shapes
    reach issue 39's target, 0.90x cuBLAS in CUDA graphs (one by one where a recording has no graph
    numbers), and the lowest; every number is the recording's."""
    from course.lessons.day86.bench import (
        GEMMEX,
        shape_name,
        shape_table,
    )  # the lesson's reader of its recording

    lesson = get_lesson(lesson_id)
    for label, result in _versions(lesson_id):
        rows = shape_table(result)
        said = findings(lesson, result)
        assert len(said) == 1, f"{lesson_id} ({label}): {said}"
        m = re.fullmatch(
            rf"(\d+) of the (\d+) shapes run at 0\.90x cuBLAS gemmEx or better (in CUDA graphs|launched one by one "
            rf"\(this recording has no CUDA-graph numbers\)); the lowest is (\d+x\d+x\d+), at ({NUM})x\. The table "
            rf"below gives every shape\.",
            said[0],
        )
        assert m, said[0]
        graphs = all(GEMMEX in r.graphs for r in rows)
        assert (m[3] == "in CUDA graphs") == graphs, (label, said[0])
        ratio = {r.shape: (r.graphs[GEMMEX].ratio if graphs else r.ratio) for r in rows}
        worst = min(ratio, key=ratio.__getitem__)
        assert (int(m[1]), int(m[2])) == (sum(x >= 0.90 for x in ratio.values()), len(rows)), (label, said[0])
        assert (m[4], m[5]) == (shape_name(worst), _r2(ratio[worst])), (label, said[0])
