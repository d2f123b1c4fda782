"""Day 83's host side: the ladder's shared TMA-GEMM host, reading gemm5_cluster.cu's constants."""

from .._ladder import TmaGemmHost
from . import LESSON

HOST = TmaGemmHost(LESSON)
