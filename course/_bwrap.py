"""Bubblewrap (``bwrap``, Debian's ``bubblewrap``): found, tried once, and the command line around a child.

    sandbox_status()        # Sandbox(works, detail): in words, for doctor and the grader
    require_sandbox()       # the working one, or NoSandbox saying why there is none and how to get one
    bwrap_prefix(binds, folder, readable, writable)   # what course._confine puts before the keeper

Found at ``COURSE_BWRAP`` (a bwrap binary, e.g. Debian's .deb unpacked with
``dpkg -x`` on a machine without one) or on PATH, and tried once per
process and binary: a container may forbid the user namespaces it needs.
``COURSE_SANDBOX=none`` turns it off, ``=bwrap`` makes its absence an
error. Each child gets new user, pid, network, ipc, uts and cgroup
namespaces (``--unshare-all``), ``--die-with-parent``, ``--new-session``,
a fresh ``/dev``, ``/proc`` and ``/tmp``, the system folders, the Python
and what it is told to read, read-only, and only its throwaway folder (and
what it is told to write) writable. ``binds="gpu"`` adds each
``/dev/nvidia*`` node (``--dev-bind``) and ``/sys`` read-only: the driver's
libraries are in the system folders. ``binds="all"`` binds the whole
machine read-only. ``course._confine`` runs every child through it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import CourseError

__all__ = [
    "BWRAP_ENV",
    "GET_SANDBOX",
    "KEEPER",
    "SANDBOX_ENV",
    "NoSandbox",
    "Sandbox",
    "bwrap_path",
    "bwrap_prefix",
    "require_sandbox",
    "sandbox_status",
]

SANDBOX_ENV = "COURSE_SANDBOX"  # auto (default), bwrap, none
BWRAP_ENV = "COURSE_BWRAP"  # a bwrap binary to use (e.g. Debian's .deb unpacked where none is installed)
# How to get a sandbox, for the messages of doctor and quiz grade.
GET_SANDBOX = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; or set COURSE_BWRAP to a bwrap "
    "binary, e.g. one unpacked from Debian's .deb with dpkg -x); in a container, allow user namespaces "
    "(Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined; on an Ubuntu host "
    "also sysctl kernel.apparmor_restrict_unprivileged_userns=0)"
)
KEEPER = Path(__file__).with_name("_keeper.py")
# The system a CPU child needs, read-only inside bubblewrap (the rest of the machine is absent).
_SYSTEM = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/alternatives",
)


@dataclass(frozen=True)
class Sandbox:
    works: bool
    detail: str  # what doctor prints


def bwrap_path() -> str | None:
    """The bwrap binary: ``COURSE_BWRAP`` when set (it must then exist), else the one on PATH."""
    given = os.environ.get(BWRAP_ENV, "").strip()
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    return shutil.which("bwrap")


def _gpu_nodes() -> list[str]:
    """The NVIDIA device files (``/dev/nvidia0``, ``/dev/nvidiactl``, ``/dev/nvidia-uvm``, ``/dev/nvidia-caps``)."""
    try:
        return sorted(f"/dev/{name}" for name in os.listdir("/dev") if name.startswith("nvidia"))
    except OSError:
        return []


def bwrap_prefix(binds: str, folder: Path, readable: Sequence[Path], writable: Sequence[Path]) -> list[str]:
    bwrap = bwrap_path() or "bwrap"
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
    if binds == "all":  # the whole machine read-only (the learner's own compile: their files included)
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    else:
        # Mounts stack in order: the fresh /tmp first, so that a checkout or a Python under /tmp (a CI
        # clone) is bound on top of it rather than hidden by it.
        args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for system in _SYSTEM:
            args += ["--ro-bind-try", system, system]
        if binds == "gpu":  # the device files and what the driver reads besides its libraries (in /usr)
            for node in _gpu_nodes():
                args += ["--dev-bind", node, node]
            for driver in ("/sys", "/run/nvidia-persistenced", "/etc/nvidia"):
                args += ["--ro-bind-try", driver, driver]
        # The Python that runs (a venv is called by its own path: its pyvenv.cfg must be there).
        pythons = {
            Path(os.path.realpath(sys.executable)).parent.parent,
            Path(sys.base_prefix),
            Path(sys.prefix),
        }
        for place in sorted({*pythons, *readable}):
            args += ["--ro-bind-try", str(place), str(place)]
        args += ["--ro-bind", str(KEEPER), str(KEEPER)]
    for place in (folder, *writable):
        args += ["--bind", str(place), str(place)]
    return [*args, "--chdir", str(folder), "--"]


def _wanted() -> str:
    wanted = os.environ.get(SANDBOX_ENV, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "bwrap", "none"):
        raise CourseError(f"{SANDBOX_ENV} must be auto, bwrap or none (got {wanted!r})")
    return wanted


@functools.lru_cache(maxsize=4)
def _bwrap_probe(bwrap: str | None) -> Sandbox:
    if bwrap_path() is None:
        if os.environ.get(BWRAP_ENV, "").strip():
            return Sandbox(False, f"{BWRAP_ENV}={os.environ[BWRAP_ENV]!r} is not an executable file")
        return Sandbox(
            False,
            "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap), "
            "and COURSE_BWRAP is not set",
        )
    with tempfile.TemporaryDirectory(prefix="course-probe-") as tmp:
        folder = Path(tmp).resolve()
        try:
            probe = subprocess.run(
                [*bwrap_prefix("system", folder, (), ()), "/bin/sh", "-c", "exit 0"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=20,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return Sandbox(False, f"bubblewrap is installed but could not start ({e})")
    if probe.returncode != 0:
        why = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        return Sandbox(
            False,
            f"bubblewrap is installed but cannot create its namespaces here ({why[-1] if why else 'no message'}); "
            "a container must allow user namespaces for it",
        )
    return Sandbox(
        True,
        f"{bwrap_path()}: no network, its own pid namespace, the system read-only, "
        "only a throwaway folder writable",
    )


def sandbox_status() -> Sandbox:
    """Whether the children run inside bubblewrap here (tried once per process and bwrap), in words."""
    wanted = _wanted()
    if wanted == "none":
        return Sandbox(False, f"bubblewrap turned off ({SANDBOX_ENV}=none)")
    found = _bwrap_probe(bwrap_path())
    if wanted == "bwrap" and not found.works:
        raise CourseError(f"{SANDBOX_ENV}=bwrap, but {found.detail}")
    return found


class NoSandbox(CourseError):
    """No working sandbox here, and code was to be graded only inside one."""


def require_sandbox() -> Sandbox:
    """The working sandbox, or ``NoSandbox`` saying why there is none and how to get one."""
    try:
        box = sandbox_status()
    except CourseError as e:
        box = Sandbox(False, e.message)
    if not box.works:
        raise NoSandbox(
            f"no working sandbox to run learners' code in: {box.detail}. To get one, {GET_SANDBOX}"
        )
    return box
