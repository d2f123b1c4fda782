"""The gate's three tiers, decided from a probe of the machine."""

import pytest

from course.errors import EnvironmentProblem
from course.kernel import gate
from course.kernel.gate import Gpu, Machine, verdict
from course.lessons import get_lesson

DAY76, DAY78 = get_lesson("day76"), get_lesson("day78")


def _machine(name, cc):
    return Machine(Gpu(0, name, cc, 100, 100 * 1024, 2**34), None, None, {})


NO_GPU = Machine(None, "There is no NVIDIA driver on this machine.", "Use a machine with a GPU.", {})


@pytest.mark.parametrize(
    "name, cc, day76_tier, day78_tier",
    [
        ("NVIDIA H100 80GB HBM3", (9, 0), "runs", "runs"),
        ("NVIDIA B200", (10, 0), "runs", "wrong-gpu"),
        ("NVIDIA GeForce RTX 5090", (12, 0), "runs", "wrong-gpu"),
        ("NVIDIA L4", (8, 9), "wrong-gpu", "wrong-gpu"),
        ("NVIDIA A100-SXM4-80GB", (8, 0), "wrong-gpu", "wrong-gpu"),
    ],
)
def test_tiers_by_compute_capability(name, cc, day76_tier, day78_tier):
    m = _machine(name, cc)
    assert verdict(DAY76, m).tier == day76_tier
    assert verdict(DAY78, m).tier == day78_tier


def test_a_mig_slice_runs_every_lesson_and_the_verdict_says_what_a_slice_is():
    slice_ = Machine(Gpu(0, "NVIDIA H200 MIG 1g.18gb", (9, 0), 16, 227 * 1024, 18 << 30), None, None, {})
    for lesson in (DAY76, DAY78):
        v = verdict(lesson, slice_)
        assert v.runs and "It is a MIG slice of the card: 16 of its SMs" in v.reason
        assert "never on a slice" in v.reason  # not measured on one, and it says so
    assert "MIG" not in verdict(DAY78, _machine("NVIDIA H200", (9, 0))).reason


def test_wrong_gpu_says_what_the_card_lacks_and_which_cards_run_it():
    v = verdict(DAY78, _machine("NVIDIA B200", (10, 0)))
    assert "NVIDIA B200 is compute capability 10.0" in v.reason
    assert "wgmma" in v.reason
    assert "H100/H200" in v.advice and "compile-checked" in v.advice
    v76 = verdict(DAY76, _machine("NVIDIA L4", (8, 9)))
    assert "B200" in v76.advice and "RTX 50" in v76.advice


def test_no_gpu_passes_the_probe_problem_through():
    v = verdict(DAY76, NO_GPU)
    assert v.tier == "no-gpu" and not v.runs
    assert v.message() == "There is no NVIDIA driver on this machine. Use a machine with a GPU."
    with pytest.raises(EnvironmentProblem, match="no NVIDIA driver"):
        gate.ensure_runs(DAY76, NO_GPU)


@pytest.mark.parametrize(
    "value, expected", [("1", True), ("true", True), ("YES", True), ("0", False), ("", False)]
)
def test_require_gpu_switch(monkeypatch, value, expected):
    monkeypatch.setenv(gate.REQUIRE_GPU_ENV, value)
    assert gate.gpu_required() is expected


def test_driver_version_is_read_from_the_kernel_module_line(tmp_path):
    f = tmp_path / "version"
    f.write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 2025\nGCC version: 12\n"
    )
    assert gate._kernel_driver_version(str(f)) == "580.159.04"
    assert gate._kernel_driver_version(str(tmp_path / "missing")) is None


def test_probe_on_this_machine_never_raises():
    m = gate.refresh()
    assert (m.gpu is None) == (m.problem is not None)
    assert m.versions["python"]


def test_missing_cupy_is_explained(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    m = gate.refresh()
    monkeypatch.undo()
    gate.refresh()
    assert m.gpu is None and "CuPy is not installed" in m.problem
    assert "pip install" in m.advice
