"""Day 89's benchmark: the ping-pong kernel against Day 88's kernel and PyTorch's SDPA backends.

The step this page takes is measured against the step before it in the same run: Day 88's
kernel (``attn88Forward``, its default build, D = 128) is one of the peers, launched on the
same buffers with the same launch contract, so every batch of the ping-pong kernel is
interleaved with a batch of Day 88's and with each SDPA backend's. Sizes, work, buffers, the
SDPA peers and the causal pass (``finish``) are Day 88's
(``course.lessons._attention_bench``): one benchmark of attention, two kernels.
"""

from __future__ import annotations

from ...bench.spec import Peer
from .._attention_bench import SDPA_NOTE, attention_spec, sdpa_peers, step_before_peer
from . import LESSON

DAY88_PEER = "Day 88's kernel (attn88Forward, no ping-pong)"


def day88_peer() -> Peer:
    return step_before_peer("day88", DAY88_PEER)


def peers() -> tuple[Peer, ...]:
    return (day88_peer(), *sdpa_peers())


SPEC = attention_spec(
    LESSON,
    peers=peers,
    peer_note=f"{DAY88_PEER}, the step before this one, on the same buffers and launch; and {SDPA_NOTE}",
    anchor="FlashAttention-3 (arXiv:2407.08608, section 3.1) reports that ping-pong scheduling raised "
    "its FP16 forward pass from about 570 to about 620 TFLOP/s (H100 SXM5, head dimension 128, sequence "
    "length 8K)",
)
