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


def _which_cuda_extra(env: dict[str, str]) -> str:
    """The CUDA extra scripts/install.sh picks with this environment (its --which)."""
    out = subprocess.run(
        ["sh", str(ROOT / "scripts" / "install.sh"), "--which"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture
def no_gpu(tmp_path) -> dict[str, str]:
    """The environment of a machine without a GPU (a laptop, CI, an image build), even on a GPU machine:
    an nvidia-smi that finds no driver comes first on PATH."""
    bin_dir = tmp_path / "no-gpu"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the driver' >&2\nexit 9\n"
    )
    smi.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


def _python_versions(spec: str) -> set[tuple[int, int]]:
    """The Python minor versions a conda spec ("python=3.12", "python>=3.10,<3.14") admits."""
    from packaging.specifiers import SpecifierSet

    rest = spec.removeprefix("python").strip()
    if re.fullmatch(r"=\d+\.\d+", rest):  # conda's "=3.12" is 3.12.*
        rest = f"={rest}.*"
    allowed = SpecifierSet(rest)
    return {(3, minor) for minor in range(6, 20) if allowed.contains(f"3.{minor}.0")}


def _check_environment(text: str, *, extras_wanted: set[str], conda_wanted: set[str]) -> list[str]:
    """What is wrong with a conda environment file, given what pyproject.toml declares.

    The file names pyproject.toml's extras and never a package of its own, so
    the two cannot disagree on a version: its pip section is at most one line,
    the course with ``extras_wanted`` (exactly one CUDA extra: the one
    scripts/install.sh picks without a GPU); its conda packages are Python,
    pinned within the supported range and stated in the file's comment, and
    ``conda_wanted``.
    """
    problems = []
    env = yaml.safe_load(text)
    deps = env.get("dependencies") or []
    declared = set(_pyproject()["project"]["optional-dependencies"])
    pythons = [d for d in deps if isinstance(d, str) and d.startswith("python")]
    others = {d for d in deps if isinstance(d, str)} - set(pythons)
    if len(pythons) != 1:
        return [f"one python pin wanted (got {pythons})"]
    versions = _python_versions(pythons[0])
    supported = {v[:2] for v in _supported()}
    if not versions or not versions <= supported:
        problems.append(f"{pythons[0]} admits {sorted(versions)}, not within {sorted(supported)}")
    comment = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    said = (
        "3.10 to 3.13"
        if versions == supported
        else f"Python {'.'.join(map(str, min(versions)))}"
        if len(versions) == 1
        else None
    )
    if said is None or said not in comment:
        problems.append(f"the comment does not state what {pythons[0]} pins ({said!r} wanted)")
    if others != conda_wanted:
        problems.append(
            f"conda packages {sorted(others)}: only python and {sorted(conda_wanted)} belong here"
        )
    pip = [line for d in deps if isinstance(d, dict) for line in d.get("pip", [])]
    if not extras_wanted:
        if pip:
            problems.append(f"a pip section {pip}: the course is installed elsewhere")
        return problems
    match = re.fullmatch(r"-e \.\[([a-z0-9,]+)\]", pip[0]) if len(pip) == 1 else None
    if match is None:
        return [*problems, f"pip must install only the checkout with extras, as `-e .[...]` (got {pip})"]
    extras = set(match.group(1).split(","))
    if extras - declared:
        problems.append(f"extras {sorted(extras - declared)} are not in pyproject.toml")
    if extras != extras_wanted:
        problems.append(f"extras {sorted(extras)}, wanted {sorted(extras_wanted)}")
    return problems


def test_environment_yml_installs_the_checkout_with_pyproject_extras(no_gpu):
    # The developer's environment: the CUDA extra install.sh picks without a GPU, and the test tools.
    text = (ROOT / "environment.yml").read_text()
    wanted = {_which_cuda_extra(no_gpu), "test"}
    assert wanted == {"cuda12", "test"}
    assert _check_environment(text, extras_wanted=wanted, conda_wanted={"pip"}) == []
    assert "change cuda12 to\n# cuda13 on the last line" in text


@pytest.mark.parametrize(
    "change, complaint",
    [
        (("-e .[cuda12,test]", "-e .[cuda12,test]\n      - numpy>=1.26"), "only the checkout"),
        (("-e .[cuda12,test]", "-e .[cuda12,cuda13,test]"), "wanted"),
        (("-e .[cuda12,test]", "-e .[cuda12,tests]"), "not in pyproject.toml"),
        (("python>=3.10,<3.14", "python=3.9"), "not within"),
        (("python>=3.10,<3.14", "python=3.11"), "the comment does not state"),
        (("  - pip\n", "  - pip\n  - numpy\n"), "conda packages"),
    ],
)
def test_an_environment_file_that_disagrees_with_pyproject_is_caught(change, complaint):
    text = (ROOT / "environment.yml").read_text()
    assert change[0] in text
    problems = _check_environment(
        text.replace(change[0], change[1], 1), extras_wanted={"cuda12", "test"}, conda_wanted={"pip"}
    )
    assert any(complaint in p for p in problems), problems


def _post_build(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run binder/postBuild from the root as repo2docker does, with a stand-in python that logs its args."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "python-args"
    fake = bin_dir / "python"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\n')
    fake.chmod(0o755)
    out = subprocess.run(
        ["sh", "binder/postBuild"],
        cwd=ROOT,
        env={**env, "PATH": f"{bin_dir}:{env['PATH']}"},
        capture_output=True,
        text=True,
    )
    out.stdout = log.read_text() if log.exists() else ""
    return out


def test_the_class_image_installs_the_course_without_the_test_tools(tmp_path, no_gpu):
    # binder/ is the class image for repo2docker: Python and git from conda, then postBuild
    # installs the course (not editable) with the CUDA extra install.sh picks and the hub extra.
    text = (ROOT / "binder" / "environment.yml").read_text()
    assert _check_environment(text, extras_wanted=set(), conda_wanted={"pip", "git"}) == []
    declared = _pyproject()["project"]["optional-dependencies"]
    assert [_name(r) for r in declared["hub"]] == ["nbgitpuller", "jupyterhub"]
    ran = _post_build(tmp_path, no_gpu)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["-m", "pip", "install", "--no-cache-dir", ".[cuda12,hub]"]
    ran = _post_build(tmp_path, {**no_gpu, "COURSE_CUDA": "13"})
    assert ran.stdout.split()[-1] == ".[cuda13,hub]"
    ran = _post_build(tmp_path, {**no_gpu, "COURSE_CUDA": "11"})
    assert ran.returncode == 2 and "COURSE_CUDA must be 12 or 13" in ran.stderr
    assert "# export COURSE_CUDA=13\n" in (ROOT / "binder" / "postBuild").read_text()


def test_the_dockerfile_builds_the_class_image_the_same_way():
    docker = (ROOT / "deploy" / "Dockerfile").read_text()
    (base,) = re.findall(r"^ARG BASE_IMAGE=(\S+)$", docker, flags=re.M)
    assert base.startswith("quay.io/jupyter/minimal-notebook:python-")
    (pin,) = [
        d
        for d in yaml.safe_load((ROOT / "binder" / "environment.yml").read_text())["dependencies"]
        if isinstance(d, str) and d.startswith("python")
    ]
    assert _python_versions(pin) == {_version(base.rsplit("python-", 1)[1])}
    assert 'COURSE_CUDA="${COURSE_CUDA}" sh binder/postBuild' in docker


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


def test_ci_runs_the_tests_on_the_oldest_and_newest_python_too():
    compat = (ROOT / "scripts" / "compat.sh").read_text()
    oldest = re.search(r"^OLDEST=(\S+)$", compat, re.M)
    newest = re.search(r"^NEWEST=(\S+)$", compat, re.M)
    assert oldest and newest
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"sh scripts/test_python.sh {oldest[1]} {newest[1]}\n" in ci


def test_a_python_found_nowhere_fails_saying_where_it_looked(tmp_path):
    # An empty PATH but for the shell's tools, no pyenv: Python 3.99 is nowhere.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "pyenv")}
    r = subprocess.run(
        ["sh", str(ROOT / "scripts" / "test_python.sh"), "--which", "3.99"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert "No Python 3.99 found: tried python3.99 on PATH, pyenv's versions/3.99.*" in r.stderr
    bad = subprocess.run(
        ["sh", str(ROOT / "scripts" / "test_python.sh"), "three"], env=env, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "'three' is not a Python version like 3.10" in bad.stderr


def test_a_python_under_pyenv_is_found_and_is_that_version(tmp_path):
    # A fake pyenv tree whose python3.10 is this interpreter only if this one is 3.10: the script
    # must ask the interpreter, not trust the folder's name.
    fake = tmp_path / "pyenv" / "versions" / "3.10.99" / "bin"
    fake.mkdir(parents=True)
    (fake / "python3.10").symlink_to(sys.executable)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "pyenv")}
    r = subprocess.run(
        ["sh", str(ROOT / "scripts" / "test_python.sh"), "--which", "3.10"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if sys.version_info[:2] == (3, 10):
        assert r.returncode == 0 and r.stdout == f"3.10 {fake / 'python3.10'}\n"
    elif r.returncode == 0:  # a real 3.10 elsewhere (/usr/bin): never the fake one
        assert str(fake) not in r.stdout and r.stdout.startswith("3.10 /usr/")
    else:
        assert r.returncode == 2 and "No Python 3.10 found" in r.stderr


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
        "nvmath-python": "nvmath-python>=1.0",
    }
    # CUDA 13's NVIDIA wheels dropped the -cuXX suffix (nvidia-cuda-nvrtc-cu13
    # on PyPI is an empty placeholder); the major version is the pin instead.
    assert by_name["cuda13"] == {
        "cupy-cuda13x": "cupy-cuda13x>=13.6",
        "cuda-python": "cuda-python>=13,<14",
        "nvidia-cuda-nvrtc": "nvidia-cuda-nvrtc>=13,<14",
        "nvidia-cuda-runtime": "nvidia-cuda-runtime>=13,<14",
        "nvmath-python": "nvmath-python>=1.0",
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


def _imports_of_the_package(on_import: bool = False) -> set[str]:
    """The top-level names the package imports; with ``on_import``, only those imported when a
    module is imported (outside any function body), which a machine without them would fail on."""
    import ast

    def nodes(tree: ast.AST):
        for child in ast.iter_child_nodes(tree):
            yield child
            if not (on_import and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))):
                yield from nodes(child)

    names: set[str] = set()
    for path in (ROOT / "course").rglob("*.py"):
        for node in nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    # tomllib is the standard library's from 3.11; course imports it only there (tomli before).
    return names - set(sys.stdlib_module_names) - {"course", "tomllib"}


def _dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _providers(module: str, where: dict[str, list[str]]) -> set[str]:
    """The distributions that install top-level ``module``. Python 3.10's packages_distributions
    reads only top_level.txt, which wheels built by hatchling (anywidget's) do not have: there the
    files each distribution installed are read instead, as 3.11 does."""
    from importlib.metadata import distributions

    found = set(where.get(module, []))
    if not found:
        for dist in distributions():
            if any(f.parts[:1] == (module,) or str(f) == f"{module}.py" for f in dist.files or []):
                found.add(dist.metadata["Name"])
    return found


def test_every_library_the_package_imports_is_declared_or_comes_with_a_declared_one():
    # The libraries that replace hand-written code (Pillow's PNG header, tomli-w's TOML,
    # tabulate's tables) must be declared themselves, not arrive by luck with another package.
    from importlib.metadata import packages_distributions, requires

    project = _pyproject()["project"]
    extras = project["optional-dependencies"]
    # the hub extra: nbgitpuller, and jupyterhub for the hub's submissions service (course.quiz.hub_service)
    declared = {_dist(_name(r)) for r in project["dependencies"] + extras["cuda12"] + extras["hub"]}
    assert {"pillow", "tomli-w", "tabulate"} <= declared
    # A peer's library that neither CI nor a learner installs (PyTorch, Day 88's peers: the
    # attention-peers extra) is declared in that extra under its import name and imported only
    # inside the function that needs it, so that the package imports without it.
    optional = {_dist(_name(r)) for r in extras["attention-peers"]}
    assert optional == {"torch"}
    on_import = _imports_of_the_package(on_import=True)
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
        dists = {_dist(d) for d in _providers(module, where)}
        if not dists and _dist(module) in optional:
            assert module not in on_import, (
                f"course imports {module} when a module is imported; it is an optional peer's "
                "library (attention-peers), to be imported inside the peer"
            )
            continue
        assert dists, f"course imports {module}, which no installed distribution provides"
        assert dists & brought, (
            f"course imports {module} ({sorted(dists)}), which pyproject.toml does not declare"
        )
