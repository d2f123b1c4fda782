"""pyproject.toml is the one list of dependencies; everything else agrees."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from course.lessons import LESSONS
from course.page.contents import START

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _normalise(req: str) -> str:
    return req.replace(" ", "").lower()


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[]", _normalise(req))[0]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def _supported() -> list[tuple[int, ...]]:
    """The Python versions the classifiers name, oldest first."""
    prefix = "Programming Language :: Python :: 3."
    return sorted(
        _version(c.removeprefix("Programming Language :: Python :: "))
        for c in _pyproject()["project"]["classifiers"]
        if c.startswith(prefix) and c.removeprefix(prefix).isdigit()
    )


def test_environment_yml_installs_the_pyproject_set():
    project = _pyproject()["project"]
    extras = project["optional-dependencies"]
    # The conda environment gets the default CUDA extra, as scripts/install.sh
    # does on a machine without a CUDA 13 driver.
    wanted = project["dependencies"] + extras["cuda12"] + extras["test"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = [p for p in pip if not p.startswith("-e")]
    assert sorted(map(_normalise, listed)) == sorted(map(_normalise, wanted))
    assert "-e ." in pip
    conda_python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert _version(conda_python.removeprefix("python=")) in _supported()


def test_python_3_10_to_3_13_everywhere_it_is_named():
    project = _pyproject()
    assert project["project"]["requires-python"] == ">=3.10"
    assert _supported() == [(3, 10), (3, 11), (3, 12), (3, 13)]
    assert project["tool"]["ruff"]["target-version"] == "py310"
    assert project["tool"]["mypy"]["python_version"] == "3.10"
    compat = (ROOT / "scripts" / "compat.sh").read_text()
    assert "OLDEST=3.10\n" in compat and "NEWEST=3.13\n" in compat
    assert '--target="$OLDEST-" --violations' in compat
    assert "sh scripts/compat.sh" in (ROOT / "scripts" / "test.sh").read_text()


def test_tomli_reads_toml_where_tomllib_is_missing_and_only_there():
    deps = _pyproject()["project"]["dependencies"]
    (tomli,) = [d for d in deps if _name(d) == "tomli"]
    # 2.4 reads TOML 1.1, which tomllib on 3.11 to 3.13 refuses.
    assert _normalise(tomli) == "tomli>=2.1,<2.4;python_version<'3.11'"


def test_the_cuda_wheels_come_in_two_matching_sets():
    project = _pyproject()["project"]
    cuda_like = ("cupy", "cuda-", "nvidia-")
    # The base set has none: installing an extra must not leave two CuPy wheels.
    assert not [d for d in project["dependencies"] if _name(d).startswith(cuda_like)]
    extras = project["optional-dependencies"]
    by_name = {extra: {_name(d): _normalise(d) for d in extras[extra]} for extra in ("cuda12", "cuda13")}
    assert by_name["cuda12"] == {
        "cupy-cuda12x": "cupy-cuda12x>=13.3",
        "cuda-python": "cuda-python>=12.6,<13",
        "nvidia-cuda-nvrtc-cu12": "nvidia-cuda-nvrtc-cu12>=12.6",
        "nvidia-cuda-runtime-cu12": "nvidia-cuda-runtime-cu12>=12.6",
    }
    # CUDA 13's NVIDIA wheels dropped the -cuXX suffix (nvidia-cuda-nvrtc-cu13
    # on PyPI is an empty placeholder); the major version is the pin instead.
    assert by_name["cuda13"] == {
        "cupy-cuda13x": "cupy-cuda13x>=13.6",
        "cuda-python": "cuda-python>=13,<14",
        "nvidia-cuda-nvrtc": "nvidia-cuda-nvrtc>=13,<14",
        "nvidia-cuda-runtime": "nvidia-cuda-runtime>=13,<14",
    }
    install = (ROOT / "scripts" / "install.sh").read_text()
    assert "extras=cuda$cuda" in install
    assert '12) others="cupy-cuda13x ' in install and '13) others="cupy-cuda12x ' in install
    for script in ("course.sh", "test.sh"):
        assert "sh scripts/install.sh" in (ROOT / "scripts" / script).read_text()


def test_the_declared_dependencies_are_the_ecosystems_own():
    project = _pyproject()["project"]
    names = {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["cuda12"]}
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
    assert on_disk == {lesson.notebook for lesson in LESSONS.values()} | {START}  # and the start page


@pytest.mark.parametrize(
    "smi_says, override, extra",
    [
        ("| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0     |", None, "cuda13"),
        ("| NVIDIA-SMI 535.183.01   Driver Version: 535.183.01   CUDA Version: 12.2     |", None, "cuda12"),
        ("| NVIDIA-SMI 470.256.02   Driver Version: 470.256.02   CUDA Version: 11.4     |", None, "cuda12"),
        (None, None, "cuda12"),  # no nvidia-smi: a laptop, CI
        ("| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0     |", "12", "cuda12"),
        (None, "13", "cuda13"),
    ],
)
def test_install_picks_the_cuda_extra_from_the_driver(tmp_path, smi_says, override, extra):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if smi_says is not None:
        smi = bin_dir / "nvidia-smi"
        smi.write_text(f"#!/bin/sh\necho '+-----+'\necho '{smi_says}'\n")
        smi.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    if override is not None:
        env["COURSE_CUDA"] = override
    out = subprocess.run(
        ["sh", str(ROOT / "scripts" / "install.sh"), "--which"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == extra


def test_install_refuses_a_cuda_major_it_has_no_extra_for():
    out = subprocess.run(
        ["sh", str(ROOT / "scripts" / "install.sh"), "--which"],
        env={"PATH": "/usr/bin:/bin", "COURSE_CUDA": "11"},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "COURSE_CUDA must be 12 or 13" in out.stderr


def _imports_of_the_package() -> set[str]:
    import ast

    names: set[str] = set()
    for path in (ROOT / "course").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"course"}


def _dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_library_the_package_imports_is_declared_or_comes_with_a_declared_one():
    # The libraries that replace hand-written code (Pillow's PNG header, tomli-w's TOML,
    # tabulate's tables) must be declared themselves, not arrive by luck with another package.
    from importlib.metadata import packages_distributions, requires

    project = _pyproject()["project"]
    declared = {_dist(_name(r)) for r in project["dependencies"] + project["optional-dependencies"]["cuda12"]}
    assert {"pillow", "tomli-w", "tabulate"} <= declared
    brought = set(declared)
    for dist in declared:
        try:
            brought |= {_dist(_name(r)) for r in requires(dist) or [] if "extra ==" not in r}
        except Exception:  # a declared package not installed here (tomli on 3.11+)
            continue
    where = packages_distributions()
    imported = _imports_of_the_package()
    assert {"PIL", "tomli_w", "tabulate"} <= imported
    for module in sorted(imported):
        dists = {_dist(d) for d in where.get(module, [])}
        assert dists, f"course imports {module}, which no installed distribution provides"
        assert dists & brought, (
            f"course imports {module} ({sorted(dists)}), which pyproject.toml does not declare"
        )
