"""A wheel that works without a checkout: built, installed in a fresh venv, run from elsewhere.

The wheel is built from a copy of the sources (so the checkout gets no
build/ folder), with ``pip wheel --no-deps``: without build isolation when
this Python's setuptools is new enough (>= 77, the test extra), else with
it (pip then fetches setuptools from PyPI). It is installed with
``--no-deps`` into a fresh ``python -m venv``; the libraries it needs come
from this test run's environment through a path entry (not its .pth
files, so the checkout's editable install stays out), which keeps the test
offline and quick. Everything then runs from a folder that is not a
checkout: ``doctor``, ``bench --recorded``, ``pages DEST`` and one page,
executed with nbclient from the copied folder.

The copy the wheel is built from also holds a graded quiz as an instructor
adds one (``hub_files.release_graded``: the key in a folder of the
instructor's, the released copy in ``content/quizzes/graded/``), and no key
of it may be in the wheel (``course.quiz.graded``).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hub_files import GRADED_ID, KEY_ONLY, files_holding, release_graded

from course.quiz.graded import key_leaks
from course.quiz.loader import load_quiz

ROOT = Path(__file__).resolve().parents[1]
MATERIAL = ("kernels", "content", "evidence", "notebooks")  # shipped under course/_material/
SOURCES = ("course", *MATERIAL, "jupyter-config")
FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")
PAGE = "day76_tma.ipynb"
KERNEL = "hopper-course-wheel-test"

pytestmark = pytest.mark.slow


def _setuptools_version() -> tuple[int, ...]:
    try:
        from importlib.metadata import version

        return tuple(int(p) for p in version("setuptools").split(".")[:2])
    except Exception:
        return (0,)


def _run(cmd, cwd, env, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    for name in SOURCES:
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in FILES:
        shutil.copy2(ROOT / name, src / name)
    release_graded(tmp_path_factory.mktemp("instructor") / "hopper-course-keys", src)
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(out), str(src)]
    if _setuptools_version() >= (77,):
        cmd.insert(4, "--no-build-isolation")
    r = _run(cmd, src, dict(os.environ))
    assert r.returncode == 0, r.stdout + r.stderr
    (built,) = out.glob("hopper_course-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """(python of a fresh venv with the wheel, an environment without the checkout, a folder outside it)."""
    venv = tmp_path_factory.mktemp("venv")
    r = _run([sys.executable, "-m", "venv", str(venv)], venv, dict(os.environ))
    assert r.returncode == 0, r.stderr
    python = venv / "bin" / "python"
    r = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], venv, {})
    purelib = Path(r.stdout.strip())
    # This run's libraries, after the venv's own: a plain path line, so their .pth files
    # (the checkout's editable install among them) are not processed.
    (purelib / "zz_test_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COURSE_ROOT", "VIRTUAL_ENV")}
    # --ignore-installed: the checkout's editable install is visible through the path line.
    install = ["install", "--no-deps", "--no-index", "--ignore-installed", str(wheel)]
    r = _run([str(python), "-m", "pip", *install], venv, env)
    assert r.returncode == 0, r.stdout + r.stderr
    # A kernel of the venv's Python for the page, found through the venv's prefix.
    r = _run([str(python), "-m", "ipykernel", "install", "--prefix", str(venv), "--name", KERNEL], venv, env)
    assert r.returncode == 0, r.stdout + r.stderr
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env["COURSE_WORKSPACE"] = str(tmp_path_factory.mktemp("workspace"))
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    return python, env, elsewhere


def test_no_key_of_a_graded_quiz_is_in_the_wheel(wheel, tmp_path):
    unpacked = tmp_path / "wheel"
    zipfile.ZipFile(wheel).extractall(unpacked)
    released = unpacked / "course" / "_material" / "content" / "quizzes" / "graded" / f"{GRADED_ID}.toml"
    assert load_quiz(released).released  # the graded quiz ships, as its released copy
    assert key_leaks(unpacked) == []
    assert files_holding(unpacked, KEY_ONLY) == []
    # Practice quizzes keep their keys, by design: the checker tells them apart.
    assert not load_quiz(unpacked / "course" / "_material" / "content" / "quizzes" / "day76.toml").released


def test_the_key_checks_find_a_key_where_learners_reach(tmp_path):
    tree = tmp_path / "course"
    released = release_graded(tmp_path / "keys", tree)
    assert key_leaks(tree) == []
    shutil.copy(tmp_path / "keys" / f"{GRADED_ID}.toml", tree / "content" / "quizzes" / "stray.toml")
    (leak,) = key_leaks(tree)
    assert "stray.toml: the key of graded quiz 'day76-graded'" in leak
    shutil.copy(tmp_path / "keys" / f"{GRADED_ID}.toml", released)
    assert len(key_leaks(tree)) == 2 and files_holding(tree, KEY_ONLY)
    # The wheel's build refuses it too (setup.py, run here without building).
    shutil.copy(ROOT / "setup.py", tree / "setup.py")
    r = _run(
        [
            sys.executable,
            "-c",
            "import runpy, setuptools; setuptools.setup = lambda **kw: None; "
            "runpy.run_path('setup.py')['material_files']()",
        ],
        tree,
        dict(os.environ),
        timeout=60,
    )
    assert r.returncode != 0 and "without `released = true`" in r.stderr, r.stderr


def test_the_checkout_holds_no_key_of_a_graded_quiz():
    assert key_leaks(ROOT / "content") == []


def test_the_wheel_ships_the_material_as_package_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.removeprefix("course/_material/") for n in names if n.startswith("course/_material/")}
    tracked = subprocess.run(  # all of it but the record of the kernels' development (setup.py's SKIP)
        ["git", "ls-files", *MATERIAL, ":(exclude)evidence/gemm_dev"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: the list of tracked material is unknown")
    assert sorted(shipped) == sorted([*tracked, f"content/quizzes/graded/{GRADED_ID}.toml"])
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "License-Expression: MIT" in text  # PEP 639: setuptools >= 77 wrote it
    # the Jupyter server config that enables the contents manager (pyproject's data-files)
    config = "etc/jupyter/jupyter_server_config.d/hopper-course.json"
    assert [n for n in names if n.endswith(".data/data/" + config)], sorted(n for n in names if ".data/" in n)


def test_the_installed_course_finds_its_material_in_the_package(installed):
    python, env, elsewhere = installed
    r = _run(
        [
            str(python),
            "-c",
            "import course, course._paths as p; print(course.__file__); print(p.repo_root())",
        ],
        elsewhere,
        env,
    )
    assert r.returncode == 0, r.stderr
    package, root = r.stdout.split()
    assert "site-packages" in package and ROOT.as_posix() not in package
    assert root == str(Path(package).parent / "_material")
    # pip put the server config into the environment's own etc/jupyter, where Jupyter looks
    enabled = python.parent.parent / "etc" / "jupyter" / "jupyter_server_config.d" / "hopper-course.json"
    assert json.loads(enabled.read_text())["ServerApp"]["jpserver_extensions"] == {
        "course.page.jupyter_contents": True
    }


def test_doctor_and_the_recorded_benchmarks_run_from_the_wheel(installed):
    python, env, elsewhere = installed
    r = _run([str(python), "-m", "course", "doctor"], elsewhere, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "day84" in r.stdout and "Traceback" not in r.stdout + r.stderr
    r = _run([str(python), "-m", "course", "bench", "--recorded", "--json"], elsewhere, env)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert {row["lesson"] for row in rows} >= {"day76", "day84"}
    r = _run(
        [str(python), "-m", "course", "timeline", "day80", "--recorded", "--trace", "t.json"], elsewhere, env
    )
    assert r.returncode == 0, r.stderr
    assert json.loads((elsewhere / "t.json").read_text())["traceEvents"]


def test_pages_are_copied_out_and_one_runs_there(installed, tmp_path):
    python, env, elsewhere = installed
    dest = tmp_path / "my-pages"
    r = _run([str(python), "-m", "course", "pages", str(dest)], elsewhere, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (dest / PAGE).is_file() and len(list(dest.glob("*.ipynb"))) >= 9
    run_page = (
        "import sys, nbformat, nbclient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "nb.cells.append(nbformat.v4.new_code_cell('import course; print(course.__file__)'))\n"
        "nbclient.NotebookClient(nb, timeout=300, kernel_name=sys.argv[3],"
        " resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
        "errors = [o for c in nb.cells for o in c.get('outputs', []) if o.get('output_type') == 'error']\n"
        "print('errors', len(errors))\n"
        "print('kernel course:', nb.cells[-1].outputs[0]['text'].strip())\n"
        "print('\\n'.join(str(o.get('evalue')) for o in errors))\n"
    )
    r = _run([str(python), "-c", run_page, str(dest / PAGE), str(dest), KERNEL], dest, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("errors 0"), r.stdout
    used = r.stdout.split("kernel course:")[1].strip()
    assert used.startswith(str(python.parent.parent)) and "site-packages" in used, used  # the wheel's
