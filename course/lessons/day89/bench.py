"""Day 89's benchmark: the ping-pong kernel against Day 88's kernel and PyTorch's SDPA backends.

The step this page takes is measured against the step before it in the same run: Day 88's
kernel (``attn88Forward``, its default build, D = 128) is one of the peers, launched on the
same buffers with the same launch contract, so every batch of the ping-pong kernel is
interleaved with a batch of Day 88's and with each SDPA backend's. Sizes, work, buffers, the
SDPA peers, the causal pass (``finish``) and the findings are Day 88's
(``course.lessons.day88.bench``): one benchmark of attention, two kernels.
"""

from __future__ import annotations

from typing import Any

from ...bench.spec import BenchSpec, Peer
from ...errors import CourseError
from .._attention import BENCH_B, BENCH_H
from ..day88.bench import (
    HEAD_DIM,
    PAGE_SIZES,
    SIZES,
    attention_flops,
    findings,
    finish,
    sdpa_peers,
    set_bytes,
)
from . import LESSON

DAY88_PEER = "Day 88's kernel (attn88Forward, no ping-pong)"


def day88_peer() -> Peer:
    """Day 88's kernel as a peer: its default build, launched on this workload's buffers (the two
    kernels share the launch contract: arguments, grid, block and shared memory)."""
    # heavy: cupy, only for the benchmark (the peer is made on the GPU)
    from ...kernel.compile import compile_lesson
    from ..day88 import LESSON as DAY88

    try:
        compiled = compile_lesson(DAY88)
    except CourseError as e:
        return Peer(DAY88_PEER, lambda work, j: None, unavailable=f"Day 88's kernel did not build here: {e}")

    def call(work: Any, j: int) -> None:
        work.launch(j, compiled)

    return Peer(DAY88_PEER, call)


def peers() -> tuple[Peer, ...]:
    return (day88_peer(), *sdpa_peers())


SPEC = BenchSpec(
    sizes=SIZES,
    page_sizes=PAGE_SIZES,
    max_size=16384,
    unit="TFLOP/s",
    work=attention_flops,
    set_bytes=set_bytes,
    kernel_label=f"{LESSON.kernel_name} (FP16, D = {HEAD_DIM}, B = {BENCH_B}, H = {BENCH_H})",
    peers=peers,
    finish=finish,
    findings=findings,
    notes=(
        f"size N is the sequence length S; B = {BENCH_B}, H = {BENCH_H}, D = {HEAD_DIM}, FP16 Q, K, V "
        "drawn from N(0, 1); rates count 4 B H S^2 D FLOPs (2 B H S^2 D causal)",
        "O checked against a float64 softmax per head on the GPU before timing (kRelTolerance, floor 1); "
        "the kernel's LSE is checked by the lesson run and the GPU tests",
        f"peers: {DAY88_PEER}, the step before this one, on the same buffers and launch; and "
        "torch.nn.functional.scaled_dot_product_attention under torch.nn.attention.sdpa_kernel("
        "SDPBackend.CUDNN_ATTENTION | FLASH_ATTENTION | EFFICIENT_ATTENTION), each call including one "
        "copy of its O into the shared output",
        "published anchor, not measured here: FlashAttention-3 (arXiv:2407.08608, section 3.1) reports "
        "that ping-pong scheduling raised its FP16 forward pass from about 570 to about 620 TFLOP/s "
        "(H100 SXM5, head dimension 128, sequence length 8K)",
    ),
    size_step=128,
    climb=False,
)
