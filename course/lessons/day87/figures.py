"""Day 87's tables for the page, rendered from the benchmark recording alone (the accuracy curves
and the accumulator's model are ``accuracy``).

- ``promotion``: the promoting build's rate at each interval beside the default build and
  cuBLASLt (``bench.promotion_table``);
- ``speed_against_lt``: the default build against cuBLASLt FP8 at each recorded size;
- ``block_speed``: the block-scaled build beside the default build, the promoting build at P=1 and
  cuBLASLt (``bench.block_table``);
- ``skewed_accuracy``: per-tensor against block scales on skewed inputs (``bench.block_accuracy``).

Without a recording each says so and shows no number.
"""

from __future__ import annotations

from ...bench.result import BenchResult, load
from ..day86.figures import Table  # the ladder's titled table (HTML on a page, text in a terminal)
from . import LESSON
from .bench import (
    LT,
    METRICS,
    REFERENCES,
    SCALINGS,
    block_accuracy,
    block_table,
    promotion_table,
)

_NOT_RECORDED = (
    "Not recorded yet: this has not been measured on a real GPU for this page, so there are no numbers "
    "to show here. On an H100 or H200, `python -m course bench day87` measures it."
)


def _recording() -> BenchResult | None:
    return load(LESSON.id)


def _where(result: BenchResult) -> str:
    return f"Recorded on {result.device} ({result.sm_count} SMs) on {result.recorded_at[:10]}."


def promotion() -> Table:
    """The promoting build (128 x 128) at each interval, beside the default build and cuBLASLt."""
    result = _recording()
    rows = promotion_table(result) if result is not None else []
    if result is None or not rows:
        return Table(_NOT_RECORDED, (), ())
    body = tuple(
        (
            str(n),
            "never" if p == 0 else f"every {128 * p} of K (P={p})",
            f"{rate:,.0f}",
            f"{ratio:.2f}x",
            f"{vs_lt:.2f}x",
        )
        for n, p, rate, ratio, vs_lt in rows
    )
    return Table(
        "The price of promotion: the promoting build (128 x 128) in the same interleaved batches",
        ("N", "promotion", "TFLOP/s", "x default build", f"x {LT}"),
        body,
        _where(result),
    )


def speed_against_lt() -> Table:
    """The default build against cuBLASLt FP8 (both accumulation modes) at each recorded size."""
    result = _recording()
    if result is None or not result.rows:
        return Table(_NOT_RECORDED, (), ())
    names = [p.name for p in result.rows[0].peers]
    body = tuple(
        (
            str(row.size),
            f"{row.kernel.rate:,.0f}",
            *(
                f"{p.rate:,.0f} ({p.ratio:.2f}x)" if p.ratio is not None else f"{p.rate:,.0f}"
                for p in row.peers
            ),
        )
        for row in result.rows
    )
    return Table(
        "TFLOP/s, e4m3 in, FP16 out (the kernel's rate over each peer's in brackets)",
        ("N", "kernel", *names),
        body,
        _where(result),
    )


def block_speed() -> Table:
    """The block-scaled build (128 x 128, scales applied at every promotion) in the same batches."""
    result = _recording()
    rows = block_table(result) if result is not None else []
    if result is None or not rows:
        return Table(_NOT_RECORDED, (), ())
    body = tuple(
        (str(n), f"{rate:,.0f}", f"{ratio:.2f}x", f"{vs_p1:.2f}x", f"{vs_lt:.2f}x")
        for n, rate, ratio, vs_p1, vs_lt in rows
    )
    return Table(
        "Block scales (1 x 128 of A, 128 x 128 of B) applied at every promotion, in the same interleaved batches",
        ("N", "TFLOP/s", "x default build", "x per-tensor, P=1", f"x {LT}"),
        body,
        _where(result),
    )


def skewed_accuracy() -> Table:
    """Per-tensor against block scales on inputs whose rows and blocks differ in magnitude by up to 2^15."""
    result = _recording()
    errs = block_accuracy(result) if result is not None else {}
    if result is None or not errs:
        return Table(_NOT_RECORDED, (), ())
    body = tuple(
        (
            "x".join(map(str, shape)),
            scaling,
            *(
                f"{e[(scaling, r, m)]:.1e}" if (scaling, r, m) in e else ""
                for r in REFERENCES
                for m in METRICS
            ),
        )
        for shape, e in errs.items()
        for scaling in SCALINGS
    )
    return Table(
        "Relative error of D on skewed inputs: row i of A times 2^(i % 16 - 8), B's 128-row block j times "
        "2^(j % 8 - 8)",
        ("M x N x K", "scales", *(f"{m} ({r.split()[0]})" for r in REFERENCES for m in METRICS)),
        body,
        _where(result) + " R is the float64 product of the original inputs, or of the dequantised ones (what "
        "the kernel was given). The worst 1x128 piece is the largest ||D - R|| / ||R|| over pieces of one row "
        "and 128 columns of D, each of one magnitude.",
    )
