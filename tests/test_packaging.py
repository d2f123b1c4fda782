"""pyproject.toml is the one list of dependencies; everything else agrees."""

import tomllib
from pathlib import Path

import yaml

from course.lessons import LESSONS

ROOT = Path(__file__).resolve().parents[1]


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _normalise(req: str) -> str:
    return req.replace(" ", "").lower()


def test_environment_yml_installs_the_pyproject_set():
    project = _pyproject()["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["test"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = [p for p in pip if not p.startswith("-e")]
    assert sorted(map(_normalise, listed)) == sorted(map(_normalise, wanted))
    assert "-e ." in pip
    conda_python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    minimum = project["requires-python"].removeprefix(">=")
    assert conda_python.removeprefix("python=") >= minimum


def test_the_declared_dependencies_are_the_ecosystems_own():
    names = {
        _normalise(r).split(">")[0].split("<")[0].split(";")[0].split("=")[0]
        for r in _pyproject()["project"]["dependencies"]
    }
    assert {
        "jupyterlab",
        "ipywidgets",
        "cupy-cuda12x",
        "cuda-python",
        "pygments",
        "matplotlib",
        "tomli",
    } <= names


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "sh scripts/test.sh" in readme and "sh scripts/test.sh" in ci
    assert "sh scripts/course.sh" in readme


def test_every_lesson_has_its_files():
    for lesson in LESSONS.values():
        assert lesson.kernel_path.is_file(), lesson.kernel_path
        assert lesson.notebook_path.is_file(), lesson.notebook_path
        assert lesson.annotations_path.is_file(), lesson.annotations_path
        assert lesson.quiz_path.is_file(), lesson.quiz_path
    on_disk = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert on_disk == {lesson.notebook for lesson in LESSONS.values()}
