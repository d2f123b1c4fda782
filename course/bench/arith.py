"""The arithmetic of a benchmark: work per call, rates, ratios, repeats.

Pure functions, tested on machines with no GPU. A "rate" is work over
time: bytes per second for copies, FLOPs per second for matrix products.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from ..errors import CourseError

MIN_REPEATS = 20  # METHOD.md: the median of many repeats; fewer is noise
DEFAULT_REPEATS = 20
ROTATION_FACTOR = 4  # rotated working set >= 4x L2


def positive_int(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise CourseError(f"{name} must be a positive integer (got {value!r})")
    return value


def copy_bytes(n: int, elem_bytes: int = 4) -> int:
    """Bytes an N x N elementwise kernel moves: every element read once and written once."""
    positive_int("size", n)
    return 2 * n * n * elem_bytes


def gemm_flops(n: int) -> int:
    """FLOPs of an N x N x N matrix product: one multiply and one add per term."""
    positive_int("size", n)
    return 2 * n**3


def gemm_bytes(n: int, in_bytes: int = 2, out_bytes: int = 4) -> int:
    """The fewest bytes an N^3 GEMM moves: A and B read once, D written once."""
    positive_int("size", n)
    return 2 * n * n * in_bytes + n * n * out_bytes


def tile_intensity(tile_m: int, tile_n: int) -> float:
    """FLOPs per byte loaded by an M x N output tile of an FP16 GEMM: 2*M*N*k / ((M + N)*k*2 bytes)."""
    positive_int("tile rows", tile_m)
    positive_int("tile columns", tile_n)
    return tile_m * tile_n / (tile_m + tile_n)


def waves(n_ctas: int, sms: int, per_sm: int) -> float:
    """How many times the grid fills the GPU (CTAs over SMs x resident CTAs per SM)."""
    if sms <= 0 or per_sm <= 0:
        raise CourseError(f"SMs and CTAs per SM must be positive (got {sms}, {per_sm})")
    return n_ctas / (sms * per_sm)


def gb_per_s(nbytes: float, ms: float) -> float:
    """Bytes moved in ``ms`` milliseconds, in GB/s (1 GB = 1e9 bytes)."""
    if ms <= 0:
        raise CourseError(f"a time must be positive to give a rate (got {ms} ms)")
    return nbytes / (ms * 1e-3) / 1e9


def tflop_per_s(flops: float, ms: float) -> float:
    """FLOPs done in ``ms`` milliseconds, in TFLOP/s (1 TFLOP = 1e12)."""
    if ms <= 0:
        raise CourseError(f"a time must be positive to give a rate (got {ms} ms)")
    return flops / (ms * 1e-3) / 1e12


RATES = {"GB/s": gb_per_s, "TFLOP/s": tflop_per_s}


def rate(unit: str, work: float, ms: float) -> float:
    """``work`` in ``ms`` as a rate in ``unit`` (GB/s for bytes, TFLOP/s for FLOPs)."""
    try:
        return RATES[unit](work, ms)
    except KeyError:
        raise CourseError(f"unit must be one of {', '.join(RATES)} (got {unit!r})") from None


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``; the kernel's rate over a peer's (below 1: the kernel is slower)."""
    if denominator <= 0:
        raise CourseError(f"the rate compared against must be positive (got {denominator})")
    return numerator / denominator


def median(values: Sequence[float]) -> float:
    """The median of the repeats (the mean of the middle two for an even count)."""
    if not values:
        raise CourseError("a median needs at least one value (got none)")
    return float(statistics.median(values))


def floor_ms(work: float, rate_per_s: float) -> float:
    """The least time ``work`` (bytes or FLOPs) can take at ``rate_per_s``, in ms."""
    if rate_per_s <= 0:
        raise CourseError(f"a ceiling rate must be positive (got {rate_per_s})")
    return work / rate_per_s * 1e3


def rotation_buffers(set_bytes: int, l2_bytes: int, factor: int = ROTATION_FACTOR, minimum: int = 2) -> int:
    """Input/output sets to rotate over so that together they are >= ``factor`` x L2.

    With fewer, repeat r+1 would find repeat r's data still in L2 and the
    benchmark would measure the cache, not device memory. At least
    ``minimum`` sets, so no two consecutive calls touch the same buffers.
    """
    positive_int("bytes per set", set_bytes)
    positive_int("L2 size", l2_bytes)
    positive_int("factor", factor)
    return max(minimum, math.ceil(factor * l2_bytes / set_bytes))


def validate_repeats(repeats: int) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < MIN_REPEATS:
        raise CourseError(
            f"repeats must be an integer of at least {MIN_REPEATS} (got {repeats!r}): "
            "the median of fewer repeats is noise"
        )
    return repeats


def paired_ratios(mine_ms: Sequence[float], theirs_ms: Sequence[float]) -> tuple[float, float, float]:
    """My rate over theirs, repeat by repeat, from interleaved per-call times (theirs / mine in
    each repeat): the median, the lowest and the highest of those ratios. The two lists must be
    batches timed side by side (``Timer.samples_together``), so each ratio pairs neighbours."""
    if len(mine_ms) != len(theirs_ms) or not mine_ms:
        raise CourseError(
            f"paired ratios need the same number of interleaved repeats (got {len(mine_ms)} and {len(theirs_ms)})"
        )
    ratios = [t / m for m, t in zip(mine_ms, theirs_ms, strict=True)]
    return median(ratios), min(ratios), max(ratios)


def rate_text(rate: float, unit: str, with_unit: bool = True) -> str:
    """A rate as the tables and progress lines print it: GB/s whole, TFLOP/s to one decimal."""
    number = f"{rate:,.0f}" if unit == "GB/s" else f"{rate:,.1f}"
    return f"{number} {unit}" if with_unit else number
