"""The GPU gate: what this machine can do, decided once, told plainly.

Three tiers, for every lesson:

- ``no-gpu``: CuPy is missing, or there is no NVIDIA driver, or the driver
  sees no GPU. The page says what is missing and what to do, then shows
  the output recorded on a real Hopper GPU.
- ``wrong-gpu``: a GPU without the lesson's feature (Day 76 needs the
  Tensor Memory Accelerator, compute capability 9.0 or newer; Day 78 needs
  wgmma, which exists on sm_90a alone). The page says what the card lacks
  and which cards run it; the kernel is still compile-checked.
- ``runs``: compile and run.

The same verdict feeds three places: the notebook (a paragraph), the
command line (a message and exit code 2), and pytest (``skipif`` with the
verdict's reason). An environment problem never reaches the learner as a
raw traceback: the probe catches the library errors and translates them.

Setting ``COURSE_REQUIRE_GPU=1`` turns "cannot run here" into an error, so
that a test run on a GPU machine cannot pass by silently skipping the GPU.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import os
import platform
from dataclasses import dataclass, field
from typing import Literal

from .errors import EnvironmentProblem
from .lesson import Lesson

Tier = Literal["no-gpu", "wrong-gpu", "runs"]

REQUIRE_GPU_ENV = "COURSE_REQUIRE_GPU"


def gpu_required() -> bool:
    """True when ``COURSE_REQUIRE_GPU`` is set to a true value (1, true, yes)."""
    return os.environ.get(REQUIRE_GPU_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def _version_string(cuda_int: int | None) -> str | None:
    # CUDA encodes versions as 1000 * major + 10 * minor (12040 is 12.4).
    if not cuda_int:
        return None
    return f"{cuda_int // 1000}.{(cuda_int % 1000) // 10}"


def _dist_version(*names: str) -> str | None:
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    cc: tuple[int, int]
    sm_count: int
    smem_per_block_optin: int  # bytes, the opt-in maximum for one block
    total_memory: int  # bytes

    @property
    def cc_str(self) -> str:
        return f"{self.cc[0]}.{self.cc[1]}"

    @property
    def banner(self) -> str:
        """The first line both C++ programs print (tma_tile.cu's wording)."""
        return f"GPU: {self.name} (compute capability {self.cc_str})"


@dataclass(frozen=True)
class Machine:
    """What the probe found. ``problem`` is None when a GPU is usable."""

    gpu: Gpu | None
    problem: str | None
    advice: str | None
    versions: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    lesson: Lesson
    tier: Tier
    reason: str  # one sentence: what is missing or what was found
    advice: str  # what to do about it

    @property
    def runs(self) -> bool:
        return self.tier == "runs"

    def message(self) -> str:
        return f"{self.reason} {self.advice}".strip()


def _kernel_driver_version(path: str = "/proc/driver/nvidia/version") -> str | None:
    """The NVIDIA kernel module's version (580.159.04), where Linux shows it."""
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
    except OSError:
        return None
    for word in first.split():
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts):
            return word
    return None


def _probe_driver_library() -> str | None:
    """None if libcuda loads, else why not (the driver is really absent)."""
    names = ("nvcuda.dll",) if platform.system() == "Windows" else ("libcuda.so.1", "libcuda.so")
    for name in names:
        try:
            ctypes.CDLL(name)
            return None
        except OSError as e:
            err = str(e)
    return err


def probe() -> Machine:
    """Look at this machine once per process (``refresh()`` looks again)."""
    return _probe_cached()


def refresh() -> Machine:
    _probe_cached.cache_clear()
    return _probe_cached()


@functools.cache
def _probe_cached() -> Machine:
    versions: dict[str, str | None] = {
        "python": platform.python_version(),
        "numpy": _dist_version("numpy"),
        "cupy": None,
        "cuda-python": _dist_version("cuda-python"),
        "cuda-bindings": _dist_version("cuda-bindings"),
        "cuda runtime": None,
        "driver (CUDA)": None,
        "driver": _kernel_driver_version(),
        "nvrtc": None,
    }
    try:
        import cupy
    except ImportError as e:
        return Machine(
            None,
            f"CuPy is not installed ({e}).",
            "Install the course with `pip install -e .` (it brings cupy-cuda12x), "
            "or `pip install cupy-cuda12x` for a CUDA 12 driver, `cupy-cuda13x` for CUDA 13.",
            versions,
        )
    versions["cupy"] = cupy.__version__
    from cupy.cuda import runtime

    try:
        versions["cuda runtime"] = _version_string(runtime.runtimeGetVersion())
    except Exception:  # noqa: BLE001 - the runtime library itself may be missing
        versions["cuda runtime"] = None
    try:
        from cupy.cuda import nvrtc

        major, minor = nvrtc.getVersion()
        versions["nvrtc"] = f"{major}.{minor}"
    except Exception as e:  # noqa: BLE001 - recorded, shown by doctor
        versions["nvrtc"] = f"unavailable ({type(e).__name__})"

    driver_missing = _probe_driver_library()
    if driver_missing is not None:
        return Machine(
            None,
            "There is no NVIDIA driver on this machine (libcuda cannot be loaded), so no GPU can run here.",
            "Open the course on a machine with an NVIDIA GPU and its driver (a cloud H100 or H200 "
            "runs every lesson); here you can still read the kernels, compile-check them and take the quizzes.",
            versions,
        )
    try:
        versions["driver (CUDA)"] = _version_string(runtime.driverGetVersion())
        count = runtime.getDeviceCount()
    except runtime.CUDARuntimeError as e:
        text = str(e)
        if "InsufficientDriver" in text:
            problem = (
                f"The NVIDIA driver supports CUDA {versions['driver (CUDA)'] or 'unknown'}, older than the "
                f"CUDA {versions['cuda runtime']} runtime that this CuPy build needs."
            )
            advice = (
                "Install the CuPy wheel for the driver's CUDA major version (cupy-cuda12x for a CUDA 12 "
                "driver), or update the driver."
            )
        else:
            problem = f"The CUDA runtime could not talk to the driver ({text})."
            advice = "Check `nvidia-smi`; in a container, the GPU must be passed through (--gpus all)."
        return Machine(None, problem, advice, versions)
    if count == 0:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        hint = f" CUDA_VISIBLE_DEVICES is {visible!r}." if visible is not None else ""
        return Machine(
            None,
            "The NVIDIA driver is installed but sees no GPU." + hint,
            "Check `nvidia-smi`; in a container, the GPU must be passed through (--gpus all).",
            versions,
        )
    props = runtime.getDeviceProperties(0)
    name = props["name"]
    gpu = Gpu(
        index=0,
        name=name.decode() if isinstance(name, bytes) else str(name),
        cc=(int(props["major"]), int(props["minor"])),
        sm_count=int(props["multiProcessorCount"]),
        smem_per_block_optin=int(props.get("sharedMemPerBlockOptin", 0)),
        total_memory=int(props["totalGlobalMem"]),
    )
    return Machine(gpu, None, None, versions)


def _cards_phrase(lesson: Lesson) -> str:
    from .gpus import cards_phrase

    return cards_phrase(lesson.id)


def verdict(lesson: Lesson, machine: Machine | None = None) -> Verdict:
    machine = machine or probe()
    if machine.gpu is None:
        return Verdict(lesson, "no-gpu", machine.problem or "No GPU.", machine.advice or "")
    gpu = machine.gpu
    if lesson.supports(gpu.cc):
        return Verdict(lesson, "runs", f"{gpu.name} (compute capability {gpu.cc_str}) runs this lesson.", "")
    return Verdict(
        lesson,
        "wrong-gpu",
        f"{gpu.name} is compute capability {gpu.cc_str}; Day {lesson.day} needs {lesson.feature}.",
        f"Cards that run it: {_cards_phrase(lesson)}. The kernel is still compile-checked here.",
    )


def ensure_runs(lesson: Lesson, machine: Machine | None = None) -> Verdict:
    """The verdict, or EnvironmentProblem when this machine cannot run the lesson."""
    v = verdict(lesson, machine)
    if not v.runs:
        raise EnvironmentProblem(v.message())
    return v


def skip_reason(lesson: Lesson) -> str | None:
    """For ``pytest.mark.skipif``: None when the lesson runs here, else why not."""
    v = verdict(lesson)
    return None if v.runs else f"{v.tier}: {v.reason}"
