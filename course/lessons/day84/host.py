"""Day 84's host side: the ladder's shared TMA-GEMM host, reading gemm6_epilogue.cu's constants."""

from .._ladder import TmaGemmHost
from . import LESSON

HOST = TmaGemmHost(LESSON)
