"""What a lesson page shows in each gate tier, and how it reports errors."""

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook
from recordings import NOT_RECORDED, NOT_RECORDED_ON

from course.bench.spec import bench_spec
from course.errors import CourseError, EnvironmentProblem
from course.kernel import evidence, gate
from course.kernel.gate import Gpu, Machine
from course.kernel.host import host_of
from course.kernel.provenance import Provenance
from course.lessons import LESSONS
from course.page import Message, Page, show_refusal

L4 = Machine(Gpu(0, "NVIDIA L4", (8, 9), 58, 99 * 1024, 2**34), None, None, {})
NO_GPU = Machine(None, "There is no NVIDIA driver on this machine.", "Use a GPU machine.", {})


@pytest.fixture
def shown(monkeypatch):
    out = []
    monkeypatch.setattr("course.page._display", out.append)
    return out


# Every page without a GPU; the wrong-GPU tier (the same compile check, another banner) on one page.
_TIERS = [(lesson_id, NO_GPU, "info") for lesson_id in LESSONS] + [(next(iter(LESSONS)), L4, "warning")]


@pytest.mark.parametrize("lesson_id, machine, kind", _TIERS)
def test_page_without_the_hardware_explains_compile_checks_and_shows_the_recording(
    monkeypatch, shown, lesson_id, machine, kind
):
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    monkeypatch.setattr(gate, "probe", lambda: machine)
    page = Page(lesson_id)
    assert page.status().kind == kind
    result = page.run()
    if lesson_id in NOT_RECORDED:  # no recording yet: the page says so instead
        assert "Not recorded yet" in str(result)
    else:
        assert isinstance(result, evidence.Evidence) and result.passed
    texts = [str(m) for m in shown]
    assert texts[0].startswith("Not run here.")
    # The status line above gave the reason: the run cell points to it, never repeats it (issue 38).
    assert "status line at the top" in texts[0] and page.verdict().reason not in texts[0]
    lesson = LESSONS[lesson_id]
    assert texts[1].startswith(
        f"Compile check: {lesson.kernel_file} compiled for {lesson.arch} without a GPU"
    )
    # Said once per page: a second run cell shows its recording alone (issue 38).
    again = page.run()
    assert [str(m) for m in shown] == texts and again is not None


def test_a_run_before_any_status_line_gives_its_own_reason(monkeypatch, shown):
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    monkeypatch.setattr(gate, "probe", lambda: NO_GPU)
    page = Page(next(iter(LESSONS)))
    page.run()
    first = str(shown[0])
    assert first.startswith("Not run here.") and page.verdict().reason in first
    assert "status line" not in first


def _cases():
    return [
        (lesson.id, e)
        for lesson in LESSONS.values()
        if lesson.id not in NOT_RECORDED  # not recorded yet: the page says so (test above)
        for e in host_of(lesson).cases
    ]


@pytest.mark.parametrize("lesson_id, case", _cases(), ids=lambda x: getattr(x, "name", x))
@pytest.mark.parametrize("key", ["h100-80gb-hbm3", "h200"])
def test_every_case_is_recorded_with_the_outcome_its_page_promises(lesson_id, case, key):
    lesson = LESSONS[lesson_id]
    if lesson_id in NOT_RECORDED_ON.get(key, frozenset()):  # that GPU model has none of the lesson's
        assert not evidence.path_of(lesson, case.name, key).exists(), f"take {lesson_id} out for {key}"
        return
    ev = evidence.load(lesson, evidence.path_of(lesson, case.name, key))
    assert ev is not None, f"record it on that GPU: python -m course record {lesson_id}"
    assert ev.passed == case.expect_pass
    assert ev.output and evidence.device_key(ev.device) == key


def test_a_case_without_a_gpu_shows_its_own_recording(monkeypatch, shown, tmp_path):
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    monkeypatch.setattr(gate, "probe", lambda: NO_GPU)
    lesson_id, case = _cases()[0]
    path = tmp_path / "case.json"
    monkeypatch.setattr(evidence, "path_of", lambda lesson, name=None, key=None: path)
    page = Page(lesson_id)
    missing = page.run(case=case.name)
    assert isinstance(missing, Message) and missing.kind == "warning" and case.name in missing.text
    h200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {"cupy": "14"})
    ev = evidence.Evidence(lesson_id, Provenance.of(h200, "record"), ["GPU: x", "wrong at row 0"], False)
    path.write_text(__import__("json").dumps(ev.to_dict()))
    shown_run = page.run(case=case.name)
    assert isinstance(shown_run, evidence.Evidence) and not shown_run.passed
    assert "<b>failed</b>" in shown_run._repr_html_() and "wrong at row 0" in shown_run._repr_html_()
    with pytest.raises(Exception, match="no case 'nope'"):
        page.run(case="nope")
    # The old keyword still runs the same case, and says what it is called now.
    with pytest.warns(FutureWarning, match=rf"page.run\(case='{case.name}'\)"):
        old = page.run(experiment=case.name)
    assert isinstance(old, evidence.Evidence) and not old.passed


def test_show_refusal_returns_a_message_not_an_exception_repr():
    from course.hopper.tensormap import TileMap

    refused = show_refusal(lambda: TileMap(256, 256, 300, 64).check())
    assert isinstance(refused, Message) and refused.kind == "warning"
    assert refused.text.startswith("Refused: box-dim-max") and refused.error is not None
    assert "TensorMapRuleError(" not in repr(refused) and "TensorMapRuleError(" not in refused._repr_html_()
    accepted = show_refusal(lambda: TileMap(256, 256, 64, 64).check())
    assert accepted.kind == "ok" and accepted.error is None


def test_required_gpu_turns_cannot_run_into_an_error(monkeypatch):
    monkeypatch.setenv(gate.REQUIRE_GPU_ENV, "1")
    monkeypatch.setattr(gate, "probe", lambda: L4)
    page = Page("day78")
    with pytest.raises(
        EnvironmentProblem, match="COURSE_REQUIRE_GPU is set but this machine cannot run day78"
    ):
        page.status()
    with pytest.raises(EnvironmentProblem):
        page.run()


def test_verified_quotes_the_recorded_run():
    msg = Page("day78").verified()
    ev = evidence.load(Page("day78").lesson)
    assert msg.kind == "ok" and ev.device in msg.text and ev.output[-1] in msg.text


def test_message_escapes_its_text():
    html = Message("error", "<script>x</script>", "<b>")._repr_html_()
    assert "<script>" not in html and "&lt;b&gt;" in html


def test_a_course_error_in_a_notebook_cell_is_one_line_not_a_traceback():
    nb = new_notebook(
        cells=[
            new_code_cell("from course import Page\npage = Page('day76')"),
            new_code_cell("page.snippet('nope')"),
        ]
    )
    NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=120).execute()
    (err,) = nb.cells[1].outputs
    assert err["output_type"] == "error" and err["ename"] == "SnippetError"
    assert err["traceback"] == [f"SnippetError: {err['evalue']}"]
    assert "tma_tile.cu" in err["evalue"] and "no snippet named 'nope'" in err["evalue"]
    nbformat.validate(nb)


def test_speed_section_without_the_hardware_shows_recorded_figures_or_says_none(monkeypatch):
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    monkeypatch.setattr(gate, "probe", lambda: NO_GPU)
    section = Page("day78").speed()
    html = section._repr_html_()
    assert "Not measured here" in html
    assert ("recorded on" in html) or ("No recorded benchmark" in html)


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("lesson", [lesson for lesson in LESSONS.values() if bench_spec(lesson)], ids=str)
def test_speed_button_measures_on_the_gpu(lesson, gpu_for):
    gpu_for(lesson.id)
    sizes = bench_spec(lesson).page_sizes[:2]
    box = Page(lesson.id).speed(sizes=sizes)
    button, status, shown, _keys = box.children  # a LiveBox: its KeyGuard last
    box.measure()
    assert "Measured here, just now" in shown.value
    assert not button.disabled
    assert str(sizes[0]) in status.value  # a progress line per size


def test_default_learner_id_prefers_jupyterhub_and_refuses_bad_names(monkeypatch):
    from course.page import default_learner_id

    monkeypatch.setenv("JUPYTERHUB_USER", "jane.doe")
    assert default_learner_id() == "jane.doe"
    monkeypatch.setenv("JUPYTERHUB_USER", "../../etc")
    monkeypatch.setattr("getpass.getuser", lambda: "learner1")
    assert default_learner_id() == "learner1"
    monkeypatch.setattr("getpass.getuser", lambda: "bad/name")
    assert default_learner_id() is None


def test_a_page_that_runs_compiles_in_the_background_and_uses_it_once(monkeypatch, shown):
    h200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {})
    monkeypatch.setattr(gate, "probe", lambda: h200)
    sentinel = object()
    monkeypatch.setattr("course.page._compile_in_background", lambda lesson: sentinel)
    seen = []

    class Result:
        passed = True
        lines = ["GPU: NVIDIA H200", "round trip: PASS."]

    def fake_run(lesson, progress, compiled=None, **kwargs):
        seen.append(compiled)
        return Result()

    monkeypatch.setattr("course.page.run_lesson", fake_run)
    page = Page("day76")
    page.run()
    page.run(grid=(3, 4), expect_pass=True)
    assert seen == [sentinel, None]


def test_the_ptxas_report_waits_for_the_page_compile_before_its_own(monkeypatch):
    h200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {})
    monkeypatch.setattr(gate, "probe", lambda: h200)
    monkeypatch.setattr("course.page._compile_in_background", lambda lesson: object())
    order = []
    monkeypatch.setattr("course.page.wait", lambda futures: order.append(("wait", list(futures))))
    monkeypatch.setattr(
        "course.kernel.ptxas.report", lambda lesson, defines: order.append(("report", defines))
    )
    page = Page("day82")
    prefetch = page._prefetch
    assert prefetch is not None
    page.ptxas()
    assert order == [("wait", [prefetch]), ("report", None)]
    assert page._prefetch is prefetch  # still there for page.run(), which uses the compile


def _first_climbing() -> str:
    """The first lesson whose page has a recorded climb to draw (a step of one, or the finale)."""
    from course.bench.climb import recorded_climb

    return next(lid for lid in LESSONS if recorded_climb(LESSONS[lid], LESSONS.values()))


def test_a_page_whose_benchmark_is_no_climb_step_shows_the_table_alone(shown):
    # Day 76 (GB/s) is a step of no climb: no empty plot is drawn, and nothing is displayed beside it.
    lesson_id = next(lid for lid in LESSONS if bench_spec(LESSONS[lid]) is not None)
    assert lesson_id < _first_climbing()
    said = Page(lesson_id).climb()
    assert shown == [] and "<img" not in said._repr_html_() and "nothing recorded yet" in said._repr_html_()


def test_the_climb_draws_its_chart_once_and_a_second_table_alone(shown):
    from course.picture import Picture

    lesson_id = _first_climbing()
    page = Page(lesson_id)
    first = page.climb()
    assert isinstance(first, Picture) and len(shown) == 1 and "4096" in shown[0]._repr_html_()
    table = page.climb(size=8192, chart=False)
    assert not isinstance(table, Picture) and len(shown) == 1
    assert "8192" in table._repr_html_() and "<img" not in table._repr_html_()


@pytest.mark.slow
def test_the_page_compile_check_and_try_mine_of_an_unchanged_copy_build_the_same_cubin(workspace):
    """Day 85 runs at N = 4096, not at its kernel's default: both compile at the run's size (issue 22)."""
    import re

    from course.kernel.compile import compile_offline
    from course.tryout.sandbox import run_variant
    from course.tryout.workspace import learner_copy

    page = Page("day85")
    if page.verdict().runs:
        pytest.skip("a GPU here runs day85: try_mine runs it instead of compile-checking it")
    lesson = page.lesson
    assert lesson.run_defines, "the premise: Day 85 runs at a size other than its kernel's default"
    try:
        compile_offline(lesson, defines=lesson.run_defines)
    except CourseError as e:  # NVRTC missing: the page's message says so, and there is nothing to compare
        pytest.skip(f"no NVRTC here: {e}")
    size = re.compile(r"(\d+) bytes of cubin")
    on_page = size.search(page.compile_check().text)
    copy = learner_copy(lesson)
    tried = size.search(run_variant(lesson, copy.path, 20.0).headline)
    assert on_page and tried, (page.compile_check().text, tried)
    assert on_page.group(1) == tried.group(1)


def test_the_finale_says_why_there_is_no_measuring_button_on_a_machine_that_cannot_run_it(shown, monkeypatch):
    lesson_id = _first_climbing()
    cannot = gate.Verdict(LESSONS[lesson_id], "no-gpu", "There is no NVIDIA driver on this machine.", "")
    monkeypatch.setattr(Page, "verdict", lambda self: cannot)
    Page(lesson_id).climb(measure=True)
    said = [m for m in shown if isinstance(m, Message)]
    assert len(said) == 1 and said[0].text.startswith("No measuring button here: this machine cannot run")
    assert "a button below measures every step again" in said[0].text
    # The reason and whose recordings are shown are the status line's, said once on the page (issue 38).
    assert cannot.reason not in said[0].text and "recordings shown" not in said[0].text
    assert cannot.reason in Page(lesson_id).status().text
    shown.clear()
    Page(lesson_id).climb()  # no button promised: nothing to explain
    assert not [m for m in shown if isinstance(m, Message)]


@pytest.mark.parametrize(
    "machine, says",
    [
        (
            NO_GPU,
            "The recordings shown are the NVIDIA H100 80GB HBM3's, the GPU the course's learners run on",
        ),
        (
            L4,
            "The recordings shown are another GPU's, the NVIDIA H100 80GB HBM3: none of this machine's NVIDIA L4",
        ),
    ],
)
def test_a_page_that_cannot_run_says_whose_recordings_it_shows(monkeypatch, machine, says):
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    monkeypatch.delenv(evidence.DEVICE_ENV, raising=False)
    monkeypatch.setattr(gate, "probe", lambda: machine)
    page = Page("day80")
    assert says in page.status().text
    ev = page.evidence()
    assert isinstance(ev, evidence.Evidence) and ev.device == "NVIDIA H100 80GB HBM3"
    assert "NVIDIA H100 80GB HBM3" in ev._repr_html_()
    message = page.speed().message
    assert "recorded on NVIDIA H100 80GB HBM3" in message and says in message, message
