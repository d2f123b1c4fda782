"""P stays in registers: S's FP32 accumulator, converted in pairs, is exactly the A of the P V wgmma.

Both layouts come from the PTX ISA's figures (course.hopper.wgmma, checked there against CUTLASS);
here the kernel's conversion is simulated bit for bit and read back through the A figure alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.hopper import wgmma as w
from course.hopper.wgmma import ModelError
from course.lessons.day88 import fragments as f


@pytest.mark.parametrize("n", [16, 64, 128, 176, 256])
def test_every_accumulator_value_sits_where_its_a_element_sits(n):
    assert f.layout_mismatches(n) == []


def test_the_check_would_see_a_different_layout(monkeypatch):
    # Were the A figure each warp's 16 x 16 block transposed, the check would list the mismatches.
    real = w.ptx_a_fragment_row_col

    def transposed(t: int, j: int) -> tuple[int, int]:
        row, col = real(t, j)
        return 16 * (row // 16) + col, row % 16

    monkeypatch.setattr(f, "ptx_a_fragment_row_col", transposed)
    assert len(f.layout_mismatches(64)) > 0


@pytest.mark.parametrize("n", [64, 128])
def test_the_kernels_in_place_conversion_is_the_next_wgmmas_a_operand(n):
    rng = np.random.default_rng(n)
    s = rng.standard_normal((64, n)).astype(np.float32) * 4
    acc = f.scatter_accumulator(s)
    assert acc.shape == (128, n // 2)
    regs = f.pack_p(acc)
    assert regs.shape == (n // 16, 128, 4) and regs.dtype == np.uint32
    for k in range(n // 16):
        a = f.a_operand(regs, k)
        assert np.array_equal(a, s[:, 16 * k : 16 * (k + 1)].astype(np.float16)), k


def test_register_r_of_step_k_holds_d_8k_2r_low_and_d_8k_2r_1_high():
    acc = np.zeros((128, 32), dtype=np.float32)
    acc[5, 8 + 2 * 3] = 1.0  # d14 of thread 5 -> step 1, register 3, low half
    acc[5, 8 + 2 * 3 + 1] = -2.0  # d15 -> the high half
    regs = f.pack_p(acc)
    assert regs[1, 5, 3] == (0xC000 << 16) | 0x3C00  # FP16 -2.0 high, 1.0 low
    assert np.count_nonzero(regs) == 1
    assert [f.d_of_a(1, j) for j in range(8)] == list(range(8, 16))


def test_bad_input_is_refused_with_what_was_given():
    with pytest.raises(ModelError, match=r"multiple of 16 in 16\.\.256 \(got 24\)"):
        f.layout_mismatches(24)
    with pytest.raises(ModelError, match=r"S must be 64 x n \(got shape \(32, 64\)\)"):
        f.scatter_accumulator(np.zeros((32, 64)))
    with pytest.raises(ModelError, match=r"models FP16 P only \(got float32\)"):
        f.pack_p(np.zeros((128, 32)), np.float32)
    with pytest.raises(ModelError, match=r"k_step must be in 0\.\.3 \(got 4\)"):
        f.a_operand(np.zeros((4, 128, 4), dtype=np.uint32), 4)
