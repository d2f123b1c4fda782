"""Day 87's benchmark: the FP8 kernel against cuBLASLt FP8, promotion's price, the accuracy curve.

The engine times the squares (the default build, 128 x 256 with a cluster of 2, never
promoting) against cuBLASLt's FP8 matmul through nvmath-python on the same e4m3 buffers and
scales, with its fast accumulation off (its default) and on. ``finish`` then, at 4096 and 8192,
times the promoting build (``GEMM_PROMOTE=1``) of the tile the host picks for the size
(``chooser.choose_promoting``: 128 x 128 or 128 x 192) at each interval of ``INTERVALS``, and the
other tile at P=1 (the pick checked), in the same interleaved batches as the default build and
cuBLASLt; each row's title names its tile (``promotion_title``) and ``chosen_title`` records the
pick. It measures the accuracy curve: the relative error ||D - R|| / ||R|| against K, R the float64
product of the dequantised inputs, for N(0, 1) and U(0, 1) inputs, never promoting, promoting (the
promoting build picked for 1024 x 1024), and cuBLASLt both ways. The page renders both from a
recording (``records.promotion_table``, ``records.accuracy_curve``).

The block-scaled build (``GEMM_BLOCK_SCALES=1``, 128 x 128 only: A scaled per 1 x 128, B per 128 x
128, applied at every promotion) is timed in the same batches, beside the 128 x 128 promoting build at
P=1 (``records.block_table``), and its accuracy set beside per-tensor scales on skewed inputs, rows and
blocks of very different magnitudes, against float64 of the original and of the dequantised inputs
(``records.block_accuracy``).

Builds not yet measured are timed only when ``PINGPONG_ENV`` (``COURSE_DAY87_PINGPONG``) names them,
off by default: ``1`` is the ping-pong promoting build (``chooser.PINGPONG_BUILD``), and a comma list
takes any of ``chooser.DEV_BUILDS`` (their sizes, intervals and labels: ``course.lessons.day87.dev``).
At each of ``DEV_SIZES`` the run has (``SMALL_DEV_SIZES`` for the 128 x 64 names of ``SMALL_DEV``; only
a run of every size reaches this step), each named build is checked at its intervals
(``DEV_INTERVALS``) and timed in one interleaved batch with the 128 x 128 promoting build at the
same intervals and cuBLASLt's default, its reasons titled ``dev_title`` (``pingpong_title``): a dev
measurement the page does not render.
"""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING, Any

from ...bench import engine
from ...bench.arith import gemm_flops, paired_ratios, rotation_buffers
from ...bench.lt_fp8 import LtFp8, lt_block_scales
from ...bench.result import BenchResult, Reason
from ...bench.spec import KERNEL, BenchSpec, Context, Extras, Peer
from ...errors import CourseError, EnvironmentProblem
from ...kernel.host import timing_floor
from .._fp8 import BENCH_TOLERANCE, draw_inputs, relative_error, segment_error, waves
from .._ladder import sm_count
from . import LESSON, chooser
from .chooser import BLOCK_BUILD, DEV_BUILDS, PROMOTE_BUILD, PROMOTE_TILES, SQUARE, WIDE_BUILD
from .dev import DEV_INTERVALS as OTHER_DEV_INTERVALS
from .dev import DEV_LABELS, DEV_SIZES, DEV_WHAT, PINGPONG_ENV, SMALL_DEV, SMALL_DEV_SIZES
from .host import HOST

if TYPE_CHECKING:
    from collections.abc import Callable

# The sizes the lesson's comparison with cuBLASLt is about (and the recording measured).
SIZES = (512, 1024, 2048, 4096, 8192)
PAGE_SIZES = (4096,)  # the page's button: one square, seconds
INTERVALS = (0, 1, 2, 4)  # promotion every P K-tiles of 128 (0: never), timed side by side
PROMOTE_SIZES = (4096, 8192)
TILES = tuple(PROMOTE_TILES)  # the promoting builds' tiles, 128x128 first
WIDE = TILES[-1]  # 128x192
BLOCK = "block-scaled build"
LT_BLOCK = "cuBLASLt FP8 (1x128 / 128x128 block scales)"  # LtFp8(block_scales=True).name: the like of BLOCK
# The skewed-input accuracy comparison: a ragged shape and a square.
BLOCK_SHAPES = ((1000, 1032, 528), (4096, 4096, 4096))
SCALINGS = ("per-tensor scales (P=1)", "block scales")
REFERENCES = ("original inputs", "dequantised inputs")
METRICS = ("whole D", "worst 1x128 piece")
ACCURACY_MN = 1024  # M = N of the accuracy curve
ACCURACY_KS = (256, 512, 1024, 2048, 4096, 8192, 16384)
DISTS = ("normal", "uniform")
LT = "cuBLASLt FP8"
LT_FAST = "cuBLASLt FP8 (fast accumulation)"
# The accuracy curve's contestants: (name, whether it is the promoting build, promotion interval) for the
# kernel; the promoting build is the one the host picks for the curve's size (chooser.choose_promoting).
CURVE_KERNELS = (
    ("never promoted (128x256)", False, 0),
    ("promoted every 128 (P=1)", True, 1),
    ("promoted every 256 (P=2)", True, 2),
    ("promoted every 512 (P=4)", True, 4),
)
CURVE_NAMES = tuple(name for name, _, _ in CURVE_KERNELS) + (LT, LT_FAST)
# The builds not yet measured (course.lessons.day87.dev): their names, sizes, intervals and labels.
DEV_INTERVALS = {"pingpong": INTERVALS, **OTHER_DEV_INTERVALS}


def dev_builds() -> tuple[str, ...]:
    """The names ``PINGPONG_ENV`` asks for, in its order: () when unset, empty or 0."""
    raw = os.environ.get(PINGPONG_ENV, "").strip()
    if raw in ("", "0"):
        return ()
    names = ["pingpong" if x.strip() == "1" else x.strip() for x in raw.split(",") if x.strip()]
    unknown = [x for x in names if x not in DEV_BUILDS]
    if unknown:
        raise CourseError(
            f"{PINGPONG_ENV}={raw!r} names no build {', '.join(map(repr, unknown))}: it takes 1 (the ping-pong "
            f"build) or a comma list of {', '.join(DEV_BUILDS)}"
        )
    return tuple(dict.fromkeys(names))


def pingpong_on() -> bool:
    return "pingpong" in dev_builds()


def lt_peers() -> tuple[Peer, ...]:
    """cuBLASLt FP8 on the workload's own e4m3 buffers and scales, fast accumulation off and on;
    one plan per shape (a plan is made once, outside the timed calls)."""
    plans: dict[tuple[Any, bool], LtFp8] = {}

    def call(fast: bool, work: Any, j: int) -> None:
        key = (work.shape, fast)
        plan = plans.get(key)
        if plan is None:
            m, n, k = work.shape
            plan = plans[key] = LtFp8(m, n, k, fast_accum=fast)
        s = j % len(work.qa)
        plan(work.qa[s].bits, work.qb[s].bits, work.d[j], work.device_scales(j))

    return (Peer(LT, partial(call, False)), Peer(LT_FAST, partial(call, True)))


def _interval_name(every: int) -> str:
    return (
        "promoting build, never (P=0)" if every == 0 else f"promoting build, every {128 * every} (P={every})"
    )


def promotion_title(every: int, n: int, tile: str = SQUARE) -> str:
    """A promoting build's row at N. The 128 x 128 build's title is the one it had before there was a
    second tile (older recordings hold only those); another tile names itself."""
    name = _interval_name(every)
    if tile != SQUARE:
        name = name.replace("promoting build", f"promoting build ({tile})", 1)
    return f"{name} at N={n}"


def chosen_title(n: int, tile: str) -> str:
    """The reason that says which promoting tile the host picked at N (its value: the model's ratio of
    the wider tile's speed over 128x128's)."""
    return f"promoting build at N={n}: {tile} chosen"


def tiles_title(n: int) -> str:
    """The measured ratio of the wider promoting tile over 128x128 at P=1, in the same batches."""
    return f"promoting build ({WIDE}) against {SQUARE}, P=1 at N={n}"


def accuracy_title(dist: str, k: int, name: str) -> str:
    return f"accuracy {dist} K={k}: {name}"


def dev_title(name: str, every: int, n: int) -> str:
    return f"{DEV_LABELS[name]} {_interval_name(every)} at N={n}"


def pingpong_title(every: int, n: int) -> str:
    return dev_title("pingpong", every, n)


def block_title(n: int) -> str:
    return f"{BLOCK} at N={n}"


def skew_title(shape: tuple[int, int, int], scaling: str, reference: str, metric: str) -> str:
    return f"skewed {'x'.join(map(str, shape))}: {scaling} against {reference}, {metric}"


def _ratio_reasons(ctx: Context) -> list[Reason]:
    out = []
    for row in ctx.rows:
        for peer in ctx.peers:
            p = row.peer(peer.name)
            out.append(
                Reason(
                    f"Against {peer.name} at N={row.size}",
                    p.ratio,
                    "x",
                    "measured",
                    f"kernel {row.kernel.rate:,.0f} TFLOP/s, {peer.name} {p.rate:,.0f} TFLOP/s on the same e4m3 "
                    "inputs (N(0, 1), per-tensor scales), FP16 D, timed in interleaved batches",
                )
            )
    return out


def _promotion(ctx: Context, n: int) -> list[Reason]:
    """At N: the promoting build of the tile the host picks (``chooser.choose_promoting``) at each of
    ``INTERVALS``, the other tile at P=1 (the model's pick checked), and the block-scaled build (128 x
    128), in one interleaved batch with the default build and cuBLASLt."""
    host = HOST
    chosen = chooser.choose_promoting(n, n, ctx.sms)
    other = next(t for t in TILES if t != chosen)
    sets = rotation_buffers(4 * n * n, ctx.l2_bytes)
    base = host.workload(ctx.compile(n), n, sets, "bench")
    proms = {t: host.workload(ctx.compile(n, defines=PROMOTE_TILES[t]), n, sets, "bench") for t in TILES}
    blk = host.workload(ctx.compile(n, defines=BLOCK_BUILD), n, sets, "bench")
    lt = ctx.peers[0]
    timed = [(chosen, p) for p in INTERVALS] + [(other, 1)]
    calls: dict[str, tuple[Callable[[int], None], Any]] = {
        KERNEL: (base.launch, None),
        **{promotion_title(p, n, t): (partial(proms[t].launch_every, every=p), None) for t, p in timed},
        BLOCK: (blk.launch, None),
        lt.name: (partial(lt.call, base), None),
    }
    lt_block = _lt_block_call(ctx, n, blk)
    if lt_block is not None:
        calls[LT_BLOCK] = (lt_block, None)
    # every promoting build at every interval is checked on set 0 before anything is timed
    for t, p in timed:
        w = proms[t]
        w.poison(0)
        w.launch_every(0, p)
        if not w.check(w.out(0)).passed:
            ctx.verify(n, w, {promotion_title(p, n, t): calls[promotion_title(p, n, t)]})
    ctx.verify(n, base, {KERNEL: calls[KERNEL], lt.name: calls[lt.name]})
    # against float64 of its own (block-)dequantised inputs, as cuBLASLt's block-scaled matmul is
    ctx.verify(n, blk, {key: calls[key] for key in (BLOCK, LT_BLOCK) if key in calls})
    samples = ctx.timer.samples_together(
        {key: [partial(call, j) for j in range(sets)] for key, (call, _) in calls.items()}
    )
    rounds = {t: waves(n, n, w.build, ctx.sms) for t, w in proms.items()}
    predicted = chooser.predicted_ratio(n, ctx.sms, WIDE)
    why = (
        f"{chosen} chosen (chooser.choose_promoting): {rounds[SQUARE]:.2f} rounds of {SQUARE} units against "
        f"{rounds[WIDE]:.2f} of {WIDE} on {ctx.sms} SMs, the model's {WIDE} at {predicted:.3f}x the {SQUARE} "
        f"(its speed per unit of work {chooser.TILE_SPEED[WIDE]:g}x, fitted)"
    )
    out = [Reason(chosen_title(n, chosen), predicted, "x", "estimate", why)]
    for t, p in timed:
        title = promotion_title(p, n, t)
        mine = samples[title].per_call_ms
        r, lo, hi = paired_ratios(mine, samples[KERNEL].per_call_ms)
        rl, llo, lhi = paired_ratios(mine, samples[lt.name].per_call_ms)
        rate = ctx.rate(n, samples[title].timing().median_ms)
        role = "the tile chosen for this size" if t == chosen else f"not chosen here, timed against {chosen}"
        out.append(
            Reason(
                title,
                r,
                "x",
                "measured",
                f"the {t} build with GEMM_PROMOTE=1 ({role}) at promote_every={p}: {rate:,.0f} TFLOP/s, {r:.2f}x "
                f"the default build ({lo:.2f}x to {hi:.2f}x) and {rl:.2f}x {lt.name} ({llo:.2f}x to {lhi:.2f}x) "
                f"over {len(mine)} interleaved repeats",
                lo,
                hi,
            )
        )
        out.append(Reason(f"{title}: rate", rate, "TFLOP/s", "measured", "median of the repeats"))
        out.append(Reason(f"{title} against {lt.name}", rl, "x", "measured", "same batches", llo, lhi))
        ctx.progress(
            f"{ctx.lesson.id} N={n} {t} {_interval_name(p)}: {rate:,.0f} TFLOP/s, {r:.2f}x, {rl:.2f}x {lt.name}"
        )
    rw, wlo, whi = paired_ratios(
        samples[promotion_title(1, n, WIDE)].per_call_ms, samples[promotion_title(1, n)].per_call_ms
    )
    out.append(
        Reason(
            tiles_title(n),
            rw,
            "x",
            "measured",
            f"same batches; the model said {predicted:.3f}x, so {chosen}",
            wlo,
            whi,
        )
    )
    ctx.progress(
        f"{ctx.lesson.id} N={n}: {WIDE} at P=1 {rw:.2f}x the {SQUARE} (model {predicted:.3f}x): {chosen} chosen"
    )
    mine = samples[BLOCK].per_call_ms
    rate = ctx.rate(n, samples[BLOCK].timing().median_ms)
    ratios = {
        key: paired_ratios(mine, samples[key].per_call_ms) for key in (KERNEL, promotion_title(1, n), lt.name)
    }
    (r, lo, hi), (rp, plo, phi), (rl, llo, lhi) = ratios.values()
    out += [
        Reason(
            block_title(n),
            r,
            "x",
            "measured",
            f"the 128x128 build with GEMM_BLOCK_SCALES=1 (A scaled per 1x128, B per 128x128, applied at every "
            f"promotion): {rate:,.0f} TFLOP/s, {r:.2f}x the default build ({lo:.2f}x to {hi:.2f}x), {rp:.2f}x the "
            f"per-tensor 128x128 promoting build at P=1 and {rl:.2f}x {lt.name} over {len(mine)} interleaved repeats",
            lo,
            hi,
        ),
        Reason(f"{block_title(n)}: rate", rate, "TFLOP/s", "measured", "median of the repeats"),
        Reason(
            f"{block_title(n)} against P=1", rp, "x", "measured", "same batches, the 128x128 build", plo, phi
        ),
        Reason(f"{block_title(n)} against {lt.name}", rl, "x", "measured", "same batches", llo, lhi),
    ]
    like = ""
    if LT_BLOCK in samples:
        rb, blo, bhi = paired_ratios(mine, samples[LT_BLOCK].per_call_ms)
        out.append(
            Reason(f"{block_title(n)} against {LT_BLOCK}", rb, "x", "measured", "same batches", blo, bhi)
        )
        like = f", {rb:.2f}x {LT_BLOCK}"
    ctx.progress(
        f"{ctx.lesson.id} N={n} {BLOCK}: {rate:,.0f} TFLOP/s, {r:.2f}x, {rp:.2f}x P=1, {rl:.2f}x {lt.name}{like}"
    )
    del base, proms, blk, calls
    engine.release()
    return out


def _lt_block_call(ctx: Context, n: int, blk: Any) -> Callable[[int], None] | None:
    """cuBLASLt's own 1x128 / 128x128 block-scaled matmul on the block-scaled build's inputs and
    scales (``LtFp8(block_scales=True)``), or None, said in a progress line, where this cuBLAS has
    no such algorithm (it came with cuBLAS 12.9)."""
    try:
        m, cols, k = blk.shape
        plan = LtFp8(m, cols, k, block_scales=True)
    except EnvironmentProblem as e:
        ctx.progress(f"{ctx.lesson.id} N={n}: {LT_BLOCK} left out: {e}")
        return None
    scales = [lt_block_scales(a.scales, b.scales) for a, b in zip(blk.qa, blk.qb, strict=True)]

    def call(j: int) -> None:
        s = j % len(scales)
        plan(blk.qa[s].bits, blk.qb[s].bits, blk.out(j), scales[s])

    return call


def _dev(ctx: Context, n: int, names: tuple[str, ...]) -> list[Reason]:
    """The builds ``names`` (``DEV_BUILDS``), each at its ``DEV_INTERVALS``, in one interleaved batch with
    the 128 x 128 promoting build at the same intervals and cuBLASLt's default (which promotes)."""
    host = HOST
    sets = rotation_buffers(4 * n * n, ctx.l2_bytes)
    prom = host.workload(ctx.compile(n, defines=PROMOTE_BUILD), n, sets, "bench")
    devs = {name: host.workload(ctx.compile(n, defines=DEV_BUILDS[name]), n, sets, "bench") for name in names}
    lt = ctx.peers[0]
    intervals = sorted({p for name in names for p in DEV_INTERVALS[name]})
    calls: dict[str, tuple[Callable[[int], None], Any]] = {
        **{_interval_name(p): (partial(prom.launch_every, every=p), None) for p in intervals},
        lt.name: (partial(lt.call, prom), None),
    }
    ctx.verify(n, prom, calls)  # each on set 0, output poisoned first, before anything is timed
    for name, w in devs.items():
        checked: dict[str, tuple[Callable[[int], None], Any]] = {
            dev_title(name, p, n): (partial(w.launch_every, every=p), None) for p in DEV_INTERVALS[name]
        }
        ctx.verify(n, w, checked)
        calls.update(checked)
    samples = ctx.timer.samples_together(
        {key: [partial(call, j) for j in range(sets)] for key, (call, _) in calls.items()}
    )
    sms = sm_count()
    out = []
    for name, w in devs.items():
        tail = (
            f"{waves(n, n, w.build, sms):.2f} rounds of units on {sms} SMs against the 128x128 build's "
            f"{waves(n, n, prom.build, sms):.2f}"
        )
        for p in DEV_INTERVALS[name]:
            title = dev_title(name, p, n)
            mine = samples[title].per_call_ms
            rate = ctx.rate(n, samples[title].timing().median_ms)
            (r, lo, hi), (rl, llo, lhi) = (
                paired_ratios(mine, samples[key].per_call_ms) for key in (_interval_name(p), lt.name)
            )
            out += [
                Reason(
                    title,
                    r,
                    "x",
                    "measured",
                    f"{DEV_WHAT[name]} at promote_every={p}: {rate:,.0f} TFLOP/s, {r:.2f}x the 128x128 promoting "
                    f"build at the same P ({lo:.2f}x to {hi:.2f}x) and {rl:.2f}x {lt.name} ({llo:.2f}x to {lhi:.2f}x) "
                    f"over {len(mine)} interleaved repeats; {tail}",
                    lo,
                    hi,
                ),
                Reason(f"{title}: rate", rate, "TFLOP/s", "measured", "median of the repeats"),
                Reason(f"{title} against {lt.name}", rl, "x", "measured", "same batches", llo, lhi),
            ]
            ctx.progress(
                f"{ctx.lesson.id} N={n} {DEV_LABELS[name]} P={p}: {rate:,.0f} TFLOP/s, {r:.2f}x the 128x128 "
                f"promoting build, {rl:.2f}x {lt.name}"
            )
    del prom, devs, calls
    engine.release()
    return out


def _block_accuracy(ctx: Context) -> list[Reason]:
    """Per-tensor scales (the promoting build at P=1) against block scales on the same skewed inputs."""
    host = HOST
    prom_c = ctx.compile(ACCURACY_MN, defines=PROMOTE_BUILD)
    blk_c = ctx.compile(ACCURACY_MN, defines=BLOCK_BUILD)
    out = []
    for shape in BLOCK_SHAPES:
        n = shape[0]
        per = host.workload(prom_c, n, 1, "bench", shape=shape, promote_every=1, dist="skewed")
        blk = host.workload(blk_c, n, 1, "bench", shape=shape, dist="skewed")
        ctx.verify(n, per, {SCALINGS[0]: (per.launch, None)})
        ctx.verify(n, blk, {SCALINGS[1]: (blk.launch, None)})
        a, b = (x[0].astype("float64") for x in draw_inputs(shape, "skewed"))
        original = a @ b.T
        del a, b
        errors = {}
        for scaling, work in zip(SCALINGS, (per, blk), strict=True):
            work.poison(0)
            work.launch(0)
            for reference, want in zip(REFERENCES, (original, work.want()), strict=True):
                got = work.out(0)
                errors[(scaling, reference, METRICS[0])] = relative_error(got, want)
                errors[(scaling, reference, METRICS[1])] = segment_error(got, want)
        out += [
            Reason(
                skew_title(shape, *key),
                err,
                "relative error",
                "measured",
                f"N(0, 1) inputs with row i of A times 2^(i % 16 - 8) and B's 128-row block j times 2^(j % 8 - 8); "
                f"{key[2]}: "
                + (
                    "||D - R||_F / ||R||_F"
                    if key[2] == METRICS[0]
                    else "the largest ||D - R|| / ||R|| over the 1 x 128 pieces of D"
                )
                + f", R the float64 product of the {key[1]} (FP16 D)",
            )
            for key, err in errors.items()
        ]
        ctx.progress(
            f"{ctx.lesson.id} skewed {shape}: "
            + ", ".join(
                f"{s} vs {r[:4]} {m}: {errors[(s, r, m)]:.2e}"
                for s in SCALINGS
                for r in REFERENCES
                for m in METRICS
            )
        )
        del per, blk, original
        engine.release()
    return out


def _accuracy(ctx: Context) -> list[Reason]:
    host = HOST
    tile = chooser.choose_promoting(ACCURACY_MN, ACCURACY_MN, ctx.sms)  # the promoting build of this size
    builds = {
        "base": ctx.compile(ACCURACY_MN, defines=WIDE_BUILD),  # the curve's 128 x 256, not the chooser's pick
        "promote": ctx.compile(ACCURACY_MN, defines=PROMOTE_TILES[tile]),
    }
    made_by = {
        name: f"the {tile} promoting build" if promotes else "the 128x256 build"
        for name, promotes, _ in CURVE_KERNELS
    }
    peers = {p.name: p for p in ctx.peers}
    out = []
    for dist in DISTS:
        for k in ACCURACY_KS:
            shape = (ACCURACY_MN, ACCURACY_MN, k)
            errors: dict[str, float] = {}
            base = host.workload(builds["base"], ACCURACY_MN, 1, "bench", shape=shape, dist=dist)
            prom = host.workload(builds["promote"], ACCURACY_MN, 1, "bench", shape=shape, dist=dist)
            want = base.want()  # both workloads draw the same inputs: same seed, same shape
            runs: dict[str, tuple[Any, Callable[[], None]]] = {}
            for name, promotes, every in CURVE_KERNELS:
                work = prom if promotes else base
                runs[name] = (work, partial(work.launch_every, 0, every))
            for name in (LT, LT_FAST):
                runs[name] = (base, partial(peers[name].call, base, 0))
            for name, (work, run) in runs.items():
                work.poison(0)
                run()
                errors[name] = relative_error(work.out(0), want)
            for name, err in errors.items():
                out.append(
                    Reason(
                        accuracy_title(dist, k, name),
                        err,
                        "relative error",
                        "measured",
                        f"||D - R||_F / ||R||_F at {ACCURACY_MN} x {ACCURACY_MN} x {k}, R the float64 product of the "
                        f"dequantised {dist} inputs (FP16 D)"
                        + (f"; {made_by[name]}" if name in made_by else ""),
                    )
                )
            ctx.progress(
                f"{ctx.lesson.id} accuracy {dist} K={k}: "
                + ", ".join(f"{n} {e:.2e}" for n, e in errors.items())
            )
            del base, prom, runs, want
            engine.release()
    return out


def _finish(ctx: Context) -> Extras:
    names = dev_builds()  # a wrong name is refused before the long part
    reasons = _ratio_reasons(ctx)
    if not all(s in ctx.sizes for s in PROMOTE_SIZES):  # a partial run (the page's button): squares only
        return Extras(reasons=tuple(reasons))
    for n in PROMOTE_SIZES:
        reasons += _promotion(ctx, n)
    for n in SMALL_DEV_SIZES + DEV_SIZES if names else ():
        at_n = tuple(x for x in names if n in (SMALL_DEV_SIZES if x in SMALL_DEV else DEV_SIZES))
        if n in ctx.sizes and at_n:
            reasons += _dev(ctx, n, at_n)
    reasons += _accuracy(ctx)
    reasons += _block_accuracy(ctx)
    return Extras(reasons=tuple(reasons))


# Which build is set beside which cuBLASLt mode (issue 35): a ratio is quoted only between two that
# keep the same accuracy, as the accuracy curve shows (never promoting: the default build and
# cuBLASLt's fast accumulation; promoting every 128 of K: the P=1 build and cuBLASLt's default).
LIKE = {KERNEL: LT_FAST, _interval_name(1): LT}
PAIRING = (
    "Like with like: the default build never promotes its accumulator, and neither does cuBLASLt with fast "
    "accumulation (their errors match on the accuracy curve), so the two are set side by side; the build "
    "that promotes every 128 of K is set beside cuBLASLt's default, which promotes too (its error matches "
    "P=1's). cuBLASLt's default beside the never-promoting build would compare unlike accuracy."
)


def _findings(result: BenchResult) -> list[str]:
    """Which pairing every ratio is (issue 35), the one thing no table on the page says.

    The rates and ratios are in the speed section's table (``figures.speed``), the promoting and the
    block-scaled builds' in their tables, the skewed errors and the accuracy curve's in theirs, all
    rendered from the same recording: a sentence for each showed every number twice (issue 38).
    """
    return [PAIRING] if result.rows else []


SPEC = BenchSpec(
    sizes=SIZES,
    page_sizes=PAGE_SIZES,
    max_size=16384,
    unit="TFLOP/s",
    work=gemm_flops,
    set_bytes=lambda n: 4 * n * n,  # A and B one byte an element, D two
    kernel_label=f"{LESSON.kernel_name} (e4m3, FP16 out, never promoting; 128x256 c2, 128x128 for few tiles)",
    peers=lt_peers,
    finish=_finish,
    findings=_findings,
    table="figures:speed",  # each build beside its like
    notes=(
        "rates count 2*M*N*K FLOPs; inputs drawn from N(0, 1) in FP32 and quantised per tensor to e4m3 "
        "(scale = amax / 448, round to nearest even); B stored N x K",
        "checked against the float64 product of the dequantised inputs on the GPU before timing: relative error "
        f"|got - ref| / max(|ref|, sqrt(K)) at most {BENCH_TOLERANCE:g} (the floor "
        + ", ".join(f"{timing_floor(n):.4g} at N = {n}" for n in SIZES)
        + ")",
        "cuBLASLt: cublasLtMatmul through nvmath-python's low-level bindings on the same CuPy buffers, e4m3 A and "
        "B (TN), FP16 C and D, CUBLAS_COMPUTE_32F, per-tensor scales by A_SCALE_POINTER / B_SCALE_POINTER, the "
        "heuristic's first algorithm, 32 MiB workspace; fast accumulation off (its default) and on",
        "the block-scaled build (128x128, GEMM_BLOCK_SCALES=1) runs on the same N(0, 1) inputs quantised per block "
        "(A per 1 x 128, B per 128 x 128, each scale amax / 448) and is checked against the float64 product of its "
        "own dequantised inputs; its skewed-input accuracy sets it beside the per-tensor promoting build at P=1",
    ),
    size_step=16,
    build=lambda n, sms: chooser.choose(n, n, sms),
    unlike=(LT,),  # cuBLASLt's default promotes; the default build does not (LIKE, PAIRING)
)
