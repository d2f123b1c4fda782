"""course/bench/report.py: the table, the plot and the page's "How fast is it?" section.

The section is tested without a GPU (the recorded figures), and measuring
here on the simulated GPU of conftest.py.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from course._html import escape
from course.bench import Measurement, SpeedSection, Timing, bench_dir, load, plot, png_bytes, speed_section
from course.bench.arith import rate_text
from course.bench.report import table, table_rows
from course.bench.spec import SIZE_LABEL, bench_spec
from course.errors import CourseError, EnvironmentProblem
from course.kernel import gate
from course.lessons import get_lesson

from .conftest import BENCHED, SIM_GPU, synthetic

# -- text ------------------------------------------------------------------------


def test_rate_text():
    assert rate_text(4247.87, "GB/s") == "4,248 GB/s"
    assert rate_text(859.55, "TFLOP/s") == "859.5 TFLOP/s"
    assert rate_text(20.66, "TFLOP/s", with_unit=False) == "20.7"


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_table_lists_every_size_peer_ceiling_and_reason(lesson_id):
    result = synthetic(lesson_id, ceilings={"best of the run": 1234.5})
    text = table(result)
    lines = text.splitlines()
    assert lines[0] == f"{lesson_id}: {result.kernel_name} on {result.summary()}"
    for n in result.sizes:
        assert re.search(rf"^\s*{n}\s", text, re.M)
    for name in result.peer_names:
        assert f"{name} {result.unit} (kernel/peer)" in lines[1]
    assert set(lines[2].replace(" ", "")) == {"-"}
    assert "ceiling, best of the run: 1,234.5" in text
    assert "- A measured reason: 1.5 ms [measured] from <the> run & its numbers" in text
    assert "- Not measured here: n/a [not measured]" in text
    assert "note: a note <with> markup" in text
    header, *body = table_rows(result)
    assert len(body) == len(result.rows) and all(len(r) == len(header) for r in body)
    first = result.rows[0]
    for cell, peer in zip(body[0][3:-1], first.peers, strict=True):
        assert cell == f"{rate_text(peer.rate, result.unit, with_unit=False)} ({peer.ratio:.2f}x)"
    assert (
        body[0][-1] == "0.02" and body[1][-1] == "2.10,\u00a0cached"
    )  # compile seconds, cache hit (one unbreakable cell)


def _with_kernel_times(result, *times: tuple[float, float, float]):
    rows = tuple(
        replace(row, kernel=Measurement("kernel", Timing(med, lo, hi, 20, 4, 8), row.kernel.rate))
        for row, (med, lo, hi) in zip(result.rows, times, strict=False)
    )
    return replace(result, rows=rows)


def test_times_under_a_tenth_of_a_millisecond_are_in_microseconds():
    result = _with_kernel_times(
        synthetic(BENCHED[0], sizes=(256, 512, 1024)),
        (0.0042, 0.004, 0.0046),
        (0.1, 0.099, 0.1),
        (0.25, 0.2, 0.3),
    )
    body = table_rows(result)[1:]
    assert body[0][1] == "4.2 µs (4 µs-4.6 µs)"
    assert body[1][1] == "0.1 ms (99 µs-0.1 ms)"
    assert body[2][1] == "0.25 ms (0.2 ms-0.3 ms)"


# -- the plot ------------------------------------------------------------------------


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_plot_has_log2_sizes_the_kernel_its_peers_and_the_ceilings(lesson_id):
    result = synthetic(lesson_id, ceilings={"copy, best": 2500.0})
    (ax,) = plot(result).axes
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(n) for n in result.sizes]
    lines = ax.get_lines()
    labels = [line.get_label() for line in lines]
    assert labels == [result.kernel_name, *result.peer_names, f"copy, best: {rate_text(2500.0, result.unit)}"]
    assert list(lines[0].get_xdata()) == list(result.sizes)
    assert list(lines[0].get_ydata()) == [r.kernel.rate for r in result.rows]
    for line, name in zip(lines[1:], result.peer_names, strict=False):
        assert list(line.get_ydata()) == [r.peer(name).rate for r in result.rows]
    assert set(lines[-1].get_ydata()) == {2500.0}  # the ceiling: a flat line
    assert ax.get_title() == f"{lesson_id}: NVIDIA H200, 2026-11-30"
    assert png_bytes(result)[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_size_axis_says_what_n_is_for_the_lesson(tmp_path):
    # attention's N is the sequence length (issue 41's pages), a GEMM's the matrix side
    from course.bench import write
    from course.lessons import get_lesson

    spec = bench_spec(get_lesson("day88"))
    assert spec is not None and spec.size_label.startswith("S, the sequence length")
    result = synthetic("day88")
    assert plot(result, spec.size_label).axes[0].get_xlabel() == spec.size_label
    assert plot(synthetic(BENCHED[0])).axes[0].get_xlabel() == SIZE_LABEL == "N (matrix is N x N)"
    _, png_path = write(result, tmp_path, spec.size_label)
    assert png_path.read_bytes() == png_bytes(result, spec.size_label) != png_bytes(result)


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_rate_axis_is_linear_from_zero_when_the_kernel_is_near_its_peers(lesson_id):
    (ax,) = plot(synthetic(lesson_id, kernel_rates=lambda n: 600.0, peer_rate=1000.0)).axes
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
    assert "log" not in ax.get_ylabel()


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_rate_axis_is_logarithmic_when_the_kernel_is_far_below_its_best_peer(lesson_id):
    # 20 against 1000: on a linear axis from zero the kernel's curve would lie flat on the axis.
    (ax,) = plot(synthetic(lesson_id, kernel_rates=lambda n: 20.0, peer_rate=1000.0, ceilings={})).axes
    assert ax.get_yscale() == "log" and "log scale" in ax.get_ylabel()


def test_a_ceiling_far_above_the_kernel_makes_the_axis_logarithmic_too():
    lesson_id = BENCHED[0]
    near = synthetic(
        lesson_id, kernel_rates=lambda n: 100.0, peer_rate=100.0, peers=(), ceilings={"peak": 900.0}
    )
    far = replace(near, ceilings={"peak": 1100.0})
    assert plot(near).axes[0].get_yscale() == "linear"
    assert plot(far).axes[0].get_yscale() == "log"


# -- the page's section without a GPU ------------------------------------------------


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_speed_section_shows_the_recorded_figures(no_gpu, tmp_path, lesson_id):
    lesson = get_lesson(lesson_id)
    result = synthetic(lesson_id, device="<b>H200</b> & co")
    png = png_bytes(result)
    (tmp_path / f"{lesson_id}.json").write_text(result.to_json(), encoding="utf-8")
    (tmp_path / f"{lesson_id}.png").write_bytes(png)
    section = speed_section(lesson, directory=tmp_path)
    assert isinstance(section, SpeedSection)
    assert not section.measured_here and section.result == result and section.png == png
    message = section.message
    # The reason is the status line's; the section says only that this machine cannot (issue 38).
    assert message.startswith("Not measured here: this machine cannot run the kernel (the status line")
    assert "There is no NVIDIA driver" not in message
    # No GPU here: the page has no button to press; it says where one appears.
    assert "On a GPU that runs this lesson a button appears to time it there." in message
    assert "press" not in message.lower()
    assert "recorded on <b>H200</b> & co (compute capability 9.0, driver 580.159.04) on 2026-11-30" in message
    assert f"by: python -m course bench {lesson_id}." in message
    page = section._repr_html_()
    assert "&lt;b&gt;H200&lt;/b&gt; &amp; co" in page and "<b>H200</b>" not in page
    assert "data:image/png;base64," in page and "<table>" in page
    assert "<b>What the numbers say</b>" in page
    assert "from &lt;the&gt; run &amp; its numbers" in page and "a note &lt;with&gt; markup" in page
    assert str(result.sizes[-1]) in str(section)


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_speed_section_quotes_the_lessons_findings(no_gpu, tmp_path, lesson_id):
    lesson = get_lesson(lesson_id)
    spec = bench_spec(lesson)
    result = synthetic(lesson_id)
    (tmp_path / f"{lesson_id}.json").write_text(result.to_json(), encoding="utf-8")
    section = speed_section(lesson, directory=tmp_path)
    expected = tuple(spec.findings(result)) if spec.findings else ()
    assert section.findings == expected
    page, text = section._repr_html_(), str(section)
    for finding in expected:
        assert f"<li>{escape(finding)}</li>" in page
        assert f"- {finding}" in text
    if expected:  # rendered from this result's numbers: the largest size is named, in a sentence or
        # in the lesson's own table the section shows beside them (Day 87: the sentence says only the pairing)
        named = any(str(result.sizes[-1]) in f for f in expected)
        assert named or str(result.sizes[-1]) in str(section.own_table)
        if section.own_table is not None:  # the lesson's table in place of the engine's, not beside it
            assert section.own_table._repr_html_() in page and "kernel time (median, min-max)" not in page


def test_many_numbers_come_folded_and_few_open(no_gpu, tmp_path):
    from course.bench.report import OPEN_REASONS
    from course.bench.result import Reason

    lesson_id = BENCHED[0]
    for count, folded in ((OPEN_REASONS, False), (OPEN_REASONS + 1, True)):
        reasons = tuple(
            Reason(f"finding {i}", float(i), "x", "measured", f"detail {i}") for i in range(count)
        )
        (tmp_path / f"{lesson_id}.json").write_text(
            synthetic(lesson_id, reasons=reasons).to_json(), encoding="utf-8"
        )
        page = speed_section(get_lesson(lesson_id), directory=tmp_path)._repr_html_()
        assert ("<details><summary><b>What the numbers say</b>" in page) == folded
        assert (f"all {count} numbers" in page) == folded
        assert all(f"finding {i}</td>" in page for i in range(count))  # folded, not left out


def test_an_unlike_peer_gets_its_rate_and_no_ratio_anywhere(no_gpu):
    # Day 87 (issue 35): cuBLASLt's default promotes its FP8 accumulator and the default build does
    # not, so the page quotes no ratio between them: not in the table, not in the listed numbers.
    from course.lessons.day87 import bench as day87

    lesson = get_lesson("day87")
    spec = bench_spec(lesson)
    assert spec is not None and spec.unlike == (day87.LT,)
    recorded = load("day87")
    assert recorded is not None
    section = speed_section(lesson)
    page, text = section._repr_html_(), str(section)
    html_rows = re.findall(r"<tr>.*?</tr>", page, re.S)
    for row in recorded.rows:
        unlike, like = row.peer(day87.LT), row.peer(day87.LT_FAST)
        # The row of this size in the table, as HTML and as text: another row's ratio may read the same.
        in_html = [r for r in html_rows if re.search(rf">{row.size}</td>", r)]
        in_text = [line for line in text.splitlines() if re.match(rf"\s*{row.size}\s", line)]
        assert len(in_html) == 1 and len(in_text) == 1, (row.size, in_html, in_text)
        for shown in (in_html[0], in_text[0]):
            assert f"({unlike.ratio:.2f}x)" not in shown or f"({unlike.ratio:.2f}x)" == f"({like.ratio:.2f}x)"
            assert f"({like.ratio:.2f}x)" in shown
        assert f"Against {day87.LT} at N={row.size}" not in page
        assert f"Against {day87.LT_FAST} at N={row.size}" in page
    header, *body = table_rows(recorded, spec.unlike)
    at = recorded.peer_names.index(day87.LT) + 3
    assert header[at] == f"{day87.LT} {recorded.unit}" and all("x)" not in r[at] for r in body)
    # Without the spec's word every peer keeps its ratio (the other lessons).
    assert all("x)" in r[at] for r in table_rows(recorded)[1:])


def test_no_reasons_no_heading(no_gpu, tmp_path):
    lesson_id = BENCHED[0]
    (tmp_path / f"{lesson_id}.json").write_text(synthetic(lesson_id, reasons=()).to_json(), encoding="utf-8")
    page = speed_section(get_lesson(lesson_id), directory=tmp_path)._repr_html_()
    assert "What the numbers say" not in page and "<table>" in page


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_speed_section_redraws_a_missing_plot(no_gpu, tmp_path, lesson_id):
    (tmp_path / f"{lesson_id}.json").write_text(synthetic(lesson_id).to_json(), encoding="utf-8")
    section = speed_section(get_lesson(lesson_id), directory=tmp_path)
    assert section.png is not None and section.png[:4] == b"\x89PNG"


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_speed_section_shows_the_committed_evidence(no_gpu, lesson_id):
    section = speed_section(get_lesson(lesson_id))
    recorded = load(lesson_id)
    assert section.result == recorded
    if recorded is None:
        assert section.png is None and "No recorded benchmark is in this checkout" in section.message
    else:  # the recorded plot, not redrawn
        assert section.png == (bench_dir() / f"{lesson_id}.png").read_bytes()
        assert f"recorded on {recorded.device}" in section.message


@pytest.mark.parametrize("lesson_id", BENCHED)
def test_speed_section_says_when_nothing_is_recorded(no_gpu, tmp_path, lesson_id):
    section = speed_section(get_lesson(lesson_id), directory=tmp_path)
    assert section.result is None and section.png is None and section.findings == ()
    # Outside the course's folder the file is named alone: a page never shows a machine's absolute path.
    assert f"No recorded benchmark is in this checkout ({lesson_id}.json)" in section.message
    assert str(tmp_path) not in section.message
    assert f"python -m course bench {lesson_id} on a Hopper GPU records one" in section.message


def test_a_missing_benchmark_in_the_course_is_named_from_the_course_root(no_gpu, tmp_path, monkeypatch):
    from course import _paths

    monkeypatch.setattr(_paths, "repo_root", lambda: tmp_path)
    folder = tmp_path / "evidence" / "some-gpu" / "bench"
    folder.mkdir(parents=True)
    section = speed_section(get_lesson(BENCHED[0]), directory=folder)
    assert f"(evidence/some-gpu/bench/{BENCHED[0]}.json)" in section.message
    assert "No recorded benchmark" in section._repr_html_() and "<table>" not in section._repr_html_()


def test_speed_section_raises_when_a_gpu_is_required(no_gpu, tmp_path, monkeypatch):
    lesson_id = BENCHED[0]
    monkeypatch.setenv(gate.REQUIRE_GPU_ENV, "1")
    (tmp_path / f"{lesson_id}.json").write_text(synthetic(lesson_id).to_json(), encoding="utf-8")
    with pytest.raises(EnvironmentProblem, match=f"cannot time {lesson_id}: There is no NVIDIA driver"):
        speed_section(get_lesson(lesson_id), directory=tmp_path)


def test_speed_section_refuses_bad_sizes_before_anything(no_gpu, tmp_path):
    with pytest.raises(CourseError, match="multiples of 64"):
        speed_section(get_lesson(BENCHED[0]), sizes=[100], directory=tmp_path)


# -- on the simulated GPU --------------------------------------------------------------


@pytest.mark.parametrize("lesson_id", ["day76", "day78"])
def test_speed_section_measures_here_when_the_gpu_runs_the_lesson(simulated_gpu, tmp_path, lesson_id):
    lines: list[str] = []
    section = speed_section(get_lesson(lesson_id), sizes=[64, 128], progress=lines.append, directory=tmp_path)
    assert section.measured_here and section.result is not None
    assert section.result.sizes == (64, 128) and section.result.device == SIM_GPU.name
    assert section.message == f"Measured here, just now, on {SIM_GPU.name} (compute capability 9.0)."
    assert section.result.command == f"the page's Measure button ({lesson_id})"
    assert section.png is not None and section.png[:4] == b"\x89PNG"
    spec = bench_spec(get_lesson(lesson_id))
    assert section.findings == tuple(spec.findings(section.result))
    assert sum(f"{lesson_id} N=" in line for line in lines) >= 2
    assert not list(tmp_path.iterdir())  # the page's measurement is shown, not written


def test_speed_section_shows_the_record_until_asked_to_measure(simulated_gpu, tmp_path):
    lesson_id = "day76"
    (tmp_path / f"{lesson_id}.json").write_text(synthetic(lesson_id).to_json(), encoding="utf-8")
    section = speed_section(get_lesson(lesson_id), directory=tmp_path, measure_here=False)
    assert not section.measured_here and simulated_gpu.events == 0
    assert section.message.startswith("Not measured here yet: the button above times it on this GPU.")


def test_peers_on_one_another_both_show():
    """Day 90's plot drew Day 89's kernel under cuDNN's line (0.1% apart) where the learner could not see
    it: each peer is drawn over the ones before it, narrower, so an earlier one stays a rim around it."""
    result = synthetic("day90")
    assert len(result.peer_names) >= 3
    (ax,) = plot(result).axes
    peers = ax.get_lines()[1 : 1 + len(result.peer_names)]
    assert [p.get_label() for p in peers] == list(result.peer_names)
    for under, over in zip(peers, peers[1:], strict=False):
        assert under.get_zorder() <= over.get_zorder()  # drawn first, so below
        assert under.get_linewidth() > over.get_linewidth() or over.get_linewidth() == 1.2
        assert under.get_markersize() > over.get_markersize() or over.get_markersize() == 4.0
    assert peers[0].get_linewidth() - peers[1].get_linewidth() > 0.75  # a rim wide enough to see
    assert all(ax.get_lines()[0].get_zorder() > p.get_zorder() for p in peers)  # the kernel over them all


def test_the_size_table_scrolls_sideways_with_a_shadow_at_an_edge_with_more(no_gpu):
    """Day 90's table (8 columns) was wider than the notebook at 1024 px: its last two columns lay
    beyond the edge with no scrollbar or shade to say so (a hidden scrollbar: macOS, headless
    Chromium). Every size table sits in ``scroll_box``: the box scrolls, its edges shade."""
    from course._html import SCROLL_CLASS, SCROLL_STYLE

    page = speed_section(get_lesson("day90"))._repr_html_()
    box = re.search(rf"<div class='{SCROLL_CLASS}'><table><tr>(.*?)</table></div>", page)
    assert box is not None, "the size table is not in the scrolling box"
    assert "memory-efficient backend" in box.group(1) and "compile s" in box.group(1)
    assert page.index(SCROLL_STYLE) < box.start()  # the box's look comes with it
    assert "style='overflow-x:auto'" not in page  # no bare box without the shades
