"""Day 87: what the tensor cores' FP8 accumulator keeps, from the measured curves.

The recording (``records.accuracy_curve``) holds the relative error of D against K for the kernel
never promoting and promoting at each interval of ``bench.CURVE_KERNELS``, and cuBLASLt, on
N(0, 1) and U(0, 1) inputs. This module puts a model beside it and finds the one number the model has:

- :func:`aligned_chains`, the model. From DeepSeek-V3's description of Hopper's FP8 accumulation
  (arXiv 2412.19437, section 3.5.2, *Compute Hardware*: "fixed-point accumulation, aligning the
  mantissa products by right-shifting based on the maximum exponent", the highest bits kept):
  products are aligned to the largest exponent and only the highest ``bits`` bits of each are
  added. The course's own choices, fitted to the measurement and not DeepSeek's: the group is one
  instruction's 32 products, the running sum takes part in the alignment, the bits cut are cut
  toward zero (DeepSeek's "sign-fill right shift" is a floor: with it N(0, 1) inputs would gain a
  bias the measurement does not show), and ``bits`` itself (:func:`fit`). Every ``every`` groups the
  chain is added into an FP32 total and restarts (the kernel's promotion). D is that total
  times sA sB, rounded to FP16, as the kernel stores it.
- :data:`FP16_FLOOR` / :func:`fp16_floor`: D's own rounding, the exact product rounded once to
  FP16 at the accuracy curve's shapes and distributions (a table computed on the CPU, with the code
  that computes it); the pictures draw it as a grey line.
- :func:`fit`: the number of bits whose model curve lies closest (in log error) to the measured
  never-promoted curve on U(0, 1) inputs, where every cut errs the same way;
- the pictures (``figures.model_figure``, ``figures.curves_figure``): the model alone, and the
  measured curves with the fitted model dashed beside the kernel's;
- :func:`promotion_choice` / :func:`promotion_explorer`: pick a promotion interval and see the
  model's error and, for the intervals the recording has, the measured error and speed.

The model's inputs are drawn as the benchmark draws them (FP32 from the distribution, quantised
per tensor), for ``SAMPLE_ROWS`` x ``SAMPLE_COLS`` outputs at the largest K; every smaller K is a
prefix of the same sums, so one pass gives the whole curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from ...bench.result import BenchResult, bench_dir, load
from ...errors import CourseError
from ...hopper import fp8
from ..day86.figures import Table  # the ladder's titled table (HTML on a page, text in a terminal)
from . import LESSON
from .bench import (
    ACCURACY_KS,
    ACCURACY_MN,
    CURVE_KERNELS,
    DISTS,
    INTERVALS,
    LT,
    LT_FAST,
    PROMOTE_SIZES,
)
from .records import accuracy_curve, promotion_table

GROUP = 32  # products one k32 wgmma adds per row and column: the model's unit of alignment
TILE_GROUPS = 4  # groups per K-tile of 128: promotion every P K-tiles is every 4P groups
BITS_TRIED = tuple(range(11, 18))
SAMPLE_ROWS, SAMPLE_COLS = 16, 8  # outputs the model sums (128): enough for a stable norm
SEED = 87
INTERVALS_OFFERED = (0, 1, 2, 4, 8, 16)  # promotion every P K-tiles; 0: never

_NOT_RECORDED = (
    "Not recorded yet: this has not been measured on a real GPU for this page, so there is no "
    "measured curve to show. On an H100 or H200, `python -m course bench day87` measures it."
)
STYLE = {  # contestant -> (colour, marker)
    CURVE_KERNELS[0][0]: ("#cf222e", "o"),
    CURVE_KERNELS[1][0]: ("#1a7f37", "s"),
    CURVE_KERNELS[2][0]: ("#8250df", "D"),
    CURVE_KERNELS[3][0]: ("#0969da", "^"),
    LT: ("#6e7781", "x"),
    LT_FAST: ("#bf8700", "+"),
}


def _products(dist: str, k: int, seed: int = SEED) -> tuple[np.ndarray, float]:
    """The exact products a_ik * b_jk of e4m3 inputs drawn as the benchmark draws them, one row
    per output (``SAMPLE_ROWS * SAMPLE_COLS`` rows, ``k`` columns), and sA * sB."""
    if dist not in DISTS:
        raise CourseError(f"dist must be one of {', '.join(DISTS)} (got {dist!r})")
    rng = np.random.default_rng(seed)
    draw = rng.standard_normal if dist == "normal" else rng.random
    qa = fp8.quantize(draw((SAMPLE_ROWS, k)).astype(np.float32))
    qb = fp8.quantize(draw((SAMPLE_COLS, k)).astype(np.float32))
    a, b = fp8.decode(qa.bits), fp8.decode(qb.bits)
    # an e4m3 product has at most 8 significant bits: exact in float32
    products = (a[:, None, :] * b[None, :, :]).reshape(-1, k).astype(np.float32)
    return products, float(qa.scale) * float(qb.scale)


def aligned_chains(
    products: np.ndarray, bits: Sequence[int], every: Sequence[int], marks: Sequence[int]
) -> np.ndarray:
    """The model's sum of each row of ``products`` (outputs x K) for every ``bits`` x ``every``
    pair, read at each K in ``marks``: shape (len(bits), len(every), len(marks), outputs).

    Per group of ``GROUP`` products: the largest magnitude among the group and the chain fixes
    the exponent e (all below 2^e); the chain and each product keep their multiples of
    2^(e - bits), the rest cut toward zero; the kept parts are added (exactly, then to FP32).
    ``every`` counts groups (0: never); a promotion adds the chain into an FP32 total."""
    rows, k = products.shape
    if k % GROUP or any(m % GROUP or not 0 < m <= k for m in marks):
        raise CourseError(f"K and every mark must be multiples of {GROUP} up to K = {k} (got {list(marks)})")
    if min(bits) < 1 or min(every) < 0:
        raise CourseError(f"bits must be >= 1 and every >= 0 (got {list(bits)}, {list(every)})")
    b = np.asarray(bits, dtype=np.int64)[:, None, None]
    ev = np.asarray(every, dtype=np.int64)[None, :, None]
    chain = np.zeros((len(bits), len(every), rows))
    total = np.zeros_like(chain)
    out = np.empty((len(bits), len(every), len(marks), rows))
    at = {m // GROUP - 1: i for i, m in enumerate(marks)}
    for g in range(k // GROUP):
        p = products[:, g * GROUP : (g + 1) * GROUP].astype(np.float64)
        big = np.maximum(np.abs(chain), np.abs(p).max(axis=1))
        _, e = np.frexp(big)  # big < 2^e
        q = np.ldexp(1.0, e - b)
        kept = np.trunc(p / q[..., None]) * q[..., None]
        chain = (np.trunc(chain / q) * q + kept.sum(axis=-1)).astype(np.float32).astype(np.float64)
        promote = (ev > 0) & ((g + 1) % np.maximum(ev, 1) == 0)
        total = np.where(promote, (total + chain).astype(np.float32), total)
        chain = np.where(promote, 0.0, chain)
        if g in at:
            out[:, :, at[g], :] = (total + chain).astype(np.float32)
    return out


def model_errors(
    dist: str, bits: Sequence[int], every: Sequence[int], ks: Sequence[int] = ACCURACY_KS
) -> np.ndarray:
    """||D - R|| / ||R|| of the model (shape: bits x every x ks), D rounded to FP16 after the
    scale, R the float64 product of the dequantised inputs. Kept per kernel (read-only): the same
    draw and the same sums every time, and a slider asks again."""
    return _model_errors(dist, tuple(bits), tuple(every), tuple(ks))


@lru_cache(maxsize=64)
def _model_errors(
    dist: str, bits: tuple[int, ...], every: tuple[int, ...], ks: tuple[int, ...]
) -> np.ndarray:
    products, scale = _products(dist, max(ks))
    sums = aligned_chains(products, bits, every, ks)
    exact = np.stack([products[:, :k].astype(np.float64).sum(axis=1) for k in ks])  # ks x outputs
    want = exact * scale
    got = (sums * scale).astype(np.float16).astype(np.float64)
    errors = np.linalg.norm(got - want, axis=-1) / np.linalg.norm(want, axis=-1)
    errors.flags.writeable = False
    return errors


def fp16_floor(dist: str, k: int, mn: int = ACCURACY_MN) -> float:
    """D's own rounding: ||fl16(R) - R|| / ||R|| for the float64 product R of ``mn`` x ``k`` and
    ``mn`` x ``k`` inputs drawn from ``dist`` in FP32 and quantised per tensor to e4m3, as the
    benchmark draws them (numpy's generator, seeded by the shape as the bench seeds CuPy's: the same
    distributions, not the same numbers). No accumulator can do better than this: it is the error
    of a D that is R exactly, rounded once to FP16 as the kernel stores it."""
    if dist not in DISTS:
        raise CourseError(f"dist must be one of {', '.join(DISTS)} (got {dist!r})")
    if k < 1 or mn < 1:
        raise CourseError(f"the shape must be positive (got {mn} x {mn} x {k})")
    rng = np.random.default_rng(9000 + mn + 3 * mn + 7 * k)
    draw = rng.standard_normal if dist == "normal" else rng.random
    a, b = (fp8.quantize(draw((mn, k), dtype=np.float32)) for _ in range(2))
    r = (fp8.decode(a.bits).astype(np.float64) * a.scale) @ (
        fp8.decode(b.bits).astype(np.float64) * b.scale
    ).T
    return float(np.linalg.norm(r.astype(np.float16).astype(np.float64) - r) / np.linalg.norm(r))


# fp16_floor at ACCURACY_MN x ACCURACY_MN x K for each K of ACCURACY_KS, as
# `python -m course.lessons.day87.accuracy` computes and prints it (about 70 GFLOP of float64 per
# distribution: seconds on a CPU, too long for a page); tests/lessons/day87 recompute points of it.
FP16_FLOOR: dict[str, tuple[float, ...]] = {
    "normal": (
        2.076548e-04,
        2.072297e-04,
        2.080274e-04,
        2.072877e-04,
        2.077208e-04,
        2.067797e-04,
        2.074454e-04,
    ),
    "uniform": (
        2.226676e-04,
        2.237066e-04,
        2.237055e-04,
        2.204433e-04,
        2.209620e-04,
        2.205087e-04,
        2.249547e-04,
    ),
}


def floor_sentence() -> str:
    """What D's rounding alone costs, from ``FP16_FLOOR``."""
    parts = [
        f"{min(FP16_FLOOR[d]):.2e} to {max(FP16_FLOOR[d]):.2e} on {name}"
        for d, name in zip(DISTS, ("N(0, 1)", "U(0, 1)"), strict=True)
    ]
    return (
        f"D's own rounding (the grey line): the exact product rounded once to FP16, computed on the CPU at "
        f"{ACCURACY_MN} x {ACCURACY_MN} x K for the same K and distributions, has an error of "
        f"{' and '.join(parts)}; no accumulator can go below it."
    )


@dataclass(frozen=True)
class Fit:
    """The bits that fit the measured never-promoted U(0, 1) curve, and how well the model with
    them matches every measured point of the kernel's curves (worst ratio, model/measured)."""

    bits: int
    worst: float  # the largest |model/measured - 1| over both distributions and the kernel's curves
    points: int
    curves: int  # the kernel's curves compared (never promoted and each promoting interval)

    def sentence(self) -> str:
        return (
            f"A model accumulator that keeps {self.bits} bits after aligning each group of {GROUP} products and "
            f"the running sum to their largest exponent (the rest cut toward zero) matches all {self.points} "
            f"measured points of the kernel's {self.curves} curves within {self.worst:.0%}; the fit tried "
            f"{BITS_TRIED[0]} to {BITS_TRIED[-1]} bits on the never-promoted U(0, 1) curve. The alignment to the "
            "largest exponent and the high bits kept are DeepSeek-V3's description; the group of "
            f"{GROUP}, the running sum inside the alignment, the cut toward zero (their sign-fill right shift is a "
            "floor) and the number of bits are this course's choices, fitted to the measurement."
        )


def kernel_every(every_tiles: int) -> int:
    return TILE_GROUPS * every_tiles


def kernel_curves(dist: str, bits: int) -> np.ndarray:
    """The model's error against ``ACCURACY_KS`` for each of the kernel's curves, in the order of
    ``bench.CURVE_KERNELS`` (shape: curves x ks)."""
    return model_errors(dist, (bits,), [kernel_every(p) for _, _, p in CURVE_KERNELS])[0]


def fit(curve: dict[str, dict[str, list[tuple[int, float]]]]) -> Fit | None:
    """The fit of the model to a recording's curve (``records.accuracy_curve``), or None if the
    never-promoted U(0, 1) curve was not recorded."""
    never = CURVE_KERNELS[0][0]
    measured = dict(curve.get("uniform", {}).get(never, []))
    if not measured:
        return None
    ks = tuple(sorted(measured))
    errs = model_errors("uniform", BITS_TRIED, (0,), ks)[:, 0, :]
    miss = ((np.log(errs) - np.log([measured[k] for k in ks])) ** 2).sum(axis=1)
    bits = BITS_TRIED[int(np.argmin(miss))]
    worst, points = 0.0, 0
    for dist, lines in curve.items():
        model = kernel_curves(dist, bits)
        for i, (name, _, _) in enumerate(CURVE_KERNELS):
            for k, err in lines.get(name, []):
                worst = max(worst, abs(model[i, ACCURACY_KS.index(k)] / err - 1))
                points += 1
    return Fit(bits, worst, points, len(CURVE_KERNELS))


def recorded() -> tuple[BenchResult | None, Fit | None]:
    """The recording a page shows (the GPU model ``course.kernel.evidence.shown`` picks) and its fit."""
    return _recorded(bench_dir())


@lru_cache(maxsize=4)
def _recorded(folder: Path) -> tuple[BenchResult | None, Fit | None]:
    result = load(LESSON.id, folder)
    return result, (fit(accuracy_curve(result)) if result is not None else None)


@dataclass(frozen=True)
class Findings:
    """Sentences a page shows as a list (HTML) and a terminal as lines."""

    lines: tuple[str, ...]

    def _repr_html_(self) -> str:
        return "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in self.lines) + "</ul>"

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def __repr__(self) -> str:
        return str(self)


def findings() -> Findings:
    """The sentences the page shows under the curves, from the recording and the fit."""
    result, fitted = recorded()
    curve = accuracy_curve(result) if result is not None else {}
    if result is None or not curve:
        return Findings((_NOT_RECORDED,))
    k = ACCURACY_KS[-1]
    out = []
    for dist in DISTS:
        at = {name: dict(points) for name, points in curve.get(dist, {}).items()}
        never = at.get(CURVE_KERNELS[0][0], {})
        every128 = at.get(CURVE_KERNELS[1][0], {})
        floor = dict(zip(ACCURACY_KS, FP16_FLOOR[dist], strict=True))
        if never and every128:
            first = min(never)
            out.append(
                f"{'N(0, 1)' if dist == 'normal' else 'U(0, 1)'}: never promoting, the error grows from "
                f"{never[first]:.2e} at K = {first} to {never[k]:.2e} at K = {k}; promoting every 128 it stays "
                f"between {min(every128.values()):.2e} and {max(every128.values()):.2e}"
                + (f" (cuBLASLt's default: {at[LT][k]:.2e} at K = {k})" if k in at.get(LT, {}) else "")
                + (
                    f", and D's own rounding alone is {floor[k]:.2e} at K = {k}, "
                    f"{floor[k] / every128[k]:.0%} of the promoted error there"
                    if k in every128
                    else ""
                )
                + "."
            )
    fast = dict(curve.get("uniform", {}).get(LT_FAST, []))
    if len(fast) >= 2:
        last, before = sorted(fast)[-1], sorted(fast)[-2]
        out.append(
            f"cuBLASLt with fast accumulation, U(0, 1): {fast[before]:.2e} at K = {before}, {fast[last]:.2e} at "
            f"K = {last}."
        )
    out.append(floor_sentence())
    if fitted is not None:
        out.append(fitted.sentence())
    return Findings(tuple(out))


def promotion_choice(every: int) -> Table:
    """Promotion every ``every`` K-tiles of 128 (0: never): the model's error at the largest K for
    both distributions, and what the recording measured for that interval (error and speed)."""
    if every < 0:
        raise CourseError(f"every must be >= 0 (got {every})")
    result, fitted = recorded()
    k = ACCURACY_KS[-1]
    label = "never" if every == 0 else f"every {128 * every} of K"
    rows: list[tuple[str, ...]] = []
    if fitted is not None:
        model = {d: model_errors(d, (fitted.bits,), (kernel_every(every),), (k,))[0, 0, 0] for d in DISTS}
        rows.append(
            (f"model, {fitted.bits} bits kept", f"{model['normal']:.2e}", f"{model['uniform']:.2e}", "")
        )
    if result is not None:
        curve = accuracy_curve(result)
        name = {p: n for n, _, p in CURVE_KERNELS}.get(every)
        errs = [dict(curve.get(d, {}).get(name, [])).get(k) if name else None for d in DISTS]
        speeds = [r for r in promotion_table(result) if r.p == every and r.chosen]
        speed = ", ".join(f"{r.ratio:.2f}x at N = {r.n} ({r.tile})" for r in speeds)
        if any(e is not None for e in errs) or speed:
            rows.append(
                (
                    f"measured, {result.device}",
                    *(f"{e:.2e}" if e is not None else "not measured" for e in errs),
                    speed,
                )
            )
    if not rows:
        return Table(_NOT_RECORDED, (), ())
    return Table(
        f"Promoting {label}: relative error at K = {k}, and speed against the default build",
        ("", "error, N(0, 1)", "error, U(0, 1)", "speed (x the default build)"),
        tuple(rows),
        f"Speed is recorded for every {', '.join(str(128 * p) for p in INTERVALS if p)} of K at N = "
        f"{' and '.join(str(n) for n in PROMOTE_SIZES)} (the promoting build of the tile the host picks for each, in brackets; the default 128 x 256); "
        "the model has no speed.",
    )


def promotion_explorer(every: int = 1) -> Any:
    """A slider over the promotion intervals that shows :func:`promotion_choice` for the one
    picked; where ipywidgets is missing, the table for ``every``."""
    try:
        # optional: ipywidgets, for the slider; the table alone without it
        import ipywidgets as widgets
    except ImportError:
        return promotion_choice(every)
    slider = widgets.SelectionSlider(
        options=[("never" if p == 0 else str(128 * p), p) for p in INTERVALS_OFFERED],
        value=every if every in INTERVALS_OFFERED else 1,
        description="promote every",
        style={"description_width": "initial"},
    )
    shown = widgets.Output()

    def show(change: Any = None) -> None:
        shown.outputs = ()
        shown.append_display_data(promotion_choice(slider.value))

    slider.observe(show, names="value")
    show()
    from ..._live import LiveBox  # keeps its keys: the arrows move the slider, not the notebook's cells

    return LiveBox([slider, shown])


if __name__ == "__main__":  # the table FP16_FLOOR, computed again
    print("FP16_FLOOR: dict[str, tuple[float, ...]] = {")
    for _dist in DISTS:
        print(f'    "{_dist}": (' + ", ".join(f"{fp16_floor(_dist, _k):.6e}" for _k in ACCURACY_KS) + "),")
    print("}")
