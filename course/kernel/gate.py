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
import re
import sys
from dataclasses import dataclass, field
from typing import Literal

from ..errors import EnvironmentProblem
from ..lesson import Lesson
from .gpus import cards_phrase

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
    # What the doctor should say about the CUDA stack although it works (an
    # NVRTC newer than the driver, CUDA 12 wheels on a CUDA 13 driver).
    notes: tuple[str, ...] = ()


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


def _driver_cuda_version() -> int | None:
    """The CUDA version the driver supports (12020 is 12.2), from libcuda itself: no CuPy needed."""
    names = ("nvcuda.dll",) if platform.system() == "Windows" else ("libcuda.so.1", "libcuda.so")
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        version = ctypes.c_int(0)
        try:
            # cuDriverGetVersion needs no cuInit, so it answers even when no GPU is visible.
            rc = lib.cuDriverGetVersion(ctypes.byref(version))
        except AttributeError:
            return None
        return version.value if rc == 0 and version.value > 0 else None
    return None


# CuPy's packages, one per CUDA major (and "cupy", built from source); two of
# them in one environment overwrite each other's files.
CUPY_PACKAGES = ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy")


def _cupy_packages() -> list[str]:
    """The CuPy packages installed in this Python, as 'name version'."""
    found = []
    for name in CUPY_PACKAGES:
        version = _dist_version(name)
        if version is not None:
            found.append(f"{name} {version}")
    return found


def _major(version: str | None) -> int | None:
    try:
        return int(version.split(".")[0]) if version else None
    except ValueError:
        return None


def _minor_pair(version: str | None) -> tuple[int, int] | None:
    try:
        major, minor = (version or "").split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


def extra_for_driver(driver_cuda: str | None) -> str | None:
    """The pyproject extra whose wheels match a driver's CUDA version; None when no extra can run on it."""
    major = _major(driver_cuda)
    if major is None:
        return "cuda12"
    if major >= 13:
        return "cuda13"
    if major == 12:
        return "cuda12"
    return None


_UPDATE_DRIVER = (
    "The course needs a driver for CUDA 12 or newer (Hopper's TMA and wgmma came with CUDA 12; "
    "driver 525.60 or newer for CUDA 12, 580 or newer for CUDA 13): update the NVIDIA driver. "
    "A CuPy for CUDA 11 (cupy-cuda11x) would import, but its NVRTC cannot compile the lessons."
)


def _install_advice(driver_cuda: str | None) -> str:
    """What to install in this Python for a driver of ``driver_cuda`` (None: no driver here)."""
    extra = extra_for_driver(driver_cuda)
    if extra is None:
        return _UPDATE_DRIVER
    if driver_cuda is None:
        return (
            "Install the course into this Python with `pip install -e '.[cuda12]'` (CuPy, NVRTC and the "
            "CUDA headers for CUDA 12; `.[cuda13]` for a CUDA 13 driver), or run `sh scripts/course.sh`, "
            "which picks the extra for the machine's driver."
        )
    other = (
        "CUDA 12 wheels also run on a CUDA 13 driver"
        if extra == "cuda13"
        else "`.[cuda13]` needs driver 580+"
    )
    return (
        f"The driver supports CUDA {driver_cuda}: install the course into this Python with "
        f"`pip install -e '.[{extra}]'` ({other}), or run `sh scripts/course.sh`, which picks the extra "
        "for this driver. In Jupyter, choose the kernel of the Python that has it."
    )


def _no_cupy(error: ImportError, driver_cuda: str | None, python: str) -> tuple[str, str]:
    if driver_cuda is None:
        problem = f"CuPy is not installed in this Python ({python}: {error})."
    else:
        problem = (
            f"CuPy is not installed in this Python ({python}: {error}), though the NVIDIA driver is here "
            f"(it supports CUDA {driver_cuda}, as nvidia-smi shows)."
        )
    return problem, _install_advice(driver_cuda)


def missing(error: ImportError, needed_for: str) -> EnvironmentProblem:
    """The error for a step that needs what a CUDA extra installs (CuPy, cuda-python, NVRTC) where this
    Python lacks it: the probe's own words (``doctor`` shows the same), plus what the step was for."""
    problem, advice = _no_cupy(error, _version_string(_driver_cuda_version()), sys.executable)
    if not (error.name or "").startswith("cupy"):
        problem = f"A CUDA package is not installed in this Python ({sys.executable}: {error})."
    return EnvironmentProblem(f"{needed_for}: {problem} {advice}")


def _two_cupys(packages: list[str], driver_cuda: str | None) -> tuple[str, str]:
    names = " ".join(p.split()[0] for p in packages)
    extra = extra_for_driver(driver_cuda) or "cuda12"
    return (
        f"More than one CuPy is installed in this Python ({', '.join(packages)}); they overwrite each "
        "other's files, so CuPy cannot be trusted to work.",
        f"Remove them all with `pip uninstall -y {names}`, then install one: `pip install -e '.[{extra}]'` "
        + (f"(the driver supports CUDA {driver_cuda})." if driver_cuda else "(CUDA 12)."),
    )


def _insufficient_driver(
    driver_cuda: str | None, runtime_cuda: str | None, packages: list[str]
) -> tuple[str, str]:
    problem = (
        f"The NVIDIA driver supports CUDA {driver_cuda or 'unknown'}, older than the "
        f"CUDA {runtime_cuda or 'unknown'} runtime that this CuPy ({', '.join(packages) or 'unknown'}) needs."
    )
    extra = extra_for_driver(driver_cuda)
    if extra is None:
        return problem, _UPDATE_DRIVER
    driver_major, runtime_major = _major(driver_cuda), _major(runtime_cuda)
    if driver_major is not None and runtime_major is not None and runtime_major > driver_major:
        wrong = " ".join(p.split()[0] for p in packages) or "cupy-cuda13x"
        return problem, (
            f"Install the wheels for CUDA {driver_major}: `pip uninstall -y {wrong}` then "
            f"`pip install -e '.[{extra}]'`; or update the driver (580 or newer runs CUDA 13)."
        )
    return problem, (
        f"A CUDA {driver_major} driver runs every CUDA {driver_major}.x runtime from 525.60 on; update the "
        f"driver, or reinstall with `pip install -e '.[{extra}]'`."
    )


def _nvrtc_package(major: int) -> str:
    # CUDA 13's NVIDIA wheels dropped the -cuXX suffix of CUDA 12's.
    return "nvidia-cuda-nvrtc-cu12" if major == 12 else "nvidia-cuda-nvrtc"


def _ptx_env() -> bool:
    # CuPy reads CUPY_COMPILE_WITH_PTX as an integer equal to 1 (cupy/cuda/compiler.py).
    value = os.environ.get("CUPY_COMPILE_WITH_PTX", "").strip()
    try:
        return int(value) == 1
    except ValueError:
        return False


def stack_check(versions: dict[str, str | None], use_ptx: bool) -> tuple[str | None, str | None, list[str]]:
    """A working stack's fine print: (problem, advice, notes) from the versions a probe found.

    NVRTC newer than the driver is how the CUDA 12 wheels meet most cloud
    images (NVRTC 12.9 on a 12.2 to 12.8 driver). CuPy asks NVRTC for a cubin
    for the GPU's own architecture (sm_90 here) whenever NVRTC knows it, and a
    driver loads cubins built by any newer toolkit of its major version; PTX
    from a newer NVRTC is what it cannot load (CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
    and CuPy hands it PTX only when CUPY_COMPILE_WITH_PTX=1.
    """
    notes: list[str] = []
    driver, nvrtc = versions.get("driver (CUDA)"), versions.get("nvrtc")
    d, n = _minor_pair(driver), _minor_pair(nvrtc)
    if d is not None and n is not None and n > d:
        if use_ptx:
            return (
                f"CUPY_COMPILE_WITH_PTX=1 makes CuPy load PTX, and PTX from NVRTC {nvrtc} cannot be loaded by "
                f"this driver, which supports CUDA {driver} (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).",
                "Unset CUPY_COMPILE_WITH_PTX (CuPy then builds a cubin, which this driver loads), or match NVRTC "
                f"to the driver: `pip install '{_nvrtc_package(d[0])}=={driver}.*'`.",
                notes,
            )
        notes.append(
            f"NVRTC {nvrtc} is newer than the driver's CUDA {driver}. The lessons still load: CuPy compiles "
            "them to a cubin for this GPU, which a driver of the same CUDA major version loads; only PTX from "
            "this NVRTC would be refused (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), so leave CUPY_COMPILE_WITH_PTX unset."
        )
    cupy_major = _major(versions.get("cuda runtime"))
    if _major(driver) is not None and cupy_major is not None and (_major(driver) or 0) > cupy_major:
        notes.append(
            f"The CUDA {cupy_major} wheels run on this CUDA {driver} driver; `pip install -e "
            f"'.[cuda{_major(driver)}]'` would match it (remove cupy-cuda{cupy_major}x first)."
        )
    return None, None, notes


def probe() -> Machine:
    """Look at this machine once per process (``refresh()`` looks again)."""
    return _probe_cached()


def refresh() -> Machine:
    _probe_cached.cache_clear()
    return _probe_cached()


@functools.cache
def _probe_cached() -> Machine:
    packages = _cupy_packages()
    versions: dict[str, str | None] = {
        "python": platform.python_version(),
        "numpy": _dist_version("numpy"),
        "cupy": None,
        "cupy package": ", ".join(packages) or None,
        "cuda-python": _dist_version("cuda-python"),
        "cuda-bindings": _dist_version("cuda-bindings"),
        "cuda runtime": None,
        "driver (CUDA)": _version_string(_driver_cuda_version()),
        "driver": _kernel_driver_version(),
        "nvrtc": None,
    }
    if len(packages) > 1:
        return Machine(None, *_two_cupys(packages, versions["driver (CUDA)"]), versions)
    try:
        # heavy: cupy, when a GPU path runs
        import cupy
    except ImportError as e:
        return Machine(None, *_no_cupy(e, versions["driver (CUDA)"], sys.executable), versions)
    versions["cupy"] = cupy.__version__
    # heavy: cupy, when a GPU path runs
    from cupy.cuda import runtime

    try:
        versions["cuda runtime"] = _version_string(runtime.runtimeGetVersion())
    except Exception:  # the runtime library itself may be missing
        versions["cuda runtime"] = None
    try:
        # heavy: cupy, when a GPU path runs
        from cupy.cuda import nvrtc

        major, minor = nvrtc.getVersion()
        versions["nvrtc"] = f"{major}.{minor}"
    except Exception as e:  # recorded, shown by doctor
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
        versions["driver (CUDA)"] = _version_string(runtime.driverGetVersion()) or versions["driver (CUDA)"]
        count = runtime.getDeviceCount()
    except runtime.CUDARuntimeError as e:
        text = str(e)
        if "InsufficientDriver" in text:
            problem, advice = _insufficient_driver(
                versions["driver (CUDA)"], versions["cuda runtime"], packages
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
    stack_problem, stack_advice, notes = stack_check(versions, _ptx_env())
    if stack_problem is not None:
        return Machine(None, f"{gpu.name}: {stack_problem}", stack_advice, versions, tuple(notes))
    return Machine(gpu, None, None, versions, tuple(notes))


_MIG = re.compile(r"\bMIG\s+\d+g\.\d+gb\b")  # CUDA names a MIG slice "<card> MIG 1g.18gb"


def _mig_note(gpu: Gpu) -> str:
    """What a MIG slice means for a lesson, when the GPU is one (not measured: said so)."""
    if not _MIG.search(gpu.name):
        return ""
    return (
        f" It is a MIG slice of the card: {gpu.sm_count} of its SMs, with their own share of the L2 cache"
        " and of the memory (NVIDIA's MIG user guide). TMA, wgmma and the mbarriers belong to each SM,"
        " so the lesson runs here as on the whole card, and its timings are this slice's. The lessons"
        " were recorded on a whole card, never on a slice: nothing here was measured on one."
    )


def verdict(lesson: Lesson, machine: Machine | None = None) -> Verdict:
    machine = machine or probe()
    if machine.gpu is None:
        return Verdict(lesson, "no-gpu", machine.problem or "No GPU.", machine.advice or "")
    gpu = machine.gpu
    if lesson.supports(gpu.cc):
        return Verdict(
            lesson,
            "runs",
            f"{gpu.name} (compute capability {gpu.cc_str}) runs this lesson.{_mig_note(gpu)}",
            "",
        )
    return Verdict(
        lesson,
        "wrong-gpu",
        f"{gpu.name} is compute capability {gpu.cc_str}; Day {lesson.day} needs {lesson.feature}.",
        f"Cards that run it: {cards_phrase(lesson)}. The kernel is still compile-checked here.",
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
