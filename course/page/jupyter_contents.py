"""The contents manager ``scripts/course.sh`` serves pages with: a page opens unmodified.

JupyterLab writes the kernel's ``language_info`` (from its kernel-info reply)
into a notebook's metadata when the kernel starts, and a notebook whose
metadata then differs from what was read is marked modified before the learner
typed anything. The kernel's reply carries the Python version (``3.11.7``), so
no ``language_info`` committed in a page matches every learner's Python: the
server fills it in as it reads a notebook, with the reply of the kernel it
starts for ``python3`` (ipykernel's own ``IPythonKernel.language_info``, in this
Python), and JupyterLab then finds nothing to change.

Only notebooks for the ``python3`` kernel whose ``language_info`` is Python's
(or missing) are touched; what is written back on save is what JupyterLab would
have written anyway.
"""

from __future__ import annotations

import copy
from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

PYTHON_KERNEL = "python3"  # ipykernel's kernelspec name, as the pages' metadata names it


def kernel_language_info() -> dict[str, Any]:
    """The ``language_info`` a ``python3`` kernel of this Python reports (ipykernel's own dict)."""
    # heavy: ipykernel, only when the server reads a page
    from ipykernel.ipkernel import IPythonKernel

    return copy.deepcopy(dict(IPythonKernel.language_info))


def with_kernel_language(nb: Any) -> bool:
    """Set ``nb``'s ``language_info`` to the kernel's when ``nb`` is for the python3 kernel; True if it changed."""
    metadata = nb.get("metadata") if isinstance(nb, dict) else None
    if not isinstance(metadata, dict):
        return False
    spec = metadata.get("kernelspec")
    have = metadata.get("language_info")
    if not isinstance(spec, dict) or spec.get("name") != PYTHON_KERNEL:
        return False
    if have is not None and (not isinstance(have, dict) or have.get("name") != "python"):
        return False
    want = kernel_language_info()
    if have == want:
        return False
    metadata["language_info"] = want
    return True


class KernelLanguageContentsManager(AsyncLargeFileManager):
    """jupyter_server's default contents manager; a notebook read carries the kernel's ``language_info``."""

    async def get(  # the base's own (untyped) signature
        self, path: Any, content: Any = True, type: Any = None, format: Any = None, require_hash: Any = False
    ) -> Any:
        model = await super().get(path, content=content, type=type, format=format, require_hash=require_hash)
        if content and model.get("type") == "notebook" and model.get("content") is not None:
            with_kernel_language(model["content"])
        return model


def served_options() -> list[str]:
    """The ``jupyter lab`` options ``scripts/course.sh`` adds (the browser tests serve with them too)."""
    return [
        f"--ServerApp.contents_manager_class={KernelLanguageContentsManager.__module__}.KernelLanguageContentsManager"
    ]


# -- a Jupyter server extension: the environment the course is installed in serves with it --
# pip puts jupyter-config/jupyter_server_config.d/hopper-course.json into
# {sys.prefix}/etc/jupyter/jupyter_server_config.d (pyproject's data-files), which enables
# this module as a server extension in every JupyterLab of that environment (a class image,
# a hub's single-user server): linking runs before the server makes its contents manager.


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _link_jupyter_server_extension(serverapp: Any) -> None:
    """Serve with ``KernelLanguageContentsManager`` unless the server was given another one."""
    if "contents_manager_class" in serverapp.config.get("ServerApp", {}):
        return  # chosen in a config file or on the command line: kept
    serverapp.contents_manager_class = KernelLanguageContentsManager


def _load_jupyter_server_extension(serverapp: Any) -> None:
    chosen = type(getattr(serverapp, "contents_manager", None)).__name__
    serverapp.log.info("hopper-course: pages are served by %s", chosen)
