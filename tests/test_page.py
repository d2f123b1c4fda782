"""What a lesson page shows in each gate tier, and how it reports errors."""

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from course import evidence, gate
from course.errors import EnvironmentProblem
from course.gate import Gpu, Machine
from course.page import Message, Page

L4 = Machine(Gpu(0, "NVIDIA L4", (8, 9), 58, 99 * 1024, 2**34), None, None, {})
NO_GPU = Machine(None, "There is no NVIDIA driver on this machine.", "Use a GPU machine.", {})


@pytest.fixture
def shown(monkeypatch):
    out = []
    monkeypatch.setattr("course.page._display", out.append)
    return out


@pytest.mark.parametrize("machine, kind", [(NO_GPU, "info"), (L4, "warning")])
def test_page_without_the_hardware_explains_compile_checks_and_shows_the_recording(
    monkeypatch, shown, machine, kind
):
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    monkeypatch.setattr(gate, "probe", lambda: machine)
    page = Page("day76")
    assert page.status().kind == kind
    result = page.run()
    assert isinstance(result, evidence.Evidence) and result.passed
    texts = [str(m) for m in shown]
    assert texts[0].startswith("Not run here.")
    assert texts[1].startswith("Compile check: tma_tile.cu compiled for sm_90 without a GPU")


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
@pytest.mark.parametrize("lesson, sizes", [("day76", (256, 1024)), ("day78", (256, 512))])
def test_speed_button_measures_on_the_gpu(lesson, sizes, request):
    request.getfixturevalue(f"{lesson}_gpu")
    box = Page(lesson).speed(sizes=sizes, peak_size=None)
    button, status, shown = box.children
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
    from course import day76

    h200 = Machine(Gpu(0, "NVIDIA H200", (9, 0), 132, 227 * 1024, 2**37), None, None, {})
    monkeypatch.setattr(gate, "probe", lambda: h200)
    sentinel = object()
    monkeypatch.setattr("course.page._compile_in_background", lambda lesson: sentinel)
    seen = []

    class Result:
        passed = True
        lines = ["GPU: NVIDIA H200", "round trip: PASS."]

    def fake_run(progress, compiled=None, **kwargs):
        seen.append(compiled)
        return Result()

    monkeypatch.setattr(day76, "run", fake_run)
    page = Page("day76")
    page.run()
    page.run(grid=(3, 4), expect_pass=True)
    assert seen == [sentinel, None]
