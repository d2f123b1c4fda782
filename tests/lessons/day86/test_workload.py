"""The ragged workload's launch on the CPU: NumPy stands in for CuPy, the maps are only described.

What the kernel receives (the header's launch contract) follows from the shape, the build and
the split: arguments in order, the grid, the workspace and counters, the maps' dimensions."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest

from course.kernel.lcg import lcg_operands
from course.lessons import _ladder
from course.lessons.day86 import host as day86_host
from course.lessons.day86.host import HOST, RUN_SHAPE


class _Array(np.ndarray):
    """A NumPy array with CuPy's ``.data.ptr`` (its address)."""

    @property
    def data(self):  # type: ignore[override]
        return SimpleNamespace(ptr=self.__array_interface__["data"][0])


def _wrap(a):  # type: ignore[no-untyped-def]
    return np.asarray(a).view(_Array)


@pytest.fixture
def fake_gpu(monkeypatch):
    shim = SimpleNamespace(
        asarray=_wrap,
        empty=lambda shape, dtype: _wrap(np.empty(shape, dtype)),
        zeros=lambda shape, dtype: _wrap(np.zeros(shape, dtype)),
        float16=np.float16,
        float32=np.float32,
        uint32=np.uint32,
    )
    monkeypatch.setitem(sys.modules, "cupy", shim)
    maps = []
    monkeypatch.setattr(_ladder, "encode", lambda tile_map, address: maps.append(tile_map) or tile_map)
    monkeypatch.setattr(_ladder, "sm_count", lambda: 132)
    monkeypatch.setattr(day86_host, "sm_count", lambda: 132)
    return maps


def _compiled(bn: int, cluster: int):  # type: ignore[no-untyped-def]
    return SimpleNamespace(
        options=SimpleNamespace(defines=(("GEMM_BN", str(bn)), ("GEMM_CLUSTER", str(cluster))))
    )


def test_the_lesson_run_launches_as_the_header_says(fake_gpu):
    work = HOST.workload(_compiled(256, 2), 1032)  # the split: the chooser's for this build on 132 SMs
    m, n, k = RUN_SHAPE
    assert work.shape == RUN_SHAPE and HOST.last == (RUN_SHAPE, 3, False)
    a_map, b_map, d_map = fake_gpu
    assert (a_map.width, a_map.height, a_map.box_width, a_map.box_height) == (k, m, 64, 128)
    assert (b_map.width, b_map.height, b_map.box_height) == (k, n, 128)  # half the B tile per CTA
    assert (d_map.width, d_map.height, d_map.box_width, d_map.box_height) == (n, m, 64, 64)
    args = work.args(0)
    assert [int(x) for x in args[3:7]] == [m, n, k, 3] and all(isinstance(x, np.int32) for x in args[3:7])
    workspace, counters = args[7], args[8]
    assert workspace.dtype == np.float32 and workspace.size == 40 * 3 * 128 * 256
    assert counters.dtype == np.uint32 and counters.size == 40 * 2 and not counters.any()
    assert work.config.grid == (120, 1, 1) and work.config.block == (384,)
    assert work.d.shape == (1, m, n)
    # the C++ program's inputs for this shape: its seed plus the shape
    a, b = lcg_operands(m, n, k, (_ladder.LCG_SEED + 7 * m + 13 * n + 31 * k) % 2**32)
    assert np.array_equal(work.a[0], a) and np.array_equal(work.b[0], b)


def test_a_narrow_build_without_a_split_gets_no_workspace(fake_gpu):
    work = HOST.workload(_compiled(128, 1), 0, shape=(1, 8, 1000), split=1)
    assert fake_gpu[1].box_height == 128  # the whole 128-row B tile, cluster of one
    assert work.args(0)[7].size == 1 and work.args(0)[8].size == 1  # placeholders the kernel never reads
    assert work.config.grid == (1, 1, 1)


def test_a_refused_shape_allocates_nothing(fake_gpu):
    with pytest.raises(_ladder.CourseError, match="stride-16B"):
        HOST.workload(_compiled(256, 2), 0, shape=(1000, 1030, 520), split=1)
    assert fake_gpu == []


def test_the_ladders_square_launch_is_unchanged(fake_gpu):
    from course.kernel.host import host_of  # the ladder step's host, only for this check
    from course.lessons import get_lesson

    work = host_of(get_lesson("day84")).workload(_compiled(256, 2), 1024)
    assert len(work.args(0)) == 3 and work.problem is None  # three maps, as gemm6Epilogue takes
    assert work.config.grid == (132, 1, 1)
    assert [(m.width, m.height) for m in fake_gpu] == [(1024, 1024)] * 3


def test_a_deterministic_run_compiles_and_launches_the_deterministic_build(fake_gpu, monkeypatch):
    import course.kernel.compile as compile_module
    from course.errors import CourseError

    asked = []

    def compile_lesson(lesson, defines=None, **kw):  # type: ignore[no-untyped-def]
        asked.append(dict(defines))
        return SimpleNamespace(
            options=SimpleNamespace(defines=tuple((k, str(v)) for k, v in defines.items()))
        )

    monkeypatch.setattr(compile_module, "compile_lesson", compile_lesson)
    work = HOST.workload(_compiled(128, 1), 1032, deterministic=True)
    assert asked == [{"GEMM_BN": "128", "GEMM_CLUSTER": "1", "GEMM_DETERMINISTIC": 1}]
    assert dict(work.compiled.options.defines)["GEMM_DETERMINISTIC"] == "1"  # the build run_lesson launches
    assert HOST.last == (RUN_SHAPE, 3, True)
    assert "split 3 (deterministic): PASS" in HOST.pass_line(
        1032, SimpleNamespace(max_error=0.0, tolerance=2e-3)
    )
    # a build that already is deterministic is used as it is
    HOST.workload(work.compiled, 1032, deterministic=True)
    assert len(asked) == 1
    with pytest.raises(CourseError, match="deterministic must be True or False"):
        HOST.workload(_compiled(128, 1), 1032, deterministic="yes")
