"""Day 88's benchmark: the kernel against PyTorch's ``scaled_dot_product_attention``, each backend
(``course.lessons._attention_bench``: sizes, work, the SDPA peers, the causal pass)."""

from __future__ import annotations

from .._attention_bench import SDPA_NOTE, attention_spec, sdpa_peers
from . import LESSON

SPEC = attention_spec(
    LESSON,
    peers=sdpa_peers,
    peer_note=SDPA_NOTE,
    anchor="FlashAttention-3 (arXiv:2407.08608, abstract) reports FP16 attention on the H100 at up to "
    "740 TFLOP/s (75% utilization), FlashAttention-2 at 35% utilization",
)
