"""Day 78's benchmark: the teaching GEMM beside cuBLAS, and why it is far behind.

Peer: cuBLAS ``gemmEx`` on the same FP16 inputs with FP32 accumulation and
an FP32 result, in the same run, on normally distributed inputs (the
tensor cores' power, and so their clock, depend on the bits: METHOD.md).

"Why it is far from cuBLAS": variants of the kernel built at run time from
the same source by text substitution (producer loads only, wgmma only,
neither), timed at the largest size, and the cuBLAS peak of the same run.
Every reason says whether its number was measured, derived from measured
numbers, counted from the code, queried from the driver, or not measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...bench.arith import gb_per_s, gemm_bytes, gemm_flops, tflop_per_s, tile_intensity, waves
from ...bench.engine import occupancy, release
from ...bench.peers import Cublas
from ...bench.result import BenchResult, Reason
from ...bench.spec import BenchSpec, Context, Extras, Peer
from ...kernel.host import timing_floor_note
from ...kernel.variants import Substitution, variant_source
from . import LESSON

TILE = 64  # the kernel's 64x64 CTA tile (kTileM = kTileN = kTileK)
PEAK_SIZE = 8192  # the size at which cuBLAS's peak is measured in the same run
CUBLAS_PEAK = f"cuBLAS peak of the run (N={PEAK_SIZE})"


def producer_bytes(n: int, tile: int = TILE) -> int:
    """Bytes the Day 78 producer requests: every CTA reads its A strip and B strip once per K-tile.

    (N/64)^2 CTAs x (N/64) K-tiles x (64x64 A + 64x64 B) FP16 = N^3/16 bytes,
    N/64 times the N*N*4 bytes of A and B: the 64x64 tile's re-reads, counted.
    """
    tiles = n // tile
    return tiles**3 * (2 * tile * tile * 2)


def ctas(n: int, tile: int = TILE) -> int:
    """CTAs in the (N/64, N/64) grid the kernel launches."""
    return (n // tile) ** 2


_NO_WGMMA = Substitution(
    "wgmmaM64n64k16(acc, tileDesc(smA[s]) + off, tileDesc(smB[s]) + off);",
    # The descriptors still escape into an asm with a memory clobber, so
    # the compiler must keep the producer's shared-memory stores (and the
    # global loads that feed them) exactly as in the real kernel.
    'asm volatile("" :: "l"(tileDesc(smA[s]) + off), "l"(tileDesc(smB[s]) + off) : "memory");',
    "the four wgmma.mma_async issues removed; fence, commit and wait_group 0 stay (with nothing to wait for)",
)
_NO_LOOP_LOADS = Substitution(
    "loadStage(s ^ 1, kt + 1);",
    "/* bench variant: no load in the loop */",
    "the producer's in-loop global->shared copy removed",
)
_BOTH_STAGES_ONCE = Substitution(
    "loadStage(0, 0);",
    "loadStage(0, 0); loadStage(1, 0);  /* bench variant: both stages filled once, real data */",
    "the prologue fills both stages once, so wgmma reads real data",
)

VARIANTS: dict[str, tuple[Substitution, ...]] = {
    "loads only": (_NO_WGMMA,),
    "wgmma only": (_NO_LOOP_LOADS, _BOTH_STAGES_ONCE),
    "neither": (_NO_WGMMA, _NO_LOOP_LOADS, _BOTH_STAGES_ONCE),
}


@dataclass(frozen=True)
class GemmBreakdown:
    """What the Day 78 run measured at one size, for ``gemm_reasons``."""

    size: int
    kernel_ms: float
    loads_ms: float  # variant "loads only"
    wgmma_ms: float  # variant "wgmma only"
    neither_ms: float  # variant "neither"
    cublas_ms: float  # cuBLAS at the same size
    peak_tflops: float | None  # cuBLAS at peak_size, same run
    peak_size: int | None
    sms: int
    ctas_per_sm: int
    ctas_per_sm_kind: str  # "queried" (driver occupancy API) or "estimate"
    regs: int | None
    local_bytes: int | None


def gemm_reasons(b: GemmBreakdown) -> tuple[Reason, ...]:
    n = b.size
    flops = gemm_flops(n)
    k_rate = tflop_per_s(flops, b.kernel_ms)
    reasons: list[Reason] = []
    if b.peak_tflops:
        reasons.append(
            Reason(
                "Fraction of the measured cuBLAS peak",
                100.0 * k_rate / b.peak_tflops,
                "%",
                "measured",
                f"the kernel does {k_rate:.1f} TFLOP/s at N={n}; cuBLAS (FP16 inputs, FP32 accumulate and "
                f"output) reached {b.peak_tflops:.0f} TFLOP/s at N={b.peak_size} in the same run, and "
                f"{tflop_per_s(flops, b.cublas_ms):.0f} TFLOP/s at N={n}.",
            )
        )
    req = producer_bytes(n)
    reasons.append(
        Reason(
            "The producer's global->shared copy alone",
            b.loads_ms,
            "ms",
            "measured",
            f"variant with the wgmma issues removed: {100 * b.loads_ms / b.kernel_ms:.0f}% of the kernel's "
            f"{b.kernel_ms:.3g} ms at N={n}. With 64x64 tiles every CTA re-reads its strips of A and B, "
            f"{req / 1e9:.2f} GB requested (N^3/16, counted) against {gemm_bytes(n) / 1e9:.2f} GB of data: "
            f"{gb_per_s(req, b.loads_ms):.0f} GB/s effective. Loads are 2 bytes per thread, and B is read "
            "down its columns (neighbouring threads 2N bytes apart), so each warp's B load touches "
            "32 sectors.",
        )
    )
    reasons.append(
        Reason(
            "wgmma alone (the producer's loads removed)",
            tflop_per_s(flops, b.wgmma_ms),
            "TFLOP/s",
            "measured",
            f"variant that fills both stages once and then only computes: {b.wgmma_ms:.3g} ms at N={n}. Per "
            "64-deep K-tile one warpgroup issues four m64n64k16, commits, and waits for all of them "
            "(wait_group 0) before the CTA-wide barrier: the tensor cores drain every tile.",
        )
    )
    reasons.append(
        Reason(
            "Barriers, epilogue and launch (neither loads nor wgmma)",
            b.neither_ms,
            "ms",
            "measured",
            f"variant with both removed: the K loop's __syncthreads, the prologue and the FP32 stores, "
            f"{100 * b.neither_ms / b.kernel_ms:.0f}% of the kernel's time.",
        )
    )
    serial = b.loads_ms + b.wgmma_ms - b.neither_ms
    overlap = max(b.loads_ms, b.wgmma_ms)
    reasons.append(
        Reason(
            "How much the producer and the consumer overlap",
            b.kernel_ms,
            "ms",
            "derived",
            f"kernel {b.kernel_ms:.3g} ms; fully serial would be about loads + wgmma - neither = "
            f"{serial:.3g} ms, "
            f"perfect overlap max(loads, wgmma) = {overlap:.3g} ms. The slower of the two sets the pace.",
        )
    )
    grid = ctas(n, TILE)
    spill = "" if not b.local_bytes else f", {b.local_bytes} bytes of local memory per thread (spills)"
    regs = "" if b.regs is None else f"; {b.regs} registers per thread{spill}"
    reasons.append(
        Reason(
            "64x64 tiles: CTAs against SMs",
            float(grid),
            "CTAs",
            "counted",
            f"{grid} CTAs of 256 threads on {b.sms} SMs with {b.ctas_per_sm} resident per SM "
            f"({b.ctas_per_sm_kind}{regs}): {waves(grid, b.sms, b.ctas_per_sm):.2f} waves. At N=256 the "
            f"grid is 16 CTAs, so {100 * min(16, b.sms) / b.sms:.0f}% of the SMs have work. An M x N tile "
            f"does M*N/(M+N) FLOPs per byte it loads: {tile_intensity(64, 64):.0f} for 64x64, "
            f"{tile_intensity(128, 128):.0f} for 128x128, {tile_intensity(128, 256):.0f} for 128x256.",
        )
    )
    reasons.append(
        Reason(
            "wait_group 0 every tile, against a deeper pipeline",
            None,
            "",
            "not measured",
            "measuring it needs a kernel with more stages that waits with wait_group 1 and keeps one group "
            "in flight; that is a new kernel, not a substitution, so this run does not build it.",
        )
    )
    return tuple(reasons)


def _cublas(work: Any, j: int, gemm: Cublas) -> None:
    gemm(work.a[j], work.b[j], work.d[j])


def peers() -> tuple[Peer, ...]:
    gemm = Cublas(out="float32", b_layout="kn")
    return (Peer(gemm.name, lambda work, j: _cublas(work, j, gemm)),)


def finish(ctx: Context) -> Extras:
    """The variants at the largest size, the cuBLAS peak at PEAK_SIZE, and the reasons."""
    n = ctx.sizes[-1]
    row = ctx.rows[-1]
    source = LESSON.kernel_path.read_text(encoding="utf-8")
    work = ctx.workload(n, kernel=False)
    variant_ms: dict[str, float] = {}
    compile_s = 0.0
    for name in VARIANTS:
        compiled = ctx.compile(n, source=variant_source(source, VARIANTS, name, LESSON.kernel_path))
        compile_s += compiled.seconds
        work.compiled = compiled
        variant_ms[name] = ctx.time_calls(work, work.launch)
        ctx.progress(
            f"{LESSON.id} N={n} variant {name!r}: {variant_ms[name]:.4g} ms (compile {compiled.seconds:.2f} s)"
        )
    kernel = ctx.compile(n)
    per_sm, kind, regs, local = occupancy(kernel, work.config.block[0])
    del work
    release()
    peak: float | None = None
    ceilings: dict[str, float] = {}
    gemm = ctx.peers[0]
    if PEAK_SIZE:
        big = ctx.workload(PEAK_SIZE, kernel=False)
        ctx.verify(PEAK_SIZE, big, {gemm.name: (lambda j: gemm.call(big, j), None)})
        peak = tflop_per_s(gemm_flops(PEAK_SIZE), ctx.time_calls(big, lambda j: gemm.call(big, j)))
        ceilings[CUBLAS_PEAK] = peak
        ctx.progress(f"{LESSON.id} cuBLAS peak at N={PEAK_SIZE}: {peak:.0f} TFLOP/s")
        del big
        release()
    breakdown = GemmBreakdown(
        n,
        row.kernel.timing.median_ms,
        variant_ms["loads only"],
        variant_ms["wgmma only"],
        variant_ms["neither"],
        row.peer(gemm.name).timing.median_ms,
        peak,
        PEAK_SIZE if peak else None,
        ctx.sms,
        per_sm,
        kind,
        regs,
        local,
    )
    return Extras(
        reasons=gemm_reasons(breakdown),
        ceilings=ceilings,
        notes=(
            f"variants compiled at N={n} in {compile_s:.2f} s in all; their results are wrong by design and are "
            "not checked",
        ),
    )


def findings(result: BenchResult) -> list[str]:
    """The sentences the page quotes, from the recorded numbers."""
    big = result.rows[-1]
    blas = big.peer(result.peer_names[0])
    out = [
        f"At N = {big.size} the kernel runs at {big.kernel.rate:,.1f} TFLOP/s and cuBLAS at {blas.rate:,.0f} "
        f"TFLOP/s on the same inputs: {blas.ratio:.3f}x.",
    ]
    for name, value in result.ceilings.items():
        if name.startswith("cuBLAS peak"):
            out.append(f"{name}: {value:,.0f} TFLOP/s.")
    return out


SIZES = (256, 512, 1024, 2048, 4096)

SPEC = BenchSpec(
    sizes=SIZES,
    page_sizes=SIZES,
    max_size=32768,  # the kernel indexes with int: N*N must stay below 2^31
    unit="TFLOP/s",
    work=gemm_flops,
    set_bytes=lambda n: gemm_bytes(n, 2, 4),
    kernel_label="wgmmaGemm (64x64 tiles, FP16 in, FP32 out)",
    peers=peers,
    finish=finish,
    findings=findings,
    notes=(
        "rates count 2*N^3 FLOPs; inputs drawn from N(0, 1) and rounded to FP16",
        timing_floor_note(SIZES),
        "cuBLAS: cupy.cuda.cublas.gemmEx, FP16 A and B, FP32 D, CUBLAS_COMPUTE_32F, "
        "CUBLAS_GEMM_DEFAULT_TENSOR_OP, computed as D^T = B^T A^T (column-major)",
    ),
)
