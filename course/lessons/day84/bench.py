"""Day 84's benchmark: the step against cuBLAS (FP16 in and out, TN) at N = 1024 to 8192."""

from .._ladder import ladder_spec
from . import LESSON

SPEC = ladder_spec(LESSON, variants={})
