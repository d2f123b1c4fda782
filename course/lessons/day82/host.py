"""Day 82's host side: the ladder's shared TMA-GEMM host, reading gemm4_persistent.cu's constants."""

from .._ladder import TmaGemmHost
from . import LESSON

HOST = TmaGemmHost(LESSON)
