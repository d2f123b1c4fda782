"""The cuBLASLt FP8 peer on a machine without a driver: a clear EnvironmentProblem, not a traceback
from the bindings."""

from __future__ import annotations

import pytest

from course.bench import lt_fp8
from course.errors import EnvironmentProblem
from course.kernel import gate


def test_without_a_driver_the_peer_says_what_is_missing():
    if gate.probe().gpu is not None:
        pytest.skip("this machine has a GPU: the peer starts here (tests/lessons/day87/test_gpu.py uses it)")
    pytest.importorskip("nvmath", reason="nvmath-python is not installed")
    with pytest.raises(EnvironmentProblem, match="cuBLASLt could not be started through nvmath-python"):
        lt_fp8.LtFp8(1024, 1024, 1024)


def test_block_scales_are_laid_out_as_cublaslt_reads_them():
    import numpy as np

    m, n_blocks, k_blocks = 6, 3, 5  # L = 5 pads to 8
    a = np.arange(m * k_blocks, dtype=np.float32).reshape(m, k_blocks)
    b = 100 + np.arange(n_blocks * k_blocks, dtype=np.float32).reshape(n_blocks, k_blocks)
    la, lb = lt_fp8.lt_block_scales(a, b)
    assert la.shape == (k_blocks, m) and la.flags.c_contiguous  # M-major: A's rows contiguous per K-block
    assert la[2, 4] == a[4, 2]
    assert lb.shape == (n_blocks, 8) and lb.flags.c_contiguous  # K-major, column stride a multiple of 4
    assert (lb[:, :k_blocks] == b).all() and (lb[:, k_blocks:] == 1).all()


def test_block_scales_of_different_k_blocks_are_refused():
    import numpy as np

    with pytest.raises(ValueError, match="the same L"):
        lt_fp8.lt_block_scales(np.ones((4, 3), np.float32), np.ones((1, 2), np.float32))


def test_block_mode_refuses_what_cublaslt_cannot_do():
    with pytest.raises(ValueError, match="no fast-accumulation mode"):
        lt_fp8.LtFp8(1024, 1024, 1024, fast_accum=True, block_scales=True)
    with pytest.raises(ValueError, match="multiples of 4"):
        lt_fp8.LtFp8(1022, 1024, 1024, block_scales=True)
