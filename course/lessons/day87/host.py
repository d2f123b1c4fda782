"""Day 87's host side: the FP8 GEMM host (``course.lessons._fp8``) for this lesson.

``page.run(shape=(M, N, K), promote_every=P)``: the lesson run is a shape ragged in M, N and K
(``_fp8.RUN_SHAPE``) on the C++ program's exact inputs, every element checked against float64;
``promote_every`` needs the promoting build (``GEMM_PROMOTE=1``, ``GEMM_BN=128``).
"""

from __future__ import annotations

from ...kernel.host import Case
from .._fp8 import Fp8GemmHost
from . import LESSON


class Fp8Host(Fp8GemmHost):
    cases = (
        Case(
            "one-row",
            {"shape": (1, 8, 1008)},
            True,
            "a 1 x 8 x 1008 product: a single row and a single 8-column edge, K not a multiple of the "
            "128-element K-tile, almost every box zero-filled or clipped; every element checked",
        ),
    )


HOST = Fp8Host(LESSON)
