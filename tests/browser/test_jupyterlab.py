"""Every page of the course in a real JupyterLab, driven in headless Chromium.

One JupyterLab server and one browser window serve the whole module. Every
page in the registry (``course.lessons.LESSONS``), and a hostile quiz page,
is opened in a JupyterLab tab of its own (the first from its URL, the others
from the file browser) and run as a learner runs it: Run > Run All Cells,
then wait until every code cell has run and the kernel is idle. The pages
run side by side: their kernels and the browser overlap their work, and
JupyterLab itself is loaded once, not once a page; every wait is bounded.

Then, for every page, what a learner sees:

- every figure cell (its source ends with a ``..._figure(...)`` call,
  ``page.climb(...)`` or ``page.timeline()``) shows a rendered ``<img>``
  whose picture is more than 200 px each way, not a text repr;
- no output anywhere is a bare repr (``<Figure size ...>``,
  ``<... object at 0x...>``, an exception's repr) or a traceback;
- the quiz shows an input for every option of its single- and
  multiple-choice questions; no two of them overlap and each sits inside
  its own label;
- where the page has an annotation exercise (``course.exercises.annotation``), every
  listing row is the source line exactly (line number, two spaces, the line
  with its indentation), one line high (no wrapping), the rows aligned;
- a screenshot of the whole notebook, one of its quiz and one of its
  exercise are kept as test artifacts (``conftest.py`` says where; the
  folder is printed at the end of the run).

The Day 76 page is also used end to end: read the highlighted snippet,
answer a question, Check, read the feedback, Submit, and find the
submission file on disk. The hostile quiz page checks that no quiz text
runs as script.

Nothing touches the checkout: JupyterLab serves a temporary copy of the
course (``COURSE_ROOT`` points the course package at it, so the quiz's
Submit writes to ``<copy>/submissions/``), with its own config, data,
runtime, settings and workspace folders. The copy's Day 76 quiz cell
passes a learner id (the shipped page has none, and without one Submit
saves nothing); no other cell changes.

Chromium is the system one (``/usr/bin/chromium``, Debian's package),
never a Playwright download. Without it, or without the ``playwright``
package, the tests skip with the reason, unless COURSE_REQUIRE_BROWSER=1,
which makes that a failure (CI sets it). Every wait has a timeout, every
test and the module's setup have a hard limit (SIGALRM), and the server,
the kernels and the browser are stopped in finalizers whatever happens.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from recordings import NOT_RECORDED

from course.exercises.annotation import load_exercise
from course.lessons import LESSONS
from course.page.jupyter_contents import served_options
from course.quiz.loader import load_quiz
from course.quiz.model import MultipleSelect, SingleChoice

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
    # Tabs that are not in front keep running their timers and rendering at full speed.
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
]
VIEWPORT = {"width": 1280, "height": 1000}
LEARNER = "browser-e2e"
HOSTILE = "hostile.ipynb"
SERVER_START_S = 90
KERNEL_READY_S = 120  # a kernel still starting this long after the last kernel of the batch went idle
RUN_ALL_S = 240  # Run All of one page on a 2-core machine without a GPU, the others running beside it
RENDER_ALL_S = 720  # every page, side by side, from the first tab opened to the last page done
TEST_LIMIT_S = 180  # any one test, after the module's setup
STEP_MS = 60_000  # any one browser action or wait
MIN_PICTURE_PX = 200
OUTPUTS_SETTLE_S = 3  # after Run All: images decoding, widgets drawing (a missing one is the finding)
ALIGN_SLACK_PX = 2  # sub-pixel layout: less than this is no visible shift or cut
# A targeted run (a look at a few pages on a busy machine): COURSE_BROWSER_PAGES=day86,day88 runs only
# those pages (and not the hostile page); the other pages' tests skip, saying so. CI runs every page:
# with COURSE_REQUIRE_BROWSER set, a selection is a failure.
PAGES_ENV = "COURSE_BROWSER_PAGES"

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The cells that must show a picture: the last line of the source is one of these calls.
# A cell that shows a picture; `page.climb(..., chart=False)` is a table alone.
FIGURE_CALL = re.compile(
    r"^\s*(?:[\w.]+_figure\(.*\)|page\.climb\((?!.*chart=False).*\)|page\.timeline\(\))\s*(?:#.*)?$"
)
# A figure cell drawn from the GPU's recordings: on a page not recorded yet (tests/recordings.py) it says so.
RECORDED_CALL = re.compile(r"^\s*page\.(?:climb|timeline)\(")
NOT_RECORDED_YET = "Not recorded yet"
# A repr where a picture, a table or a message should be.
BARE_REPR = re.compile(
    r"<[\w.]+ size [\d.]+x[\d.]+ with \d+ Axes>"  # a matplotlib figure's repr: <Figure size 750x750 with 1 Axes>
    r"|<[\w.]+ object at 0x[0-9a-fA-F]+>|\bobject at 0x[0-9a-fA-F]+"  # object.__repr__
)
LISTING_ROW = re.compile(r"^ *(\d+)(?:  (.*))?$", re.S)  # an exercise row: line number, two spaces, the line
EXCEPTION_REPR = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Problem|Failed)\(.*\)$")


def _required() -> bool:
    return os.environ.get("COURSE_REQUIRE_BROWSER", "").strip().lower() in {"1", "true", "yes", "on"}


def _missing(reason: str) -> None:
    if _required():
        pytest.fail(f"COURSE_REQUIRE_BROWSER is set, but {reason}")
    pytest.skip(reason)


class HardTimeout(Exception):
    pass


@contextmanager
def _hard_limit(seconds: int, what: str) -> Iterator[None]:
    """Raise HardTimeout after ``seconds``, wherever the code is blocked; finalizers then clean up."""

    def expire(signum, frame):  # type: ignore[no-untyped-def]
        raise HardTimeout(f"{what} ran past its hard limit of {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _selected() -> list[str]:
    """The notebooks the ``pages`` fixture runs: every page and the hostile one, or COURSE_BROWSER_PAGES's."""
    wanted = [w.strip() for w in os.environ.get(PAGES_ENV, "").split(",") if w.strip()]
    if not wanted:
        return [lesson.notebook for lesson in LESSONS.values()] + [HOSTILE]
    unknown = [w for w in wanted if w not in LESSONS]
    if unknown:
        pytest.fail(
            f"{PAGES_ENV}={os.environ[PAGES_ENV]!r}: {unknown} not in the registry ({', '.join(LESSONS)})"
        )
    if _required():
        pytest.fail(f"COURSE_REQUIRE_BROWSER is set (every page must run), but {PAGES_ENV} picks {wanted}")
    return [LESSONS[w].notebook for w in wanted]


@pytest.fixture(autouse=True)
def hard_limit_per_test() -> Iterator[None]:
    with _hard_limit(TEST_LIMIT_S, "the test"):
        yield


# ---------------------------------------------------------------------------
# The course copy, the server, the browser: one each for the module.


@pytest.fixture(scope="module")
def browser_available() -> None:
    if not CHROMIUM.is_file():
        _missing(f"{CHROMIUM} is not installed (Debian package 'chromium')")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("the Python package 'playwright' is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def course_copy(tmp_path_factory: pytest.TempPathFactory, browser_available: None) -> Path:
    """A copy of the course material: every registry page, the Day 76 quiz cell with a learner id."""
    root = tmp_path_factory.mktemp("course") / "course"
    for name in ("kernels", "content", "evidence"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("logs"))
    (root / "notebooks").mkdir()
    for lesson in LESSONS.values():
        shutil.copy(ROOT / "notebooks" / lesson.notebook, root / "notebooks" / lesson.notebook)
    nb_path = root / "notebooks" / LESSONS["day76"].notebook
    nb = json.loads(nb_path.read_text("utf-8"))
    quiz_cells = [c for c in nb["cells"] if c["cell_type"] == "code" and _source(c).strip() == "page.quiz()"]
    assert len(quiz_cells) == 1, "the Day 76 page must have exactly one `page.quiz()` cell"
    quiz_cells[0]["source"] = [f'page.quiz(learner_id="{LEARNER}")']
    nb_path.write_text(json.dumps(nb, indent=1), "utf-8")
    _write_hostile(root)
    return root


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _api(url: str, method: str = "GET") -> int:
    request = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(request, timeout=5) as response:
        return int(response.status)


@pytest.fixture(scope="module")
def jupyterlab(course_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """One JupyterLab server on 127.0.0.1 serving the copy, for the module."""
    tmp = tmp_path_factory.mktemp("jupyterlab")
    port, token = _free_port(), os.urandom(16).hex()
    home = tmp / "jupyter"
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
    log_path = tmp / "jupyterlab.log"
    log = log_path.open("wb")
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
            # window.jupyterapp: a test reads a page's model (is it modified?) from JupyterLab itself.
            "--LabApp.expose_app_in_browser=True",
            *served_options(),  # as scripts/course.sh serves
        ],
        cwd=course_copy,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with _hard_limit(SERVER_START_S + 10, "starting JupyterLab"):
            deadline = time.monotonic() + SERVER_START_S
            while True:
                if server.poll() is not None:
                    raise AssertionError(
                        f"JupyterLab exited with {server.returncode}; log:\n{_tail(log_path)}"
                    )
                try:
                    if _api(f"{base}/api/status?token={token}") == 200:
                        break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"JupyterLab did not answer in {SERVER_START_S} s; log:\n{_tail(log_path)}"
                    )
                time.sleep(0.25)
        yield Lab(base, token)
    finally:
        signal.alarm(0)  # stopping is bounded by its own timeouts; never interrupt it half-way
        _stop(server, f"{base}/api/shutdown?token={token}")
        log.close()


@dataclass
class Lab:
    base: str
    token: str

    def url(self, notebook: str) -> str:
        """The notebook's page (with the token)."""
        return f"{self.base}/lab/tree/{notebook}?token={self.token}"

    def kernels(self) -> dict[str, tuple[str, str]]:
        """Notebook path -> (its kernel's execution state as the server sees it: 'starting', 'idle',
        'busy', 'dead'; the kernel's id), from the server's sessions.

        From the server, not from the notebook's toolbar: JupyterLab draws the
        toolbar's kernel indicator only in a notebook that has been shown.
        """
        request = urllib.request.Request(f"{self.base}/api/sessions?token={self.token}")
        with urllib.request.urlopen(request, timeout=5) as response:
            sessions = json.loads(response.read())
        return {
            s["path"]: (
                (s.get("kernel") or {}).get("execution_state", "none"),
                (s.get("kernel") or {}).get("id", ""),
            )
            for s in sessions
        }

    def restart_kernel(self, kernel_id: str) -> None:
        """Restart one kernel, as a learner does from the Kernel menu; JupyterLab reconnects to it."""
        _api(f"{self.base}/api/kernels/{kernel_id}/restart?token={self.token}", method="POST")


def _tail(log_path: Path) -> str:
    return log_path.read_text("utf-8", "replace")[-4000:]


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


@pytest.fixture(scope="module")
def browser(browser_available: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium (a fresh profile) for the module; its window holds JupyterLab."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh --user-data-dir
    with sync_playwright() as pw:
        with _hard_limit(STEP_MS // 1000 + 10, "starting Chromium"):
            context = pw.chromium.launch_persistent_context(
                str(profile),
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_ARGS,
                viewport=VIEWPORT,
                timeout=STEP_MS,
            )
        try:
            context.set_default_timeout(STEP_MS)
            yield context
        finally:
            signal.alarm(60)  # closing gets its own bound, even after a hard limit fired
            try:
                context.close()
            finally:
                signal.alarm(0)


# ---------------------------------------------------------------------------
# Run All on every page, side by side in one JupyterLab window.

NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in front


@dataclass
class Tab:
    """One page in its own JupyterLab tab, from opening it to every cell run."""

    notebook: str
    page: Any  # the browser page (one JupyterLab window holds every notebook)
    panel_id: str  # the notebook panel's DOM id
    opened: float
    state: str = "loading"  # loading -> running -> done | failed
    ready_s: float = 0.0  # opening to an idle kernel
    seconds: float = 0.0  # opening to the last cell run
    error: str | None = None
    settled: int = 0  # polls in a row that found Run All finished
    restarted: bool = False  # its kernel sat in "starting" and was restarted once
    dialog_since: float | None = None  # a JupyterLab dialog has covered the window since then

    @property
    def panel(self) -> Any:
        return self.page.locator(f"#{self.panel_id}")

    def bring_to_front(self) -> None:
        """Click the notebook's tab, as a learner does, and wait until it is the one shown."""
        self.page.locator(f".lm-DockPanel-tabBar .lm-TabBar-tab[data-id='{self.panel_id}']").click()
        self.page.locator(f"#{self.panel_id}:not(.lm-mod-hidden)").wait_for()

    def fail(self, why: str) -> None:
        self.state, self.error = "failed", why


JS_STATE = """
panel => ({
  cells: panel.querySelectorAll('.jp-Cell').length,
  prompts: Array.from(panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt'))
    .map(p => p.textContent.trim().replace(/:$/, '').replace(/^\\[|\\]$/g, '').trim()),
})
"""


def _open(page: Any, notebook: str) -> Tab:
    """Open a notebook from the file browser (a double-click, as a learner does) in a tab of its own."""
    item = page.locator(".jp-DirListing-item", has=page.locator(".jp-DirListing-itemText", has_text=notebook))
    item.dblclick()
    return _opened(page, notebook)


def _opened(page: Any, notebook: str) -> Tab:
    title = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current", has_text=notebook)
    title.wait_for()
    panel_id = title.get_attribute("data-id")
    assert panel_id, f"the tab of {notebook} names no panel"
    page.locator(f"#{panel_id} .jp-Cell").first.wait_for()
    return Tab(notebook, page, panel_id, time.monotonic())


def _pick_kernel(page: Any) -> None:
    """A notebook that names no kernel: JupyterLab asks, as it asks a learner; take its choice."""
    dialog = page.locator(".jp-Dialog", has_text="Select Kernel")
    if dialog.count():
        dialog.get_by_role("button", name="Select").click()


def _run_all(tab: Tab) -> bool:
    """Bring the notebook to the front and Run > Run All Cells, as a learner does. False, with
    nothing run, when a JupyterLab dialog came up between the caller's check for one and these
    clicks (another page's "Select Kernel" under load: answered here, as ``_pick_kernel`` does); the
    caller polls again. A click that waits in vain with no dialog in the way fails as before."""
    # heavy: playwright, only where the browser tests run
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    if tab.page.locator(".lm-Menu").count():  # a menu left open by a try that a dialog cut short
        tab.page.keyboard.press("Escape")
    try:
        tab.bring_to_front()
        tab.page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        tab.page.locator(".lm-Menu-item:not(.lm-mod-hidden)", has_text="Run All Cells").first.click()
    except PlaywrightTimeoutError:
        if not tab.page.locator(".jp-Dialog").count():
            raise
        _pick_kernel(tab.page)
        return False
    return True


def _advance(tab: Tab, kernels: dict[str, tuple[str, str]], lab: Lab, progress: float) -> None:
    """One step: once the kernel is idle, bring the notebook to the front and Run All; notice the end.

    ``progress`` is when the batch last moved (a page opened, a kernel went
    idle, a restart): twelve kernels starting at once on two busy cores take
    a minute or more each, so a page waits on the batch, not on a clock of
    its own. A kernel that sits in "starting" KERNEL_READY_S past the last
    progress is restarted once (as a learner would from the Kernel menu),
    and fails the page only if it sits there that long again.
    """
    now = time.monotonic()
    state = tab.panel.evaluate(JS_STATE)
    kernel_state, kernel_id = kernels.get(tab.notebook, ("no session", ""))
    idle = kernel_state == "idle"
    if tab.state == "loading":
        _pick_kernel(tab.page)
        dialog = tab.page.locator(".jp-Dialog")
        if dialog.count():
            # A modal dialog covers the window (JupyterLab's kernel messages come and go under load):
            # clicking the tab now would wait on it. Wait for it to close, a poll at a time; one that
            # stays fails the page with its words.
            tab.dialog_since = tab.dialog_since or now
            if now - tab.dialog_since > KERNEL_READY_S:
                words = " ".join(dialog.first.inner_text().split())[:300]
                tab.fail(f"a JupyterLab dialog stayed open {KERNEL_READY_S} s: {words!r}")
            return
        tab.dialog_since = None
        if idle and state["cells"]:
            if not _run_all(tab):  # a dialog came up between the check above and the clicks
                tab.dialog_since = tab.dialog_since or now
                return
            tab.state, tab.ready_s = "running", now - tab.opened
        elif kernel_state == "dead":
            tab.fail("its kernel died while starting")
        elif now - max(progress, tab.opened) > KERNEL_READY_S:
            if kernel_id and not tab.restarted:
                lab.restart_kernel(kernel_id)
                tab.restarted = True
                tab.opened = now  # its wait starts again from the restart
            else:
                tab.fail(
                    f"the kernel was not idle {KERNEL_READY_S} s after the last page of the batch got going "
                    f"{'(and after one restart) ' if tab.restarted else ''}(kernel: {kernel_state})"
                )
        return
    # Done: no cell is queued or running ("[*]"), some cell ran, and the kernel is idle, on two polls
    # in a row. A cell that raises stops Run All: the cells after it go back to "[ ]", which is then
    # a failure found at once, not after RUN_ALL_S.
    numbers = state["prompts"]
    settled = idle and "*" not in numbers and any(n.isdigit() for n in numbers)
    tab.settled = tab.settled + 1 if settled else 0
    if tab.settled >= 2:
        not_run = [i for i, n in enumerate(numbers) if not n.isdigit()]
        if not_run:
            tab.fail(f"Run All stopped: code cells {not_run} (counting code cells from 0) did not run")
        else:
            tab.state, tab.seconds = "done", now - tab.opened
    elif now - tab.opened - tab.ready_s > RUN_ALL_S:
        tab.fail(f"Run All did not finish in {RUN_ALL_S} s: prompts {numbers}")


@pytest.fixture(scope="module")
def pages(browser: Any, jupyterlab: Lab, course_copy: Path) -> dict[str, Tab]:
    """Every registry page and the hostile page, Run All done: notebook name -> Tab.

    One JupyterLab window: the first page opens from its URL, the others from
    the file browser, each in its own tab; each runs as soon as its kernel is
    idle, so the kernels and the browser work side by side. A page that does
    not get there is a Tab with ``error`` set: its own tests fail, not the others.
    """
    names = _selected()
    started = time.monotonic()
    page = browser.pages[0] if browser.pages else browser.new_page()
    tabs: dict[str, Tab] = {}
    with _hard_limit(RENDER_ALL_S, "Run All of every page"):
        page.goto(jupyterlab.url(names[0]))
        page.locator(".jp-DirListing-item").first.wait_for()
        for name in names:
            try:
                _pick_kernel(page)
                tabs[name] = _opened(page, name) if name == names[0] else _open(page, name)
            except Exception as e:  # one page's trouble is that page's failure
                tabs[name] = Tab(name, page, "missing", time.monotonic())
                tabs[name].fail(f"opening it: {type(e).__name__}: {e}")
        running = [tab for tab in tabs.values() if tab.state == "loading"]
        progress = time.monotonic()  # the batch last moved: the last page opened or kernel went idle
        idle_before: set[str] = set()
        while running:
            time.sleep(0.25)
            try:
                kernels = jupyterlab.kernels()
            except (urllib.error.URLError, OSError):  # a server too busy to answer in 5 s: ask again
                continue
            idle_now = {path for path, (state, _) in kernels.items() if state == "idle"}
            if idle_now - idle_before:
                progress = time.monotonic()
            idle_before |= idle_now
            for tab in list(running):
                try:
                    _advance(tab, kernels, jupyterlab, progress)
                except Exception as e:
                    tab.fail(f"{type(e).__name__}: {e}")
                if tab.state in ("done", "failed"):
                    running.remove(tab)
    for tab in tabs.values():
        if tab.state == "done" or (tab.error or "").startswith("Run All stopped"):
            errors = tab.panel.locator(
                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
            )
            tracebacks = [t for t in errors.all_text_contents() if "Traceback" in t]
            if tracebacks:
                tab.fail(f"{tab.error or 'Run All ran'}; a cell printed a traceback: {tracebacks[0][:2000]}")
    times = ", ".join(
        f"{t.notebook} {t.ready_s:.0f}+{t.seconds - t.ready_s:.0f} s{' (kernel restarted once)' if t.restarted else ''}"
        for t in tabs.values()
    )
    print(
        f"Run All of {len(tabs)} pages side by side: {time.monotonic() - started:.1f} s (kernel idle + run: {times})"
    )
    return tabs


def _page(pages: dict[str, Tab], notebook: str) -> Tab:
    if notebook not in pages:
        pytest.skip(f"{notebook} is not among {PAGES_ENV}={os.environ.get(PAGES_ENV, '')!r}")
    tab = pages[notebook]
    if tab.error:
        pytest.fail(f"{notebook}: {tab.error}")
    tab.bring_to_front()
    return tab


# ---------------------------------------------------------------------------
# Screenshots


SHADOW_PX = 4  # the notebook toolbar's shadow over the top of the notebook panel
SHOT_WINDOW = {"width": VIEWPORT["width"], "height": 4000}  # taller strips, fewer round trips; same width
JS_GEOMETRY = """
(scroller, indices) => {
  const r = scroller.getBoundingClientRect();
  const top = r.top - scroller.scrollTop;
  const cells = scroller.querySelectorAll('.jp-Cell');
  const box = e => { const b = e.getBoundingClientRect(); return [b.left - r.left, b.top - top, b.right - r.left, b.bottom - top]; };
  return {
    window: [r.left, r.top, scroller.clientWidth, scroller.clientHeight],
    end: cells.length ? box(cells[cells.length - 1])[3] + 8 : scroller.scrollHeight,
    outputs: indices.map(i => box(cells[i].querySelector('.jp-OutputArea') || cells[i])),
  };
}
"""


def _screenshots(page: Any, folder: Path, shots: dict[str, int | None]) -> None:
    """Save the whole notebook (``None``) and the outputs of given cells (index) as PNG files.

    JupyterLab scrolls the notebook inside its own panel, so the browser's
    full-page screenshot shows one window's worth, and a taller window only
    grows the panel's scroll-past-end space. So the panel is scrolled a
    window at a time (the window made taller for fewer steps, the width the
    learner's) and the strips are joined; a cell's picture is cut from that.
    """
    import base64
    import io

    from PIL import Image

    scroller = page.locator(f"{NOTEBOOK} .jp-WindowedPanel-outer").first
    cdp = page.context.new_cdp_session(page)
    page.set_viewport_size(SHOT_WINDOW)
    try:
        page.wait_for_timeout(200)  # the panel takes the new size
        cells = [i for i in shots.values() if i is not None]
        geometry = scroller.evaluate(JS_GEOMETRY, cells)
        x, y, width, height = geometry["window"]
        end = min(int(geometry["end"]), scroller.evaluate("e => e.scrollHeight"))
        whole = Image.new("RGB", (int(width), end), "white")
        # The panel's top rows lie under the toolbar's shadow: each strip starts below it.
        clip = {"x": x, "y": y + SHADOW_PX, "width": width, "height": height - SHADOW_PX, "scale": 1}
        want = 0  # the first notebook row not in the picture yet
        while want < end:
            actual = scroller.evaluate(
                "(e, top) => { e.scrollTop = top; return e.scrollTop; }", max(want - SHADOW_PX, 0)
            )
            shot = cdp.send(
                "Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True, "clip": clip}
            )
            strip = Image.open(io.BytesIO(base64.b64decode(shot["data"])))
            first = actual + SHADOW_PX  # the notebook row at the strip's top
            start = max(want, first)
            whole.paste(strip.crop((0, start - first, strip.width, strip.height)), (0, start))
            if first + strip.height <= want:
                break  # the panel scrolls no further
            want = first + strip.height
        scroller.evaluate("e => { e.scrollTop = 0; }")
        outputs = iter(geometry["outputs"])
        for name, cell in shots.items():
            if cell is None:
                picture = whole
            else:
                left, upper, right, lower = (int(v) for v in next(outputs))
                picture = whole.crop((max(left, 0), max(upper, 0), min(right, whole.width), min(lower, end)))
            picture.save(folder / name, compress_level=1)
    finally:
        page.set_viewport_size(VIEWPORT)
        cdp.detach()


def _save_screenshot(page: Any, folder: Path, name: str) -> Path:
    """What the learner's window shows now."""
    path = folder / name
    page.screenshot(path=str(path), animations="disabled")
    return path


# ---------------------------------------------------------------------------
# What every page shows


def _cells(course_copy: Path, notebook: str) -> list[dict[str, Any]]:
    return json.loads((course_copy / "notebooks" / notebook).read_text("utf-8"))["cells"]


def _last_line(cell: dict[str, Any]) -> str:
    lines = [line for line in _source(cell).splitlines() if line.strip()]
    return lines[-1] if lines else ""


JS_CELLS = """
(nb, indices) => {
  const cells = Array.from(nb.querySelectorAll('.jp-Cell'));
  return {
    count: cells.length,
    cells: indices.map(i => {
      const cell = cells[i];
      if (!cell) return null;
      const area = cell.querySelector('.jp-OutputArea');
      return {
        source: (cell.querySelector('.jp-InputArea .cm-content') || {innerText: ''}).innerText,
        images: Array.from(cell.querySelectorAll('.jp-OutputArea img')).map(img => {
          const r = img.getBoundingClientRect();
          return {w: img.naturalWidth, h: img.naturalHeight, complete: img.complete,
                  shownW: Math.round(r.width), shownH: Math.round(r.height)};
        }),
        text: area ? area.innerText.slice(0, 300) : '',
      };
    }),
  };
}
"""

JS_OUTPUTS = """
nb => Array.from(nb.querySelectorAll('.jp-Cell')).flatMap((cell, i) =>
  Array.from(cell.querySelectorAll('.jp-OutputArea-output')).map(out =>
    ({cell: i, mime: out.getAttribute('data-mime-type') || '', text: out.innerText})))
"""

JS_OPTION_INPUTS = """
(nb, i) => {
  const cell = nb.querySelectorAll('.jp-Cell')[i];
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return Array.from(cell.querySelectorAll(
      '.jp-OutputArea input[type=radio], .jp-OutputArea input[type=checkbox]')).map(input => {
    const label = input.closest('label');
    return {type: input.type, box: box(input), label: label ? box(label) : null,
            text: label ? label.innerText.trim().slice(0, 90) : ''};
  });
}
"""

JS_LISTING = """
(nb, i) => {
  const cell = nb.querySelectorAll('.jp-Cell')[i];
  const area = cell.querySelector('.jp-OutputArea');
  return Array.from(area.querySelectorAll('.widget-hbox pre')).map(pre => {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
    const tops = new Set(rects.map(r => Math.round(r.top)));
    // What the learner can see of the line: up to the nearest box that cuts it off (a box that
    // scrolls keeps the rest within reach).
    let shown = Infinity;
    for (let e = pre; e && e !== area.parentElement; e = e.parentElement) {
      if (['hidden', 'clip'].includes(getComputedStyle(e).overflowX)) shown = Math.min(shown, e.getBoundingClientRect().right);
    }
    const r = pre.getBoundingClientRect();
    const textRight = Math.max(...rects.map(r => r.right));
    return {text: pre.innerText.replace(/\\n$/, ''), lines: tops.size, height: r.height,
            lineHeight: parseFloat(getComputedStyle(pre).lineHeight) || 0, left: r.left,
            hidden: Math.max(0, textRight - shown)};
  });
}
"""


# Outputs wider than their output area. JupyterLab then scrolls the whole output sideways,
# so the rest can be reached, but a table read with a scrollbar is a table half read.
JS_TOO_WIDE = """
nb => {
  const found = [];
  const cells = Array.from(nb.querySelectorAll('.jp-Cell'));
  cells.forEach((cell, i) => {
    for (const out of cell.querySelectorAll('.jp-OutputArea-output')) {
      const box = out.getBoundingClientRect();
      if (box.width === 0) continue;
      for (const e of out.querySelectorAll('table, pre, img, svg')) {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.width <= box.width + 1) continue;
        found.push({cell: i, tag: e.tagName.toLowerCase(), over: Math.round(r.width - box.width),
                    text: (e.innerText || '').trim().slice(0, 60)});
        break;
      }
    }
  });
  return found;
}
"""


def _overlap(a: list[float], b: list[float]) -> bool:
    """Two boxes (left, top, right, bottom) share an area (touching edges do not count)."""
    return min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5


def _inside(inner: list[float], outer: list[float], slack: float = 1.0) -> bool:
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


def _wait_until(what: str, seconds: float, probe: Callable[[], Any], ok: Callable[[Any], bool]) -> Any:
    """Poll ``probe`` until ``ok`` holds or ``seconds`` pass; return the last value either way."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


JS_FRESH_PAGE = """
async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session.kernel;
  const before = panel.context.model.dirty;
  // JupyterLab applies the kernel's language_info when this reply arrives (a callback registered
  // before ours): once ours has run, the page has had every change opening it makes.
  const info = await kernel.info;
  await new Promise(r => setTimeout(r, 0));
  return {before, after: panel.context.model.dirty, kernel: info.language_info,
          page: panel.context.model.getMetadata('language_info')};
}
"""


def test_a_freshly_opened_page_is_not_modified(jupyterlab: Lab, browser: Any, artifacts: Path):
    """Open a page, nothing typed: once its kernel has answered, JupyterLab holds it unmodified
    (issue 22: it wrote the kernel's language_info, with the Python version, over the page's, and
    marked every page modified as it opened). In a workspace of its own, so no other tab reopens."""
    name = LESSONS["day76"].notebook
    page = browser.new_page()
    try:
        page.goto(f"{jupyterlab.base}/lab/workspaces/fresh-page/tree/{name}?reset&token={jupyterlab.token}")
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
            " && window.jupyterapp.shell.currentWidget.sessionContext"
        )
        state = page.evaluate(JS_FRESH_PAGE)
        assert state["page"] == state["kernel"], state
        assert not state["before"] and not state["after"], f"{name} shows as modified as it opens: {state}"
        assert page.locator(".jp-mod-dirty").count() == 0, "a tab shows the modified mark"
    except BaseException:
        _save_screenshot(page, artifacts, "fresh-page-failure.png")
        raise
    finally:
        page.close()


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_every_page_shows_pictures_quiz_and_listing(
    lesson_id: str, pages, course_copy: Path, artifacts: Path
):
    lesson = LESSONS[lesson_id]
    tab = _page(pages, lesson.notebook)
    page, panel, stem = tab.page, tab.panel, Path(lesson.notebook).stem
    # A folded part (a heading saved collapsed, as Day 86's Stream-K section) is opened as a learner
    # opens it (View > Expand All Headings, Ctrl+Shift+Right), so that what is inside is looked at too.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:expand-all-headings')")
    page.wait_for_timeout(200)
    cells = _cells(course_copy, lesson.notebook)
    figures = [
        i for i, c in enumerate(cells) if c["cell_type"] == "code" and FIGURE_CALL.match(_last_line(c))
    ]
    quizzes = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "page.quiz(" in _source(c)]
    exercises = [
        i for i, c in enumerate(cells) if c["cell_type"] == "code" and "exercise_widget(" in _source(c)
    ]
    assert figures, (
        f"{lesson.notebook} has no figure cell (a `..._figure()`, `page.climb()` or `page.timeline()`)"
    )
    assert len(quizzes) == 1, f"{lesson.notebook} must have one `page.quiz()` cell"
    codings = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "page.coding(" in _source(c)]
    assert codings, f"{lesson.notebook} has no `page.coding()` cell (its coding exercise)"
    problems: list[str] = []

    # The pictures have arrived once every figure cell has a decoded image (bounded: a missing one is the finding).
    def good(image: dict[str, Any]) -> bool:
        return image["complete"] and image["w"] > MIN_PICTURE_PX and image["h"] > MIN_PICTURE_PX

    # A page not recorded yet has no timeline or climb to draw: those cells say so instead, in words.
    unrecorded = {
        i for i in figures if lesson_id in NOT_RECORDED and RECORDED_CALL.match(_last_line(cells[i]))
    }

    def arrived(i: int, c: dict[str, Any] | None) -> bool:
        if not c:
            return False
        if i in unrecorded:
            return NOT_RECORDED_YET in c["text"]
        return any(good(im) for im in c["images"])

    found = _wait_until(
        "pictures",
        OUTPUTS_SETTLE_S,
        lambda: panel.evaluate(JS_CELLS, figures),
        lambda v: all(arrived(i, c) for i, c in zip(figures, v["cells"], strict=True)),
    )
    assert found["count"] == len(cells), (
        f"{lesson.notebook}: {found['count']} cells on the page, {len(cells)} in the file"
    )

    # The screenshots first, so they are kept whatever the checks find.
    shots: dict[str, int | None] = {f"{stem}.png": None, f"{stem}-quiz.png": quizzes[0]}
    shots.update({f"{stem}-exercise{n}.png": i for n, i in enumerate(exercises, start=1)})
    shots.update({f"{stem}-coding{n}.png": i for n, i in enumerate(codings, start=1)})
    _screenshots(page, artifacts, shots)

    # The coding panel: an editor as wide as most of the notebook, holding the starter, and its buttons.
    for i in codings:
        seen = panel.evaluate(JS_CODING, i)
        if seen is None:
            problems.append(f"cell {i} `page.coding()` shows no coding panel")
            continue
        if seen["editor"] < 0.6 * seen["cell"]:
            problems.append(
                f"cell {i}: the coding editor is {seen['editor']:.0f} px of a {seen['cell']:.0f} px cell"
            )
        if not seen["text"].strip():
            problems.append(f"cell {i}: the coding editor is empty (the starter should be there)")
        missing = {"Check", "Hint", "Start again"} - set(seen["buttons"])
        if missing:
            problems.append(f"cell {i}: the coding panel lacks button(s) {sorted(missing)}")

    # Every figure cell shows a picture, not a text repr (a recorded one on a page not recorded yet: words).
    for i, seen in zip(figures, found["cells"], strict=True):
        call = _last_line(cells[i]).strip()
        assert seen["source"].strip().endswith(call), (
            f"cell {i} on the page is not `{call}`: {seen['source']!r}"
        )
        pictures = [im for im in seen["images"] if good(im) and im["shownW"] > 0 and im["shownH"] > 0]
        if i in unrecorded:
            if pictures or NOT_RECORDED_YET not in seen["text"]:
                problems.append(
                    f"cell {i} `{call}`: {lesson_id} is not recorded yet, so the cell should say "
                    f"{NOT_RECORDED_YET!r} and draw nothing (images: {len(pictures)}; output: "
                    f"{seen['text'][:200]!r})"
                )
        elif not pictures:
            problems.append(
                f"cell {i} `{call}` shows no picture over {MIN_PICTURE_PX} px "
                f"(images: {seen['images']}; output: {seen['text'][:200]!r})"
            )

    # No output anywhere is a bare repr.
    for out in panel.evaluate(JS_OUTPUTS):
        text = out["text"].strip()
        bare = BARE_REPR.search(text)
        if bare:
            problems.append(f"cell {out['cell']} shows a bare repr: {bare.group(0)!r} in {text[:160]!r}")
        for line in text.splitlines():
            if out["mime"] == "text/plain" and EXCEPTION_REPR.match(line.strip()):
                problems.append(f"cell {out['cell']} shows an exception's repr: {line.strip()[:160]!r}")

    # Nothing is wider than the notebook (a table, a diff, a picture).
    for wide in panel.evaluate(JS_TOO_WIDE):
        problems.append(
            f"cell {wide['cell']}: a <{wide['tag']}> is {wide['over']} px wider than its output area "
            f"({wide['text']!r})"
        )

    # The quiz: an input for every option; none overlaps another; each inside its own label.
    quiz = load_quiz(course_copy / "content" / "quizzes" / f"{lesson_id}.toml")
    expected = sum(len(q.options) for q in quiz.questions if isinstance(q, SingleChoice | MultipleSelect))
    inputs = _wait_until(
        "quiz inputs",
        OUTPUTS_SETTLE_S,
        lambda: panel.evaluate(JS_OPTION_INPUTS, quizzes[0]),
        lambda v: len(v) >= expected,
    )
    assert len(inputs) == expected, (
        f"the quiz shows {len(inputs)} option inputs; its file has {expected} options"
    )
    for a in range(len(inputs)):
        first = inputs[a]
        if first["label"] is None:
            problems.append(f"quiz option {first['text']!r}: its {first['type']} input has no label")
        elif not _inside(first["box"], first["label"]):
            problems.append(
                f"quiz option {first['text']!r}: its {first['type']} at {_fmt(first['box'])} "
                f"sits outside its label {_fmt(first['label'])}"
            )
        for b in range(a + 1, len(inputs)):
            if _overlap(first["box"], inputs[b]["box"]):
                problems.append(
                    f"quiz inputs overlap: {first['text']!r} at {_fmt(first['box'])} "
                    f"and {inputs[b]['text']!r} at {_fmt(inputs[b]['box'])}"
                )

    # The exercise listing: one source line per row, exactly, with its indentation; rows aligned.
    for i in exercises:
        exercise = load_exercise(course_copy / "content" / "exercises" / f"{lesson_id}.toml")
        want = [
            (number, text.rstrip()) for snippet in exercise.snippets for number, text in snippet.numbered()
        ]
        rows = panel.evaluate(JS_LISTING, i)
        assert len(rows) == len(want), (
            f"the exercise listing has {len(rows)} rows; its regions have {len(want)} lines"
        )
        lefts = [row["left"] for row in rows]
        if max(lefts) - min(lefts) > ALIGN_SLACK_PX:
            moved = sorted({f"{left:.1f}" for left in lefts})
            problems.append(
                f"exercise listing rows start at different x (line numbers shift sideways): {moved}"
            )
        for row, (number, text) in zip(rows, want, strict=True):
            # The row reads "<line number>  <the line>": the number, two spaces, the line as in the file.
            shown = LISTING_ROW.match(row["text"].rstrip())
            line = f"{number}  {text}"
            if not shown or int(shown.group(1)) != number or (shown.group(2) or "") != text:
                problems.append(f"exercise row shows {row['text']!r}, the source line is {line!r}")
            if row["lines"] != 1 or row["height"] > 1.5 * max(row["lineHeight"], 1):
                problems.append(
                    f"exercise row {line[:60]!r} wraps: {row['lines']} lines, "
                    f"{row['height']:.0f} px high (line height {row['lineHeight']:.0f} px)"
                )
            if row["hidden"] > ALIGN_SLACK_PX:
                problems.append(
                    f"exercise row {line[:60]!r} is cut at the right edge: "
                    f"the last {row['hidden']:.0f} px of the line are hidden"
                )

    assert not problems, f"{lesson.notebook}, {len(problems)} problems:\n" + "\n".join(problems)
    print(f"{lesson.notebook}: ran in {tab.seconds:.0f} s; screenshots in {artifacts}")


JS_CODING = """
(panel, i) => {
  const cell = panel.querySelectorAll('.jp-Cell')[i];
  const box = cell && cell.querySelector('.course-coding');
  if (!box) return null;
  // The editor is CodeMirror 6 (course.exercises.code_editor): its text is the lines of .cm-content.
  const editor = box.querySelector('.cm-editor');
  const lines = editor ? [...editor.querySelectorAll('.cm-content .cm-line')].map(l => l.textContent) : [];
  return {
    cell: cell.querySelector('.jp-OutputArea').getBoundingClientRect().width,
    editor: editor ? editor.getBoundingClientRect().width : 0,
    text: lines.join('\\n'),
    buttons: [...box.querySelectorAll('button')].map(b => b.innerText.trim()),
  };
}
"""


def test_a_coding_exercise_checked_in_the_browser(pages, artifacts: Path):
    """Type a wrong piece, Check: the verdict names the first wrong case and the check that ran;
    then the right piece passes. (No GPU here: the CPU check; on a GPU the same button runs it there.)"""
    tab = _page(pages, LESSONS["day78"].notebook)
    page, notebook = tab.page, tab.panel
    box = notebook.locator(".course-coding").first
    box.scroll_into_view_if_needed()
    editor = box.locator(".cm-content")

    def fill(code: str) -> None:  # as a learner replaces the code: select all, type
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(code)

    try:
        fill("return mn * 64 + k;")
        box.get_by_role("button", name="Check").click()
        result = box.locator(".course-coding-result")
        result.wait_for(timeout=60_000)
        text = result.inner_text()
        assert "wrong result" in text and "for mn = 0, k = 8: offset = 8, should be 64" in text, text
        assert "checked on the CPU" in text or "checked on the GPU" in text, text
        _save_screenshot(page, artifacts, "day78-coding-checked.png")
        fill("return ((mn / 8) * (kTileK / 8) + k / 8) * 64 + (mn % 8) * 8 + (k % 8);")
        box.get_by_role("button", name="Check").click()
        box.locator(".course-coding-result", has_text="✓ passed").wait_for(timeout=60_000)
        assert "2 checks of your code so far" in box.inner_text()
    except BaseException:
        _save_screenshot(page, artifacts, "day78-coding-failure.png")
        raise


def _fmt(box: list[float]) -> str:
    return f"({box[0]:.0f}, {box[1]:.0f})-({box[2]:.0f}, {box[3]:.0f})"


# ---------------------------------------------------------------------------
# Day 76 end to end: snippet, answer, Check, Submit, the file on disk.


def test_run_all_answer_check_and_submit(pages, course_copy: Path, artifacts: Path):
    tab = _page(pages, LESSONS["day76"].notebook)
    page, notebook = tab.page, tab.panel
    try:
        _learner_session(page, notebook, course_copy, artifacts)
    except BaseException:
        _save_screenshot(page, artifacts, "day76-failure.png")
        raise
    print(f"browser test: Day 76 ran in {tab.seconds:.1f} s from page load to the last cell")


def _learner_session(page: Any, notebook: Any, course_copy: Path, artifacts: Path) -> None:
    # The highlighted snippet: pygments' inline-styled spans inside the snippet div.
    snippet = notebook.locator("div.course-snippet", has_text="snippet issue-tma")
    snippet.scroll_into_view_if_needed()
    assert notebook.locator("div.course-snippet span[style]").count() > 20
    assert "cp_async_bulk_tensor" in snippet.inner_text()
    _save_screenshot(page, artifacts, "day76-snippet.png")

    # The quiz: answer question 1, Check, read the feedback.
    first = notebook.locator(
        ".widget-vbox", has=page.locator("text=how many threads of the 256-thread block")
    ).last
    first.scroll_into_view_if_needed()
    first.get_by_text("One thread, thread 0, for the whole", exact=False).click()
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
    shot = _save_screenshot(page, artifacts, "day76-answered.png")
    assert shot.stat().st_size > 10_000

    saved = course_copy / "submissions" / "day76" / f"{LEARNER}.json"
    data = json.loads(saved.read_text("utf-8"))
    assert data["responses"] == {"one-thread": "one"}
    assert data["learner"] == LEARNER and data["attempts"]["one-thread"] == 1
    assert not (ROOT / "submissions" / "day76" / f"{LEARNER}.json").exists(), "wrote into the checkout"


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
        # The kernel the course's pages name: a notebook that names none brings up JupyterLab's "Select
        # Kernel" dialog, and under load that dialog could be answered before the kernel list arrived,
        # leaving the page with no kernel (the fresh-clone CI at c0290ef: "kernel: no session").
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "notebooks" / HOSTILE).write_text(json.dumps(nb, indent=1), "utf-8")


def test_a_hostile_quiz_runs_no_script_in_jupyterlab(pages, artifacts: Path):
    tab = _page(pages, HOSTILE)
    page, notebook = tab.page, tab.panel
    try:
        # Answer and Check every question, so explanations and references render too.
        for box in (0, 1):
            radio = notebook.locator(".widget-radio-box input[type=radio]").nth(box)
            radio.check()
            for button in notebook.get_by_role("button", name="Check").all():
                button.click()
            notebook.locator(".quiz-feedback").first.wait_for()
        notebook.locator(".widget-checkbox input[type=checkbox]").first.check()
        notebook.locator("input[placeholder^='a number']").fill(
            "<img src=z onerror=\"window.__xss='typed'\">"
        )
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
        _save_screenshot(page, artifacts, "hostile-quiz.png")
    except BaseException:
        _save_screenshot(page, artifacts, "hostile-failure.png")
        raise


# ---- issue 22: quizzes ----
# What the quiz looks like next to the rest of the page: radio buttons and
# checkboxes at one x and each on its label's first line; every Check button
# on a page (quiz, coding, annotation) in one colour; a "which line" listing
# once per snippet, not once per question.

JS_QUIZ_LOOK = """
(nb, i) => {
  const cell = nb.querySelectorAll('.jp-Cell')[i];
  const area = cell.querySelector('.jp-OutputArea');
  const options = Array.from(area.querySelectorAll('input[type=radio], input[type=checkbox]')).map(input => {
    const label = input.closest('label');
    const r = input.getBoundingClientRect();
    // The first line of the label's text: the first client rect of its text.
    let line = null;
    if (label) {
      const range = document.createRange();
      range.selectNodeContents(label);
      const rects = Array.from(range.getClientRects()).filter(q => q.width > 0 && q.height > 0);
      const first = rects.length ? Math.min(...rects.map(q => q.top)) : null;
      const firstLine = rects.filter(q => Math.abs(q.top - first) < 2);
      if (firstLine.length) line = [Math.min(...firstLine.map(q => q.top)), Math.max(...firstLine.map(q => q.bottom))];
    }
    // Where the option's text starts: its first line's left edge.
    let textLeft = null;
    if (label) {
      const range = document.createRange();
      range.selectNodeContents(label);
      const rects = Array.from(range.getClientRects()).filter(q => q.width > 0 && q.height > 0 && q.left > r.right - 1);
      if (rects.length) textLeft = Math.min(...rects.map(q => q.left));
    }
    const chain = [];
    for (let e = input; e && e !== area; e = e.parentElement) {
      const st = getComputedStyle(e);
      chain.push(`${e.tagName.toLowerCase()}.${(e.className || '').toString().split(' ').join('.')} ` +
                 `left ${e.getBoundingClientRect().left.toFixed(1)} m ${st.marginLeft}/${st.marginRight} ` +
                 `p ${st.paddingLeft} w ${e.getBoundingClientRect().width.toFixed(1)} fs ${st.fontSize}`);
    }
    return {type: input.type, left: r.left, middle: (r.top + r.bottom) / 2, line, textLeft, chain,
            text: label ? label.innerText.trim().slice(0, 60) : ''};
  });
  const checks = Array.from(nb.querySelectorAll('button')).filter(b => b.innerText.trim() === 'Check').map(b => {
    const cellOf = b.closest('.jp-Cell');
    return {cell: Array.from(nb.querySelectorAll('.jp-Cell')).indexOf(cellOf),
            background: getComputedStyle(b).backgroundColor, color: getComputedStyle(b).color};
  });
  return {options, checks, listings: area.querySelectorAll('.quiz-listing').length};
}
"""


@pytest.mark.parametrize("lesson_id", ["day76", "day78"])
def test_issue22_quiz_inputs_line_up_buttons_match_and_listings_show_once(
    lesson_id: str, pages, course_copy: Path, artifacts: Path
):
    from course.quiz.model import WhichLine

    lesson = LESSONS[lesson_id]
    tab = _page(pages, lesson.notebook)
    panel = tab.panel
    cells = _cells(course_copy, lesson.notebook)
    (cell,) = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "page.quiz(" in _source(c)]
    quiz = load_quiz(course_copy / "content" / "quizzes" / f"{lesson_id}.toml")
    expected = sum(len(q.options) for q in quiz.questions if isinstance(q, SingleChoice | MultipleSelect))
    seen = _wait_until(
        "quiz inputs", OUTPUTS_SETTLE_S, lambda: panel.evaluate(JS_QUIZ_LOOK, cell),
        lambda v: len(v["options"]) >= expected,
    )  # fmt: skip
    _screenshots(tab.page, artifacts, {f"{lesson_id}-issue22-quiz.png": cell})
    problems: list[str] = []
    kinds = {o["type"] for o in seen["options"]}
    assert kinds == {"radio", "checkbox"}, f"{lesson.notebook}: the quiz shows inputs {kinds}"
    # One x for every radio button and checkbox: a learner's eye runs down one column.
    lefts = {o["type"]: [] for o in seen["options"]}
    for o in seen["options"]:
        lefts[o["type"]].append(o["left"])
    everywhere = [x for xs in lefts.values() for x in xs]
    texts = {o["type"]: set() for o in seen["options"]}
    for o in seen["options"]:
        texts[o["type"]].add(round(o["textLeft"] or -1, 1))
    starts = [x for xs in texts.values() for x in xs]
    if max(everywhere) - min(everywhere) > 1 or max(starts) - min(starts) > 1:
        where = {kind: sorted({round(x, 1) for x in xs}) for kind, xs in lefts.items()}
        first = {o["type"]: o["chain"] for o in seen["options"]}
        problems.append(
            f"radio buttons and checkboxes do not line up: inputs at x {where}, their text at x {texts}; "
            f"the first of each: {first}"
        )
    # Each input sits on its label's first line of text (its middle within that line).
    for o in seen["options"]:
        if o["line"] is None:
            problems.append(f"option {o['text']!r}: no label text found")
            continue
        top, bottom = o["line"]
        if not (top - 1 <= o["middle"] <= bottom + 1):
            problems.append(
                f"{o['type']} of {o['text']!r}: its middle at y {o['middle']:.1f} is off its label's "
                f"first line ({top:.1f}..{bottom:.1f})"
            )
    # Every Check button of the page looks the same.
    looks = {(b["background"], b["color"]) for b in seen["checks"]}
    if len(looks) != 1:
        problems.append(f"Check buttons in {len(looks)} looks: {sorted(looks)} ({seen['checks']})")
    # A listing once per snippet that a "which line" question asks about.
    snippets = {(q.lesson, q.snippet) for q in quiz.questions if isinstance(q, WhichLine)}
    if seen["listings"] != len(snippets):
        problems.append(
            f"the quiz shows {seen['listings']} listings for {len(snippets)} snippet(s) its questions ask about"
        )
    if problems:
        _save_screenshot(tab.page, artifacts, f"{lesson_id}-issue22-failure.png")
    assert not problems, f"{lesson.notebook}, {len(problems)} problems:\n" + "\n".join(problems)


# ---- issue 22: the coding editor ----
# A JupyterLab of its own, served as scripts/course.sh serves it: the nearest folder that holds both the
# course (here the module's copy) and the learner's workspace (course.tryout.workspace.served_root), so the
# coding panel's link to the learner's file opens it in JupyterLab. Day 78 alone runs there.
DAY78 = LESSONS["day78"].notebook
PANEL_WIDTHS = (1024, 1280, 1920)


@pytest.fixture(scope="module")
def course_lab(course_copy: Path, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """(Lab, Tab, workspace): Day 78 run in a JupyterLab serving what scripts/course.sh serves."""
    tmp = tmp_path_factory.mktemp("course-lab")
    home = tmp / "jupyter"
    work = course_copy.parent / "hopper-course-work"
    env = {
        **os.environ,
        "COURSE_ROOT": str(course_copy),
        "COURSE_WORKSPACE": str(work),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONWARNINGS": "ignore",
    }
    env.pop("COURSE_REQUIRE_GPU", None)
    ask = "from course.tryout.workspace import served_root, served_url; print(served_root()); print(served_url('notebooks'))"
    root, notebooks = subprocess.run(
        [sys.executable, "-c", ask], env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert Path(root) == course_copy.parent, (root, course_copy)  # holds the course and the workspace
    for name, value in (
        ("notebook-extension/tracker", {"windowingMode": "none"}),
        ("apputils-extension/notification", {"fetchNews": "false", "checkForUpdates": False}),
    ):
        settings = home / "settings" / "@jupyterlab" / f"{name}.jupyterlab-settings"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(value), "utf-8")
    port, token = _free_port(), os.urandom(16).hex()
    log_path = tmp / "jupyterlab.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [
                sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
                "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                f"--LabApp.default_url={notebooks}",
                f"--LabApp.user_settings_dir={home / 'settings'}", f"--LabApp.workspaces_dir={home / 'workspaces'}",
                "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                *served_options(),
            ],
            cwd=course_copy, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    lab = Lab(f"http://127.0.0.1:{port}", token)
    page = browser.new_page()
    try:
        with _hard_limit(
            SERVER_START_S + 2 * KERNEL_READY_S + RUN_ALL_S, "Day 78 in the course's JupyterLab"
        ):
            deadline = time.monotonic() + SERVER_START_S
            while True:
                assert server.poll() is None, f"JupyterLab exited; log:\n{_tail(log_path)}"
                try:
                    if _api(f"{lab.base}/api/status?token={token}") == 200:
                        break
                except (urllib.error.URLError, OSError):
                    pass
                assert time.monotonic() < deadline, f"JupyterLab did not answer; log:\n{_tail(log_path)}"
                time.sleep(0.25)
            page.goto(f"{lab.base}{notebooks}/{DAY78}?token={token}")
            tab = _opened(page, DAY78)
            tab.notebook = f"{course_copy.name}/notebooks/{DAY78}"  # the session's path, under the root
            while tab.state not in ("done", "failed"):
                time.sleep(0.25)
                _advance(tab, lab.kernels(), lab, tab.opened)
            assert tab.error is None, tab.error
        yield lab, tab, work
    finally:
        signal.alarm(0)
        page.close()
        _stop(server, f"{lab.base}/api/shutdown?token={token}")


def _coding_box(tab: Tab) -> Any:
    box = tab.panel.locator(".course-coding").first
    box.scroll_into_view_if_needed()
    return box


def _editor_text(box: Any) -> str:
    """What the coding editor holds: CodeMirror's lines, or a textarea's value (the old editor)."""
    return box.evaluate(
        """b => { const cm = b.querySelector('.cm-content');
                  if (cm) return Array.from(cm.querySelectorAll('.cm-line')).map(l => l.textContent).join('\\n');
                  const t = b.querySelector('textarea'); return t ? t.value : null; }"""
    )


def test_tab_in_the_coding_editor_indents_and_keeps_the_keyboard(course_lab: Any, artifacts: Path):
    """Tab then `x` in the editor: the indent and the x are in the code, and the cell is still there
    (the old textarea let Tab move focus out, and `x`, JupyterLab's "cut cell", cut the exercise)."""
    _lab, tab, _work = course_lab
    page, notebook = tab.page, tab.panel
    cells = notebook.locator(".jp-Cell").count()
    box = _coding_box(tab)
    before = _editor_text(box)
    first = before.split("\n")[0]
    try:
        box.locator(".cm-line, textarea").first.click()
        page.keyboard.press("Control+Home")
        page.keyboard.press("Tab")
        page.keyboard.type("x")
        page.wait_for_timeout(500)
        assert notebook.locator(".jp-Cell").count() == cells, "a key typed in the editor cut a cell"
        assert notebook.locator(".course-coding").count() == 1, "the exercise's cell is gone"
        after = _editor_text(box)
        assert after.split("\n")[0] == "    x" + first, (first, after)
        page.keyboard.press("Shift+Tab")  # dedents the line
        page.keyboard.press("Backspace")  # and the x goes
        page.wait_for_timeout(300)
        assert _editor_text(box) == before
        # The gutter counts as the learner's file does: its first number is the piece's own line there.
        text = (_work / "day78" / "coding" / "core-offset.cu").read_text("utf-8").splitlines()
        number = int(box.locator(".cm-gutterElement").nth(1).inner_text())  # [0] is the gutter's sizer
        assert text[number - 2].strip().startswith("// >>> core-offset"), (number, text[number - 2])
        assert box.locator(".cm-content [class^='ͼ'], .cm-content span[class]").count() > 0, "no highlighting"
        for width in PANEL_WIDTHS:
            page.set_viewport_size({"width": width, "height": 1000})
            page.wait_for_timeout(300)
            box.scroll_into_view_if_needed()
            box.screenshot(path=str(artifacts / f"day78-coding-panel-{width}.png"), animations="disabled")
    except BaseException:
        _save_screenshot(page, artifacts, "day78-coding-editor-failure.png")
        raise
    finally:
        page.set_viewport_size(VIEWPORT)


def test_the_learners_file_opens_from_its_link_in_jupyterlabs_editor(course_lab: Any, artifacts: Path):
    _lab, tab, _work = course_lab
    page = tab.page
    box = _coding_box(tab)
    link = box.locator("a", has_text="core-offset.cu").first
    assert link.count() == 1, "the panel shows no link to the learner's file: " + box.inner_text()[:600]
    with page.context.expect_page() as opened:
        link.click()
    editor = opened.value
    try:
        editor.wait_for_load_state()
        tab_title = editor.locator(
            ".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current", has_text="core-offset.cu"
        )
        tab_title.wait_for()
        content = editor.locator(".jp-FileEditor .cm-content").first
        content.wait_for()
        # The learner's file (the tab's tooltip names its path under the root), its text in the editor.
        want = "hopper-course-work/day78/coding/core-offset.cu"
        path = _wait_until(  # JupyterLab writes the tooltip once the file has loaded
            "the tab's path", 30, lambda: tab_title.get_attribute("title") or "", lambda t: want in t
        )
        assert want in path, path
        first = (_work / "day78" / "coding" / "core-offset.cu").read_text("utf-8").splitlines()[0]
        text = _wait_until("the file's text", 30, content.inner_text, lambda t: t.startswith(first))
        assert text.startswith(first), text[:300]
        _save_screenshot(editor, artifacts, "day78-coding-file-in-jupyterlab.png")
    finally:
        editor.close()


def test_a_reopened_page_says_to_run_its_cells(course_lab: Any, artifacts: Path):
    """While a widget is live its run note is hidden; a page reopened after its kernel stopped shows
    the note above JupyterLab's "Error displaying widget"."""
    lab, tab, _work = course_lab
    page, notebook = tab.page, tab.panel
    notes = notebook.locator(".course-run-note")
    assert notes.count() >= 2, "the coding panel and the quiz come with a run note"
    assert not any(n.is_visible() for n in notes.all()), "a run note shows beside a live widget"
    tab.bring_to_front()
    # Saved with its outputs, as JupyterLab saves a learner's page (from the menu: while the coding
    # editor has the focus, JupyterLab's shortcuts, Ctrl+S too, are the editor's to ignore).
    page.locator(".lm-MenuBar-item", has_text="File").first.click()
    page.locator(".lm-Menu-item:not(.lm-mod-hidden)", has_text="Save Notebook").first.click()
    saved = _wait_until("the save", 30, lambda: page.locator(".jp-mod-dirty").count(), lambda n: n == 0)
    assert saved == 0, "the page was not saved"
    # The kernel stops (a restart, a new day): the saved page keeps only references to its widgets.
    request = urllib.request.Request(f"{lab.base}/api/sessions?token={lab.token}")
    with urllib.request.urlopen(request, timeout=5) as response:
        sessions = [s for s in json.loads(response.read()) if s["path"] == tab.notebook]
    assert sessions, f"no session for {tab.notebook}"
    _api(f"{lab.base}/api/sessions/{sessions[0]['id']}?token={lab.token}", method="DELETE")
    page.reload()
    again = page.locator(f"{NOTEBOOK}")
    again.locator(".course-run-note").first.wait_for(state="visible", timeout=60_000)
    try:
        assert again.locator(".course-run-note:visible").count() >= 2
        again.locator(".course-coding, .course-run-note").last.scroll_into_view_if_needed()
        again.locator(".course-run-note:visible").nth(1).scroll_into_view_if_needed()
        _save_screenshot(page, artifacts, "day78-reopened.png")
    except BaseException:
        _save_screenshot(page, artifacts, "day78-reopened-failure.png")
        raise


# ---- issue 22: listings, tables, diffs ----
#
# At 1024 and 1280 px wide (the file browser open, as the module's window has it): every listing's
# number column is exactly as tall as its code (one font, one line height, no wrapping in either);
# no table is wider than its output area; a coding exercise's lines are not in the page's text until
# the learner has passed it (read from the same progress the page's kernel read); in the Dark theme
# every token of a highlighted listing line has a contrast of at least 4.5 against its background.
# Screenshots at 1024, 1280 and 1920 px, Light and Dark, are kept with the others.

ISSUE22_WIDTHS = (1024, 1280)
MIN_CONTRAST = 4.5

JS_LISTING_COLUMNS = """
nb => Array.from(nb.querySelectorAll('.jp-Cell')).flatMap((cell, i) =>
  Array.from(cell.querySelectorAll('.course-snippet')).map(s => {
    // The number column and the code column: this course's two <pre>, or pygments' table cells.
    const nums = s.querySelector('pre.course-linenos, td.linenos pre');
    const code = s.querySelector('pre.course-code, td.code pre');
    const title = (s.querySelector('p') || {innerText: ''}).innerText.slice(0, 70);
    if (!nums || !code) return {cell: i, title, missing: true};
    const box = e => e.getBoundingClientRect();
    const st = e => getComputedStyle(e);
    const inner = e => e.scrollHeight - parseFloat(st(e).paddingTop) - parseFloat(st(e).paddingBottom);
    return {cell: i, title, nums: inner(nums), code: inner(code),
            numsLine: st(nums).lineHeight, codeLine: st(code).lineHeight,
            numsWrap: st(nums).whiteSpace, codeWrap: st(code).whiteSpace,
            numsFont: st(nums).fontSize, codeFont: st(code).fontSize,
            right: box(s.querySelector('.course-listing, table') || code).right,
            area: box(cell.querySelector('.jp-OutputArea-output')).right};
  }))
"""


# As JS_TOO_WIDE, except a <pre> or <table> of code inside a box that scrolls sideways within the
# output (the annotation exercise's rows, whose lines must not wrap; a unified diff, whose tokens are
# never split, issue 38): the rest of the line is within reach there.
JS_TOO_WIDE_22 = """
nb => {
  const found = [];
  Array.from(nb.querySelectorAll('.jp-Cell')).forEach((cell, i) => {
    for (const out of cell.querySelectorAll('.jp-OutputArea-output')) {
      const box = out.getBoundingClientRect();
      if (box.width === 0) continue;
      for (const e of out.querySelectorAll('table, pre, img, svg')) {
        const r = e.getBoundingClientRect();
        if (r.width === 0 || r.width <= box.width + 1) continue;
        let scrolled = false;
        for (let a = e.parentElement; (e.tagName === 'PRE' || e.tagName === 'TABLE') && a && a !== out; a = a.parentElement) {
          const ox = getComputedStyle(a).overflowX;
          if ((ox === 'auto' || ox === 'scroll') && a.getBoundingClientRect().right <= box.right + 1) scrolled = true;
        }
        if (scrolled) continue;
        found.push({cell: i, tag: e.tagName.toLowerCase(), over: Math.round(r.width - box.width),
                    text: (e.innerText || '').trim().slice(0, 60)});
        break;
      }
    }
  });
  return found;
}
"""


def _at_width(page: Any, width: int) -> None:
    page.set_viewport_size({"width": width, "height": VIEWPORT["height"]})
    page.wait_for_timeout(400)  # the notebook takes the new width; outputs reflow


def _lesson_ids_with_listings() -> list[str]:
    return [lid for lid, lesson in LESSONS.items() if lesson.snippets]


@pytest.mark.parametrize("width", ISSUE22_WIDTHS)
@pytest.mark.parametrize("lesson_id", _lesson_ids_with_listings())
def test_issue22_listing_numbers_are_as_tall_as_their_code_and_no_table_is_too_wide(
    lesson_id: str, width: int, pages
):
    tab = _page(pages, LESSONS[lesson_id].notebook)
    page, panel = tab.page, tab.panel
    problems: list[str] = []
    try:
        _at_width(page, width)
        listings = panel.evaluate(JS_LISTING_COLUMNS)
        assert listings, f"{lesson_id}: no listing found on the page"
        for seen in listings:
            where = f"{width} px, cell {seen['cell']} ({seen['title']!r})"
            if seen.get("missing"):
                problems.append(f"{where}: no number column beside the code")
                continue
            if abs(seen["nums"] - seen["code"]) >= 1:
                problems.append(
                    f"{where}: the number column is {seen['nums']:.1f} px tall, its code {seen['code']:.1f} px"
                )
            if (seen["numsLine"], seen["numsFont"]) != (seen["codeLine"], seen["codeFont"]):
                problems.append(
                    f"{where}: numbers {seen['numsFont']}/{seen['numsLine']}, code {seen['codeFont']}/{seen['codeLine']}"
                )
            if seen["numsWrap"] != "pre":
                problems.append(f"{where}: the number column may wrap (white-space: {seen['numsWrap']})")
            if seen["right"] > seen["area"] + 1:
                problems.append(
                    f"{where}: the listing reaches {seen['right'] - seen['area']:.0f} px past its output"
                )
        for wide in panel.evaluate(JS_TOO_WIDE_22):
            problems.append(
                f"{width} px, cell {wide['cell']}: a <{wide['tag']}> is {wide['over']} px wider than its "
                f"output area ({wide['text']!r})"
            )
    finally:
        page.set_viewport_size(VIEWPORT)
    assert not problems, f"{lesson_id}, {len(problems)} problems:\n" + "\n".join(problems)


def _unique_answer_lines(lesson_id: str) -> list[tuple[Any, list[str]]]:
    """Per coding exercise of the lesson: its lines that appear once in the kernel (`}` proves nothing)."""
    from course.exercises.reveal import answers

    lesson = LESSONS[lesson_id]
    kernel = (ROOT / "kernels" / lesson.kernel_file).read_text("utf-8").splitlines()
    out = []
    for answer in answers(lesson):
        lines = [kernel[n - 1].strip() for n in range(answer.first, answer.last + 1)]
        out.append((answer, [ln for ln in lines if len(ln) > 6 and sum(ln in k for k in kernel) == 1]))
    return out


# Everything in the page's outputs except the coding panel itself (whose editor holds what the learner typed).
JS_PAGE_TEXT = """
nb => Array.from(nb.querySelectorAll('.jp-OutputArea-output')).map(out => {
  const copy = out.cloneNode(true);
  copy.querySelectorAll('.course-coding, style').forEach(e => e.remove());
  return copy.textContent;
}).join('\\n')
"""


@pytest.mark.parametrize("lesson_id", [lid for lid in LESSONS if LESSONS[lid].snippets])
def test_issue22_the_exercise_lines_are_not_in_the_page_before_a_pass(lesson_id: str, pages):
    from course.exercises.reveal import passed

    tab = _page(pages, LESSONS[lesson_id].notebook)
    text = re.sub(r"\s+", " ", tab.panel.evaluate(JS_PAGE_TEXT))
    found = _unique_answer_lines(lesson_id)
    assert found, f"{lesson_id} has no coding exercise"
    for answer, lines in found:
        assert lines, f"{lesson_id}: exercise {answer.exercise.id} has no line unique in the kernel"
        shown = [ln for ln in lines if re.sub(r"\s+", " ", ln) in text]
        # The same progress the page's kernel read (this process has the server's workspace and learner).
        if passed(LESSONS[lesson_id], answer.exercise):
            continue  # passed before this run: the page shows the lines, as it should
        assert not shown, (
            f"{lesson_id}: the answer to {answer.exercise.id!r} is on the page before a pass: {shown}"
        )
    # Where a listing holds an answer not passed yet, it is folded with a button that shows it.
    holds = [a for a, _ in found if _answer_in_a_listing(lesson_id, a)]
    if holds and not all(passed(LESSONS[lesson_id], a.exercise) for a in holds):
        assert tab.panel.locator(".course-reveal").count() >= 1, (
            f"{lesson_id}: no folded listing with a button to show the lines"
        )


def _answer_in_a_listing(lesson_id: str, answer: Any) -> bool:
    from course.snippets import load_snippets

    lesson = LESSONS[lesson_id]
    regions = load_snippets(ROOT / "kernels" / lesson.kernel_file)
    return any(
        regions[n].start <= answer.last and answer.first <= regions[n].end
        for n in lesson.snippets
        if n in regions
    )


def test_issue22_the_reveal_button_shows_the_lines(pages):
    tab = _page(pages, LESSONS["day76"].notebook)
    (answer, lines), *_ = _unique_answer_lines("day76")
    box = tab.panel.locator(".course-reveal").first
    box.scroll_into_view_if_needed()
    box.get_by_role("button", name=re.compile("Show the")).click()
    _wait_until("revealed", 20, lambda: box.text_content() or "", lambda t: all(ln in t for ln in lines))
    assert all(ln in (box.text_content() or "") for ln in lines), (
        "the button did not show the exercise's lines"
    )


JS_CONTRAST = """
nb => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  // What a colour looks like over another, as sRGB bytes: the browser parses and composites.
  const over = (top, bottom) => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = '#ffffff'; ctx.fillRect(0, 0, 1, 1);
    ctx.fillStyle = bottom; ctx.fillRect(0, 0, 1, 1);
    if (top) { ctx.fillStyle = top; ctx.fillRect(0, 0, 1, 1); }
    return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
  };
  const lum = rgb => {
    const [r, g, b] = rgb.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  // The background a piece of text sits on: the nearest ancestor that paints one, over the page's.
  const background = e => {
    const layers = [];
    for (; e; e = e.parentElement) {
      const bg = getComputedStyle(e).backgroundColor;
      if (bg && bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') layers.push(bg);
    }
    let rgb = [255, 255, 255];
    for (const bg of layers.reverse()) rgb = over(bg, `rgb(${rgb.join(',')})`);
    return rgb;
  };
  const found = [];
  for (const row of nb.querySelectorAll('.course-snippet .course-code > span > span, .course-snippet td.code .hll')) {
    const bg = getComputedStyle(row).backgroundColor;
    if (!bg || bg === 'rgba(0, 0, 0, 0)') continue;  // not a highlighted line
    const back = background(row);
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!t.textContent.trim()) continue;
      const fg = over(getComputedStyle(t.parentElement).color, `rgb(${back.join(',')})`);
      const [a, b] = [lum(fg), lum(back)].sort((x, y) => y - x);
      found.push({text: t.textContent.trim().slice(0, 40), ratio: (a + 0.05) / (b + 0.05), fg, back});
    }
  }
  return found;
}
"""


def _theme(page: Any, name: str) -> None:
    """Settings > Theme > ``name``, as a learner picks it; wait until the page wears it."""
    page.locator(".lm-MenuBar-item", has_text="Settings").first.click()
    page.locator(".lm-Menu-item:not(.lm-mod-hidden)", has_text="Theme").first.hover()
    page.locator(".lm-Menu-item:not(.lm-mod-hidden)", has_text=name).first.click()
    light = "true" if "Light" in name else "false"
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'", timeout=STEP_MS)
    page.wait_for_timeout(500)


def test_issue22_highlighted_lines_are_readable_in_the_dark_theme(pages, artifacts: Path):
    problems: list[str] = []
    tab = _page(pages, LESSONS["day76"].notebook)
    page = tab.page
    try:
        _theme(page, "JupyterLab Dark")
        for lesson_id in ("day76", "day80", "day84"):
            tab = _page(pages, LESSONS[lesson_id].notebook)
            seen = tab.panel.evaluate(JS_CONTRAST)
            assert seen, f"{lesson_id}: no highlighted listing line found"
            for s in seen:
                if s["ratio"] < MIN_CONTRAST:
                    problems.append(
                        f"{lesson_id}: {s['text']!r} has contrast {s['ratio']:.2f} "
                        f"(text {s['fg']} on {s['back']})"
                    )
        stem = Path(LESSONS["day78"].notebook).stem
        _page(pages, LESSONS["day78"].notebook)
        _screenshots(page, artifacts, {f"{stem}-dark.png": None})
    finally:
        _theme(page, "JupyterLab Light")
    assert not problems, f"{len(problems)} tokens below {MIN_CONTRAST}:\n" + "\n".join(problems[:40])


def _shots_at(width: int, page: Any, folder: Path, shots: dict[str, int | None]) -> None:
    """``_screenshots`` at another window width (the module's helper reads these two sizes)."""
    global SHOT_WINDOW, VIEWPORT
    saved = SHOT_WINDOW, VIEWPORT
    SHOT_WINDOW, VIEWPORT = {**SHOT_WINDOW, "width": width}, {**VIEWPORT, "width": width}
    try:
        _screenshots(page, folder, shots)
    finally:
        SHOT_WINDOW, VIEWPORT = saved
        page.set_viewport_size(VIEWPORT)


def test_issue22_the_start_page_runs_and_links_to_every_day(
    pages, jupyterlab: Lab, course_copy: Path, artifacts: Path
):
    """The start page (not a lesson, so the module's copy lacks it): copied in, opened, Run All."""
    from course.page.contents import START

    shutil.copy(ROOT / "notebooks" / START, course_copy / "notebooks" / START)
    page = next(iter(pages.values())).page
    refresh = page.locator("[data-command='filebrowser:refresh']")
    if refresh.count():
        refresh.first.click()
    listing = page.locator(".jp-DirListing-itemText", has_text=START)
    listing.first.wait_for(timeout=STEP_MS)
    tab = _open(page, START)
    deadline = time.monotonic() + 2 * KERNEL_READY_S + RUN_ALL_S  # a restart of a stuck kernel included
    while tab.state not in ("done", "failed") and time.monotonic() < deadline:
        time.sleep(0.25)
        _pick_kernel(page)
        _advance(tab, jupyterlab.kernels(), jupyterlab, tab.opened)
    assert tab.state == "done", f"the start page: {tab.error or tab.state}"
    text = tab.panel.inner_text()
    for lesson in LESSONS.values():
        assert f"Day {lesson.day}: {lesson.title}" in text, f"the start page does not list Day {lesson.day}"
        assert tab.panel.locator(f"a[href*='{lesson.notebook}']").count() >= 1, lesson.notebook
    assert "Day 77" in text
    stem = Path(START).stem
    for width in (1024, 1280, 1920):
        _shots_at(width, page, artifacts, {f"{stem}-{width}.png": None})
    # The next-page link of a lesson page opens the next page in JupyterLab.
    first, second = list(LESSONS.values())[:2]
    tab76 = _page(pages, first.notebook)
    tab76.panel.locator(f".jp-MarkdownOutput a[href*='{second.notebook}']").first.click()
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current", has_text=second.notebook).wait_for()


@pytest.mark.parametrize("width", (1024, 1280, 1920))
@pytest.mark.parametrize("lesson_id", ["day78", "day82", "day85", "day88"])
def test_issue22_screenshots_at_three_widths(lesson_id: str, width: int, pages, artifacts: Path):
    """Screenshots of Days 78, 82, 85 and 88 (the newest page) at 1024, 1280 and 1920 px, whole, to
    look at (the checks are above)."""
    lesson = LESSONS[lesson_id]
    tab = _page(pages, lesson.notebook)
    name = f"{Path(lesson.notebook).stem}-{width}.png"
    _shots_at(width, tab.page, artifacts, {name: None})
    assert (artifacts / name).stat().st_size > 10_000


def test_day87_promotion_slider_moves_with_the_keyboard_in_light_and_dark(
    pages, course_copy: Path, artifacts: Path
):
    """Day 87's promotion slider, as a learner uses it without a mouse: focus its handle, press
    the arrow keys, and the table below shows the interval picked; screenshots in both themes."""
    lesson = LESSONS["day87"]
    tab = _page(pages, lesson.notebook)
    page, panel = tab.page, tab.panel
    cells = _cells(course_copy, lesson.notebook)
    (cell,) = [
        i for i, c in enumerate(cells) if c["cell_type"] == "code" and "promotion_explorer(" in _source(c)
    ]
    output = panel.locator(".jp-Cell").nth(cell).locator(".jp-Cell-outputArea")
    handle = output.locator(".noUi-handle").first
    handle.wait_for(timeout=STEP_MS)
    handle.scroll_into_view_if_needed()
    assert "every 256 of K" in output.inner_text()  # the page's call: every=2
    stem = Path(lesson.notebook).stem
    try:
        handle.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "e => e.innerText.includes('every 512 of K')", arg=output.element_handle(), timeout=STEP_MS
        )
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(
            "e => e.innerText.includes('every 128 of K')", arg=output.element_handle(), timeout=STEP_MS
        )
        _screenshots(page, artifacts, {f"{stem}-slider.png": cell})
        _theme(page, "JupyterLab Dark")
        _screenshots(page, artifacts, {f"{stem}-slider-dark.png": cell})
    finally:
        _theme(page, "JupyterLab Light")
