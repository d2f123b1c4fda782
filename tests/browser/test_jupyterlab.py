"""The Day 76 page in a real JupyterLab, driven in headless Chromium.

What a learner does: open notebooks/day76_tma.ipynb, Run > Run All Cells,
wait for the kernel to go idle, read the highlighted kernel snippet, pick
an answer in the quiz, press Check, read the feedback, press Submit. The
test then finds the submission file on disk with that response.

Nothing touches the checkout: JupyterLab serves a temporary copy of the
course (``COURSE_ROOT`` points the course package at it, so the quiz's
Submit writes to ``<copy>/submissions/``), with its own config, data,
runtime, settings and workspace folders. The copy's quiz cell passes a
learner id (the shipped page has none, and without one Submit saves
nothing); no other cell changes.

Chromium is the system one (``/usr/bin/chromium``, Debian's package),
never a Playwright download. Without it, or without the ``playwright``
package, the test skips with the reason, unless COURSE_REQUIRE_BROWSER=1,
which makes that a failure (CI sets it). Every wait has a timeout, the
whole test has a hard limit (SIGALRM), and the server, the kernel and the
browser are stopped in finalizers whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LEARNER = "browser-e2e"
HARD_LIMIT_S = 420  # the whole test, server start to teardown
SERVER_START_S = 90
RUN_ALL_S = 240  # Run All on a 2-core machine without a GPU (the NVRTC compile check is the slow cell)
STEP_MS = 60_000  # any one browser action or wait

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _required() -> bool:
    return os.environ.get("COURSE_REQUIRE_BROWSER", "").strip().lower() in {"1", "true", "yes", "on"}


def _missing(reason: str) -> None:
    if _required():
        pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but {reason}")
    pytest.skip(reason)


class HardTimeout(Exception):
    pass


@pytest.fixture
def hard_limit() -> Iterator[None]:
    """Raise in the test after HARD_LIMIT_S, wherever it is blocked; the finalizers then clean up."""

    def expire(signum, frame):  # type: ignore[no-untyped-def]
        raise HardTimeout(f"the browser test ran past its hard limit of {HARD_LIMIT_S} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(HARD_LIMIT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def course_copy(tmp_path: Path) -> Path:
    """A copy of the course material; the quiz cell gets a learner id."""
    root = tmp_path / "course"
    for name in ("kernels", "content", "evidence"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("logs"))
    (root / "notebooks").mkdir()
    nb = json.loads((ROOT / "notebooks" / "day76_tma.ipynb").read_text("utf-8"))
    quiz_cells = [
        c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip() == "page.quiz()"
    ]
    assert len(quiz_cells) == 1, "the Day 76 page must have exactly one `page.quiz()` cell"
    quiz_cells[0]["source"] = [f'page.quiz(learner_id="{LEARNER}")']
    (root / "notebooks" / "day76_tma.ipynb").write_text(json.dumps(nb, indent=1), "utf-8")
    _write_hostile(root)
    return root


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _api(url: str, method: str = "GET") -> int:
    request = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(request, timeout=5) as response:
        return int(response.status)


@pytest.fixture
def jupyterlab(course_copy: Path, tmp_path: Path, hard_limit: None) -> Iterator[Callable[[str], str]]:
    """A JupyterLab server on 127.0.0.1 serving the copy; yields notebook name -> URL (with the token)."""
    port, token = _free_port(), os.urandom(16).hex()
    home = tmp_path / "jupyter"
    env = {
        **os.environ,
        "COURSE_ROOT": str(course_copy),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONWARNINGS": "ignore",
    }
    env.pop("COURSE_REQUIRE_GPU", None)
    # Render every cell (no windowing), so each output is in the DOM to be found.
    tracker = home / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}), "utf-8")
    # No "get notified about Jupyter news?" toast over the page (and no fetch from outside).
    notification = (
        home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    )
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}), "utf-8")
    log = (tmp_path / "jupyterlab.log").open("wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={course_copy / 'notebooks'}",
            f"--LabApp.user_settings_dir={home / 'settings'}",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        cwd=course_copy,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if server.poll() is not None:
                raise AssertionError(f"JupyterLab exited with {server.returncode}; log:\n{_tail(tmp_path)}")
            try:
                if _api(f"{base}/api/status?token={token}") == 200:
                    break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"JupyterLab did not answer in {SERVER_START_S} s; log:\n{_tail(tmp_path)}"
                )
            time.sleep(0.5)
        yield lambda notebook: f"{base}/lab/tree/{notebook}?token={token}"
    finally:
        signal.alarm(0)  # stopping is bounded by its own timeouts; never interrupt it half-way
        _stop(server, f"{base}/api/shutdown?token={token}")
        log.close()


def _tail(tmp_path: Path) -> str:
    return (tmp_path / "jupyterlab.log").read_text("utf-8", "replace")[-4000:]


def _stop(server: subprocess.Popen[bytes], shutdown_url: str) -> None:
    """Ask the server to shut down (it stops its kernels), then SIGTERM, then SIGKILL its process group."""
    if server.poll() is None:
        try:
            _api(shutdown_url, method="POST")
        except (urllib.error.URLError, OSError):
            pass
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(server.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    server.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue


@pytest.fixture
def browser_page(tmp_path: Path, hard_limit: None) -> Iterator[object]:
    if not CHROMIUM.is_file():
        _missing(f"{CHROMIUM} is not installed (Debian package 'chromium')")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the Python package 'playwright' is not installed (pip install -e '.[test]')")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),  # a fresh --user-data-dir
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
            timeout=STEP_MS,
        )
        try:
            context.set_default_timeout(STEP_MS)
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            signal.alarm(60)  # closing gets its own bound, even after the hard limit fired
            context.close()


def _screenshot(page, tmp_path: Path, name: str) -> Path:  # type: ignore[no-untyped-def]
    path = tmp_path / name
    page.screenshot(path=str(path))
    extra = os.environ.get("BROWSER_SCREENSHOT_DIR")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(extra) / name)
    return path


def test_run_all_answer_check_and_submit(browser_page, jupyterlab, course_copy: Path, tmp_path: Path):
    try:
        _learner_session(browser_page, jupyterlab("day76_tma.ipynb"), course_copy, tmp_path)
    except BaseException:
        _screenshot(browser_page, tmp_path, "day76-failure.png")
        raise


def _open_and_run_all(page, url: str):  # type: ignore[no-untyped-def]
    """Open a notebook, pick the kernel if asked, Run > Run All Cells, wait until every cell ran."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(url)
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    notebook.locator(".jp-Cell").first.wait_for()
    # The committed notebook names no kernel: JupyterLab asks, as it asks a learner.
    dialog = page.locator(".jp-Dialog", has_text="Select Kernel")
    try:
        dialog.wait_for(timeout=15_000)
    except PlaywrightTimeout:
        pass
    else:
        dialog.get_by_role("button", name="Select").click()
    # The kernel is up when the status bar says so.
    page.locator(".jp-StatusBar-Widget", has_text="| Idle").first.wait_for(timeout=STEP_MS * 2)
    idle = page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator[data-status='idle']"
    )
    idle.wait_for(timeout=STEP_MS * 2)

    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator(".lm-Menu-item:not(.lm-mod-hidden)", has_text="Run All Cells").first.click()

    # Done: every code cell has an execution count, none is "[*]", and the kernel is idle.
    deadline = time.monotonic() + RUN_ALL_S
    prompts = notebook.locator(".jp-CodeCell .jp-InputArea-prompt")
    while True:
        texts = [t.strip() for t in prompts.all_inner_texts()]
        if texts and all(t.rstrip(":").strip("[]").strip().isdigit() for t in texts) and idle.count() == 1:
            break
        assert time.monotonic() < deadline, f"Run All did not finish in {RUN_ALL_S} s: prompts {texts}"
        time.sleep(1)
    errors = notebook.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t]
    assert not tracebacks, tracebacks[:1]
    return notebook


def _learner_session(page, url: str, course_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    notebook = _open_and_run_all(page, url)

    # The highlighted snippet: pygments' inline-styled spans inside the snippet div.
    snippet = notebook.locator("div.course-snippet", has_text="snippet issue-tma")
    snippet.scroll_into_view_if_needed()
    assert notebook.locator("div.course-snippet span[style]").count() > 20
    assert "cp_async_bulk_tensor" in snippet.inner_text()
    _screenshot(page, tmp_path, "day76-snippet.png")

    # The quiz: answer question 1, Check, read the feedback.
    first = notebook.locator(
        ".widget-vbox", has=page.locator("text=how many threads of the 256-thread block")
    ).last
    first.scroll_into_view_if_needed()
    first.get_by_text("Exactly one thread, thread 0", exact=False).click()
    first.get_by_role("button", name="Check").click()
    feedback = first.locator(".quiz-feedback")
    feedback.wait_for()
    assert feedback.inner_text().startswith("Right.")
    assert "if (threadIdx.x == 0)" in feedback.inner_text()

    # Every option of the multiple-select questions can be read whole, not cut to "...".
    labels = notebook.locator(".widget-checkbox .widget-label-basic")
    assert labels.count() >= 4
    cut = labels.evaluate_all(
        "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"
    )
    assert cut == [], f"option text cut off: {cut}"

    page.get_by_role("button", name="Submit").click()
    status = notebook.locator("text=Saved 1 of")
    status.wait_for()
    status.scroll_into_view_if_needed()
    first.scroll_into_view_if_needed()
    shot = _screenshot(page, tmp_path, "day76-quiz.png")
    assert shot.stat().st_size > 10_000

    saved = course_copy / "submissions" / "day76" / f"{LEARNER}.json"
    data = json.loads(saved.read_text("utf-8"))
    assert data["responses"] == {"one-thread": "one"}
    assert data["learner"] == LEARNER and data["attempts"]["one-thread"] == 1
    assert not (ROOT / "submissions" / "day76" / f"{LEARNER}.json").exists(), "wrote into the checkout"
    print(f"browser test: {time.monotonic() - started:.1f} s from page load to the file on disk")


# ---------------------------------------------------------------------------
# A hostile quiz in the real page: no script may run.
#
# Each payload sets a flag on `window` if the browser ever runs it. A last
# cell displays the same kind of markup unescaped on purpose (a control):
# its flag must be set, which shows the browser does run such markup in a
# trusted output, so the quiz's flag staying unset is escaping at work.
PAYLOADS = (
    "<img src=x onerror=\"window.__xss='img'\">",
    "<script>window.__xss='script'</script>",
    "</pre><svg onload=\"window.__xss='svg'\"></svg>",
    '<a href="javascript:window.__xss=\'href\'" id="hostile-link">link</a>',
    "\u202e&lt;b&gt; `<img src=y onerror=\"window.__xss='code'\">`",
)
HOSTILE_QUIZ = """
[quiz]
id = "hostile"
title = {p0}
lesson = "day76"

[[questions]]
id = "s"
type = "single"
points = 1
prompt = {p1}
options = [{{ id = "a", text = {p0} }}, {{ id = "b", text = {p2} }}]
answer = "a"
explanation = {p3}
reference = {p4}

[[questions]]
id = "m"
type = "multiple"
points = 1
prompt = {p4}
options = [{{ id = "a", text = {p1} }}, {{ id = "b", text = {p3} }}]
answers = ["a"]
explanation = {p2}
reference = {p0}

[[questions]]
id = "n"
type = "numeric"
points = 1
prompt = {p2}
unit = {p0}
answer = 1
explanation = {p1}
reference = {p3}
"""


def _write_hostile(root: Path) -> None:
    encoded = {f"p{i}": json.dumps(p) for i, p in enumerate(PAYLOADS)}
    quiz = root / "content" / "quizzes" / "hostile.toml"
    quiz.write_text(HOSTILE_QUIZ.format(**encoded), "utf-8")
    cells = [
        "from course.quiz import show_quiz\n"
        f"show_quiz({str(quiz)!r}, learner_id={LEARNER!r}, submissions_dir={str(root / 'hostile-subs')!r})",
        f"from course.page import Message\nMessage('warning', {PAYLOADS[0]!r}, {PAYLOADS[2]!r})",
        "from IPython.display import HTML\nHTML('<img src=x onerror=\"window.__control=1\">')",
    ]
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": c,
            }
            for i, c in enumerate(cells)
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "notebooks" / "hostile.ipynb").write_text(json.dumps(nb, indent=1), "utf-8")


def test_a_hostile_quiz_runs_no_script_in_jupyterlab(browser_page, jupyterlab, tmp_path: Path):
    page = browser_page
    try:
        notebook = _open_and_run_all(page, jupyterlab("hostile.ipynb"))
        # Answer and Check every question, so explanations and references render too.
        for box in (0, 1):
            radio = notebook.locator(".widget-radio-box input[type=radio]").nth(box)
            radio.check()
            for button in notebook.get_by_role("button", name="Check").all():
                button.click()
            notebook.locator(".quiz-feedback").first.wait_for()
        notebook.locator(".widget-checkbox input[type=checkbox]").first.check()
        notebook.locator("input[placeholder='a number']").fill("<img src=z onerror=\"window.__xss='typed'\">")
        for button in notebook.get_by_role("button", name="Check").all():
            button.click()
        notebook.get_by_role("button", name="Submit").click()
        notebook.locator("text=Nothing was saved").wait_for()
        page.wait_for_timeout(1000)  # give any injected handler time to fire
        assert page.evaluate("window.__control") == 1, (
            "the control did not run: this check would prove nothing"
        )
        assert page.evaluate("window.__xss") is None, "a quiz payload ran as script"
        for selector in ("img[src=y]", "img[src=z]", "svg[onload]", "#hostile-link", "script:not([src])"):
            assert notebook.locator(f".jp-OutputArea {selector}").count() == 0, selector
        # The payloads are on the page, as text.
        assert notebook.get_by_text(PAYLOADS[1], exact=False).count() >= 1
        _screenshot(page, tmp_path, "hostile-quiz.png")
    except BaseException:
        _screenshot(page, tmp_path, "hostile-failure.png")
        raise
