"""Programmatic dependent launch of Day 86's kernel (issue 39, session 22).

The kernel waits on ``griddepcontrol.wait`` after its shared-memory setup and before any global memory
access, then runs ``griddepcontrol.launch_dependents`` (kernels/gemm7_shapes.cu, setup snippet); it says
so to the host (``kDependentLaunch``), whose workload then launches it with cuLaunchKernelEx and the
programmatic-stream-serialization attribute (``Compiled.enqueue_dependent``). On the CPU: the wait comes
before every global access in the PTX of every build the chooser can pick, the workload's launch is
dependent, and the launch hands the driver the arguments' own bytes. On a Hopper GPU (marked ``gpu``):
chains of dependent launches on one buffer set, one by one and in a CUDA graph, leave D exact (bit for
bit at split 1) and the split-K counters at zero.
"""

from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from course.errors import CourseError
from course.hopper.tensormap import TENSOR_MAP_DTYPE
from course.kernel import compile as compiler
from course.lessons import get_lesson
from tests.lessons.dependent_launch import assert_still_exact, assert_waits_before_global_memory, first_result

LESSON = get_lesson("day86")
# One build of each kind the chooser picks: cluster 2, cluster 1 (a plain grid), the 64-row and small
# builds, a split, Stream-K, the cluster along N.
BUILDS = {
    "128x256c2": {"GEMM_BN": 256, "GEMM_CLUSTER": 2},
    "128x200c1": {"GEMM_BN": 200, "GEMM_CLUSTER": 1},
    "64x64c1": {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1},
    "64x64c1rows8": {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_A_ROWS": 8},
    "64x64small": {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_SMALL": 1},
    "128x256c2sk": {"GEMM_BN": 256, "GEMM_CLUSTER": 2, "GEMM_STREAMK": 1},
    "128x200n2": {"GEMM_BN": 200, "GEMM_CLUSTER": 1, "GEMM_CLUSTER_N": 2},
}


@pytest.mark.parametrize("flags", list(BUILDS.values()), ids=list(BUILDS))
def test_every_build_waits_on_the_grid_before_its_first_global_access(flags):
    assert_waits_before_global_memory(LESSON, flags)


def test_a_kernel_that_does_not_wait_is_not_launched_dependent():
    # Day 85's kernel has no griddepcontrol: the ladder's workload keeps CuPy's plain launch for it.
    constants = get_lesson("day85").constants()
    assert "kDependentLaunch" not in constants


class _Array:
    def __init__(self, ptr: int):
        self.data = SimpleNamespace(ptr=ptr)


def _fake_cupy(stream_ptr: int = 0x5000) -> SimpleNamespace:
    stream = SimpleNamespace(ptr=stream_ptr)
    return SimpleNamespace(ndarray=_Array, cuda=SimpleNamespace(get_current_stream=lambda: stream))


def test_the_arguments_are_marshalled_as_cupy_does():
    cp = _fake_cupy()
    assert compiler._param_bytes(_Array(0x1234_5678_9ABC), 0, cp).raw == (0x1234_5678_9ABC).to_bytes(
        8, "little"
    )
    assert compiler._param_bytes(np.int32(-3), 1, cp).raw == np.int32(-3).tobytes()
    tensor_map = np.zeros(1, dtype=TENSOR_MAP_DTYPE)[0]
    assert len(compiler._param_bytes(tensor_map, 2, cp).raw) == 128
    with pytest.raises(CourseError, match=r"kernel argument 3 is a int.*np\.int32"):
        compiler._param_bytes(7, 3, cp)


def test_the_dependent_launch_hands_the_driver_the_attribute_and_each_arguments_bytes(monkeypatch):
    import cuda.bindings.driver as real

    seen = {}

    def launch(config, function, params, extra):
        seen["config"], seen["function"], seen["extra"] = config, function, extra
        pointers = (ctypes.c_void_p * 3).from_address(params)
        seen["args"] = [
            ctypes.string_at(pointers[0], 8),
            ctypes.string_at(pointers[1], 4),
            ctypes.string_at(pointers[2], 128),
        ]
        return (real.CUresult.CUDA_SUCCESS,)

    fake_driver = SimpleNamespace(
        **{
            name: getattr(real, name)
            for name in (
                "CUlaunchConfig",
                "CUstream",
                "CUlaunchAttribute",
                "CUlaunchAttributeID",
                "CUfunction",
            )
        },
        cuLaunchKernelEx=launch,
    )
    function = SimpleNamespace(kernel=SimpleNamespace(ptr=0x4242), max_dynamic_shared_size_bytes=0)
    compiled = compiler.Compiled(LESSON, function, None, 0.0, None, compiler.options_for(LESSON))
    monkeypatch.setattr(compiler, "driver", lambda: fake_driver)
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(0x77))
    tensor_map = np.frombuffer(bytes(range(128)), dtype=TENSOR_MAP_DTYPE)[0]
    compiled.enqueue_dependent((66, 1, 1), (384,), (_Array(0xABCDEF), np.int32(1040), tensor_map), 200_000)
    config = seen["config"]
    assert (config.gridDimX, config.gridDimY, config.gridDimZ) == (66, 1, 1)
    assert (config.blockDimX, config.blockDimY, config.blockDimZ) == (384, 1, 1)
    assert config.sharedMemBytes == 200_000 and function.max_dynamic_shared_size_bytes == 200_000
    assert int(config.hStream) == 0x77 and int(seen["function"]) == 0x4242 and seen["extra"] == 0
    assert config.numAttrs == 1
    attribute = config.attrs[0]
    assert attribute.id == real.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert attribute.value.programmaticStreamSerializationAllowed == 1
    assert seen["args"] == [(0xABCDEF).to_bytes(8, "little"), np.int32(1040).tobytes(), bytes(range(128))]


# ---------------------------------------------------------------------------------------------------
# On a Hopper GPU.
# ---------------------------------------------------------------------------------------------------
GPU_CASES = [
    ((512, 512, 512), {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1}, 1),
    ((256, 256, 256), {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_SMALL": 1}, 1),
    ((1000, 1032, 520), {"GEMM_BN": 256, "GEMM_CLUSTER": 2}, 3),
    ((1024, 1024, 16384), {"GEMM_BN": 256, "GEMM_CLUSTER": 2}, 4),
    ((4104, 776, 1240), {"GEMM_BN": 200, "GEMM_CLUSTER": 1, "GEMM_CLUSTER_N": 2}, 1),
]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize(
    "shape,flags,split", GPU_CASES, ids=[f"{s[0]}x{s[1]}x{s[2]}" for s, _, _ in GPU_CASES]
)
def test_chains_of_dependent_launches_on_one_buffer_set_stay_exact(gpu_for, shape, flags, split):
    import cupy as cp

    from course.kernel.compile import compile_lesson
    from course.kernel.host import host_of

    gpu_for("day86")
    w = host_of(LESSON).workload(
        compile_lesson(LESSON, defines=flags), max(shape), 3, "bench", shape=shape, split=split
    )
    first = first_result(w)
    for i in range(24):  # one by one: every third launch on set 0 again
        w.launch(0 if i % 3 == 0 else i % w.sets)
    assert_still_exact(w, first, bits=split == 1)
    assert int(cp.count_nonzero(w.counters)) == 0
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:  # captured: the dependence becomes a programmatic edge of the graph
        stream.begin_capture()
        for i in range(8):
            w.launch(0 if i % 2 == 0 else 1)
        graph = stream.end_capture()
    w.poison(0)
    graph.launch(stream)
    graph.launch(stream)
    stream.synchronize()
    assert_still_exact(w, first, bits=split == 1)
    assert int(cp.count_nonzero(w.counters)) == 0


def test_the_shape_table_says_what_the_dependent_launch_bought_where_the_recording_has_it():
    from dataclasses import replace

    from course.bench.result import Reason, load
    from course.bench.timing import GRAPHS
    from course.lessons.day86 import figures
    from course.lessons.day86.variants import DEPENDENT_SHAPES, dependent_title

    recorded = load("day86")
    if recorded is None:
        pytest.skip("no Day 86 recording in this checkout")
    if "launched dependent" not in figures.shapes(recorded).note:  # recorded before it was measured
        extra = tuple(
            Reason(
                dependent_title(shape) + GRAPHS,
                1.0 + i / 100,
                "x",
                "measured",
                "dependent 3.0 us, plain 3.1 us",
            )
            for i, shape in enumerate(DEPENDENT_SHAPES)
        )
        recorded = replace(recorded, reasons=(*recorded.reasons, *extra))
    note = figures.shapes(recorded).note
    ruled = any("in one round" in n for n in recorded.notes)
    assert ("Where its grid is one round of units the kernel is launched dependent" in note) == ruled
    assert ("In this recording the kernel is launched dependent at every shape" in note) != ruled
    found = [r for r in recorded.reasons if r.title.endswith(" against the plain launch" + GRAPHS)]
    assert found  # every shape the recording measured is in the sentence, with its ratio
    for r in found:
        assert f"{r.title.split(':')[0]} {r.value:.2f}x" in note


def test_a_workload_launches_dependent_only_where_the_kernel_waits_and_its_grid_is_one_round():
    from course.kernel.host import dependent_launch
    from course.lessons._fp8 import build_for, waves
    from course.lessons._ladder import ragged_problem
    from course.lessons.day87.chooser import PROMOTE_BUILD

    waits = {"kDependentLaunch": 1}
    assert dependent_launch(waits, 1.0) and dependent_launch(waits, 0.1)
    assert not dependent_launch(waits, 1.01) and not dependent_launch({}, 0.5)
    cases = [
        ((512, 512, 512), BUILDS["64x64c1"], 64 / 132),  # 8 x 8 tiles of 64 x 64, a cluster of one each
        ((256, 256, 256), BUILDS["64x64small"], 16 / 264),  # the small build: two CTAs an SM
        (
            (1536, 1536, 1536),
            {"GEMM_BN": 144, "GEMM_CLUSTER": 2},
            1.0,
        ),  # 6 cluster rows x 11 columns, 66 slots
        ((4104, 776, 1240), BUILDS["128x200n2"], 1.0),  # 33 tile rows x 2 pairs along N, 66 slots
        ((2560, 2560, 2560), BUILDS["128x200c1"], 260 / 132),  # 20 x 13 tiles
        ((4096, 4096, 4096), BUILDS["128x256c2"], 256 / 66),  # 16 cluster rows x 16 columns
        ((4096, 4096, 4096), BUILDS["128x256c2sk"], 256 / 66),  # Stream-K: its cluster tiles
    ]
    for shape, flags, want in cases:
        assert ragged_problem(LESSON.constants(flags), shape, 1).rounds(132) == pytest.approx(want), (
            shape,
            flags,
        )
    day87 = get_lesson("day87")
    build = build_for(day87, PROMOTE_BUILD)
    assert waves(4096, 4096, build, 132) > 1 >= waves(1024, 1024, build, 132)
