"""Day 76, the host side in Python: the tensor map, the launch, the check.

This mirrors ``main()`` of ``kernels/tma_tile.cu`` step for step: the same
input (element i holds float(i)), the output zeroed first, the tensor map
encoded with the same parameters by ``cuTensorMapEncodeTiled`` (through
cuda-python), one block per 64x64 tile, and a bit-exact check that names
the first wrong element and prints the C++ program's PASS line.

The encode rules are checked here before the driver is called, so a bad
box is refused with the rule's name instead of CUDA_ERROR_INVALID_VALUE.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import gate
from ._html import escape
from .compile import Compiled, compile_lesson
from .constants import kernel_constants
from .errors import CourseError, TensorMapRuleError
from .lessons import get_lesson

LESSON = get_lesson("day76")

# The CUDA Driver API's cuTensorMapEncodeTiled documentation ("Tensor Map
# Object Management") lists the requirements, and the CUDA C++ Programming
# Guide's TMA section tabulates the 16-byte alignment rules; these are the
# ones a tile load like the lesson's can break.
DRIVER_DOC = (
    "CUDA Driver API, Tensor Map Object Management (cuTensorMapEncodeTiled); "
    "CUDA C++ Programming Guide, TMA alignment requirements"
)


@dataclass(frozen=True)
class EncodeRule:
    id: str
    rule: str
    why: str
    source: str = DRIVER_DOC


ENCODE_RULES: tuple[EncodeRule, ...] = (
    EncodeRule(
        "box-dim-max",
        "every box dimension is between 1 and 256 elements",
        "one TMA request moves at most 256 elements along any dimension; a bigger tile takes several requests",
    ),
    EncodeRule(
        "box-inner-16B",
        "the innermost box row spans a multiple of 16 bytes (boxDim[0] x element size)",
        "the copy engine moves memory in 16-byte units, so each box row must be whole units",
    ),
    EncodeRule(
        "stride-16B",
        "each global stride is a multiple of 16 bytes (and below 2^40)",
        "every row of the box must start on a 16-byte boundary in global memory",
    ),
    EncodeRule(
        "address-16B",
        "the global base address is 16-byte aligned",
        "the same 16-byte unit: the first row must start on one too",
    ),
    EncodeRule(
        "global-dim",
        "every global dimension is between 1 and 2^32 elements",
        "the driver refuses empty or larger dimensions",
    ),
)
_RULES = {r.id: r for r in ENCODE_RULES}


def _broken(rule_id: str, found: str) -> TensorMapRuleError:
    rule = _RULES[rule_id]
    return TensorMapRuleError(rule_id, f"{rule.rule} (found {found}); {rule.why}")


@dataclass(frozen=True)
class TileMap:
    """A rank-2 tiled tensor map over a row-major float32 matrix."""

    width: int  # elements per row (the contiguous dimension, x)
    height: int  # rows (y)
    box_width: int  # tile width in elements
    box_height: int  # tile height in rows
    elem_bytes: int = 4

    @property
    def row_stride_bytes(self) -> int:
        return self.width * self.elem_bytes

    @property
    def box_bytes(self) -> int:
        return self.box_width * self.box_height * self.elem_bytes

    def check(self, address: int = 0) -> None:
        """Raise TensorMapRuleError naming the first rule this map breaks."""
        for name, value in (("box width", self.box_width), ("box height", self.box_height)):
            if not 1 <= value <= 256:
                raise _broken("box-dim-max", f"{name} {value}")
        inner = self.box_width * self.elem_bytes
        if inner % 16:
            raise _broken("box-inner-16B", f"{self.box_width} x {self.elem_bytes} B = {inner} B")
        for name, value in (("width", self.width), ("height", self.height)):
            if not 1 <= value <= 2**32:
                raise _broken("global-dim", f"{name} {value}")
        if self.row_stride_bytes % 16 or self.row_stride_bytes >= 2**40:
            raise _broken("stride-16B", f"{self.width} x {self.elem_bytes} B = {self.row_stride_bytes} B")
        if address % 16:
            raise _broken("address-16B", f"address {address:#x}")


def lesson_map(defines: dict[str, int] | None = None) -> TileMap:
    """The map ``main()`` builds, with the kernel's own constants."""
    c = kernel_constants(LESSON.kernel_path, defines)
    return TileMap(int(c["kGmemWidth"]), int(c["kGmemHeight"]), int(c["kTileWidth"]), int(c["kTileHeight"]))


# The kernel takes ``const __grid_constant__ CUtensorMap`` by value: 128
# opaque bytes, 64-byte aligned. CuPy passes a numpy structured scalar as
# those bytes (seen working on an H200, shared/notes/hardware-facts.md).
TENSOR_MAP_DTYPE = np.dtype([("opaque", "<u8", (16,))], align=True)


def encode(tile_map: TileMap, address: int) -> np.void:
    """cuTensorMapEncodeTiled with main()'s parameters, after the rule check."""
    tile_map.check(address)
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise CourseError(
            f"cuda-python is needed to encode a tensor map ({e}); install cuda-python"
        ) from None
    u64, u32 = driver.cuuint64_t, driver.cuuint32_t
    err, tensor_map = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        2,
        address,
        [u64(tile_map.width), u64(tile_map.height)],
        [u64(tile_map.row_stride_bytes)],
        [u32(tile_map.box_width), u32(tile_map.box_height)],
        [u32(1), u32(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    if err != driver.CUresult.CUDA_SUCCESS:
        raise CourseError(f"cuTensorMapEncodeTiled failed: {err.name} for {tile_map}")
    words = np.array([int(w) for w in tensor_map.opaque], dtype="<u8")
    return np.array([(words,)], dtype=TENSOR_MAP_DTYPE)[0]


@dataclass(frozen=True)
class Mismatch:
    index: int
    row: int
    col: int
    got: float
    want: float

    def line(self) -> str:
        # The C++ program's own wording.
        return (
            f"round trip wrong at {self.index} (row {self.row}, col {self.col}): "
            f"got {self.got:.1f}, want {self.want:.1f}"
        )


def first_mismatch(got: np.ndarray, want: np.ndarray) -> Mismatch | None:
    """The first element whose bits differ (row-major order), or None."""
    if got.shape != want.shape:
        raise CourseError(f"shapes must match (got {got.shape}, want {want.shape})")
    bad = np.flatnonzero(got.view(np.uint32).ravel() != want.view(np.uint32).ravel())
    if bad.size == 0:
        return None
    i = int(bad[0])
    width = got.shape[-1]
    return Mismatch(i, i // width, i % width, float(got.ravel()[i]), float(want.ravel()[i]))


def pass_line(tile_map: TileMap) -> str:
    elems = tile_map.width * tile_map.height
    tiles = (tile_map.width // tile_map.box_width) * (tile_map.height // tile_map.box_height)
    return (
        f"round trip: PASS. {elems} elements, {tiles} tiles of {tile_map.box_height} x "
        f"{tile_map.box_width} floats, one cp.async.bulk.tensor per tile."
    )


@dataclass
class RunResult:
    lesson_id: str
    passed: bool
    lines: list[str]
    mismatch: Mismatch | None
    compile_summary: str
    seconds: dict[str, float] = field(default_factory=dict)


def run(
    grid: tuple[int, int] | None = None,
    compiled: Compiled | None = None,
    progress: Callable[[str], Any] = print,
    shared_mem: int = 0,
) -> RunResult:
    """Compile, encode, launch and check, as ``./tma_tile`` does.

    ``grid`` overrides the launch grid for the "what breaks" experiment
    (a grid one column short leaves tiles unwritten, and the check names
    the first one); ``shared_mem`` asks for extra dynamic shared memory, to
    see a launch the card refuses. Raises EnvironmentProblem when this
    machine cannot run the lesson, LaunchError when the launch fails.
    """
    machine = gate.probe()
    gate.ensure_runs(LESSON, machine)
    import cupy as cp

    assert machine.gpu is not None  # noqa: S101 - ensure_runs guarantees it
    progress(machine.gpu.banner)
    if compiled is None:
        progress(f"compiling {LESSON.kernel_file} for {LESSON.arch} with NVRTC ...")
        compiled = compile_lesson(LESSON)
    progress(compiled.summary())
    tile_map = lesson_map()
    timings = {"compile": compiled.seconds}

    t0 = time.perf_counter()
    # Distinct value per element, exactly representable in float32.
    h_in = np.arange(tile_map.width * tile_map.height, dtype=np.float32).reshape(
        tile_map.height, tile_map.width
    )
    d_in = cp.asarray(h_in)
    # Zero the output so a tile the kernel never wrote reads as wrong.
    d_out = cp.zeros_like(d_in)
    tensor_map = encode(tile_map, int(d_in.data.ptr))
    full_grid = (tile_map.width // tile_map.box_width, tile_map.height // tile_map.box_height)
    threads = int(kernel_constants(LESSON.kernel_path)["kThreadsPerBlock"])
    compiled.launch(grid or full_grid, (threads,), (tensor_map, d_out), shared_mem=shared_mem)
    got = cp.asnumpy(d_out)
    timings["run"] = time.perf_counter() - t0

    want = h_in + np.float32(1.0)
    mismatch = first_mismatch(got, want)
    lines = [machine.gpu.banner]
    lines.append(mismatch.line() if mismatch else pass_line(tile_map))
    progress(lines[-1])
    return RunResult(LESSON.id, mismatch is None, lines, mismatch, compiled.summary(), timings)


@dataclass(frozen=True)
class RulesTable:
    """The encode rules as a table for the page (HTML) or a terminal (text)."""

    rules: tuple[EncodeRule, ...] = ENCODE_RULES

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td><code>{escape(r.id)}</code></td><td style='text-align:left'>{escape(r.rule)}</td>"
            f"<td style='text-align:left'>{escape(r.why)}</td></tr>"
            for r in self.rules
        )
        return (
            "<table><tr><th>rule</th><th>what must hold</th><th>why</th></tr>"
            f"{rows}</table><p><small>Source: {escape(DRIVER_DOC)}.</small></p>"
        )

    def __str__(self) -> str:
        return "\n".join(f"{r.id}: {r.rule} ({r.why})" for r in self.rules)


def rules_table() -> RulesTable:
    return RulesTable()
