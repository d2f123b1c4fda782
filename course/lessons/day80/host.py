"""Day 80's host side: the ladder's shared TMA-GEMM host, reading gemm2_pipeline.cu's constants."""

from .._ladder import TmaGemmHost
from . import LESSON

HOST = TmaGemmHost(LESSON)
