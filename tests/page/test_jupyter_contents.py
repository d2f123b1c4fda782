"""The contents manager scripts/course.sh serves with: a page opens as the kernel leaves it (issue 22).

JupyterLab writes the kernel's ``language_info`` (its kernel-info reply) into
a page's metadata as the kernel starts, and marks the page modified when that
differs from what it read. (The browser test opens a page and reads JupyterLab's
own ``dirty``; here, the reply of a real kernel against what the server reads.)
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from course.lessons import LESSONS
from course.page.jupyter_contents import KernelLanguageContentsManager, served_options, with_kernel_language

ROOT = Path(__file__).resolve().parents[2]


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
