"""The CUDA stacks learners meet, simulated: what the gate decides and what the doctor says.

Each machine is a fake CuPy (its runtime, NVRTC and driver answers) plus
what the probe reads without CuPy (libcuda's cuDriverGetVersion, the CuPy
packages installed), so every case runs here without a GPU:

- a CUDA 12 driver older than the NVRTC in the wheels (12.2 with NVRTC 12.9),
  with and without CUPY_COMPILE_WITH_PTX;
- a CUDA 13 driver with the CUDA 13 wheels, and with the CUDA 12 ones;
- the CUDA 13 wheels on a CUDA 12 driver, and any CuPy on a CUDA 11 driver;
- nvidia-smi working but this Python without CuPy, and two CuPys at once.
"""

from __future__ import annotations

import argparse
import sys
import types

import pytest

from course.cli import doctor
from course.kernel import gate
from course.lessons import get_lesson

DAY76, DAY78 = get_lesson("day76"), get_lesson("day78")

H100 = {
    "name": b"NVIDIA H100 80GB HBM3",
    "major": 9,
    "minor": 0,
    "multiProcessorCount": 132,
    "sharedMemPerBlockOptin": 232448,
    "totalGlobalMem": 85520809984,
}
INSUFFICIENT = "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"


def _cuda_int(version: str) -> int:
    major, minor = version.split(".")
    return 1000 * int(major) + 10 * int(minor)


@pytest.fixture
def machine(monkeypatch):
    """Build a simulated machine and probe it; the real probe comes back afterwards."""

    def build(
        *,
        driver: str | None,
        packages: tuple[str, ...] = ("cupy-cuda12x 14.2.0",),
        runtime: str = "12.9",
        nvrtc: str = "12.9",
        device_error: str | None = None,
        ptx: str | None = None,
    ) -> gate.Machine:
        monkeypatch.setattr(gate, "_driver_cuda_version", lambda: _cuda_int(driver) if driver else None)
        monkeypatch.setattr(
            gate, "_probe_driver_library", lambda: None if driver else "libcuda.so.1: not found"
        )
        monkeypatch.setattr(gate, "_kernel_driver_version", lambda: "535.183.01" if driver else None)
        monkeypatch.setattr(gate, "_cupy_packages", lambda: list(packages))
        if ptx is None:
            monkeypatch.delenv("CUPY_COMPILE_WITH_PTX", raising=False)
        else:
            monkeypatch.setenv("CUPY_COMPILE_WITH_PTX", ptx)
        if not packages:
            monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
        else:

            class CUDARuntimeError(RuntimeError):
                pass

            def device_count() -> int:
                if device_error:
                    raise CUDARuntimeError(device_error)
                return 1

            runtime_module = types.SimpleNamespace(
                CUDARuntimeError=CUDARuntimeError,
                runtimeGetVersion=lambda: _cuda_int(runtime),
                driverGetVersion=lambda: _cuda_int(driver) if driver else 0,
                getDeviceCount=device_count,
                getDeviceProperties=lambda index: H100,
            )
            major, minor = nvrtc.split(".")
            nvrtc_module = types.SimpleNamespace(getVersion=lambda: (int(major), int(minor)))
            cuda = types.ModuleType("cupy.cuda")
            cuda.runtime = runtime_module  # type: ignore[attr-defined]
            cuda.nvrtc = nvrtc_module  # type: ignore[attr-defined]
            cupy = types.ModuleType("cupy")
            cupy.__version__ = packages[0].split()[1]  # type: ignore[attr-defined]
            cupy.cuda = cuda  # type: ignore[attr-defined]
            monkeypatch.setitem(sys.modules, "cupy", cupy)
            monkeypatch.setitem(sys.modules, "cupy.cuda", cuda)
        return gate.refresh()

    yield build
    monkeypatch.undo()
    gate.refresh()


def _doctor(capsys) -> str:
    assert doctor.run(argparse.Namespace(compile=False)) == 0
    return capsys.readouterr().out


def test_a_cuda_12_driver_older_than_nvrtc_runs_the_lessons_from_cubin(machine, capsys):
    m = machine(driver="12.2")
    assert m.gpu is not None and m.problem is None
    assert gate.verdict(DAY76, m).runs and gate.verdict(DAY78, m).runs
    (note,) = m.notes
    assert "NVRTC 12.9 is newer than the driver's CUDA 12.2" in note
    assert (
        "cubin" in note and "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" in note and "CUPY_COMPILE_WITH_PTX" in note
    )
    out = _doctor(capsys)
    assert "CUDA stack:\n  NVRTC 12.9 is newer than the driver's CUDA 12.2" in out
    assert "day78 (" in out and "runs here" in out
    assert "driver (CUDA):      12.2" in out and "cupy package:       cupy-cuda12x 14.2.0" in out


def test_ptx_from_a_newer_nvrtc_is_refused_before_the_driver_sees_it(machine, capsys):
    m = machine(driver="12.2", ptx="1")
    v = gate.verdict(DAY76, m)
    assert not v.runs and v.tier == "no-gpu"
    assert v.reason.startswith("NVIDIA H100 80GB HBM3: CUPY_COMPILE_WITH_PTX=1 makes CuPy load PTX")
    assert (
        "NVRTC 12.9" in v.reason
        and "CUDA 12.2" in v.reason
        and "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" in v.reason
    )
    assert "Unset CUPY_COMPILE_WITH_PTX" in v.advice and "nvidia-cuda-nvrtc-cu12==12.2.*" in v.advice
    out = _doctor(capsys)
    assert "why:                NVIDIA H100 80GB HBM3: CUPY_COMPILE_WITH_PTX=1" in out
    # CuPy reads the variable as the integer 1; anything else leaves cubin on.
    assert machine(driver="12.2", ptx="0").gpu is not None
    assert machine(driver="12.2", ptx="yes").gpu is not None


def test_ptx_is_fine_when_the_driver_is_as_new_as_nvrtc(machine):
    m = machine(driver="12.9", ptx="1")
    assert m.gpu is not None and m.notes == ()


def test_a_cuda_13_driver_with_the_cuda_13_wheels(machine, capsys):
    m = machine(driver="13.0", packages=("cupy-cuda13x 14.2.0",), runtime="13.0", nvrtc="13.0")
    assert m.gpu is not None and m.notes == ()
    out = _doctor(capsys)
    assert "CUDA stack:" not in out and "cupy package:       cupy-cuda13x 14.2.0" in out


def test_a_cuda_13_driver_with_a_newer_cuda_13_nvrtc(machine):
    m = machine(driver="13.0", packages=("cupy-cuda13x 14.2.0",), runtime="13.5", nvrtc="13.5")
    assert m.gpu is not None
    assert "NVRTC 13.5 is newer than the driver's CUDA 13.0" in m.notes[0]
    m = machine(driver="13.0", packages=("cupy-cuda13x 14.2.0",), runtime="13.5", nvrtc="13.5", ptx="1")
    assert m.gpu is None and "nvidia-cuda-nvrtc==13.0.*" in (m.advice or "")


def test_a_cuda_13_driver_with_the_cuda_12_wheels_runs_and_says_what_would_match(machine):
    m = machine(driver="13.0")
    assert m.gpu is not None and gate.verdict(DAY78, m).runs
    (note,) = m.notes
    assert "The CUDA 12 wheels run on this CUDA 13.0 driver" in note and ".[cuda13]" in note


def test_the_cuda_13_wheels_on_a_cuda_12_driver(machine):
    m = machine(
        driver="12.4",
        packages=("cupy-cuda13x 14.2.0",),
        runtime="13.0",
        nvrtc="13.0",
        device_error=INSUFFICIENT,
    )
    v = gate.verdict(DAY76, m)
    assert v.tier == "no-gpu"
    assert v.reason == (
        "The NVIDIA driver supports CUDA 12.4, older than the CUDA 13.0 runtime that this CuPy "
        "(cupy-cuda13x 14.2.0) needs."
    )
    assert "`pip uninstall -y cupy-cuda13x` then `pip install -e '.[cuda12]'`" in v.advice


def test_a_cuda_11_driver_needs_a_driver_update_not_another_cupy(machine):
    m = machine(driver="11.4", device_error=INSUFFICIENT)
    v = gate.verdict(DAY76, m)
    assert "supports CUDA 11.4, older than the CUDA 12.9 runtime" in v.reason
    assert "needs a driver for CUDA 12 or newer" in v.advice and "update the NVIDIA driver" in v.advice
    assert "cupy-cuda11x" in v.advice  # says why the CUDA 11 CuPy is no way out


@pytest.mark.parametrize(
    "driver, words",
    [
        ("12.4", "`pip install -e '.[cuda12]'`"),
        ("13.0", "`pip install -e '.[cuda13]'`"),
        ("11.8", "needs a driver for CUDA 12 or newer"),
        (None, "`pip install -e '.[cuda12]'`"),
    ],
)
def test_nvidia_smi_works_but_this_python_has_no_cupy(machine, capsys, driver, words):
    m = machine(driver=driver, packages=())
    assert m.gpu is None and m.problem is not None and m.advice is not None
    assert m.problem.startswith(f"CuPy is not installed in this Python ({sys.executable}: ")
    if driver:
        assert f"though the NVIDIA driver is here (it supports CUDA {driver}" in m.problem
    assert words in m.advice
    out = _doctor(capsys)
    assert f"this Python:        {sys.executable}" in out
    assert f"driver (CUDA):      {driver or 'not found'}" in out


def test_two_cupys_in_one_python_are_refused_before_import(machine):
    m = machine(driver="12.4", packages=("cupy-cuda13x 14.2.0", "cupy-cuda12x 14.2.0"))
    assert m.gpu is None and m.problem is not None and m.advice is not None
    assert "More than one CuPy is installed" in m.problem
    assert "cupy-cuda13x 14.2.0, cupy-cuda12x 14.2.0" in m.problem
    assert "`pip uninstall -y cupy-cuda13x cupy-cuda12x`" in m.advice and ".[cuda12]" in m.advice


@pytest.mark.parametrize(
    "driver, extra",
    [
        (None, "cuda12"),
        ("11.8", None),
        ("12.0", "cuda12"),
        ("12.9", "cuda12"),
        ("13.0", "cuda13"),
        ("14.1", "cuda13"),
    ],
)
def test_the_extra_for_a_driver(driver, extra):
    assert gate.extra_for_driver(driver) == extra


def test_the_driver_version_comes_from_libcuda_without_cupy(monkeypatch):
    class FakeLibcuda:
        def cuDriverGetVersion(self, pointer):  # the driver API's name
            pointer._obj.value = 12040
            return 0

    monkeypatch.setattr(gate.ctypes, "CDLL", lambda name: FakeLibcuda())
    assert gate._driver_cuda_version() == 12040

    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(gate.ctypes, "CDLL", missing)
    assert gate._driver_cuda_version() is None


def test_cupy_builds_hopper_kernels_as_cubin_unless_told_to_use_ptx(monkeypatch):
    """What the NVRTC-newer-than-the-driver note rests on, read from the installed CuPy.

    CuPy asks NVRTC for SASS (a cubin) for sm_90, which an older driver of the
    same CUDA major loads, and for PTX only under CUPY_COMPILE_WITH_PTX=1. These
    are CuPy's private helpers (cupy/cuda/compiler.py); if they move, check the
    note in gate.stack_check and book/contributors/cuda.md again.
    """
    compiler = pytest.importorskip("cupy.cuda.compiler", reason="CuPy is not installed")
    choose = getattr(getattr(compiler, "_get_arch_for_options_for_nvrtc", None), "__wrapped__", None)
    assert choose is not None and hasattr(compiler, "_use_ptx"), "CuPy's choice of cubin or PTX moved"
    try:
        compiler._get_max_compute_capability()  # loads NVRTC; no GPU needed
    except Exception as e:  # any failure to load NVRTC means: cannot check here
        pytest.skip(f"NVRTC cannot be loaded here ({type(e).__name__})")
    monkeypatch.setattr(compiler, "_use_ptx", False)
    assert choose("90") == ("-arch=sm_90", "cubin")
    monkeypatch.setattr(compiler, "_use_ptx", True)
    assert choose("90") == ("-arch=compute_90", "ptx")
