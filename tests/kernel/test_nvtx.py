"""NVTX ranges (course/kernel/nvtx.py): CuPy's binding when it is there, a no-op when it is not."""

from __future__ import annotations

import sys
import types

import pytest

from course.kernel import nvtx


@pytest.fixture
def fresh(monkeypatch):
    """The backend looked up again (it is cached per process), and looked up again after the test."""
    nvtx._backend.cache_clear()
    yield
    nvtx._backend.cache_clear()


def _fake_nvtx(available=True):
    calls: list[tuple] = []
    module = types.ModuleType("cupy.cuda.nvtx")
    module.available = available
    module.RangePush = lambda name: calls.append(("push", name))
    module.RangePop = lambda: calls.append(("pop",))
    return module, calls


def test_a_range_pushes_and_pops_through_cupys_nvtx(fresh, monkeypatch):
    module, calls = _fake_nvtx()
    monkeypatch.setitem(sys.modules, "cupy.cuda.nvtx", module)
    with nvtx.range("day80 run: gemm2Pipeline N=4096"):
        calls.append(("inside",))
    with pytest.raises(ValueError), nvtx.range("day81 bench"):
        raise ValueError("a failed launch")
    assert calls == [
        ("push", "day80 run: gemm2Pipeline N=4096"),
        ("inside",),
        ("pop",),
        ("push", "day81 bench"),
        ("pop",),  # popped even when the block raises: the NVTX stack stays balanced
    ]


def test_without_cupy_a_range_is_a_no_op_not_an_import_error(fresh, monkeypatch):
    for name in ("cupy", "cupy.cuda", "cupy.cuda.nvtx"):
        monkeypatch.setitem(sys.modules, name, None)  # import cupy now raises ImportError
    with pytest.raises(ImportError):
        import cupy.cuda.nvtx  # noqa: F401
    ran = []
    with nvtx.range("day80 run"):
        ran.append(True)
    assert ran == [True] and nvtx._backend() is None


def test_without_the_nvtx_library_a_range_is_a_no_op(fresh, monkeypatch):
    module, calls = _fake_nvtx(available=False)
    monkeypatch.setitem(sys.modules, "cupy.cuda.nvtx", module)
    with nvtx.range("day80 run"):
        pass
    assert calls == []
