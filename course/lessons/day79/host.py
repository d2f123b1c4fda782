"""Day 79's host side: the ladder's shared TMA-GEMM host, reading gemm1_tma.cu's constants."""

from .._ladder import TmaGemmHost
from . import LESSON

HOST = TmaGemmHost(LESSON)
