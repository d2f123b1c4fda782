"""Fixtures for the benchmark tests: synthetic results, and a simulated GPU.

``synthetic(lesson_id)`` is a ``BenchResult`` built from the lesson's own
``BenchSpec`` (its sizes, unit, work and peer names) with made-up rates,
for the tests of the JSON, the table, the plot and the page's section.

``simulated_gpu`` is not a GPU test: it stands in for the few CuPy calls
the measuring code makes (``import cupy`` inside functions reaches a fake
module in ``sys.modules``), backed by NumPy, so that a typo or a wrong
argument on those paths fails here rather than on the Hopper run. Device
pointers are real addresses of NumPy buffers, looked up (and bounds-checked)
in a registry; cuBLAS is modelled column-major, as it is, so the
D^T = B^T A^T mapping is checked too; every simulated operation advances a
simulated GPU clock by a known time, so the rates and ratios the engine
computes can be stated exactly.
"""

from __future__ import annotations

import ctypes
import functools
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from course.bench import BenchResult, Measurement, Reason, SizeRow, Timing, spec_of
from course.bench.arith import copy_bytes, rate
from course.bench.spec import bench_spec
from course.kernel import gate
from course.kernel.provenance import Provenance
from course.lessons import LESSONS, get_lesson

# Lessons with a BenchSpec: what every "for each lesson" test is parametrized over.
BENCHED = [lesson_id for lesson_id, lesson in LESSONS.items() if bench_spec(lesson) is not None]

UNIT_SCALE = {"GB/s": 1e9, "TFLOP/s": 1e12}

# -- synthetic results --------------------------------------------------------


def ms_for(unit: str, work: float, per_s_in_unit: float) -> float:
    """Milliseconds that ``work`` takes at a rate given in ``unit``."""
    return work / (per_s_in_unit * UNIT_SCALE[unit]) * 1e3


def timing(ms: float, repeats: int = 20) -> Timing:
    return Timing(ms, ms * 0.95, ms * 1.1, repeats, 4, 8, 0)


@functools.cache
def peer_names(lesson_id: str) -> tuple[str, ...]:
    """The names of the lesson's peers, made as on a GPU (a cuBLAS handle needs CuPy: the fake one)."""
    real = sys.modules.get("cupy")
    sys.modules["cupy"] = fake_cupy(Sim())
    try:
        return tuple(p.name for p in spec_of(get_lesson(lesson_id)).peers())
    finally:  # only the one entry: modules imported meanwhile stay imported
        if real is None:
            del sys.modules["cupy"]
        else:
            sys.modules["cupy"] = real


SYNTHETIC_REASONS = (
    Reason("A measured reason", 1.5, "ms", "measured", "from <the> run & its numbers"),
    Reason("A count", 4096.0, "CTAs", "counted", "read from the code"),
    Reason("Not measured here", None, "", "not measured", "it needs another kernel"),
)


def synthetic(
    lesson_id: str,
    device: str = "NVIDIA H200",
    sizes: tuple[int, ...] | None = None,
    kernel_rates: Callable[[int], float] | None = None,
    peer_rate: float = 1000.0,
    ceilings: dict[str, float] | None = None,
    reasons: tuple[Reason, ...] = SYNTHETIC_REASONS,
    peers: tuple[str, ...] | None = None,
) -> BenchResult:
    """A result of the lesson's shape: its sizes, unit and peers, with made-up rates.

    Peer i runs at ``peer_rate * (i + 1)``; the kernel at ``kernel_rates(n)``
    (default: half the first peer's rate at every size).
    """
    spec = spec_of(get_lesson(lesson_id))
    unit = spec.unit
    names = peer_names(lesson_id) if peers is None else peers
    rows = []
    for i, n in enumerate(sizes or spec.sizes):
        work = float(spec.work(n))
        k_ms = ms_for(unit, work, kernel_rates(n) if kernel_rates else peer_rate / 2)
        k_rate = rate(unit, work, k_ms)
        measured = []
        for j, name in enumerate(names):
            ms = ms_for(unit, work, peer_rate * (j + 1))
            measured.append(
                Measurement(name, timing(ms), rate(unit, work, ms), k_rate / rate(unit, work, ms))
            )
        rows.append(
            SizeRow(
                n,
                work,
                2.1 if i else 0.02,
                bool(i % 2),
                "kernel bit-exact on all elements",
                Measurement("kernel", timing(k_ms), k_rate),
                tuple(measured),
            )
        )
    if ceilings is None:
        ceilings = (
            {"best peer of the run": 1.05 * max(p.rate for r in rows for p in r.peers)} if names else {}
        )
    provenance = Provenance(
        "2026-11-30T10:00:00+00:00",
        f"python -m course bench {lesson_id}",
        device,
        "9.0",
        132,
        {"cupy": "14.2.0", "nvrtc": "13.0", "driver": "580.159.04", "cuda-python": None},
    )
    return BenchResult(
        lesson=lesson_id,
        provenance=provenance,
        l2_bytes=50 * 2**20,
        unit=unit,
        kernel_name=spec.kernel_label,
        rows=tuple(rows),
        reasons=reasons,
        ceilings=ceilings,
        notes=("a note <with> markup",),
    )


@pytest.fixture
def no_gpu(monkeypatch):
    """A machine with no NVIDIA driver: every lesson's verdict is "no-gpu"."""

    def verdict(lesson, machine=None):
        return gate.Verdict(
            lesson, "no-gpu", "There is no NVIDIA driver on this machine.", "Use a GPU machine."
        )

    monkeypatch.setattr(gate, "verdict", verdict)
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)


# -- the simulated GPU --------------------------------------------------------

# The CUDA and cuBLAS enumerators CuPy exposes, with their real values.
CUDA_R_32F, CUDA_R_16F = 0, 2
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99
MEMCPY_D2D = 3
CUBLAS_HANDLE = 7
DTYPES = {CUDA_R_32F: np.float32, CUDA_R_16F: np.float16}

L2_BYTES = 256 * 1024  # small, so the rotations stay small
SIM_GPU = gate.Gpu(0, "Simulated H200", (9, 0), 132, 232448, 141 * 2**30)

# What each simulated operation costs on the simulated clock, as a rate.
KERNEL_RATE = {"day76": 1000.0, "day78": 20.0}  # in the lesson's unit
ADD_GB_S = 500.0  # cupy.add, counting a read and a write
COPY_GB_S = 2000.0  # cudaMemcpyAsync, counting a read and a write
CUBLAS_TFLOP_S = 500.0
VARIANT_SHARE = {"loads only": 0.8, "wgmma only": 0.3, "neither": 0.1}  # of the kernel's time


class DeviceArray(np.ndarray):
    """A NumPy array standing in for a CuPy one; ``.data.ptr`` is its address, registered."""

    __module__ = "cupy"  # course.kernel.host reads an array's module to pick numpy or CuPy

    @property
    def data(self) -> Any:  # CuPy: a MemoryPointer; only .ptr is used
        Sim.current.register(self)
        return SimpleNamespace(ptr=self.ctypes.data)

    def set(self, host: Any) -> None:  # CuPy: copy a host array of the same shape into this one
        assert host.shape == self.shape, (host.shape, self.shape)
        np.copyto(self, host)


def device(a: Any) -> DeviceArray:
    return np.ascontiguousarray(a).view(DeviceArray)


class Event:
    def __init__(self, sim: Sim):
        self.sim = sim
        self.at: float | None = None
        sim.log.append(("event",))
        sim.events += 1

    def record(self, stream: Any = None) -> None:
        assert stream is self.sim.stream
        self.at = self.sim.clock
        self.sim.log.append(("record", self.at))

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return self.sim.started_early


class SimGraph:
    """A captured CUDA graph: replaying it spends what its calls cost, with no host in between."""

    def __init__(self, sim: Sim, costs: list[float]):
        self.sim, self.costs = sim, costs

    def launch(self, stream: Any = None) -> None:
        assert stream is self.sim.stream, "a graph is replayed on the timer's stream"
        self.sim.log.append(("graph", len(self.costs)))
        for ms in self.costs:
            self.sim.spend(ms)


class SimStream:
    """``cupy.cuda.Stream``: current inside ``with``; ``begin_capture`` / ``end_capture`` make a graph."""

    def __init__(self, sim: Sim, non_blocking: bool = False):
        self.sim, self.ptr, self.outer = sim, 7, None

    def __enter__(self) -> SimStream:
        self.outer, self.sim.stream = self.sim.stream, self  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.sim.stream = self.outer  # type: ignore[assignment]

    def synchronize(self) -> None:
        pass

    def begin_capture(self) -> None:
        assert self.sim.captured is None and self.sim.stream is self
        self.sim.captured = []

    def end_capture(self) -> SimGraph:
        costs, self.sim.captured = self.sim.captured, None
        assert costs is not None, "end_capture without begin_capture"
        return SimGraph(self.sim, costs)


class Kernel:
    """A RawKernel stand-in: ``body(grid, block, *args)`` does the work."""

    def __init__(self, body: Callable[..., None], num_regs: int = 90, shared_size_bytes: int = 32768):
        self.body = body
        self.num_regs, self.local_size_bytes, self.shared_size_bytes = num_regs, 0, shared_size_bytes
        self.kernel = SimpleNamespace(ptr=0xF00)
        self.max_dynamic_shared_size_bytes = 0

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], shared_mem=0):
        self.body(grid, block, *args)


@dataclass
class SimCompiled:
    """What ``course.kernel.compile.compile_lesson`` returns, for the engine's purposes."""

    function: Kernel
    seconds: float = 0.01
    cache_hit: bool | None = True
    shared_asked: list[int] = field(default_factory=list)

    def allow_shared(self, shared_mem: int) -> None:
        self.shared_asked.append(shared_mem)


class Sim:
    """The simulated GPU's state: memory, clock, and what was called."""

    current: Sim

    def __init__(self) -> None:
        Sim.current = self
        self.clock = 0.0  # ms
        self.memory: dict[int, np.ndarray] = {}
        self.stream = SimpleNamespace(ptr=0, synchronize=lambda: None)
        self.events = 0
        self.started_early = False
        self.log: list[tuple[Any, ...]] = []
        self.holds: list[int] = []
        self.compiles: list[tuple[str, dict[str, int] | None, str | None]] = []
        self.launches: list[tuple[str, int, int]] = []  # (what, N, output address)
        self.free_bytes = 100 * 2**30
        self.occupancy: int | None = 2  # None: the driver's query fails
        self.captured: list[float] | None = None  # while a stream captures: the GPU work of each call
        self.corrupt: Callable[[np.ndarray], None] | None = None  # a kernel bug, applied to its output

    # memory
    def register(self, a: np.ndarray) -> None:
        assert a.flags.c_contiguous, "a device pointer was taken of a non-contiguous view"
        ptr = a.ctypes.data
        if ptr not in self.memory or self.memory[ptr].nbytes < a.nbytes:
            self.memory[ptr] = a

    def buffer(self, ptr: int, dtype: Any, count: int) -> np.ndarray:
        """``count`` elements at device address ``ptr``: a view of the registered array there."""
        base = self.memory.get(int(ptr))
        assert base is not None, f"{ptr:#x} is not the address of a device array"
        need = count * np.dtype(dtype).itemsize
        assert need <= base.nbytes, f"{need} bytes at {ptr:#x} run past its {base.nbytes}-byte buffer"
        return np.asarray(base).reshape(-1).view(np.uint8)[:need].view(dtype)

    def spend(self, ms: float) -> None:
        if self.captured is not None:  # a stream capture: the work goes into the graph, not the clock
            self.captured.append(ms)
            return
        self.clock += ms

    # kernels
    def tma_kernel(self, grid, block, tensor_map, out) -> None:
        """Day 76's loadTileTma: each block copies its tile from the map's tensor, +1."""
        t = tensor_map.tile_map
        src = self.buffer(tensor_map.address, np.float32, t.width * t.height).reshape(t.height, t.width)
        assert out.shape == (t.height, t.width) and block == (256,)
        for by in range(grid[1]):
            for bx in range(grid[0]):
                rows = slice(by * t.box_height, (by + 1) * t.box_height)
                cols = slice(bx * t.box_width, (bx + 1) * t.box_width)
                out[rows, cols] = src[rows, cols] + np.float32(1)
        self._finish("day76", out)

    def gemm_kernel(self, grid, block, a, b, d) -> None:
        """Day 78's wgmmaGemm: each block computes its 64x64 tile of D = A B in FP32."""
        full = a.astype(np.float32) @ b.astype(np.float32)
        assert block == (256,)
        for by in range(grid[1]):
            for bx in range(grid[0]):
                tile = (slice(by * 64, (by + 1) * 64), slice(bx * 64, (bx + 1) * 64))
                d[tile] = full[tile]
        self._finish("day78", d)

    def _finish(self, lesson_id: str, out: np.ndarray) -> None:
        if self.corrupt is not None:
            self.corrupt(out)
        n = out.shape[-1]
        spec = spec_of(get_lesson(lesson_id))
        self.spend(ms_for(spec.unit, spec.work(n), KERNEL_RATE[lesson_id]))
        self.launches.append(("kernel", n, out.ctypes.data))

    def variant_kernel(self, name: str) -> Kernel:
        def body(grid, block, a, b, d) -> None:  # wrong by design: nothing written
            n = d.shape[-1]
            self.spend(VARIANT_SHARE[name] * ms_for("TFLOP/s", 2 * n**3, KERNEL_RATE["day78"]))
            self.launches.append((name, n, d.ctypes.data))

        return Kernel(body)

    def compile_lesson(self, lesson, defines=None, arch=None, source=None) -> SimCompiled:
        variant = None
        if source is not None:
            wgmma = re.search(r"wgmmaM64n64k16\(\s*acc,", source) is not None
            loads = "loadStage(s ^ 1, kt + 1);" in source
            both = "loadStage(1, 0);" in source
            variant = {(False, True, False): "loads only", (True, False, True): "wgmma only"}.get(
                (wgmma, loads, both), "neither" if (wgmma, loads, both) == (False, False, True) else None
            )
            assert variant is not None, (
                f"a variant source that is none of the three ({wgmma}, {loads}, {both})"
            )
        self.compiles.append((lesson.id, defines, variant))
        if variant is not None:
            return SimCompiled(self.variant_kernel(variant))
        body = {"day76": self.tma_kernel, "day78": self.gemm_kernel}[lesson.id]
        return SimCompiled(Kernel(body))

    def encode(self, tile_map, address: int) -> Any:
        """cuTensorMapEncodeTiled: the course's rule check, then a map that remembers the tensor."""
        tile_map.check(address)
        self.buffer(address, np.float32, tile_map.width * tile_map.height)  # the tensor is there
        return SimpleNamespace(tile_map=tile_map, address=address)

    # library calls
    def gemm_ex(
        self, handle, transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
        compute, algo,
    ) -> None:  # fmt: skip
        """cublasGemmEx, column-major: C (m x n) = alpha op(A) op(B) + beta C."""
        assert handle == CUBLAS_HANDLE
        assert compute == CUBLAS_COMPUTE_32F and algo == CUBLAS_GEMM_DEFAULT_TENSOR_OP
        assert transa in (CUBLAS_OP_N, CUBLAS_OP_T) and transb in (CUBLAS_OP_N, CUBLAS_OP_T)
        assert lda >= (m if transa == CUBLAS_OP_N else k) and ldb >= (k if transb == CUBLAS_OP_N else n)
        assert ldc >= m

        def matrix(ptr, dtype, rows, cols, ld):  # column-major rows x cols, leading dimension ld
            flat = self.buffer(ptr, dtype, ld * (cols - 1) + rows)
            return np.lib.stride_tricks.as_strided(
                flat, (rows, cols), (flat.itemsize, ld * flat.itemsize), writeable=True
            )

        op_a = (
            matrix(a, DTYPES[a_type], m, k, lda)
            if transa == CUBLAS_OP_N
            else matrix(a, DTYPES[a_type], k, m, lda).T
        )
        op_b = (
            matrix(b, DTYPES[b_type], k, n, ldb)
            if transb == CUBLAS_OP_N
            else matrix(b, DTYPES[b_type], n, k, ldb).T
        )
        out = matrix(c, DTYPES[c_type], m, n, ldc)
        one = ctypes.c_float.from_address(alpha).value  # host scalars, FP32 for CUBLAS_COMPUTE_32F
        zero = ctypes.c_float.from_address(beta).value
        product = one * (op_a.astype(np.float32) @ op_b.astype(np.float32))
        if zero != 0:  # with beta == 0 cuBLAS does not read C (it may hold NaN: the poisoned output)
            product += zero * out.astype(np.float32)
        out[...] = product.astype(out.dtype)
        self.spend(2 * m * n * k / (CUBLAS_TFLOP_S * 1e12) * 1e3)

    def memcpy_async(self, dst, src, size, kind, stream) -> None:
        assert kind == MEMCPY_D2D and stream == self.stream.ptr
        self.buffer(dst, np.uint8, size)[...] = self.buffer(src, np.uint8, size)
        self.spend(2 * size / (COPY_GB_S * 1e9) * 1e3)

    def add(self, x, y, out=None) -> Any:
        result = np.add(x, y, out=out)
        self.spend(copy_bytes(x.shape[-1], x.itemsize) / (ADD_GB_S * 1e9) * 1e3)
        return result

    def hold(self, grid, block, ns) -> None:
        assert grid == (1,) and block == (1,) and isinstance(ns, np.uint64)
        self.holds.append(int(ns))
        self.log.append(("hold", int(ns)))
        self.spend(int(ns) * 1e-6)

    def raw_kernel(self, code: str, name: str) -> Kernel:
        assert name == "courseBenchHold" and f"void {name}(" in code and "%globaltimer" in code
        return Kernel(self.hold)

    def occupancy_query(self, function_ptr, threads, shared_mem) -> int:
        if self.occupancy is None:
            raise RuntimeError("cuOccupancyMaxActiveBlocksPerMultiprocessor: not supported here")
        return self.occupancy

    def elapsed(self, start: Event, end: Event) -> float:
        assert start.at is not None and end.at is not None, "an event was read before it was recorded"
        return end.at - start.at


class _Generator:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def random(self, shape, dtype=np.float64) -> DeviceArray:
        return device(self.rng.random(shape, dtype=dtype))

    def standard_normal(self, shape, dtype=np.float64) -> DeviceArray:
        return device(self.rng.standard_normal(shape, dtype=dtype))


class _FakeCupy(types.ModuleType):
    def __getattr__(self, name: str) -> Any:  # everything else: NumPy's
        return getattr(np, name)


def fake_cupy(sim: Sim) -> types.ModuleType:
    cp = _FakeCupy("cupy")
    cp.__version__ = "simulated"
    cp.cuda = SimpleNamespace(
        get_current_stream=lambda: sim.stream,
        Stream=lambda non_blocking=False: SimStream(sim, non_blocking),
        Event=lambda: Event(sim),
        get_elapsed_time=sim.elapsed,
        Device=lambda: SimpleNamespace(
            attributes={
                "L2CacheSize": L2_BYTES,
                "MaxThreadsPerMultiProcessor": 2048,
                "MaxRegistersPerMultiprocessor": 65536,
                "MaxSharedMemoryPerMultiprocessor": 233472,
            },
            compute_capability="90",
        ),
        runtime=SimpleNamespace(
            memGetInfo=lambda: (sim.free_bytes, 141 * 2**30),
            memcpyDeviceToDevice=MEMCPY_D2D,
            memcpyAsync=sim.memcpy_async,
            CUDA_R_16F=CUDA_R_16F,
            CUDA_R_32F=CUDA_R_32F,
        ),
        device=SimpleNamespace(get_cublas_handle=lambda: CUBLAS_HANDLE),
        cublas=SimpleNamespace(
            gemmEx=sim.gemm_ex,
            CUBLAS_OP_N=CUBLAS_OP_N,
            CUBLAS_OP_T=CUBLAS_OP_T,
            CUBLAS_COMPUTE_32F=CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT_TENSOR_OP=CUBLAS_GEMM_DEFAULT_TENSOR_OP,
        ),
        driver=SimpleNamespace(occupancyMaxActiveBlocksPerMultiprocessor=sim.occupancy_query),
    )
    cp.random = SimpleNamespace(default_rng=_Generator)
    cp.RawKernel = sim.raw_kernel
    cp.ndarray = DeviceArray
    cp.empty = lambda shape, dtype=np.float64: device(np.empty(shape, dtype))
    cp.asarray = device
    cp.add = sim.add
    cp.get_default_memory_pool = lambda: SimpleNamespace(free_all_blocks=lambda: None)
    return cp


@pytest.fixture
def simulated_gpu(monkeypatch) -> Sim:
    """CuPy, the gate's probe, the compiler and Day 76's tensor-map encoder, simulated."""
    from course.kernel import compile as compile_module
    from course.lessons.day76 import host as day76_host
    from course.lessons.day78 import bench as day78_bench

    sim = Sim()
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(sim))
    machine = gate.Machine(SIM_GPU, None, None, {"cupy": "simulated", "driver": "0.0.sim"})
    monkeypatch.setattr(gate, "probe", lambda: machine)
    monkeypatch.delenv(gate.REQUIRE_GPU_ENV, raising=False)
    # The engine imports compile_lesson from course.kernel.compile when it compiles.
    monkeypatch.setattr(compile_module, "compile_lesson", sim.compile_lesson)
    # Day 76's host imported encode from course.hopper.tensormap: the name it calls is its own.
    monkeypatch.setattr(day76_host, "encode", sim.encode)
    # cuBLAS's peak at 8192 would take minutes of NumPy: the same path at 256.
    monkeypatch.setattr(day78_bench, "PEAK_SIZE", 256)
    return sim
