"""The kernel's consumer logic, transcribed register by register (consumer_model.py), against
float64 on the CPU: the mask, the online softmax, the P fragment, the epilogue and LSE; and the same
transcription with the A fragment's two halves swapped, which must fail."""

from __future__ import annotations

import numpy as np
import pytest

from . import consumer_model


@pytest.mark.parametrize(("d", "s", "causal"), consumer_model.CASES, ids=lambda x: str(x))
def test_the_transcribed_consumer_matches_float64(d, s, causal):
    ok, line = consumer_model.check(d, s, causal)
    assert ok, line


def test_the_accumulator_and_a_fragment_layouts_agree_register_for_register():
    sim = consumer_model
    c_row, c_col = sim._c_layout(128)
    for k in range(8):
        a_row, a_col = sim._a_layout(k)
        np.testing.assert_array_equal(a_row, c_row[:, 8 * k : 8 * k + 8])
        np.testing.assert_array_equal(a_col, c_col[:, 8 * k : 8 * k + 8])


def test_a_wrong_a_fragment_layout_fails(monkeypatch):
    sim = consumer_model

    def swapped(k):  # the row+8 and column+8 halves exchanged
        v = np.arange(8)
        row = 16 * sim.WARP[:, None] + sim.LANE[:, None] // 4 + 8 * (v[None, :] // 4)
        col = 16 * k + 2 * (sim.LANE[:, None] % 4) + v[None, :] % 2 + 8 * ((v[None, :] // 2) % 2)
        return row, col

    monkeypatch.setattr(sim, "_a_layout", swapped)
    ok, line = sim.check(64, 300, False)
    assert not ok and "FAIL" in line
