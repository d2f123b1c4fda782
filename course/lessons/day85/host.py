"""Day 85's host side: the finished kernel of the ladder, through the shared TMA-GEMM host."""

from .._ladder import TmaGemmHost
from . import LESSON

HOST = TmaGemmHost(LESSON)
