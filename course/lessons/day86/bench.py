"""Day 86's benchmark: the issue's shape table against cuBLAS, each shape with the chooser's pick.

Two library peers on the same inputs in the same run: cuBLAS gemmEx, and cuBLASLt through
nvmath-python with its heuristic plan and with its autotuned plan (``cublas_and_lt_peers``;
where nvmath-python cannot run, the result's notes say so and gemmEx runs alone). The table is
``chooser.SHAPES`` (issue 39's: squares 256 to 8192, decode steps, middle-sized and ragged shapes,
the large rows). The engine times the first table's squares (``chooser.ENGINE_SQUARES``: one build
per size, the chooser's, through ``BenchSpec.build``); ``finish`` times every other shape the same
way, the other squares too (checked
against float64 first, then kernel and peers in interleaved batches, inputs rotated past L2),
every shape both launched one by one and in CUDA graphs, and records, for every shape, the
chooser's pick, every rate and the kernel's ratio to each peer as reasons; its last progress line
(``summary_line``) gives the geometric means and how many shapes reach ``TARGET`` in graphs. The
page renders the table from a recording with ``shape_table``."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ...bench import engine
from ...bench.arith import gemm_bytes, gemm_flops, paired_ratios, rotation_buffers
from ...bench.peers import cublas_name, cublaslt_name
from ...bench.result import BenchResult, Reason
from ...bench.spec import KERNEL, BenchSpec, Context, Extras
from ...bench.timing import GRAPHS, Samples, in_graphs
from ...kernel.host import host_of, timing_floor_note
from .._ladder import Shape, cublas_and_lt_peers
from . import LESSON, chooser
from .variants import dependent_gain, deterministic_cost, deterministic_title, shape_name

if TYPE_CHECKING:
    from collections.abc import Callable

PAGE_SIZES = (1024, 2048)  # the page's button: two squares, a minute or so


def _titles(shape: Shape) -> dict[str, str]:
    s = shape_name(shape)
    return {
        "pick": f"{s}: the chooser's pick",
        "ratio": f"{s} against cuBLAS",
        "kernel": f"{s}: kernel rate",
        "peer": f"{s}: cuBLAS rate",
    }


# The second peer, cuBLASLt through nvmath-python, with each of its two plans: recorded beside
# gemmEx (whose titles above keep their names), in its own reasons.
LT_PEERS = (cublaslt_name(False), cublaslt_name(True))
GEMMEX = cublas_name("float16", "nk")  # the first peer (``cublas_and_lt_peers``)


def _lt_titles(shape: Shape, name: str) -> tuple[str, str]:
    s = shape_name(shape)
    return f"{s}: {name} rate", f"{s} against {name}"


def _lt_reasons(
    shape: Shape,
    name: str,
    kernel: float,
    rate: float,
    ratio: float,
    low: float | None,
    high: float | None,
    how: str,
) -> list[Reason]:
    rate_title, ratio_title = _lt_titles(shape, name)
    return [
        Reason(rate_title, rate, "TFLOP/s", "measured", f"{name} on the same inputs; {how}"),
        Reason(
            ratio_title,
            ratio,
            "x",
            "measured",
            f"kernel {kernel:,.0f} TFLOP/s, {name} {rate:,.0f} TFLOP/s; {how}",
            low,
            high,
        ),
    ]


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


def graph_title(shape: Shape, name: str) -> str:
    """The title of ``name``'s rate on ``shape`` timed inside CUDA graphs (``name``: "kernel" or a peer)."""
    return f"{shape_name(shape)}: {name} rate{GRAPHS}"


def graph_ratio_title(shape: Shape, name: str) -> str:
    return f"{shape_name(shape)} against {name}{GRAPHS}"


def _graph_reasons(shape: Shape, samples: dict[str, Samples], names: list[str], how: str) -> list[Reason]:
    """The kernel and each peer timed inside CUDA graphs (``Timer.samples_together(graphs=True)``):
    rates, and the kernel's ratio to each peer, repeat by repeat. A call that could not be captured
    has no graph samples and no reasons (the result's notes say why)."""
    mine = samples.get(in_graphs(KERNEL))
    if mine is None:
        return []
    how = f"each batch of launches captured in a CUDA graph and replayed, interleaved with the launches one by one; {how}"
    kernel = _tflops(shape, mine.timing().median_ms)
    out = [Reason(graph_title(shape, KERNEL), kernel, "TFLOP/s", "measured", how)]
    for name in names:
        theirs = samples.get(in_graphs(name))
        if theirs is None:
            continue
        rate = _tflops(shape, theirs.timing().median_ms)
        r, lo, hi = paired_ratios(mine.per_call_ms, theirs.per_call_ms)
        out.append(Reason(graph_title(shape, name), rate, "TFLOP/s", "measured", f"{name}; {how}"))
        out.append(
            Reason(
                graph_ratio_title(shape, name),
                r,
                "x",
                "measured",
                f"kernel {kernel:,.0f} TFLOP/s, {name} {rate:,.0f} TFLOP/s; {how}",
                lo,
                hi,
            )
        )
    return out


def _finish(ctx: Context) -> Extras:
    reasons: list[Reason] = []
    peer, *others = ctx.peers  # gemmEx first (cublas_and_lt_peers), then the cuBLASLt plans that run here
    names = [p.name for p in ctx.peers]
    square = "the engine's square row, medians of interleaved batches"
    for row in ctx.rows:
        shape = (row.size, row.size, row.size)
        choice = chooser.choose(*shape, ctx.sms)
        p = row.peer(peer.name)
        if p.ratio is not None:
            reasons += _shape_reasons(shape, choice, row.kernel.rate, p.rate, p.ratio, None, None, square)
        for other in others:
            q = row.peer(other.name)
            if q.ratio is not None:
                reasons += _lt_reasons(
                    shape, other.name, row.kernel.rate, q.rate, q.ratio, None, None, square
                )
        reasons += _graph_reasons(shape, ctx.graph_samples.get(row.size, {}), names, square)
    if not all(s in ctx.sizes for s in chooser.ENGINE_SQUARES):  # a partial run (the page's button)
        return Extras(reasons=tuple(reasons))
    host = host_of(ctx.lesson)
    start = time.monotonic()
    for shape in chooser.SHAPES:
        if len(set(shape)) == 1 and shape[0] in ctx.sizes:  # an engine row, timed above
            continue
        began = time.monotonic()
        m, n, k = shape
        choice = chooser.choose(m, n, k, ctx.sms)
        size = max(shape)
        compiled = ctx.compile(size, defines=chooser.defines(choice))
        sets = rotation_buffers((m * k + n * k + m * n) * 2, ctx.l2_bytes)
        work = host.workload(compiled, size, sets, "bench", shape=shape, split=choice.split)
        calls: dict[str, tuple[Callable[[int], None], Any]] = {KERNEL: (work.launch, None)}
        for each in ctx.peers:
            calls[each.name] = (partial(each.call, work), None)
        ctx.verify(size, work, calls)
        samples = ctx.timer.samples_together(
            {key: [partial(call, j) for j in range(work.sets)] for key, (call, _) in calls.items()},
            graphs=True,
        )
        how = (
            f"checked against float64 first; median of {len(samples[KERNEL].per_call_ms)} interleaved repeats"
        )
        reasons += _graph_reasons(shape, samples, names, how)
        kernel = _tflops(shape, samples[KERNEL].timing().median_ms)
        said = []
        for each in ctx.peers:
            r, lo, hi = paired_ratios(samples[KERNEL].per_call_ms, samples[each.name].per_call_ms)
            theirs = _tflops(shape, samples[each.name].timing().median_ms)
            if each is peer:
                reasons += _shape_reasons(shape, choice, kernel, theirs, r, lo, hi, how)
            else:
                reasons += _lt_reasons(shape, each.name, kernel, theirs, r, lo, hi, how)
            said.append(f"{each.name} {theirs:,.0f}, {r:.2f}x ({lo:.2f}-{hi:.2f})")
        ctx.progress(
            f"{ctx.lesson.id} {shape_name(shape)} ({choice.config} split {choice.split}): "
            f"{kernel:,.0f} TFLOP/s; " + "; ".join(said) + f" [{time.monotonic() - began:.1f} s]"
        )
        if choice.split > 1:
            reasons += deterministic_cost(ctx, work, shape, choice)
        del work, calls
        engine.release()
    reasons += _last_wave(ctx, host)
    reasons += dependent_gain(ctx, host)
    ctx.progress(
        f"{ctx.lesson.id}: {summary_line(_shape_rows(reasons))} ({time.monotonic() - start:.0f} s after the squares)"
    )
    return Extras(reasons=tuple(reasons))


TARGET = 0.90  # issue 39: every shape at 0.90x cuBLAS gemmEx or better, in CUDA graphs


def summary_line(rows: list[ShapeRow]) -> str:
    """The table in one line: how many shapes, the geometric mean of the kernel's ratio to gemmEx in
    CUDA graphs (and launched one by one), how many reach TARGET in graphs, and the lowest."""
    if not rows:
        return "no shape of the table measured"
    graphed = [r for r in rows if GEMMEX in r.graphs]
    mean = geometric_mean([r.ratio for r in rows])
    said = f"{len(rows)} shapes; launched one by one, geometric mean {mean:.2f}x cuBLAS gemmEx"
    if not graphed:
        return said + "; none timed in CUDA graphs"
    ratios = [r.graphs[GEMMEX].ratio for r in graphed]
    worst = min(graphed, key=lambda r: r.graphs[GEMMEX].ratio)
    return (
        f"{said}; in CUDA graphs ({len(graphed)} shapes) geometric mean {geometric_mean(ratios):.2f}x, "
        f"{sum(x >= TARGET for x in ratios)} of {len(graphed)} at {TARGET:.2f}x or better, the lowest "
        f"{shape_name(worst.shape)} at {worst.graphs[GEMMEX].ratio:.2f}x"
    )


WAVE_K = 4096  # K of the last-partial-wave problems: long enough that one unit is mostly its K loop


def wave_shapes(bn: int, cluster: int, sms: int) -> tuple[Shape, Shape]:
    """Two problems for one build, split 1: one cluster-tile row and as many tile columns as the
    GPU has cluster slots (exactly one full wave), then one column more (one unit in a second
    wave): 1/slots more work."""
    tile_m, _, _ = chooser.kernel_shape()
    slots = sms // cluster
    return (tile_m * cluster, slots * bn, WAVE_K), (tile_m * cluster, (slots + 1) * bn, WAVE_K)


def wave_title(bn: int, cluster: int) -> str:
    return f"the last partial wave, 128x{bn} c{cluster}"


def _last_wave(ctx: Context, host: Any) -> list[Reason]:
    """Per build: the time of one full wave of units against one unit more (checked, then timed in
    interleaved batches): what the model's whole-wave rounding says, measured."""
    reasons = []
    for bn, cluster in chooser.CONFIGS:
        full, plus = wave_shapes(bn, cluster, ctx.sms)
        compiled = ctx.compile(max(plus), defines={"GEMM_BN": bn, "GEMM_CLUSTER": cluster})
        works = {}
        for name, shape in (("full", full), ("plus", plus)):
            m, n, k = shape
            sets = rotation_buffers((m * k + n * k + m * n) * 2, ctx.l2_bytes)
            works[name] = host.workload(compiled, max(shape), sets, "bench", shape=shape, split=1)
            ctx.verify(max(shape), works[name], {KERNEL: (works[name].launch, None)})
        # Both launched plain: a full wave is one round and would be launched dependent
        # (host.dependent_launch), one unit more would not, and the overlap would favour the first.
        samples = ctx.timer.samples_together(
            {name: [partial(w.launch, j, None, False) for j in range(w.sets)] for name, w in works.items()}
        )
        # Recorded as the full wave's time over the one-more-unit time, repeat by repeat (a ratio
        # of rates, as every ratio the course records); ``wave_table`` reads it back as time.
        r, lo, hi = paired_ratios(samples["plus"].per_call_ms, samples["full"].per_call_ms)
        t_full = samples["full"].timing().median_ms * 1e3
        t_plus = samples["plus"].timing().median_ms * 1e3
        slots = ctx.sms // cluster
        title = wave_title(bn, cluster)
        how = f"checked first, median of {len(samples['full'].per_call_ms)} interleaved repeats"
        reasons.append(
            Reason(
                f"{title}: one full wave",
                t_full,
                "us",
                "measured",
                f"{shape_name(full)}, {slots} units; {how}",
            )
        )
        reasons.append(
            Reason(
                f"{title}: one unit more",
                t_plus,
                "us",
                "measured",
                f"{shape_name(plus)}, {slots + 1} units; {how}",
            )
        )
        reasons.append(
            Reason(
                title,
                r,
                "x",
                "measured",
                f"{shape_name(full)}: {slots} units, one full wave on {slots} clusters, {t_full:.1f} us; "
                f"{shape_name(plus)}: {slots + 1} units, {t_plus:.1f} us: 1/{slots} more work, and the one "
                f"unit of the second wave costs {t_plus - t_full:.1f} us ({100 * (t_plus - t_full) / t_full:.0f}% "
                f"of a full wave); {how}",
                lo,
                hi,
            )
        )
        ctx.progress(
            f"{ctx.lesson.id} last partial wave, 128x{bn} c{cluster}: {slots} units {t_full:.1f} us, "
            f"{slots + 1} units {t_plus:.1f} us ({r:.2f}x)"
        )
        del works
        engine.release()
    return reasons


@dataclass(frozen=True)
class LtRate:
    """One cuBLASLt plan's rate on a shape, and the kernel's ratio to it."""

    rate: float
    ratio: float


@dataclass(frozen=True)
class ShapeRow:
    """One shape of a recording: the chooser's pick, the kernel's and gemmEx's rates, and the
    cuBLASLt plans the recording measured (by name, ``LT_PEERS``; absent where it had none)."""

    shape: Shape
    pick: str
    kernel: float
    peer: float
    ratio: float
    low: float | None
    high: float | None
    lt: dict[str, LtRate] = field(default_factory=dict)
    graphs: dict[str, LtRate] = field(
        default_factory=dict
    )  # in CUDA graphs: "kernel" (ratio 0) and each peer
    deterministic: dict[str, float] = field(default_factory=dict)  # "" / GRAPHS: its rate over the default's


def shape_table(result: BenchResult) -> list[ShapeRow]:
    """The recorded shapes, in the table's order (shapes the recording lacks are left out)."""
    return _shape_rows(result.reasons)


def _shape_rows(reasons: tuple[Reason, ...] | list[Reason]) -> list[ShapeRow]:
    by_title = {r.title: r for r in reasons}
    rows = []
    for shape in chooser.SHAPES:
        t = _titles(shape)
        if not all(title in by_title for title in t.values()):
            continue
        ratio = by_title[t["ratio"]]
        lt = {}
        for name in LT_PEERS:
            rate_title, ratio_title = _lt_titles(shape, name)
            if rate_title in by_title and ratio_title in by_title:
                lt[name] = LtRate(
                    float(by_title[rate_title].value or 0.0), float(by_title[ratio_title].value or 0.0)
                )
        graphs = {}
        for name in (KERNEL, GEMMEX, *LT_PEERS):
            rate = by_title.get(graph_title(shape, name))
            if rate is not None:
                vs = by_title.get(graph_ratio_title(shape, name))
                graphs[name] = LtRate(float(rate.value or 0.0), float(vs.value or 0.0) if vs else 0.0)
        det = {
            mode: float(by_title[deterministic_title(shape) + mode].value or 0.0)
            for mode in ("", GRAPHS)
            if deterministic_title(shape) + mode in by_title
        }
        rows.append(
            ShapeRow(
                shape,
                by_title[t["pick"]].detail,
                float(by_title[t["kernel"]].value or 0.0),
                float(by_title[t["peer"]].value or 0.0),
                float(ratio.value or 0.0),
                ratio.low,
                ratio.high,
                lt,
                graphs,
                det,
            )
        )
    return rows


@dataclass(frozen=True)
class WaveRow:
    """One build's last-partial-wave measurement: one full wave, one unit more, and how many
    times the full wave's time the one unit more takes (with its spread over the repeats)."""

    bn: int
    cluster: int
    full_us: float
    plus_us: float
    ratio: float
    low: float | None
    high: float | None


def wave_table(result: BenchResult) -> list[WaveRow]:
    """The builds whose last partial wave the recording measured, in ``chooser.CONFIGS`` order."""
    by_title = {r.title: r for r in result.reasons}
    rows = []
    for bn, cluster in chooser.CONFIGS:
        title = wave_title(bn, cluster)
        full, plus, ratio = (
            by_title.get(t) for t in (f"{title}: one full wave", f"{title}: one unit more", title)
        )
        if full is None or plus is None or ratio is None or not ratio.value:
            continue
        rows.append(
            WaveRow(
                bn,
                cluster,
                float(full.value or 0),
                float(plus.value or 0),
                1.0 / float(ratio.value),  # recorded as full over plus: read as plus over full
                None if ratio.high is None else 1.0 / ratio.high,
                None if ratio.low is None else 1.0 / ratio.low,
            )
        )
    return rows


@dataclass(frozen=True)
class DeterministicRow:
    """The deterministic build's rate over the default's on one shape, one timing mode."""

    shape: Shape
    mode: str  # "launched one by one" or "in CUDA graphs"
    ratio: float
    low: float | None
    high: float | None
    times: str  # "deterministic 72.0 us, default 71.0 us per call (+1.0 us)"


def deterministic_table(result: BenchResult) -> list[DeterministicRow]:
    """The recorded cost of the deterministic build, per shape the chooser split and per mode."""
    by_title = {r.title: r for r in result.reasons}
    rows = []
    for shape in chooser.SHAPES:
        for mode, said in (("", "launched one by one"), (GRAPHS, "in CUDA graphs")):
            r = by_title.get(deterministic_title(shape) + mode)
            if r is not None and r.value:
                rows.append(
                    DeterministicRow(shape, said, float(r.value), r.low, r.high, r.detail.split(";")[0])
                )
    return rows


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _findings(result: BenchResult) -> list[str]:
    """What the page's tables do not say: how many shapes reach issue 39's target, 0.90x cuBLAS
    gemmEx in CUDA graphs (launched one by one where the recording has no graph numbers), and the
    lowest.

    Every shape's rates and ratios are in the shape table the speed section shows (``figures.shapes``,
    its note the geometric means, the CUDA graphs' and cuBLASLt's included), the last partial wave
    and the deterministic build's cost in their own tables higher on the page: a sentence for each
    showed them twice (issue 38). A partial result (the page's button: squares only) says nothing
    here; its table says it all. A recording made before the table grew (issue 39) is read for the
    shapes it has.
    """
    rows = shape_table(result)
    if not any(len(set(r.shape)) > 1 for r in rows):
        return []
    if all(GEMMEX in r.graphs for r in rows):
        ratio = {r.shape: r.graphs[GEMMEX].ratio for r in rows}
        how = "in CUDA graphs"
    else:
        ratio = {r.shape: r.ratio for r in rows}
        how = "launched one by one (this recording has no CUDA-graph numbers)"
    worst = min(rows, key=lambda r: ratio[r.shape])
    return [
        f"{sum(x >= TARGET for x in ratio.values())} of the {len(rows)} shapes run at {TARGET:.2f}x cuBLAS gemmEx "
        f"or better {how}; the lowest is {shape_name(worst.shape)}, at {ratio[worst.shape]:.2f}x. The table "
        "below gives every shape."
    ]


SPEC = BenchSpec(
    sizes=chooser.ENGINE_SQUARES,
    page_sizes=PAGE_SIZES,
    max_size=16384,
    unit="TFLOP/s",
    work=gemm_flops,
    set_bytes=lambda n: gemm_bytes(n, 2, 2),
    kernel_label=f"{LESSON.kernel_name} (FP16 in, FP32 accumulate, FP16 out; build and split by the chooser)",
    peers=cublas_and_lt_peers,
    finish=_finish,
    findings=_findings,
    table="figures:shapes",  # the shape table, every shape once
    notes=(
        "rates count 2*M*N*K FLOPs; inputs drawn from N(0, 1) and rounded to FP16; B stored N x K",
        timing_floor_note(chooser.ENGINE_SQUARES) + " (kRelTolerance)",
        "cuBLAS: cublasGemmEx, FP16 A and B, FP16 D, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP, "
        "B as the transposed operand (TN)",
        "each shape runs the build and split the chooser picks for this GPU's SM count; the squares 512 to "
        "8192 are the engine's rows, the other shapes (the other squares too) are timed after them the same "
        "way (interleaved with cuBLAS)",
        "second peer: cuBLASLt through nvmath-python (nvmath.linalg.advanced.Matmul, D written in place "
        "as operand C with beta 0, FP32 compute), with cuBLASLt's heuristic plan and with the plan autotuned "
        "(every algorithm of the plan timed, 10 iterations, fastest first), planned once per shape; the "
        "ratios against cuBLAS are to gemmEx",
        "every shape is timed two ways, interleaved: launched one by one (each batch behind a GPU-side hold, "
        "so the host's launch rate is not timed, but the GPU's gap between launches is), and each batch "
        "captured once in a CUDA graph and replayed (CuPy stream capture), as frameworks run small GEMMs; "
        "below about 20 us a call the graph numbers are the ones that say what the kernel costs",
        "where the chooser splits K, the deterministic build (-DGEMM_DETERMINISTIC=1: the last arriver adds "
        "every partial, its own included, in split order) is checked and timed against the default build on "
        "the same buffers, both ways",
    ),
    size_step=8,
    build=lambda n, sms: chooser.defines(chooser.choose(n, n, n, sms)),
    graphs=True,
)
