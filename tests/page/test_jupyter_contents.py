"""The contents manager scripts/course.sh serves with: a page opens as the kernel leaves it (issue 22).

JupyterLab writes the kernel's ``language_info`` (its kernel-info reply) into
a page's metadata as the kernel starts, and marks the page modified when that
differs from what it read. (The browser test opens a page and reads JupyterLab's
own ``dirty``; here, the reply of a real kernel against what the server reads.)
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from course.lessons import LESSONS
from course.page.jupyter_contents import KernelLanguageContentsManager, served_options, with_kernel_language

ROOT = Path(__file__).resolve().parents[2]
# On Python 3.13 the Jupyter server's own SQLite connection (its file-ID store) is left to the
# garbage collector, which pytest reports as an unraisable ResourceWarning: the server's, not ours.
pytestmark = pytest.mark.filterwarnings(
    "ignore:unclosed database:ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning"
)


@pytest.fixture(autouse=True)
def _collect_the_servers_leftovers() -> Iterator[None]:
    """Collect them within each test, where the filter above holds (not at the end of the run)."""
    yield
    gc.collect()


@pytest.fixture(scope="module")
def kernel_reply() -> dict:
    """The language_info a python3 kernel of this Python sends JupyterLab."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        reply = kc.kernel_info(reply=True, timeout=60)
        return reply["content"]["language_info"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _read(manager_class: type, folder: Path, name: str) -> dict:
    manager = manager_class(root_dir=str(folder))
    model = asyncio.run(manager.get(name))
    return json.loads(json.dumps(model["content"]))


def test_every_page_is_read_with_the_language_info_its_kernel_writes(tmp_path: Path, kernel_reply: dict):
    names = sorted({lesson.notebook for lesson in LESSONS.values()} | {"00_start.ipynb"})
    for name in names:
        shutil.copy(ROOT / "notebooks" / name, tmp_path / name)
    for name in names:
        # As a plain server reads it, the page's language_info is not the kernel's: JupyterLab rewrites it.
        plain = _read(AsyncLargeFileManager, tmp_path, name)
        assert plain["metadata"]["language_info"] != kernel_reply, name
        served = _read(KernelLanguageContentsManager, tmp_path, name)
        assert served["metadata"]["language_info"] == kernel_reply, name
        assert served["cells"] == plain["cells"], name
        # Reading changes nothing on disk.
        assert json.loads((tmp_path / name).read_text("utf-8")) == json.loads(
            (ROOT / "notebooks" / name).read_text("utf-8")
        )


def test_a_notebook_of_another_kernel_is_left_as_it_is():
    for metadata in (
        {"kernelspec": {"name": "ir", "language": "R"}, "language_info": {"name": "R"}},
        {"kernelspec": {"name": "python3"}, "language_info": {"name": "julia"}},
        {"language_info": {"name": "python"}},
        {},
    ):
        nb = {"metadata": json.loads(json.dumps(metadata)), "cells": []}
        assert not with_kernel_language(nb)
        assert nb["metadata"] == metadata


def test_course_sh_serves_with_the_manager():
    script = (ROOT / "scripts" / "course.sh").read_text("utf-8")
    assert "served_options" in script and "$options" in script
    assert served_options() == [
        "--ServerApp.contents_manager_class=course.page.jupyter_contents.KernelLanguageContentsManager"
    ]


_SERVE = """
import sys
import jupyter_core.paths as paths
# only the config path the test gives: not this environment's own etc/jupyter (where the
# course's editable install may have put the file already) nor the system's
paths.ENV_CONFIG_PATH[:] = []
paths.SYSTEM_CONFIG_PATH[:] = []
from jupyter_server.serverapp import ServerApp
app = ServerApp()
app.initialize(argv=sys.argv[1:], new_httpserver=False)
print(type(app.contents_manager).__name__)
"""


def _served_by(tmp_path: Path, config: Path, *argv: str) -> str:
    """The contents manager of a Jupyter server initialised with only ``config`` as its config path."""
    env = {
        **os.environ,
        "JUPYTER_CONFIG_PATH": str(config),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "user-config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "PYTHONNOUSERSITE": "1",
    }
    argv = (f"--ServerApp.root_dir={tmp_path}", "--port=0", *argv)
    r = subprocess.run(
        [sys.executable, "-c", _SERVE, *argv], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()[-1]


def test_an_environment_with_the_course_installed_serves_with_the_manager(tmp_path: Path):
    # pip installs the config file into {prefix}/etc/jupyter/jupyter_server_config.d
    # (pyproject's data-files); it enables this module as a server extension, which makes
    # a JupyterLab started there with no option (a hub's single-user server, a class image)
    # serve with the manager.
    (dest,) = (
        d
        for d, files in _pyproject()["tool"]["setuptools"]["data-files"].items()
        for f in files
        if f.endswith("hopper-course.json")
    )
    assert dest == "etc/jupyter/jupyter_server_config.d"
    prefix = tmp_path / "prefix"
    (prefix / dest).mkdir(parents=True)
    shutil.copy(ROOT / "jupyter-config" / "jupyter_server_config.d" / "hopper-course.json", prefix / dest)
    config = prefix / "etc" / "jupyter"
    assert _served_by(tmp_path, config) == "KernelLanguageContentsManager"
    # a manager the server is given is kept
    chosen = (
        "--ServerApp.contents_manager_class=jupyter_server.services.contents.filemanager.FileContentsManager"
    )
    assert _served_by(tmp_path, config, chosen) == "FileContentsManager"
    # and without the file (another environment), the server's default
    (prefix / dest / "hopper-course.json").unlink()
    assert _served_by(tmp_path, config) != "KernelLanguageContentsManager"


def _pyproject() -> dict:
    from course._toml import loads

    return loads((ROOT / "pyproject.toml").read_text("utf-8"))
