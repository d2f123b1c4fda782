"""Settings for every pytest run of the checkout, the notebooks under nbval included.

scripts/test.sh runs the suite in several processes (pytest-xdist, ``-n
<cores + 1> --dist loadscope``); it runs the same in one (``-n 0``). Each process gets its own throwaway workspace. The summary at
the end of the run (how many inputs the hardening tests generated, where the
browser screenshots are) is built from the test reports, which xdist brings
back from its workers, so it is the same whichever way the suite ran.
"""

import importlib.util
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent

# Learner copies (page.my_copy, page.try_mine) go to a throwaway workspace in tests and in
# the notebooks nbval runs (their Jupyter kernels inherit this process's environment),
# never into the home folder of whoever runs the tests. An xdist worker inherits the
# controller's environment: it makes a workspace of its own, unless the one set is the
# runner's (COURSE_WORKSPACE set before pytest started).
_MADE = "COURSE_TEST_WORKSPACE_MADE"
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if "COURSE_WORKSPACE" not in os.environ or (
    _WORKER and os.environ.get(_MADE) == os.environ["COURSE_WORKSPACE"]
):
    os.environ["COURSE_WORKSPACE"] = os.environ[_MADE] = tempfile.mkdtemp(
        prefix=f"course-workspace-{_WORKER or 'main'}-"
    )

# NVRTC results (course.kernel.compile.compile_offline) are kept in one throwaway folder for the
# whole run, made here by the controller before any worker starts (the workers, the
# notebooks' kernels and the commands the tests start all inherit it): the suite compiles
# the same kernel text in many places, and never reads or fills the runner's own cache.
if "COURSE_CACHE_DIR" not in os.environ and not _WORKER:
    os.environ["COURSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="course-nvrtc-cache-")

# user_properties keys (a test's report carries them, from a worker too).
GENERATED = "hardening generated inputs"  # (property name, inputs run)
COUNTED = "hardening count"  # (what, how many): other counts, e.g. SIGKILLs
SCREENSHOTS = "browser screenshots"  # the folder


class RunNotes:
    """What the end-of-run summary says, gathered from the test reports."""

    def __init__(self) -> None:
        self.generated: Counter[str] = Counter()
        self.counted: Counter[str] = Counter()
        self.screenshots: set[str] = set()

    def pytest_runtest_logreport(self, report) -> None:  # type: ignore[no-untyped-def]
        if report.when != "call":  # the teardown's report carries the same properties again
            return
        for key, value in report.user_properties:
            if key == GENERATED:
                self.generated[value[0]] += value[1]
            elif key == COUNTED:
                self.counted[value[0]] += value[1]
            elif key == SCREENSHOTS:
                self.screenshots.add(value)

    def pytest_terminal_summary(self, terminalreporter) -> None:  # type: ignore[no-untyped-def]
        if self.generated or self.counted:
            terminalreporter.write_sep("-", "hardening")
            terminalreporter.write_line(
                f"generated inputs: {sum(self.generated.values())} ("
                + ", ".join(f"{name} {n}" for name, n in sorted(self.generated.items()))
                + ")"
            )
            for name, n in sorted(self.counted.items()):
                terminalreporter.write_line(f"{name}: {n}")
        for folder in sorted(self.screenshots):
            shots = sorted(Path(folder).glob("*.png"))
            terminalreporter.write_line(f"browser screenshots: {folder} ({len(shots)} PNG files)")


def _page_checks():  # type: ignore[no-untyped-def]
    """tests/page_checks.py, imported by its path (``tests`` is no package), once."""
    module = sys.modules.get("page_checks")
    if module is None:
        spec = importlib.util.spec_from_file_location("page_checks", ROOT / "tests" / "page_checks.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["page_checks"] = module
        spec.loader.exec_module(module)
    return module


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):  # type: ignore[no-untyped-def]
    """A notebook cell that nbval ran without an error must also show what a learner can read.

    nbval keeps the outputs of the cell it just ran in ``item.test_outputs``;
    tests/page_checks.py says what is wrong with them (a bare repr, a
    traceback, a figure cell without its picture). One execution of each
    page serves nbval and these checks.
    """
    result = yield
    outputs = getattr(item, "test_outputs", None)
    if outputs is not None and item.path.suffix == ".ipynb":
        found = _page_checks().problems(item.cell.source, outputs)
        if found:
            from nbval.plugin import NbCellError

            raise NbCellError(item.cell_num, "what a learner sees: " + "; ".join(found), item.cell.source)
    return result


def pytest_collection_modifyitems(session, config, items) -> None:  # type: ignore[no-untyped-def]
    """The longest modules first: the browser's, then those with tests marked slow.

    scripts/test.sh hands modules to the xdist workers in this order (``--dist
    loadscope --no-loadscope-reorder``; xdist's own order is by the number of
    tests, which put the browser module, 12 tests and a minute, last, and the
    run waited for it alone). Started first, it runs beside the short modules.
    A stable sort: each module's tests keep their order and stay together.
    """
    rank: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        own = 0 if item.get_closest_marker("browser") else 1 if item.get_closest_marker("slow") else 2
        rank[module] = min(rank.get(module, 2), own)
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])


def pytest_configure(config) -> None:  # type: ignore[no-untyped-def]
    config.pluginmanager.register(RunNotes(), "course-run-notes")
