"""The course installed without a CUDA extra (``pip install -e .``): every command and page says
what is missing and which extra to install, and still shows the recorded output; no traceback.

``tests/no_cupy/sitecustomize.py``, first on PYTHONPATH, makes the subprocesses, their sandboxed
children and the Jupyter kernels look like that install: ``import cupy`` (and cuda-python, the
NVIDIA wheels) raises ModuleNotFoundError as a missing package does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from course.kernel import gate
from course.lessons import LESSONS

ROOT = Path(__file__).resolve().parent.parent
BLOCKER = Path(__file__).resolve().parent / "no_cupy"
# The extra the advice names here: the one scripts/install.sh picks for this driver (none: cuda12).
EXTRA = f"pip install -e '.[{gate.extra_for_driver(gate.probe().versions['driver (CUDA)']) or 'cuda12'}]'"


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(BLOCKER), str(ROOT)])
    e["COURSE_WORKSPACE"] = str(tmp_path / "workspace")
    e["COURSE_CACHE_DIR"] = "off"  # nothing compiled earlier stands in for a compile that cannot run
    e.pop(gate.REQUIRE_GPU_ENV, None)
    return e


def _run(args: list[str], env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_blocker_makes_the_cuda_extra_missing(env):
    probe = (
        "import importlib.metadata as m\n"
        "for name in ('cupy', 'cuda.bindings.nvrtc', 'nvidia.cuda_nvrtc'):\n"
        "    try:\n"
        "        __import__(name)\n"
        "    except ModuleNotFoundError as e:\n"
        "        print('missing', e.name)\n"
        "try:\n"
        "    m.version('cupy-cuda12x')\n"
        "except m.PackageNotFoundError:\n"
        "    print('no metadata')\n"
        "import numpy, course\n"
    )
    r = _run(["-c", probe], env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:4] == [
        "missing cupy",
        "missing cuda",
        "missing nvidia",
        "no metadata",
    ]


# (arguments, exit status, what the output must also say)
COMMANDS = [
    (
        ["try", "day78", "kernels/wgmma_gemm.cu"],
        2,
        ["The compile check could not run", "recorded on NVIDIA H100 80GB HBM3"],
    ),
    (
        ["doctor", "--compile"],
        2,
        ["CuPy is not installed", "Compile check (no GPU needed):\n  cannot run here"],
    ),
    (["coding", "check", "day78", "core-offset"], 1, ["checked on the CPU"]),
    (["run", "day78"], 2, ["Recorded on a real GPU", "PASS"]),
    (["bench", "--recorded"], 0, ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]),
]


@pytest.mark.parametrize(
    "args, status, says", COMMANDS, ids=lambda x: " ".join(x) if isinstance(x, list) else ""
)
def test_a_command_without_cupy_says_what_to_install_and_shows_the_recording(env, args, status, says):
    r = _run(["-m", "course", *args], env)
    out = r.stdout + r.stderr
    # No traceback, nor its last line passed on from the sandbox's child.
    assert "Traceback" not in out and "ModuleNotFoundError" not in out, out
    assert r.returncode == status, out
    for text in says:
        assert text in out, f"{text!r} not in:\n{out}"
    if args[0] in ("try", "doctor", "run"):
        assert EXTRA in out, out


_RUN_PAGES = """
import json, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient
report = {}
for path in sorted(Path("notebooks").glob("*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, resources={"metadata": {"path": "notebooks"}}).execute()
    outs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = []
    for o in outs:
        if o.get("output_type") == "stream":
            text.append(o["text"])
        elif o.get("output_type") == "error":
            text.append("ERROR " + o["ename"] + ": " + o["evalue"] + "\\nTraceback")
        else:
            data = o.get("data", {})
            text.append(data.get("text/markdown") or data.get("text/html") or data.get("text/plain") or "")
    report[path.name] = "\\n".join(text)
json.dump(report, sys.stdout)
"""


@pytest.mark.slow
def test_every_page_without_cupy_says_what_to_install_and_shows_the_recording(env):
    import html
    import json

    r = _run(["-c", _RUN_PAGES], env, timeout=1200)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    pages = json.loads(r.stdout)
    assert len(pages) >= 9
    lesson_pages = {Path(lesson.notebook).name for lesson in LESSONS.values()}
    assert lesson_pages <= set(pages), sorted(pages)
    for name, text in pages.items():
        text = html.unescape(text)
        assert "Traceback" not in text and "ModuleNotFoundError" not in text, f"{name}:\n{text[-3000:]}"
        assert "CuPy is not installed" in text and EXTRA in text, f"{name}:\n{text[:3000]}"
        if name in lesson_pages:  # the start page lists the lessons; each lesson shows its recording
            assert "Recorded on" in text or "recorded on" in text, f"{name}:\n{text[:3000]}"
