"""The lesson inputs: drawn once per process for a size and seed, and nobody can change them (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest

from course.kernel.lcg import lcg_halves, lcg_operands, lcg_states


def test_the_inputs_are_drawn_once_and_handed_out_read_only():
    lcg_halves.cache_clear()
    a, b = lcg_halves(64, 7)
    again = lcg_halves(64, 7)
    assert again[0] is a and again[1] is b  # Run All again: not drawn again
    assert lcg_halves.cache_info().misses == 1
    with pytest.raises(ValueError, match="read-only"):
        a[0, 0] = 1  # a caller that wrote into them would change the next page's inputs
    # Still the programs' numbers: A first, then B, from one LCG.
    states = lcg_states(2 * 64 * 64, 7)
    want = (((states >> np.uint32(24)).astype(np.int32) % 17 - 8).astype(np.float32) / 8).astype(np.float16)
    assert np.array_equal(a.ravel(), want[: 64 * 64]) and np.array_equal(b.ravel(), want[64 * 64 :])


def test_the_operands_are_the_programs_loop_value_for_value():
    # The C++ loop, state by state in unsigned 32-bit arithmetic, A (M x K) first, then B (N x K).
    m, n, k, seed = 3, 5, 16, 2**32 - 3
    state, want = seed, []
    for _ in range((m + n) * k):
        state = (state * 1664525 + 1013904223) % 2**32
        want.append(((state >> 24) % 17 - 8) / 8)
    lcg_operands.cache_clear()
    a, b = lcg_operands(m, n, k, seed)
    assert a.shape == (m, k) and b.shape == (n, k) and a.dtype == b.dtype == np.float16
    assert a.ravel().tolist() == want[: m * k] and b.ravel().tolist() == want[m * k :]
