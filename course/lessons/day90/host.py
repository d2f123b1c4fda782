"""Day 90's host side: the attention host (``course.lessons._attention``), Day 88's launch contract, as Day 89.

``page.run(shape=(B, H, S, D), causal=True)``: the lesson run is 2 x 3 x 1000 x D (the build's D),
non-causal, on the C++ program's exact inputs, O and LSE checked against float64 per head.
"""

from __future__ import annotations

from .._attention import AttentionHost
from . import LESSON

HOST = AttentionHost(LESSON)
