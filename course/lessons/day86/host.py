"""Day 86's host side: the ladder's TMA-GEMM host on any M x N x K, its build and split chosen.

The workload is the ladder's (``course.lessons._ladder.TmaGemmWorkload``) with a shape and a
split: the tile width and cluster are the build's (``-DGEMM_BN``, ``-DGEMM_CLUSTER``, ``-DGEMM_CLUSTER_N``,
read from the compiled kernel's flags), and the split, unless given, is the chooser's best for that build
on this GPU's SM count. The lesson run is a shape ragged in M, N and K (``RUN_SHAPE``), split
``RUN_SPLIT`` ways, with every element checked against float64. ``deterministic=True`` runs the
same build compiled with ``-DGEMM_DETERMINISTIC=1`` (split-K's partials summed in split order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import CourseError
from ...kernel.host import Case, Check
from .._ladder import Shape, TmaGemmHost, TmaGemmWorkload, sm_count
from . import LESSON, chooser

if TYPE_CHECKING:
    from ...kernel.compile import Compiled

# Ragged in all three: M = 7.8 tiles of 128, N = 4.03 tiles of 256, K = 8.1 K-tiles of 64.
RUN_SHAPE: Shape = (1000, 1032, 520)
# The run splits K three ways, so that it runs the reduction (and the coding exercise's lines in
# it): the chooser, which prices the reduction's round trips, would not split this small a shape.
RUN_SPLIT = 3


def build_of(compiled: Compiled | None) -> tuple[int, int, bool]:
    """(BN, CTAs a cluster, whether the cluster lies along N) of a build of the kernel, from the -D flags
    it was compiled with (``-DGEMM_CLUSTER``, or ``-DGEMM_CLUSTER_N`` for a cluster along N)."""
    flags = dict(compiled.options.defines) if compiled is not None else {}
    c = LESSON.constants(flags)
    return int(c["kBN"]), int(c["kClusterM"]) * int(c["kClusterN"]), int(c["kClusterN"]) > 1


def rows_of(compiled: Compiled | None) -> tuple[int, bool]:
    """(tile rows, whether the small build) of a build: ``-DGEMM_BM``, ``-DGEMM_SMALL``."""
    flags = dict(compiled.options.defines) if compiled is not None else {}
    c = LESSON.constants(flags)
    return int(c["kBM"]), bool(c["kSmall"])


def a_rows_of(compiled: Compiled | None) -> int:
    """Rows of A a build loads a K-tile where fewer than its tile's (``-DGEMM_A_ROWS``, decode), else 0."""
    flags = dict(compiled.options.defines) if compiled is not None else {}
    c = LESSON.constants(flags)
    rows = int(c["kBoxARows"])
    return rows if rows * int(c["kClusterN"]) < int(c["kBM"]) else 0


def is_deterministic(compiled: Compiled | None) -> bool:
    """Whether a build sums split-K's partials in split order (``-DGEMM_DETERMINISTIC=1``)."""
    flags = dict(compiled.options.defines) if compiled is not None else {}
    return bool(LESSON.constants(flags)["kDeterministic"])


def is_streamk(compiled: Compiled | None) -> bool:
    """Whether a build runs the Stream-K schedule (``-DGEMM_STREAMK=1``; split 1 only)."""
    flags = dict(compiled.options.defines) if compiled is not None else {}
    return bool(LESSON.constants(flags)["kStreamK"])


def deterministic_build(compiled: Compiled) -> Compiled:
    """The same build (tile, cluster) with ``-DGEMM_DETERMINISTIC=1``; ``compiled`` if it is one."""
    if is_deterministic(compiled):
        return compiled
    # heavy: the compiler, only when a deterministic run is asked for
    from ...kernel.compile import compile_lesson

    return compile_lesson(LESSON, defines={**dict(compiled.options.defines), "GEMM_DETERMINISTIC": 1})


def _shape(value: Any) -> Shape:
    try:
        m, n, k = (int(v) for v in value)
    except (TypeError, ValueError):
        raise CourseError(f"shape must be three integers (M, N, K) (got {value!r})") from None
    return m, n, k


class ShapesHost(TmaGemmHost):
    """The ladder's host for the ragged kernel: ``page.run(shape=(M, N, K), split=S,
    deterministic=True)`` (the last option: the build whose split-K sums in split order)."""

    run_options = ("shape", "split", "deterministic")
    cases = (
        Case(
            "no-split",
            {"split": 1},
            True,
            "the same ragged shape with K not split: one unit per cluster tile, no workspace; the same "
            "result within the tolerance",
        ),
        Case(
            "one-row",
            {"shape": (1, 8, 1000), "split": 3},
            True,
            "a 1 x 8 x 1000 product split three ways: a single row and a single 8-column edge, almost "
            "every element of every box zero-filled or clipped; every element checked",
        ),
    )

    def __init__(self) -> None:
        super().__init__(LESSON)
        self.last: tuple[Shape, int, bool] = (
            RUN_SHAPE,
            RUN_SPLIT,
            False,
        )  # the latest workload's (shape, split, deterministic), for its PASS line

    def workload(
        self, compiled: Compiled, n: int, sets: int = 1, purpose: str = "lesson", **options: Any
    ) -> TmaGemmWorkload:
        shape = _shape(options["shape"]) if options.get("shape") is not None else None
        if shape is None:
            shape = RUN_SHAPE if purpose == "lesson" else (n, n, n)
        rows = a_rows_of(compiled)
        if rows and shape[0] > rows:
            raise CourseError(
                f"this build loads {rows} rows of A a K-tile (-DGEMM_A_ROWS={rows}) and M is {shape[0]}: "
                f"rows {rows} to {shape[0] - 1} would never be loaded. Build it with GEMM_A_ROWS of at least M "
                f"(8, 16 or 32), or without GEMM_A_ROWS"
            )
        split = options.get("split")
        if split is None and options.get("shape") is None and purpose == "lesson":
            split = RUN_SPLIT
        deterministic = options.get("deterministic", False)
        if not isinstance(deterministic, bool):
            raise CourseError(f"deterministic must be True or False (got {deterministic!r})")
        if split is None and is_streamk(compiled):
            split = 1  # Stream-K shares K out by its own schedule
        if split is None:
            bn, cluster, along_n = build_of(compiled)
            bm, small = rows_of(compiled)
            split = chooser.best_for(*shape, sm_count(), bn, cluster, deterministic, bm, small, along_n).split
        if deterministic:  # the workload launches (and run_lesson runs) this build
            compiled = deterministic_build(compiled)
        work = TmaGemmWorkload(self.lesson, compiled, n, sets, purpose, shape=shape, split=split)
        self.last = (shape, split, is_deterministic(compiled))
        return work

    def pass_line(self, n: int, check: Check) -> str:
        (m, cols, k), split, deterministic = self.last
        det = " (deterministic)" if deterministic else ""
        return (
            f"gemm7 {m}x{cols}x{k} split {split}{det}: PASS, every element, max rel error {check.max_error:g} "
            f"(tolerance {check.tolerance:g})"
        )


HOST = ShapesHost()
