"""Day 90's benchmark: the overlapped kernel against Day 89's kernel and PyTorch's SDPA backends.

The step this page takes is measured against the step before it in the same run: Day 89's
kernel (``attn89Pingpong``, its default build, D = 128) is one of the peers, launched on the
same buffers with the same launch contract, so every batch of this kernel is interleaved with a
batch of Day 89's and with each SDPA backend's. Sizes, work, buffers, the SDPA peers and the
causal pass are the attention benchmark's (``course.lessons._attention_bench``), as on Days 88
and 89.
"""

from __future__ import annotations

from ...bench.spec import Peer
from .._attention_bench import SDPA_NOTE, attention_spec, sdpa_peers, step_before_peer
from . import LESSON

DAY89_PEER = "Day 89's kernel (attn89Pingpong, no overlap inside the warpgroup)"


def day89_peer() -> Peer:
    return step_before_peer("day89", DAY89_PEER)


def peers() -> tuple[Peer, ...]:
    return (day89_peer(), *sdpa_peers())


SPEC = attention_spec(
    LESSON,
    peers=peers,
    peer_note=f"{DAY89_PEER}, the step before this one, on the same buffers and launch; and {SDPA_NOTE}",
    anchor="FlashAttention-3 (arXiv:2407.08608, Table 2, its pipelining ablation) reports 661 TFLOP/s with "
    "its 2-stage GEMM-softmax pipelining and 582 without it, warp specialization kept (FP16, H100 SXM5, "
    "batch 4, sequence length 8448, 16 heads, head dimension 128, non-causal)",
)
