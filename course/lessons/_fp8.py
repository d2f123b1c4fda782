"""The host side of the FP8 GEMM (Day 87): e4m3 operands with per-tensor or block scales, FP16 D.

The kernel (``kernels/gemm8_fp8.cu``) computes D = s (A B^T) for any M x N x K, A (M x K) and
B (N x K) in e4m3 bytes, s = sA * sB. Its launch contract is the ladder's ragged one without
split-K, plus the scale and the promotion interval::

    gemm8Fp8(tmA, tmB, tmD, M, N, K, scale, promoteEvery)

and, in the block-scaled build (``-DGEMM_BLOCK_SCALES=1``), two more: A's 1 x 128 scales as a
[ceil(K/128), M] float32 array and B's 128 x 128 scales as [ceil(N/128), ceil(K/128)], applied at
every promotion (``promoteEvery`` 1, ``scale`` 1).

and everything the host needs is read from the kernel's constants (``kBM``, ``kBN``,
``kClusterM``, ``kPromote``, ``kMinMultipleK``, ``kMinMultipleN``, ``kE4m3Max``, ``kScaleA``,
``kScaleB``, ``kRelTolerance``, ``kThreadsPerBlock``, ``kSmemBytes``) for the build it was compiled as
(``-DGEMM_BN``, ``-DGEMM_CLUSTER``, ``-DGEMM_PROMOTE``, ``-DGEMM_BM``: the 192-row build's units are
192 rows, the 192-column build's 192 columns, and ``grid_for`` / ``waves`` count them).

Two kinds of input, as for every ladder step:

- "lesson": the C++ program's own: the ladder's LCG values {-8..8}/8, exact in e4m3, with its
  fixed power-of-two scales, so every element is checked to ``kRelTolerance``;
- "bench": N(0, 1) (or U(0, 1)) in FP32, quantised on the GPU with ``course.hopper.fp8``
  (amax -> scale = amax / 448, round to nearest even, saturation at 448), checked against the
  float64 product of the *dequantised* inputs: the kernel is held to what it was given, and
  the quantisation's own error (a few percent per element) is a separate, taught, number.
  ``dist="skewed"`` draws N(0, 1) with row i of A times 2^(i % 16 - 8) and the rows of B's
  128-row block j times 2^(j % 8 - 8): magnitudes one scale per tensor cannot serve.

The block-scaled build quantises each input per block (``fp8.quantize_blocks``); its "lesson"
inputs are the same LCG values with the C++ program's power-of-two block scales
(:func:`self_check_block_scales`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..bench.lt_fp8 import device_scales
from ..errors import CourseError
from ..hopper import fp8
from ..hopper.tensormap import TileMap, encode
from ..kernel.host import (
    Check,
    LaunchConfig,
    LessonHost,
    Mismatch,
    Workload,
    check_relative,
    dependent_launch,
)
from ..kernel.lcg import lcg_operands
from ._ladder import LCG_SEED, SAMPLE_ROWS, Shape, sm_count

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..kernel.compile import Compiled
    from ..lesson import Lesson

RUN_SHAPE: Shape = (1000, 1032, 528)  # ragged in all three: 7.8 x 4.03 tiles, 4.1 K-tiles of 128
# Timing inputs are N(0, 1) quantised per tensor: D against float64 of the dequantised inputs,
# relative to max(|ref|, sqrt(K)). Besides D's FP16 rounding (2^-11 relative), the tensor cores'
# FP8 accumulation loses bits as K grows (the lesson's subject): on the H200 the never-promoting
# build's largest such error at 4096^3 was 1.0e-2 (evidence/gemm_dev/runs/2026-12-03_h200_run87_1.log),
# against 9e-4 promoting every K-tile. 5e-2 holds the never-promoting build up to K = 8192 and
# still fails a wrong layout or a wrong scale, whose errors are of order 1.
BENCH_TOLERANCE = 5e-2
DISTS = ("normal", "uniform", "skewed")  # the bench inputs' distributions (draw_inputs)


@dataclass(frozen=True)
class Build:
    """One compiled configuration of the FP8 kernel, from its -D flags."""

    bn: int
    cluster: int
    promote: int  # 1: the promoting build (a second accumulator); 0: the wgmma accumulator only
    block: int = 0  # 1: 1x128 / 128x128 block scales, applied at every promotion
    # rows of a unit of work: 64 in the ping-pong build (GEMM_PROMOTE_PINGPONG=1), 192 in the 192-row
    # build (GEMM_BM=192, three consumer warpgroups); the 192-column build (GEMM_BN=192) has bn 192
    bm: int = 128

    @property
    def name(self) -> str:
        kind = ", block scales" if self.block else ", promoting build" if self.promote else ""
        if self.bm == 64:
            kind = ", ping-pong promoting build"
        return f"{self.bm}x{self.bn} cluster {self.cluster}{kind}"


def build_of(lesson: Lesson, compiled: Compiled | None) -> Build:
    return build_for(lesson, dict(compiled.options.defines) if compiled is not None else {})


def build_for(lesson: Lesson, defines: Mapping[str, int | str]) -> Build:
    """The build the kernel file makes of these -D flags (its constants: nothing is compiled)."""
    c = lesson.constants(dict(defines))
    return Build(
        int(c["kBN"]), int(c["kClusterM"]), int(c["kPromote"]), int(c["kBlockScales"]), int(c["kBM"])
    )


def self_check_block_scales(m: int, n: int, k: int, block: int = fp8.SCALE_BLOCK) -> tuple[Any, Any]:
    """The C++ program's block scales, powers of two (exact), in the quantiser's orientation:
    A's [M, ceil(K/128)] with sA[m][kb] = 2^((m + 3 kb) % 5 - 2) and B's [ceil(N/128), ceil(K/128)]
    with sB[nb][kb] = 2^((nb + kb) % 3 - 1) (``blockScaleA`` and ``blockScaleB`` in the kernel file)."""
    kb = np.arange(-(-k // block))
    a = np.ldexp(np.float32(1), (np.arange(m)[:, None] + 3 * kb[None, :]) % 5 - 2).astype(np.float32)
    b = np.ldexp(np.float32(1), (np.arange(-(-n // block))[:, None] + kb[None, :]) % 3 - 1).astype(np.float32)
    return a, b


def skew(x: Any, rows_per_step: int, steps: int = 16, xp: Any = np) -> Any:
    """``x`` with row i times 2^((i // rows_per_step) % steps - 8): 2^-8 and up, in a repeating ramp."""
    i = xp.arange(x.shape[0]) // rows_per_step
    return x * xp.ldexp(xp.float32(1), (i % steps - 8).astype(xp.int32))[:, None].astype(xp.float32)


def draw_inputs(shape: Shape, dist: str, sets: int = 1) -> tuple[list[Any], list[Any]]:
    """The bench inputs in float32 on the GPU, before quantisation: ``sets`` A (M x K), then ``sets``
    B (N x K), from a generator seeded by the shape (the same inputs for every build)."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    if dist not in DISTS:
        raise CourseError(f"dist must be one of {', '.join(DISTS)} (got {dist!r})")
    m, cols, k = shape
    rng = cp.random.default_rng(9000 + m + 3 * cols + 7 * k)
    draw = rng.random if dist == "uniform" else rng.standard_normal
    a = [draw((m, k), dtype=cp.float32) for _ in range(sets)]
    b = [draw((cols, k), dtype=cp.float32) for _ in range(sets)]
    if dist == "skewed":  # A up to 2^7, B up to 2^-1: D up to about 2^6 sqrt(K) 4, inside FP16's 65504
        a = [skew(x, 1, 16, cp) for x in a]
        b = [skew(x, fp8.SCALE_BLOCK, 8, cp) for x in b]
    return a, b


def check_fp8_shape(m: int, n: int, k: int, constants: dict[str, int | float]) -> None:
    """Refuse, before anything is allocated, a shape the tensor maps cannot describe: a TMA row
    stride must be a multiple of 16 bytes, so K (e4m3 rows of A and B, 1 byte an element) must be a
    multiple of 16 and N (FP16 rows of D) a multiple of 8."""
    for name, value in (("M", m), ("N", n), ("K", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CourseError(f"{name} must be a positive integer (got {value!r} in {m} x {n} x {k})")
    mk, mn = int(constants["kMinMultipleK"]), int(constants["kMinMultipleN"])
    bad = [
        f"{name} = {v} is not a multiple of {mult}"
        for name, v, mult in (("N", n, mn), ("K", k, mk))
        if v % mult
    ]
    if bad:
        raise CourseError(
            f"{m} x {n} x {k} is refused before launch: {' and '.join(bad)}. A TMA tensor map's row stride "
            f"must be a multiple of 16 bytes (rule stride-16B): rows of A and B are K e4m3 bytes, rows of D "
            f"are N halves. Pad K to a multiple of {mk} and N to a multiple of {mn} with zeros (zero columns "
            "add nothing to the product)."
        )


def check_every(every: Any, build: Build) -> int:
    """The promotion interval for this build: 0 (never) always; P >= 1 K-tiles only in a promoting build;
    exactly 1 in the block-scaled build (None: the build's default, 1 there and 0 elsewhere)."""
    if every is None:
        return 1 if build.block else 0
    if isinstance(every, bool) or not isinstance(every, int) or every < 0:
        raise CourseError(f"promote_every must be an integer >= 0: 0 never promotes (got {every!r})")
    if build.block and every != 1:
        raise CourseError(
            f"promote_every = {every}, but the block-scaled build promotes after every K-tile (its scales "
            "change every 128 elements of K): pass 1 or leave it out"
        )
    if every and not build.promote:
        raise CourseError(
            f"promote_every = {every} needs the promoting build (compile with GEMM_PROMOTE=1 and GEMM_BN=128: "
            f"the second accumulator does not fit beside a 256-wide tile's); this build is {build.name}"
        )
    return every


def units_for(m: int, n: int, build: Build) -> int:
    """Units of work (cluster tiles) of an M x N product: ceil(ceil(M / bm) / cluster) * ceil(N / bn)."""
    tiles_m = -(-m // build.bm)
    return -(-tiles_m // build.cluster) * -(-n // build.bn)


def grid_for(m: int, n: int, build: Build, sms: int) -> int:
    """CTAs: one per cluster tile, at most one per SM, rounded down to whole clusters."""
    return min(sms // build.cluster, units_for(m, n, build)) * build.cluster


def waves(m: int, n: int, build: Build, sms: int) -> float:
    """Units per cluster slot of the persistent grid: a CTA walks ceil(waves) units at most, so
    waves / ceil(waves) is the share of the last round's slots that have work (the tail's loss)."""
    return units_for(m, n, build) / (sms // build.cluster)


class Fp8GemmWorkload(Workload):
    """``sets`` copies of quantised A (M x K), B (N x K) and FP16 D (M x N), with tensor maps."""

    def __init__(
        self,
        lesson: Lesson,
        compiled: Compiled | None,
        n: int,
        sets: int,
        purpose: str,
        shape: Shape | None = None,
        promote_every: int | None = None,
        dist: str = "normal",
    ):
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        c = lesson.constants(dict(compiled.options.defines) if compiled is not None else None)
        self.constants = c
        self.build = build_of(lesson, compiled)
        m, cols, k = shape if shape is not None else (n, n, n)
        check_fp8_shape(m, cols, k, c)
        self.shape: Shape = (m, cols, k)
        self.every = check_every(promote_every, self.build)
        grid = (grid_for(m, cols, self.build, sm_count()), 1, 1)
        # waits on griddepcontrol and one round of units: launched to overlap the kernel before
        dependent = dependent_launch(c, waves(m, cols, self.build, sm_count()))
        config = LaunchConfig(grid, (int(c["kThreadsPerBlock"]),), int(c["kSmemBytes"]), dependent)
        super().__init__(compiled, n, sets, config)  # type: ignore[arg-type]
        blocks = ((1, fp8.SCALE_BLOCK), (fp8.SCALE_BLOCK, fp8.SCALE_BLOCK))
        qa: list[Any]
        qb: list[Any]
        if purpose == "lesson":  # the C++ program's: LCG {-8..8}/8 (exact in e4m3), its fixed scales
            a, b = lcg_operands(m, cols, k, (LCG_SEED + 7 * m + 13 * cols + 31 * k) % 2**32)
            if self.build.block:
                sa, sb = self_check_block_scales(m, cols, k)
                qa = [fp8.BlockQuantized(cp.asarray(fp8.e4m3_bits(a)), cp.asarray(sa), blocks[0], 0)]
                qb = [fp8.BlockQuantized(cp.asarray(fp8.e4m3_bits(b)), cp.asarray(sb), blocks[1], 0)]
            else:
                qa = [fp8.Quantized(cp.asarray(fp8.e4m3_bits(a)), float(c["kScaleA"]), 1.0, 0)]
                qb = [fp8.Quantized(cp.asarray(fp8.e4m3_bits(b)), float(c["kScaleB"]), 1.0, 0)]
            self.tolerance, self.floor = float(c["kRelTolerance"]), 1.0
        else:
            fa, fb = draw_inputs(self.shape, dist, sets)
            if self.build.block:
                qa = [fp8.quantize_blocks(x, blocks[0], cp) for x in fa]
                qb = [fp8.quantize_blocks(x, blocks[1], cp) for x in fb]
            else:
                qa = [fp8.quantize(x, cp) for x in fa]
                qb = [fp8.quantize(x, cp) for x in fb]
            del fa, fb
            self.tolerance, self.floor = BENCH_TOLERANCE, float(k) ** 0.5
        self.qa, self.qb = qa, qb
        # The block-scaled build's scale arrays in the kernel's layout: A's K-block-major.
        self.kernel_scales = [
            (cp.ascontiguousarray(x.scales.T), cp.ascontiguousarray(y.scales))
            for x, y in zip(qa, qb, strict=True)
            if self.build.block
        ]
        self.d = cp.empty((sets, m, cols), dtype=cp.float16)
        box_k = int(c["kBK"])
        a_map = TileMap(k, m, box_k, int(c["kBoxARows"]), elem_bytes=1, swizzle="128B")
        b_map = TileMap(k, cols, box_k, int(c["kBoxBRows"]), elem_bytes=1, swizzle="128B")
        d_map = TileMap(cols, m, int(c["kBoxDCols"]), int(c["kBoxDRows"]), elem_bytes=2, swizzle="128B")
        self.maps_a = [encode(a_map, int(q.bits.data.ptr)) for q in qa]
        self.maps_b = [encode(b_map, int(q.bits.data.ptr)) for q in qb]
        self.maps_d = [encode(d_map, int(self.d[j].data.ptr)) for j in range(sets)]
        self._want: Any = None
        self._scales: dict[int, Any] = {}

    def scale(self, j: int) -> float:
        """What the kernel multiplies set j's D by: sA * sB, in float32 as the kernel receives it;
        1 with block scales (applied at promotion)."""
        if self.build.block:
            return 1.0
        qa, qb = self.qa[j % len(self.qa)], self.qb[j % len(self.qb)]
        return float(np.float32(qa.scale) * np.float32(qb.scale))

    def args(self, j: int) -> tuple[Any, ...]:
        m, cols, k = self.shape
        extra = self.kernel_scales[j % len(self.kernel_scales)] if self.build.block else ()
        return (
            self.maps_a[j % len(self.maps_a)],
            self.maps_b[j % len(self.maps_b)],
            self.maps_d[j],
            np.int32(m),
            np.int32(cols),
            np.int32(k),
            np.float32(self.scale(j)),
            np.int32(self.every),
            *extra,
        )

    def out(self, j: int) -> Any:
        return self.d[j]

    def launch_every(self, j: int, every: int) -> None:
        """Enqueue the kernel on set j with another promotion interval (a promoting build's
        intervals timed side by side on the same buffers)."""
        args = list(self.args(j))
        args[7] = np.int32(check_every(every, self.build))  # promoteEvery
        self.enqueue(tuple(args))

    def device_scales(self, j: int) -> Any:
        """Set j's [sA, sB] as a float32 array on the device (the cuBLASLt peer's scale pointers)."""
        key = j % len(self.qa)
        if key not in self._scales:
            self._scales[key] = device_scales(self.qa[key].scale, self.qb[key].scale)
        return self._scales[key]

    def dequantized(self, j: int = 0, xp: Any = None) -> tuple[Any, Any]:
        """Set j's A and B as the kernel sees them, in float64: the e4m3 values times their scales."""
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        xp = xp or cp
        qa, qb = self.qa[j % len(self.qa)], self.qb[j % len(self.qb)]
        if self.build.block:
            if xp is cp:
                return qa.dequantized(cp), qb.dequantized(cp)
            ha, hb = (
                fp8.BlockQuantized(cp.asnumpy(q.bits), cp.asnumpy(q.scales), q.block, q.saturated)
                for q in (qa, qb)
            )
            return ha.dequantized(np), hb.dequantized(np)
        a_bits, b_bits = (q.bits if xp is cp else cp.asnumpy(q.bits) for q in (qa, qb))
        return fp8.decode(a_bits, xp) * qa.scale, fp8.decode(b_bits, xp) * qb.scale

    def want(self) -> Any:
        # float64 on the GPU: the dequantised inputs' exact product (D = s A B^T, B stored N x K).
        if self._want is None:
            a, b = self.dequantized()
            self._want = a @ b.T
        return self._want

    def check(self, got: Any, want: Any | None = None) -> Check:
        return check_relative(got, self.want() if want is None else want, self.tolerance, self.floor)

    def host_check(self) -> Check:
        """As the C++ program checks, on the host: every element up to 1024 rows; above, every
        element for NaN (the poison) and 128 whole rows plus the last (the ragged edge)."""
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        got = cp.asnumpy(self.d[0])
        a, b = self.dequantized(0, np)
        m, cols = got.shape
        if m <= 1024:
            return check_relative(got, a @ b.T, self.tolerance, self.floor)
        unwritten = np.flatnonzero(np.isnan(got))
        if unwritten.size:
            i = int(unwritten[0])
            never = Mismatch(i, i // cols, i % cols, float("nan"), float("nan"))
            return Check("relative", int(unwritten.size), got.size, None, self.tolerance, never, self.floor)
        step = m // SAMPLE_ROWS
        rows = np.append(np.array([i * step + (i * 37) % step for i in range(SAMPLE_ROWS)]), m - 1)
        sub = check_relative(got[rows], a[rows] @ b.T, self.tolerance, self.floor)
        first = sub.mismatch
        if first is not None:
            row = int(rows[first.row])
            first = Mismatch(row * cols + first.col, row, first.col, first.got, first.want, first.error)
        return Check("relative", sub.failures, got.size, sub.max_error, self.tolerance, first, self.floor)


def relative_error(got: Any, want: Any) -> float:
    """The accuracy curve's measure: ||got - want||_F / ||want||_F (numpy or CuPy arrays)."""
    xp = type(want).__module__.split(".")[0]
    if xp == "cupy":
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        g = got.astype(cp.float64)
        return float(cp.linalg.norm(g - want) / cp.linalg.norm(want))
    g = np.asarray(got, dtype=np.float64)
    return float(np.linalg.norm(g - want) / np.linalg.norm(want))


def segment_error(got: Any, want: Any, width: int = fp8.SCALE_BLOCK) -> float:
    """The worst piece of D: max over rows i and column blocks j of ||D[i, j] - R[i, j]|| / ||R[i, j]||,
    D[i, j] the ``width`` columns of block j in row i (the last block cut short; a piece whose reference
    is all zero is left out). With skewed inputs every such piece has one magnitude, so a piece that one
    per-tensor scale flushed to zero shows as an error near 1, however small its share of ||R||."""
    xp = np
    if type(want).__module__.split(".")[0] == "cupy":
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        xp = cp
    g = xp.asarray(got).astype(xp.float64)
    rows, cols = want.shape
    blocks = -(-cols // width)
    pad = blocks * width - cols
    diff = xp.pad(g - want, ((0, 0), (0, pad))).reshape(rows, blocks, width)
    ref = xp.pad(want, ((0, 0), (0, pad))).reshape(rows, blocks, width)
    num, den = xp.linalg.norm(diff, axis=2), xp.linalg.norm(ref, axis=2)
    keep = den > 0
    if not bool(keep.any()):
        raise CourseError("the reference is all zero: no piece of D has a relative error")
    return float(xp.max(num[keep] / den[keep]))


class Fp8GemmHost(LessonHost):
    """The FP8 GEMM's host: ``page.run(shape=(M, N, K), promote_every=P)``."""

    run_options = ("shape", "promote_every")

    def __init__(self, lesson: Lesson):
        self.lesson = lesson
        self.last: tuple[Shape, int, bool] = (RUN_SHAPE, 0, False)  # latest (shape, interval, block scales)

    def workload(
        self, compiled: Compiled, n: int, sets: int = 1, purpose: str = "lesson", **options: Any
    ) -> Fp8GemmWorkload:
        shape = options.get("shape")
        if shape is not None:
            try:
                m, cols, k = (int(v) for v in shape)
            except (TypeError, ValueError):
                raise CourseError(f"shape must be three integers (M, N, K) (got {shape!r})") from None
            shape = (m, cols, k)
        elif purpose == "lesson":
            shape = RUN_SHAPE
        every = options.get("promote_every")
        work = Fp8GemmWorkload(
            self.lesson, compiled, n, sets, purpose, shape, every, options.get("dist", "normal")
        )
        self.last = (work.shape, work.every, bool(work.build.block))
        return work

    def pass_line(self, n: int, check: Check) -> str:
        (m, cols, k), every, block = self.last
        which = "every element" if m <= 1024 else f"{SAMPLE_ROWS} rows and the last, every element for NaN"
        label = "gemm8 block scales" if block else "gemm8"
        return (
            f"{label} {m}x{cols}x{k} promote every {every}: PASS, {which}, max rel error "
            f"{check.max_error:g} (tolerance {check.tolerance:g})"
        )

    def fail_line(self, check: Check) -> str:
        m = check.mismatch
        if m is None:
            return "no mismatch"
        if m.error is None:
            return (
                f"FAIL at D[{m.row}][{m.col}]: never written (still the NaN the run filled D with); "
                f"{check.failures} of {check.total} elements unwritten"
            )
        return f"FAIL at D[{m.row}][{m.col}]: gpu {m.got:f}, ref {m.want:f}, rel {m.error:g} > {check.tolerance:g}"
