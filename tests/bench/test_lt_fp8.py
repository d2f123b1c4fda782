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
