"""Resolve the course's dependencies as pip would on another Python; install nothing.

Usage: python scripts/resolve.py PYTHON_VERSION EXTRAS   (e.g. 3.10 test,cuda12)

It runs ``pip install --dry-run --ignore-installed --python-version V
--only-binary=:all: --target DIR .[EXTRAS]``: wheels only, each checked
against V's tags and Requires-Python, so a dependency that drops V (or has
no wheel for it) fails here. pip's --python-version does not reach
environment markers, though: ``tomli; python_version < '3.11'`` and every
marker in the dependencies' own metadata would still be read for the
Python running pip. So pip runs here with its marker environment set to V
(patched in its vendored ``packaging`` before pip loads), and the result
is checked: the report's environment must be V's, and tomli, which the
course needs below 3.11 only, must be in the set exactly when it should.
"""

from __future__ import annotations

import json
import runpy
import sys
import tempfile
from pathlib import Path

SHOWN = (
    "numpy",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "cuda-python",
    "cuda-bindings",
    "nvidia-cuda-nvrtc-cu12",
    "nvidia-cuda-nvrtc",
    "jupyterlab",
    "matplotlib",
    "tomli",
)


def _markers_as(version: str) -> None:
    from pip._vendor.packaging import markers

    real = markers.default_environment

    def target_environment():  # the same dict, for another Python
        env = real()
        env.update(
            python_version=version, python_full_version=f"{version}.0", implementation_version=f"{version}.0"
        )
        return env

    markers.default_environment = target_environment
    if not markers.Marker(f"python_version == '{version}'").evaluate():
        raise SystemExit(f"resolve: could not set pip's marker environment to Python {version}")


def resolve(version: str, extras: str, workdir: Path) -> dict[str, str]:
    _markers_as(version)
    report = workdir / "report.json"
    sys.argv = [
        "pip",
        "install",
        "--quiet",
        "--dry-run",
        "--ignore-installed",
        "--python-version",
        version,
        "--only-binary=:all:",
        "--target",
        str(workdir / "target"),
        "--report",
        str(report),
        f".[{extras}]",
    ]
    try:
        runpy.run_module("pip", run_name="__main__", alter_sys=True)
    except SystemExit as e:
        if e.code not in (0, None):
            raise SystemExit(
                f"resolve: pip cannot resolve .[{extras}] for Python {version} from wheels (above: what is missing)"
            ) from None
    data = json.loads(report.read_text())
    seen = data["environment"]["python_version"]
    if seen != version:
        raise SystemExit(f"resolve: pip resolved for markers of Python {seen}, not {version}")
    return {p["metadata"]["name"].lower(): p["metadata"]["version"] for p in data["install"]}


def main() -> None:
    version, extras = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        got = resolve(version, extras, Path(tmp))
    wants_tomli = tuple(map(int, version.split("."))) < (3, 11) or "test" in extras.split(",")
    if ("tomli" in got) != wants_tomli:
        raise SystemExit(
            f"resolve: tomli {'missing from' if wants_tomli else 'in'} the Python {version} set: "
            "the markers were not read for that Python"
        )
    line = ", ".join(f"{name} {got[name]}" for name in SHOWN if name in got)
    print(f"compat: Python {version} .[{extras}] resolves {len(got)} wheels: {line}")


if __name__ == "__main__":
    main()
