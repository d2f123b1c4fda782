"""Day 89's benchmark: the ping-pong kernel against Day 88's kernel and PyTorch's SDPA backends.

The step this page takes is measured against the step before it in the same run: Day 88's
kernel (``attn88Forward``, its default build, D = 128) is one of the peers, launched on the
same buffers with the same launch contract, so every batch of the ping-pong kernel is
interleaved with a batch of Day 88's and with each SDPA backend's. Sizes, work, buffers, the
SDPA peers and the causal pass (``finish``) are Day 88's
(``course.lessons._attention_bench``): one benchmark of attention, two kernels.
"""

from __future__ import annotations

from typing import Any

from ...bench.spec import Peer
from ...errors import CourseError
from .._attention_bench import SDPA_NOTE, attention_spec, sdpa_peers
from . import LESSON

DAY88_PEER = "Day 88's kernel (attn88Forward, no ping-pong)"


def day88_peer() -> Peer:
    """Day 88's kernel as a peer: its default build, launched on this workload's buffers (the two
    kernels share the launch contract: arguments, grid, block and shared memory)."""
    # heavy: cupy, only for the benchmark (the peer is made on the GPU)
    from ...kernel.compile import compile_lesson
    from .. import get_lesson

    day88 = get_lesson("day88")

    try:
        compiled = compile_lesson(day88)
    except CourseError as e:
        return Peer(DAY88_PEER, lambda work, j: None, unavailable=f"Day 88's kernel did not build here: {e}")

    def call(work: Any, j: int) -> None:
        work.launch(j, compiled)

    return Peer(DAY88_PEER, call)


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
