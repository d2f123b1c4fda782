"""Day 86's benchmark: the issue's shape table against cuBLAS, each shape with the chooser's pick.

The engine times the squares (``SQUARES``: one build per size, the chooser's, through
``BenchSpec.build``); ``finish`` times the other shapes of the table the same way (checked
against float64 first, then kernel and cuBLAS in interleaved batches, inputs rotated past L2)
and records, for every shape, the chooser's pick, both rates and the ratio as reasons. The page
renders the table from a recording with ``shape_table``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ...bench import engine
from ...bench.arith import gemm_bytes, gemm_flops, paired_ratios, rotation_buffers
from ...bench.result import BenchResult, Reason
from ...bench.spec import KERNEL, BenchSpec, Context, Extras
from ...kernel.host import host_of, timing_floor_note
from .._ladder import Shape, cublas_peer
from . import LESSON, chooser

if TYPE_CHECKING:
    from collections.abc import Callable

PAGE_SIZES = (1024, 2048)  # the page's button: two squares, a minute or so


def shape_name(shape: Shape) -> str:
    return "x".join(map(str, shape))


def _titles(shape: Shape) -> dict[str, str]:
    s = shape_name(shape)
    return {
        "pick": f"{s}: the chooser's pick",
        "ratio": f"{s} against cuBLAS",
        "kernel": f"{s}: kernel rate",
        "peer": f"{s}: cuBLAS rate",
    }


def _tflops(shape: Shape, ms: float) -> float:
    m, n, k = shape
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def _shape_reasons(
    shape: Shape,
    choice: chooser.Choice,
    kernel: float,
    peer: float,
    ratio: float,
    low: float | None,
    high: float | None,
    how: str,
) -> list[Reason]:
    t = _titles(shape)
    return [
        Reason(t["pick"], float(choice.split), "split", "derived", choice.describe()),
        Reason(t["kernel"], kernel, "TFLOP/s", "measured", f"{choice.config} split {choice.split}; {how}"),
        Reason(t["peer"], peer, "TFLOP/s", "measured", f"cuBLAS gemmEx on the same inputs; {how}"),
        Reason(
            t["ratio"],
            ratio,
            "x",
            "measured",
            f"kernel {kernel:,.0f} TFLOP/s ({choice.describe()}), cuBLAS {peer:,.0f} TFLOP/s; {how}",
            low,
            high,
        ),
    ]


def _finish(ctx: Context) -> Extras:
    reasons: list[Reason] = []
    peer = ctx.peers[0]
    for row in ctx.rows:
        shape = (row.size, row.size, row.size)
        choice = chooser.choose(*shape, ctx.sms)
        p = row.peer(peer.name)
        if p.ratio is not None:
            reasons += _shape_reasons(
                shape,
                choice,
                row.kernel.rate,
                p.rate,
                p.ratio,
                None,
                None,
                "the engine's square row, medians of interleaved batches",
            )
    if not all(s in ctx.sizes for s in chooser.SQUARES):  # a partial run (the page's button): squares only
        return Extras(reasons=tuple(reasons))
    host = host_of(ctx.lesson)
    for shape in chooser.SHAPES:
        if len(set(shape)) == 1:
            continue
        m, n, k = shape
        choice = chooser.choose(m, n, k, ctx.sms)
        size = max(shape)
        compiled = ctx.compile(size, defines=chooser.defines(choice))
        sets = rotation_buffers((m * k + n * k + m * n) * 2, ctx.l2_bytes)
        work = host.workload(compiled, size, sets, "bench", shape=shape, split=choice.split)
        calls: dict[str, tuple[Callable[[int], None], Any]] = {
            KERNEL: (work.launch, None),
            peer.name: (partial(peer.call, work), None),
        }
        ctx.verify(size, work, calls)
        samples = ctx.timer.samples_together(
            {key: [partial(call, j) for j in range(work.sets)] for key, (call, _) in calls.items()}
        )
        r, lo, hi = paired_ratios(samples[KERNEL].per_call_ms, samples[peer.name].per_call_ms)
        kernel = _tflops(shape, samples[KERNEL].timing().median_ms)
        theirs = _tflops(shape, samples[peer.name].timing().median_ms)
        reasons += _shape_reasons(
            shape,
            choice,
            kernel,
            theirs,
            r,
            lo,
            hi,
            f"checked against float64 first; median of {len(samples[KERNEL].per_call_ms)} interleaved repeats",
        )
        ctx.progress(
            f"{ctx.lesson.id} {shape_name(shape)} ({choice.config} split {choice.split}): "
            f"{kernel:,.0f} TFLOP/s, cuBLAS {theirs:,.0f}, {r:.2f}x ({lo:.2f}-{hi:.2f})"
        )
        del work, calls
        engine.release()
    return Extras(reasons=tuple(reasons))


@dataclass(frozen=True)
class ShapeRow:
    """One shape of a recording: the chooser's pick and both rates."""

    shape: Shape
    pick: str
    kernel: float
    peer: float
    ratio: float
    low: float | None
    high: float | None


def shape_table(result: BenchResult) -> list[ShapeRow]:
    """The recorded shapes, in the table's order (shapes the recording lacks are left out)."""
    by_title = {r.title: r for r in result.reasons}
    rows = []
    for shape in chooser.SHAPES:
        t = _titles(shape)
        if not all(title in by_title for title in t.values()):
            continue
        ratio = by_title[t["ratio"]]
        rows.append(
            ShapeRow(
                shape,
                by_title[t["pick"]].detail,
                float(by_title[t["kernel"]].value or 0.0),
                float(by_title[t["peer"]].value or 0.0),
                float(ratio.value or 0.0),
                ratio.low,
                ratio.high,
            )
        )
    return rows


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _findings(result: BenchResult) -> list[str]:
    rows = shape_table(result)
    out = [
        f"{shape_name(r.shape)}: {r.kernel:,.0f} TFLOP/s, {r.ratio:.2f}x cuBLAS ({r.peer:,.0f} TFLOP/s); "
        f"the chooser picked {r.pick.split(':')[0]}."
        for r in rows
    ]
    if len(rows) == len(chooser.SHAPES):
        ratios = [r.ratio for r in rows]
        worst = min(rows, key=lambda r: r.ratio)
        out.append(
            f"Over the {len(rows)} shapes: geometric mean {geometric_mean(ratios):.2f}x cuBLAS; lowest "
            f"{worst.ratio:.2f}x at {shape_name(worst.shape)}; {sum(x >= 0.85 for x in ratios)} of "
            f"{len(rows)} at 0.85x or better."
        )
    return out


SPEC = BenchSpec(
    sizes=chooser.SQUARES,
    page_sizes=PAGE_SIZES,
    max_size=16384,
    unit="TFLOP/s",
    work=gemm_flops,
    set_bytes=lambda n: gemm_bytes(n, 2, 2),
    kernel_label=f"{LESSON.kernel_name} (FP16 in, FP32 accumulate, FP16 out; build and split by the chooser)",
    peers=cublas_peer,
    finish=_finish,
    findings=_findings,
    notes=(
        "rates count 2*M*N*K FLOPs; inputs drawn from N(0, 1) and rounded to FP16; B stored N x K",
        timing_floor_note(chooser.SQUARES) + " (kRelTolerance)",
        "cuBLAS: cublasGemmEx, FP16 A and B, FP16 D, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP, "
        "B as the transposed operand (TN)",
        "each shape runs the build and split the chooser picks for this GPU's SM count; the squares are "
        "the engine's rows, the other shapes are timed after them the same way (interleaved with cuBLAS)",
        "one peer: cuBLAS gemmEx; cuBLASLt through nvmath-python is not part of this benchmark",
    ),
    size_step=8,
    build=lambda n, sms: chooser.defines(chooser.choose(n, n, n, sms)),
)
