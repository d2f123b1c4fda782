"""Make this Python look like ``pip install -e .`` without a CUDA extra.

Put this folder first on PYTHONPATH (``site`` imports ``sitecustomize``
from it at start-up, in the test's subprocesses, their children and the
Jupyter kernel). What the extras bring then cannot be imported, exactly as
when it is not installed: ``import cupy`` raises ModuleNotFoundError
(``cupy-cuda12x``/``cupy-cuda13x``), so do ``cuda`` (cuda-python: its
bindings and pathfinder) and ``nvidia`` (the NVRTC and CUDA runtime wheels);
their distributions are hidden from ``importlib.metadata`` too, so what
reads the installed packages sees none of them.
"""

from __future__ import annotations

import importlib.metadata
import sys
from importlib.abc import MetaPathFinder

BLOCKED = ("cupy", "cupyx", "cupy_backends", "cuda", "nvidia", "fastrlock")
HIDDEN = ("cupy", "cuda-python", "cuda-bindings", "cuda-pathfinder", "cuda-core", "nvidia-", "fastrlock")


class _NotInstalled(MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201
        if fullname.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def _hidden(name: str) -> bool:
    name = name.lower().replace("_", "-")
    return any(
        name == h or (h.endswith("-") and name.startswith(h)) or name.startswith(h + "-") for h in HIDDEN
    )


_version, _distribution = importlib.metadata.version, importlib.metadata.distribution


def version(name: str) -> str:
    if _hidden(name):
        raise importlib.metadata.PackageNotFoundError(name)
    return _version(name)


def distribution(name: str) -> importlib.metadata.Distribution:
    if _hidden(name):
        raise importlib.metadata.PackageNotFoundError(name)
    return _distribution(name)


# cuda-bindings' own .pth (_cuda_bindings_redirector.pth) imports ``cuda`` before this file runs;
# without the extra there is no such .pth, so nothing of it is imported yet.
for _name in [m for m in sys.modules if m.split(".")[0] in BLOCKED]:
    del sys.modules[_name]
sys.meta_path.insert(0, _NotInstalled())
importlib.metadata.version = version
importlib.metadata.distribution = distribution
