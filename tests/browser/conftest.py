"""The browser tests' artifacts: where the screenshots go, said at the end of the run.

Screenshots of every page (and of every quiz) are kept as test artifacts in
``$COURSE_ARTIFACTS`` when it is set, else in ``test-artifacts/screenshots/``
in the checkout (gitignored; emptied of the PNGs of earlier runs at the start
of a run: a PNG older than this process, so that one browser module does not
delete another's, run beside it by xdist). The folder is printed in the
terminal summary, so a reader of the log finds it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
_WRITTEN = pytest.StashKey[Path]()
_STARTED = time.time()  # this process's start: PNGs older than it are an earlier run's


def artifacts_folder() -> Path:
    env = os.environ.get("COURSE_ARTIFACTS", "").strip()
    return Path(env).resolve() if env else DEFAULT_ARTIFACTS


@pytest.fixture(scope="module")
def artifacts(request: pytest.FixtureRequest) -> Path:
    """The screenshots' folder, created; earlier runs' PNGs removed from the default one (ours alone).

    Module scope, requested after the browser fixtures: a run that skips for
    want of a browser leaves the folder alone.
    """
    folder = artifacts_folder()
    folder.mkdir(parents=True, exist_ok=True)
    if folder == DEFAULT_ARTIFACTS:
        for old in folder.glob("*.png"):
            if old.stat().st_mtime < _STARTED:
                old.unlink()
    request.config.stash[_WRITTEN] = folder
    return folder


# The root conftest.py prints the folder (and how many PNGs it holds) at the
# end of the run, from the reports: also when xdist ran this module in a worker.
SCREENSHOTS = "browser screenshots"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    try:
        return (yield)
    finally:
        folder = item.config.stash.get(_WRITTEN, None)
        if folder is not None:
            item.user_properties.append((SCREENSHOTS, str(folder)))
