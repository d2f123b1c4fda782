"""Day 81's host side: the ladder's shared TMA-GEMM host, reading gemm3_two_consumers.cu's constants."""

from .._ladder import TmaGemmHost
from . import LESSON

HOST = TmaGemmHost(LESSON)
