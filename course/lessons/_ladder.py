"""The host side every step of the GEMM ladder shares: TMA-fed FP16 GEMMs.

Each ladder kernel computes D = A B^T for square FP16 matrices, FP32
accumulation, FP16 D: A is M x K row-major, B is stored N x K (K
contiguous, the layout wgmma reads without a transpose; cuBLAS's "TN"
case), D is M x N row-major. The kernel takes two (or three) CUtensorMaps
by value and declares its launch contract as ``constexpr int`` constants,
which this module reads from the source (never copies):

- ``kBM``, ``kBN``: the CTA tile; ``kBK``: the K depth of one stage;
- ``kBoxARows``, ``kBoxBRows``: the TMA boxes (``kBK`` x rows, 128-byte swizzle);
- ``kBoxDCols``, ``kBoxDRows``: present when D is written through a tensor map too;
- ``kThreadsPerBlock``, ``kSmemBytes`` (dynamic shared memory, opted in);
- ``kPersistent`` (1: one CTA per SM, rounded down to whole clusters; ``kCtasPerSm``, where
  declared, CTAs per SM instead of one),
  ``kClusterM`` x ``kClusterN`` (CTAs per cluster, from ``__cluster_dims__``).

A lesson package of the ladder declares its ``LESSON`` and
``HOST = TmaGemmHost(LESSON)``; its check, PASS line, inputs and peer are
all here, once.

A kernel that declares ``kMinMultiple`` (a ragged kernel) runs any M x N x K
instead of a square: M, N, K, the split of K and the split-K workspace
and counters are run-time arguments after the maps, the tile counts round
up, the grid is at most one CTA per SM and at most one per work unit, and
a shape whose rows break the TMA's 16-byte stride rule is refused before
anything is allocated (``check_shape``). Its build (tile width, cluster)
is read from the ``-D`` flags it was compiled with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..bench import engine
from ..bench.arith import gemm_bytes, gemm_flops, paired_ratios
from ..bench.peers import Cublas, CublasLt, cublaslt_name, cublaslt_problem
from ..bench.result import BenchResult, Reason, load
from ..bench.spec import KERNEL, BenchSpec, Context, Extras, Peer
from ..errors import CourseError
from ..hopper.tensormap import TileMap, encode
from ..kernel.host import (
    Check,
    LaunchConfig,
    LessonHost,
    Mismatch,
    Workload,
    check_relative,
    dependent_launch,
    timing_floor,
    timing_floor_note,
)
from ..kernel.lcg import lcg_operands, normal_operands
from ._streamk import StreamK
from ._streamk import schedule as streamk_schedule

if TYPE_CHECKING:
    from ..kernel.compile import Compiled
    from ..lesson import Lesson

LCG_SEED = 20261201  # the ladder programs' main() draws A and B from this seed
Shape = tuple[int, int, int]  # (M, N, K)
SAMPLE_ROWS = 128  # above N = 1024, checkD compares 128 whole rows (and every element for NaN)
_LABEL = re.compile(r'checkD\(\s*hA\s*,\s*hB\s*,\s*hD\s*,\s*"([^"]+)"\s*\)')


def label_of(lesson: Lesson) -> str:
    """The name the C++ program prints in its PASS line (the string it passes to checkD)."""
    found = _LABEL.findall(lesson.kernel_path.read_text(encoding="utf-8"))
    if len(found) != 1:
        raise CourseError(
            f'the kernel must call checkD(hA, hB, hD, "<label>") exactly once (found {len(found)})',
            path=lesson.kernel_path,
        )
    return found[0]


def sm_count() -> int:
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    return int(cp.cuda.Device().attributes["MultiProcessorCount"])


def check_shape(m: int, n: int, k: int, multiple: int) -> None:
    """Refuse, before launch, a shape the TMA cannot describe: rows of A and B are K halves and
    rows of D are N halves, and a tensor map's row stride must be a multiple of 16 bytes
    (``multiple`` halves: the kernel's ``kMinMultiple``)."""
    for name, value in (("M", m), ("N", n), ("K", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CourseError(f"{name} must be a positive integer (got {value!r} in {m} x {n} x {k})")
    bad = [f"{name} = {value}" for name, value in (("N", n), ("K", k)) if value % multiple]
    if bad:
        raise CourseError(
            f"{m} x {n} x {k} is refused before launch: {' and '.join(bad)} not a multiple of {multiple}. "
            f"A TMA tensor map's row stride must be a multiple of 16 bytes (rule stride-16B): rows of A "
            f"and B are K halves, rows of D are N halves, so N and K must be multiples of {multiple}. "
            f"Pad them with zeros to the next multiple of {multiple} (zero columns of A and B add nothing)."
        )


@dataclass(frozen=True)
class Problem:
    """What a ragged kernel's launch needs for one shape, from its constants (the header's contract)."""

    m: int
    n: int
    k: int
    split: int
    tile_m: int
    tile_n: int
    tile_k: int
    cluster: int
    consumers: int
    streamk: bool = False  # a -DGEMM_STREAMK=1 build: the schedule is the grid's (``_streamk``)
    ctas_per_sm: int = (
        1  # ``kCtasPerSm``: 2 in Day 86's small build (-DGEMM_SMALL=1), whose CTAs fit two an SM
    )
    cluster_n: int = (
        1  # ``kClusterN``: 2 in Day 86's cluster along N (-DGEMM_CLUSTER_N=2; ``cluster`` is then 1)
    )

    @property
    def tiles_n(self) -> int:
        return -(-self.n // self.tile_n)

    @property
    def cluster_size(self) -> int:
        return self.cluster * self.cluster_n

    @property
    def cluster_tiles_n(self) -> int:
        return -(-self.tiles_n // self.cluster_n)

    @property
    def cluster_tiles_m(self) -> int:
        tiles_m = -(-self.m // self.tile_m)
        return -(-tiles_m // self.cluster)

    @property
    def k_tiles(self) -> int:
        return -(-self.k // self.tile_k)

    @property
    def units(self) -> int:
        return self.cluster_tiles_m * self.cluster_tiles_n * self.split

    @property
    def cta_tiles(self) -> int:
        """CTA tiles including the cluster's padding rows (workspace and counters are sized by it; a
        cluster along N's padding column stores nothing and is not counted)."""
        return self.cluster_tiles_m * self.cluster * self.tiles_n

    def stream_k(self, sms: int) -> StreamK:
        """The Stream-K build's schedule on ``sms`` SMs (one cluster per ``cluster`` of them)."""
        return streamk_schedule(
            self.cluster_tiles_m * self.cluster_tiles_n, self.k_tiles, sms // self.cluster_size
        )

    @property
    def workspace_floats(self) -> int:
        """Split-K's workspace: a partial of the whole tile per (CTA tile, split)."""
        return self.cta_tiles * self.split * self.tile_m * self.tile_n if self.split > 1 else 0

    @property
    def counters(self) -> int:
        """Split-K's counters: one per (CTA tile, consumer warpgroup)."""
        return self.cta_tiles * self.consumers if self.split > 1 else 0

    def buffers(self, sms: int) -> tuple[int, int]:
        """(workspace floats, counters) the launch on ``sms`` SMs needs: split-K's, or, for a
        Stream-K build, ``sk_peers`` whole-tile partials per Stream-K CTA tile and a counter per (CTA
        tile, consumer warpgroup) when any tile is shared (the schedule, and so these, depend on
        the grid)."""
        if not self.streamk:
            return self.workspace_floats, self.counters
        sk = self.stream_k(sms)
        if sk.sk_tiles == 0:
            return 0, 0
        return sk.workspace_floats(
            self.tile_m, self.tile_n, self.cluster_size
        ), self.cta_tiles * self.consumers

    def rounds(self, sms: int) -> float:
        """Units (Stream-K: cluster tiles) per cluster slot of the persistent grid; at most 1 means one
        round: every cluster has one unit or none (``host.dependent_launch``)."""
        slots = sms * self.ctas_per_sm // self.cluster_size
        return (self.cluster_tiles_m * self.cluster_tiles_n if self.streamk else self.units) / slots

    def grid(self, sms: int) -> int:
        """CTAs: at most ``ctas_per_sm`` per SM (one, but two in a small build), rounded down to whole
        clusters, and (split-K) at most one cluster per unit; Stream-K launches every slot, its
        schedule being the grid's, as CUTLASS's does."""
        slots = sms * self.ctas_per_sm // self.cluster_size
        return (slots if self.streamk else min(slots, self.units)) * self.cluster_size


def ragged_problem(constants: dict[str, int | float], shape: Shape, split: int) -> Problem:
    """The ``Problem`` of a ragged kernel's build, the shape and the split checked first."""
    m, n, k = shape
    check_shape(m, n, k, int(constants["kMinMultiple"]))
    p = Problem(
        m,
        n,
        k,
        split,
        int(constants["kBM"]),
        int(constants["kBN"]),
        int(constants["kBK"]),
        int(constants.get("kClusterM", 1)),
        int(constants["kConsumers"]),
        bool(constants.get("kStreamK", 0)),
        int(constants.get("kCtasPerSm", 1)),
        int(constants.get("kClusterN", 1)),
    )
    if p.streamk and split != 1:
        raise CourseError(f"the Stream-K build (-DGEMM_STREAMK=1) takes split 1 only (got {split!r})")
    if isinstance(split, bool) or not isinstance(split, int) or not 1 <= split <= p.k_tiles:
        raise CourseError(
            f"split must be 1 to {p.k_tiles} for K = {k} (ceil(K / {p.tile_k}) K-tiles; got {split!r})"
        )
    return p


class TmaGemmWorkload(Workload):
    """``sets`` copies of A (M x K), B (N x K) and D (M x N), FP16, with their tensor maps.

    The ladder's kernels run N x N x N (``shape`` None); a ragged kernel any ``shape`` (M, N, K),
    its K split ``split`` ways."""

    problem: Problem | None = None  # a ragged kernel's launch arithmetic; None for the ladder's squares

    def __init__(
        self,
        lesson: Lesson,
        compiled: Compiled | None,
        n: int,
        sets: int,
        purpose: str,
        shape: Shape | None = None,
        split: int = 1,
    ):
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        if lesson.size_macro:
            c = lesson.constants({lesson.size_macro: n})
        else:  # the build is the compiled one's (a ragged kernel: tile and cluster by -D)
            c = lesson.constants(dict(compiled.options.defines) if compiled is not None else None)
        self.constants = c
        m, cols, k = shape if shape is not None else (n, n, n)
        self.shape: Shape = (m, cols, k)
        tile_m, tile_n = int(c["kBM"]), int(c["kBN"])
        cluster = int(c.get("kClusterM", 1)) * int(c.get("kClusterN", 1))
        if "kMinMultiple" in c:
            self.problem = ragged_problem(c, self.shape, split)
            grid: tuple[int, ...] = (self.problem.grid(sm_count()), 1, 1)
        else:
            if (m, cols, k) != (n, n, n):
                raise CourseError(f"{lesson.kernel_file} runs square problems only (got {m} x {cols} x {k})")
            if n % tile_m or n % tile_n:
                raise CourseError(f"N must be a multiple of the {tile_m} x {tile_n} tile (got {n})")
            if c.get("kPersistent", 0):
                grid = (sm_count() // cluster * cluster, 1, 1)
            else:
                grid = (n // tile_n, n // tile_m)
        # A kernel that waits on griddepcontrol is launched to overlap the one before, where it is one round.
        dependent = dependent_launch(c, self.problem.rounds(sm_count()) if self.problem is not None else 1.0)
        config = LaunchConfig(grid, (int(c["kThreadsPerBlock"]),), int(c["kSmemBytes"]), dependent)
        super().__init__(compiled, n, sets, config)  # type: ignore[arg-type]
        if purpose == "lesson":
            # The C++ programs' seed: the ladder's fixed one; a ragged kernel's main() adds the shape.
            seed = LCG_SEED if self.problem is None else (LCG_SEED + 7 * m + 13 * cols + 31 * k) % 2**32
            a, b = lcg_operands(m, cols, k, seed)
            self.a, self.b = cp.asarray(a)[None], cp.asarray(b)[None]
        else:
            self.a, self.b = normal_operands(m, cols, k, sets, 9000 + n)
        self.d = cp.empty((sets, m, cols), dtype=cp.float16)
        self.tolerance = float(c["kRelTolerance"])
        # Timing inputs are N(0, 1): results have size sqrt(K), so small ones are held to that scale.
        self.floor = 1.0 if purpose == "lesson" else timing_floor(k)
        k_box = int(c["kBK"])
        a_map = TileMap(k, m, k_box, int(c["kBoxARows"]), elem_bytes=2, swizzle="128B")
        b_map = TileMap(k, cols, k_box, int(c["kBoxBRows"]), elem_bytes=2, swizzle="128B")
        self.maps_a = [encode(a_map, int(self.a[j].data.ptr)) for j in range(self.a.shape[0])]
        self.maps_b = [encode(b_map, int(self.b[j].data.ptr)) for j in range(self.b.shape[0])]
        self.maps_d: list[Any] | None = None
        if "kBoxDCols" in c:
            d_map = TileMap(cols, m, int(c["kBoxDCols"]), int(c["kBoxDRows"]), elem_bytes=2, swizzle="128B")
            self.maps_d = [encode(d_map, int(self.d[j].data.ptr)) for j in range(sets)]
        self.tail: tuple[Any, ...] = ()
        if self.problem is not None:
            p = self.problem
            # Split-K's workspace and counters (one element each when unused: the kernel never reads
            # them then). The counters are zeroed once; the last arriver of each tile resets its own.
            floats, counters = p.buffers(sm_count())
            self.workspace = cp.empty(max(floats, 1), dtype=cp.float32)
            self.counters = cp.zeros(max(counters, 1), dtype=cp.uint32)
            self.tail = (
                np.int32(m),
                np.int32(cols),
                np.int32(k),
                np.int32(p.split),
                self.workspace,
                self.counters,
            )
        self._want: Any = None

    def args(self, j: int) -> tuple[Any, ...]:
        out = self.maps_d[j] if self.maps_d is not None else self.d[j]
        return (self.maps_a[j % len(self.maps_a)], self.maps_b[j % len(self.maps_b)], out, *self.tail)

    def out(self, j: int) -> Any:
        return self.d[j]

    def want(self) -> Any:
        # float64 on the GPU: D = A B^T with B stored N x K.
        if self._want is None:
            self._want = self.a[0].astype("float64") @ self.b[0].astype("float64").T
        return self._want

    def check(self, got: Any, want: Any | None = None) -> Check:
        return check_relative(got, self.want() if want is None else want, self.tolerance, self.floor)

    def host_check(self) -> Check:
        """As the C++ program checks: every row up to 1024 rows; above, every element for NaN
        (the poison) and 128 whole rows spread over every tile and warp position against float64
        (and, for a ragged kernel, the last row, on the ragged edge)."""
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        got = cp.asnumpy(self.d[0])
        a = cp.asnumpy(self.a[0])  # FP16; only the rows checked are widened (128 of 4096 at N = 4096)
        b = cp.asnumpy(self.b[0]).astype(np.float64)
        m, cols = got.shape
        if m <= 1024:
            return check_relative(got, a.astype(np.float64) @ b.T, self.tolerance, self.floor)
        unwritten = np.flatnonzero(np.isnan(got))
        if unwritten.size:
            i = int(unwritten[0])
            never = Mismatch(i, i // cols, i % cols, float("nan"), float("nan"))
            return Check("relative", int(unwritten.size), got.size, None, self.tolerance, never, self.floor)
        step = m // SAMPLE_ROWS
        rows = np.array([i * step + (i * 37) % step for i in range(SAMPLE_ROWS)])  # checkD's rows
        if self.problem is not None:
            rows = np.append(rows, m - 1)
        sub = check_relative(got[rows], a[rows].astype(np.float64) @ b.T, self.tolerance, self.floor)
        first = sub.mismatch
        if first is not None:
            row = int(rows[first.row])
            first = Mismatch(row * cols + first.col, row, first.col, first.got, first.want, first.error)
        return Check("relative", sub.failures, got.size, sub.max_error, self.tolerance, first, self.floor)


class TmaGemmHost(LessonHost):
    """The host side of one ladder step; everything it needs comes from the kernel."""

    def __init__(self, lesson: Lesson):
        self.lesson = lesson

    def workload(
        self, compiled: Compiled, n: int, sets: int = 1, purpose: str = "lesson", **options: Any
    ) -> TmaGemmWorkload:
        return TmaGemmWorkload(self.lesson, compiled, n, sets, purpose)

    def pass_line(self, n: int, check: Check) -> str:
        return (
            f"{label_of(self.lesson)} {n}x{n}x{n}: PASS, max rel error {check.max_error:g} "
            f"(tolerance {check.tolerance:g})"
        )

    def fail_line(self, check: Check) -> str:
        m = check.mismatch
        if m is None:
            return "no mismatch"
        if m.error is None:  # the NaN poison is still there: no thread wrote the element
            return (
                f"FAIL at D[{m.row}][{m.col}]: never written (still the NaN the run filled D with); "
                f"{check.failures} of {check.total} elements unwritten"
            )
        return f"FAIL at D[{m.row}][{m.col}]: gpu {m.got:f}, ref {m.want:f}, rel {m.error:g} > {check.tolerance:g}"


# ---------------------------------------------------------------------------
# The ladder's benchmark: every step against cuBLAS on the same types.
# ---------------------------------------------------------------------------
LADDER_SIZES = (1024, 2048, 4096, 8192)
PAGE_SIZES = (1024, 2048, 4096)
VARIANT_SIZES = (4096, 8192)


def cublas_peer() -> tuple[Any, ...]:
    """cuBLAS gemmEx on the workload's own buffers: FP16 in and out, B stored N x K (TN)."""
    gemm = Cublas(out="float16", b_layout="nk")

    def call(work: Any, j: int) -> None:
        gemm(work.a[j % work.a.shape[0]], work.b[j % work.b.shape[0]], work.d[j])

    return (Peer(gemm.name, call),)


def cublas_and_lt_peers() -> tuple[Any, ...]:
    """cuBLAS gemmEx, then cuBLASLt through nvmath-python with its heuristic plan and with its
    autotuned plan, all on the workload's own buffers (FP16 in and out, B stored N x K). Where
    nvmath-python is missing or cannot run cuBLASLt, its two peers come back unavailable, with
    the reason, and the run goes on with gemmEx alone."""
    peers = list(cublas_peer())
    problem = cublaslt_problem()
    for autotune in (False, True):
        lt = None if problem else CublasLt(autotune=autotune)

        def call(work: Any, j: int, lt: Any = lt) -> None:
            lt(work.a[j % work.a.shape[0]], work.b[j % work.b.shape[0]], work.d[j])

        peers.append(Peer(cublaslt_name(autotune), call, unavailable=problem))
    return tuple(peers)


def _variant_title(name: str, n: int) -> str:
    return f"{name} at N={n}"


def ladder_spec(lesson: Lesson, variants: dict[str, dict[str, int]] | None = None, why: str = "") -> Any:
    """The BenchSpec of one ladder step.

    ``variants`` are builds of the same file with other ``-D`` values (the
    step without its idea, where the kernel has a switch for it). At 4096
    and 8192 each is checked, then timed in the same interleaved batches as
    the step as written and cuBLAS (``Timer.samples_together``), and its
    ratios are reported with their spread over the repeats; ``why`` says
    what the variants show.
    """

    variants = dict(variants or {})

    def finish(ctx: Context) -> Extras:
        reasons: list[Reason] = []
        peer = ctx.peers[0]
        for row in ctx.rows:
            p = row.peer(peer.name)
            reasons.append(
                Reason(
                    f"Against cuBLAS at N={row.size}",
                    p.ratio,
                    "x",
                    "measured",
                    f"kernel {row.kernel.rate:,.0f} TFLOP/s, cuBLAS {p.rate:,.0f} TFLOP/s on the same FP16 inputs "
                    "(N(0, 1)), FP32 accumulation, FP16 D, timed in interleaved batches",
                )
            )
        for name, defines in variants.items():
            for n in (s for s in VARIANT_SIZES if s in ctx.sizes):
                base = ctx.compile(n)
                variant = ctx.compile(n, defines=defines)
                work = ctx.workload(n, base)
                calls: dict[str, tuple[Any, Any]] = {
                    KERNEL: (work.launch, None),
                    name: (partial(work.launch, compiled=variant), None),
                    peer.name: (partial(peer.call, work), peer.want(work) if peer.want else None),
                }
                ctx.verify(n, work, calls)
                samples = ctx.timer.samples_together(
                    {key: [partial(call, j) for j in range(work.sets)] for key, (call, _) in calls.items()}
                )
                mine = samples[name].per_call_ms
                r, lo, hi = paired_ratios(mine, samples[KERNEL].per_call_ms)
                rc, lc, hc = paired_ratios(mine, samples[peer.name].per_call_ms)
                rate = ctx.rate(n, samples[name].timing().median_ms)
                flags = " ".join(f"-D{k}={v}" for k, v in defines.items())
                spread = f"{len(mine)} interleaved repeats"
                reasons.append(
                    Reason(
                        _variant_title(name, n),
                        r,
                        "x",
                        "measured",
                        f"the same file built with {flags}, checked, then timed in the same interleaved batches as "
                        f"the step as written and cuBLAS: {rate:,.0f} TFLOP/s, {r:.2f}x the step as written "
                        f"({lo:.2f}x to {hi:.2f}x over {spread}). {why}".strip(),
                        lo,
                        hi,
                    )
                )
                reasons.append(
                    Reason(
                        f"{_variant_title(name, n)} against cuBLAS",
                        rc,
                        "x",
                        "measured",
                        f"the {flags} build against cuBLAS in the same batches: {rc:.2f}x ({lc:.2f}x to {hc:.2f}x "
                        f"over {spread})",
                        lc,
                        hc,
                    )
                )
                ctx.progress(
                    f"{ctx.lesson.id} N={n} {name}: {rate:,.0f} TFLOP/s, {r:.2f}x ({lo:.2f}-{hi:.2f})"
                )
                del work, calls
                engine.release()
        return Extras(reasons=tuple(reasons))

    def findings(result: BenchResult) -> list[str]:
        out = []
        for row in result.rows:
            p = row.peers[0]
            out.append(
                f"N = {row.size}: {row.kernel.rate:,.0f} TFLOP/s, {p.ratio:.2f}x cuBLAS ({p.rate:,.0f} TFLOP/s)."
            )
        previous = _previous_rates(lesson)
        for row in result.rows:
            before = previous.get(row.size)
            if before:
                rate, when, ratio = before
                mine = row.peers[0].ratio if row.peers else None
                against = (
                    f"; ratio to the cuBLAS timed beside each: {ratio:.2f}x -> {mine:.2f}x"
                    if ratio is not None and mine is not None
                    else ""
                )
                out.append(
                    f"Against the previous step's recording at N = {row.size} ({when[:10]}): {rate:,.0f} -> "
                    f"{row.kernel.rate:,.0f} TFLOP/s ({row.kernel.rate / rate:.2f}x){against}."
                )
        out.extend(variant_findings(result, tuple(variants)))
        return out

    return BenchSpec(
        sizes=LADDER_SIZES,
        page_sizes=PAGE_SIZES,
        max_size=16384,
        unit="TFLOP/s",
        work=gemm_flops,
        set_bytes=lambda n: gemm_bytes(n, 2, 2),
        kernel_label=f"{lesson.kernel_name} (FP16 in, FP32 accumulate, FP16 out)",
        peers=cublas_peer,
        finish=finish,
        findings=findings,
        notes=(
            "rates count 2*N^3 FLOPs; inputs drawn from N(0, 1) and rounded to FP16; B stored N x K",
            timing_floor_note(LADDER_SIZES) + " (kRelTolerance)",
            "cuBLAS: cublasGemmEx, FP16 A and B, FP16 D, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP, "
            "B as the transposed operand (TN)",
        ),
        size_step=256,
    )


def variant_findings(result: Any, names: tuple[str, ...]) -> list[str]:
    """One sentence per variant and size, from what the recording holds: with interleaved timing,
    the ratio, its spread and whether that spread covers 1.0; from an older recording (the variant
    timed alone after the main rows), its rate and a plain statement that it has no spread."""
    reasons = {r.title: r for r in result.reasons}
    out = []
    for name in names:
        for n in VARIANT_SIZES:
            r = reasons.get(_variant_title(name, n))
            if r is None or r.value is None:
                continue
            if r.unit == "x" and r.low is not None and r.high is not None:
                c = reasons.get(f"{_variant_title(name, n)} against cuBLAS")
                verdict = (
                    "within noise: the spread covers 1.00x"
                    if r.within_noise
                    else ("faster" if r.low > 1.0 else "slower") + " in every repeat"
                )
                against = f"; {c.value:.2f}x cuBLAS" if c is not None and c.value is not None else ""
                out.append(
                    f"{name[0].upper()}{name[1:]} at N = {n}: {r.value:.2f}x the step as written "
                    f"({r.low:.2f}x to {r.high:.2f}x over the interleaved repeats), {verdict}{against}."
                )
            elif r.unit == "TFLOP/s":
                base = next((row.kernel.rate for row in result.rows if row.size == n), None)
                ratio_text = f" ({r.value / base:.2f}x its {base:,.0f})" if base else ""
                out.append(
                    f"{name[0].upper()}{name[1:]} at N = {n}: {r.value:,.0f} TFLOP/s against the step as "
                    f"written{ratio_text}, timed alone after the step in this recording, so no spread was "
                    "recorded and the ratio cannot be told apart from run-to-run drift."
                )
    return out


def _previous_rates(lesson: Lesson) -> dict[int, tuple[float, str, float | None]]:
    """The previous step's recorded kernel rates by size, with the date and the ratio to its first
    peer (empty when none is recorded)."""
    if not lesson.previous:
        return {}

    recorded = load(lesson.previous)
    if recorded is None:
        return {}
    return {
        row.size: (row.kernel.rate, recorded.recorded_at, row.peers[0].ratio if row.peers else None)
        for row in recorded.rows
    }
