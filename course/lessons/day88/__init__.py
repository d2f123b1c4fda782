"""Day 88: attention forward, FlashAttention-style, from the ladder's TMA ring and wgmma, P fed from registers."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day88",
    day=88,
    title="Attention: a FlashAttention forward kernel from TMA and wgmma",
    kernel_file="attn88_forward.cu",
    kernel_name="attn88Forward",
    warpgroup_roles=("producer", "consumer", "consumer"),
    notebook="day88_attention.ipynb",
    snippets=(
        "constants",
        "smem-layout",
        "mbarrier",
        "tma-load",
        "qk-wgmma",
        "causal-mask",
        "online-softmax",
        "p-fragment",
        "pv-wgmma",
        "producer",
        "consumer",
        "epilogue",
        "tensor-maps",
        "check",
    ),
    # B, H, S and causal are run-time arguments, D a build (-DATTN_HEAD_DIM): no size macro; the
    # lesson run's shape is the host's (course.lessons._attention.RUN_SHAPE).
    size_macro="",
    size_constant="",
    run_size=1000,
    summary="Attention forward on Hopper: Q once and K, V tiles by TMA into an mbarrier ring, S = Q K^T "
    "by wgmma, the online softmax in registers, and O += P V by wgmma with P taken from registers; "
    "causal masking on the diagonal tile only, any sequence length by the TMA's bounds.",
    goals=(
        "derive the online softmax's rescale and say why the running max keeps exp2 in range",
        "read the wgmma accumulator fragment and show why, converted to FP16 in pairs, it is the next "
        "wgmma's A operand",
        "skip the key tiles above the causal diagonal and mask only the tile that crosses it",
    ),
    minutes=75,
    requires=("day86",),
)
