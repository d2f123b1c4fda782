"""The inputs the lesson programs draw, reproduced exactly, and random ones for timing.

The C++ programs fill A and B from one LCG (``state = state * 1664525 +
1013904223``, A first, then B) mapped to {-8..8}/8, values FP16 holds
exactly; the Python host sides draw the same numbers, so a device result
can be compared with the standalone program's. The benchmarks time on
normally distributed inputs instead (``normal_inputs``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..errors import CourseError

_LCG_A = 1664525
_LCG_C = 1013904223


def lcg_states(count: int, seed: int) -> np.ndarray:
    """The first ``count`` states of ``state = state * 1664525 + 1013904223``.

    Vectorised: after n steps, state = a^n * s0 + c * (a^(n-1) + ... + 1),
    all modulo 2^32: numpy's uint32 products and sums wrap modulo 2^32, as
    the C++ program's unsigned arithmetic does, so the exact sequence comes
    out of running products and sums computed in place (about 0.1 s for
    the 33.5 million states of N = 4096 on the H200's host, where the
    uint64 version took 1.3 s of every cold page.run(); issue 28).
    """
    if count < 0:
        raise CourseError(f"count must be >= 0 (got {count})")
    with np.errstate(over="ignore"):
        powers = np.full(count, _LCG_A, dtype=np.uint32)
        np.multiply.accumulate(powers, out=powers)  # a^1 .. a^n
        geometric = np.empty(count, dtype=np.uint32)  # 1 + a + ... + a^(i-1) for state i
        if count:
            geometric[0] = 1
            np.cumsum(powers[:-1], out=geometric[1:])
            geometric[1:] += np.uint32(1)
        states = powers * np.uint32(seed)
        geometric *= np.uint32(_LCG_C)
        states += geometric
    return states


# The programs map a state to (state >> 24) % 17 - 8, over 8: one FP16 value per top byte.
_HALF_OF_TOP_BYTE = ((np.arange(256) % 17 - 8) / 8).astype(np.float16)


@functools.lru_cache(maxsize=2)
def lcg_halves(dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A and B (dim x dim, float16, row-major) as the programs' main() draws them from ``seed``.

    Drawn once per process for a size and seed (about a second at N = 4096, every page.run() of
    a ladder step before; issue 28) and handed out read-only, so no caller changes the next one's."""
    return lcg_operands(dim, dim, dim, seed)


@functools.lru_cache(maxsize=2)
def lcg_operands(m: int, n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A (M x K) then B (N x K), float16, row-major, drawn in that order from ``seed`` as the
    programs' main() draws them: values in {-8..8}/8, exact in FP16. Drawn once per process for
    a shape and seed, and handed out read-only."""
    elems_a = m * k
    states = lcg_states(elems_a + n * k, seed)
    states >>= np.uint32(24)
    halves = _HALF_OF_TOP_BYTE[states]
    a, b = halves[:elems_a].reshape(m, k), halves[elems_a:].reshape(n, k)
    a.flags.writeable = False
    b.flags.writeable = False
    return a, b


def lcg_values(count: int, seed: int) -> np.ndarray:
    """The first ``count`` values the programs draw from ``seed``, in {-8..8}/8, float16, in draw
    order (Day 88's main() draws Q, then K, then V, from one stream)."""
    states = lcg_states(count, seed)
    states >>= np.uint32(24)
    values: np.ndarray = _HALF_OF_TOP_BYTE[states]
    return values


def normal_inputs(n: int, sets: int, seed: int) -> tuple[Any, Any]:
    """``sets`` pairs of N x N FP16 matrices drawn from N(0, 1), on the GPU (``normal_operands``)."""
    return normal_operands(n, n, n, sets, seed)


def normal_operands(m: int, n: int, k: int, sets: int, seed: int) -> tuple[Any, Any]:
    """``sets`` of A (M x K) and B (N x K), FP16, drawn from N(0, 1), on the GPU.

    For timing: tensor-core power, and so the clock, depend on the bits
    (METHOD.md; on the H200 cuBLAS ran 681-699 TFLOP/s on {-8..8}/8 inputs
    against 635-640 on normal ones at N = 4096).
    """
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    rng = cp.random.default_rng(seed)
    a = rng.standard_normal((sets, m, k), dtype=cp.float32).astype(cp.float16)
    b = rng.standard_normal((sets, n, k), dtype=cp.float32).astype(cp.float16)
    return a, b
