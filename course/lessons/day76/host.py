"""Day 76, the host side in Python: the tensor map, the launch, the check.

This mirrors ``main()`` of ``kernels/tma_tile.cu`` step for step: the same
input (element i holds float(i)), the output zeroed first, the tensor map
encoded with the same parameters by ``cuTensorMapEncodeTiled`` (through
cuda-python), one block per 64x64 tile, and a bit-exact check that names
the first wrong element and prints the C++ program's PASS line. The
benchmark uses the same workload with random inputs (``purpose="bench"``).

The tensor map and its encode rules are shared (``course.hopper.tensormap``): a bad
box is refused with the rule's name instead of CUDA_ERROR_INVALID_VALUE.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ...hopper.tensormap import ENCODE_RULES, RulesTable, TileMap, encode, rules_table
from ...kernel.host import Case, Check, LaunchConfig, LessonHost, Workload, check_bits
from . import LESSON

__all__ = [
    "ENCODE_RULES",
    "HOST",
    "RulesTable",
    "TileMap",
    "encode",
    "lesson_map",
    "pass_line",
    "rules_table",
]

if TYPE_CHECKING:
    from ...kernel.compile import Compiled


def lesson_map(defines: dict[str, int] | None = None) -> TileMap:
    """The map ``main()`` builds, with the kernel's own constants."""
    c = LESSON.constants(defines)
    return TileMap(int(c["kGmemWidth"]), int(c["kGmemHeight"]), int(c["kTileWidth"]), int(c["kTileHeight"]))


def pass_line(tile_map: TileMap) -> str:
    elems = tile_map.width * tile_map.height
    tiles = (tile_map.width // tile_map.box_width) * (tile_map.height // tile_map.box_height)
    return (
        f"round trip: PASS. {elems} elements, {tiles} tiles of {tile_map.box_height} x "
        f"{tile_map.box_width} floats, one cp.async.bulk.tensor per tile."
    )


class TileWorkload(Workload):
    """``sets`` N x N float32 inputs, their outputs, and one tensor map per input."""

    def __init__(
        self,
        compiled: Compiled,
        n: int,
        sets: int,
        purpose: str,
        grid: tuple[int, int] | None,
        shared_mem: int,
        valid: tuple[int, int] | None = None,
    ):
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        tile_map = lesson_map({LESSON.size_macro: n})
        full_grid = (tile_map.width // tile_map.box_width, tile_map.height // tile_map.box_height)
        threads = int(LESSON.constants()["kThreadsPerBlock"])
        super().__init__(compiled, n, sets, LaunchConfig(grid or full_grid, (threads,), shared_mem))
        if purpose == "lesson":
            # main()'s input: a distinct value per element, exactly representable in float32.
            x = cp.asarray(np.arange(n * n, dtype=np.float32).reshape(1, n, n))
        else:
            x = cp.random.default_rng(7600 + n).random((sets, n, n), dtype=cp.float32)
        self.x = x
        self.y = cp.empty_like(x)
        if valid is not None:
            # The map declares a smaller tensor over the same rows (same stride): boxes that reach
            # past its edge come back with zeros there, while the kernel still covers n x n.
            tile_map = replace(tile_map, width=valid[0], height=valid[1], stride=tile_map.row_stride_bytes)
        self.maps = [encode(tile_map, int(x[j].data.ptr)) for j in range(sets)]

    def args(self, j: int) -> tuple[Any, ...]:
        return (self.maps[j], self.y[j])

    def out(self, j: int) -> Any:
        return self.y[j]

    def want(self) -> Any:
        # heavy: numpy, when the arrays are made
        import numpy as np

        return self.x[0] + np.float32(1.0)

    def host_want(self) -> Any:
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        return cp.asnumpy(self.x[0]) + np.float32(1.0)

    def poison(self, j: int) -> None:
        # Zero, as main() does: a tile the kernel never wrote reads 0.0 where 1.0 or more is expected.
        self.y[j].fill(0)

    def check(self, got: Any, want: Any | None = None) -> Check:
        return check_bits(got, self.want() if want is None else want)


class Day76(LessonHost):
    lesson = LESSON
    run_options = ("grid", "shared_mem", "valid")
    cases = (
        Case(
            "short-grid",
            {"grid": (3, 4)},
            expect_pass=False,
            says="a grid one column of blocks short leaves the last column of tiles unwritten (zero)",
        ),
        Case(
            "over-the-edge",
            {"valid": (200, 200)},
            expect_pass=False,
            says="a map that declares a 200 x 200 tensor: the boxes that hang over its edge arrive with zeros "
            "there, so the kernel writes 0 + 1 = 1.0 from column 200 on",
        ),
    )

    def workload(
        self,
        compiled: Compiled,
        n: int,
        sets: int = 1,
        purpose: str = "lesson",
        grid: tuple[int, int] | None = None,
        shared_mem: int = 0,
        valid: tuple[int, int] | None = None,
        **options: Any,
    ) -> TileWorkload:
        """``grid`` overrides the launch grid for the "what breaks" experiment (a grid one
        column short leaves tiles unwritten, and the check names the first one);
        ``shared_mem`` asks for extra dynamic shared memory, to see a launch the card refuses;
        ``valid`` = (width, height) encodes the map over a smaller tensor with the same rows, to
        see the engine's out-of-bounds zero fill."""
        return TileWorkload(compiled, n, sets, purpose, grid, shared_mem, valid)

    def pass_line(self, n: int, check: Check) -> str:
        return pass_line(lesson_map({LESSON.size_macro: n}))

    def fail_line(self, check: Check) -> str:
        m = check.mismatch
        if m is None:
            return "round trip: no mismatch"
        # The C++ program's own wording.
        return f"round trip wrong at {m.index} (row {m.row}, col {m.col}): got {m.got:.1f}, want {m.want:.1f}"


HOST = Day76()
