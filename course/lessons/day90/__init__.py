"""Day 90: attention, part 2: the softmax overlapped inside each consumer warpgroup."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day90",
    day=90,
    title="Attention: the softmax under the warpgroup's own matrix products",
    kernel_file="attn90_overlap.cu",
    kernel_name="attn90Overlap",
    warpgroup_roles=("producer", "consumer", "consumer"),
    notebook="day90_overlap.ipynb",
    snippets=(
        "constants",
        "smem-layout",
        "mbarrier",
        "tma-load",
        "pingpong",
        "qk-wgmma",
        "causal-mask",
        "online-softmax",
        "p-fragment",
        "pv-wgmma",
        "producer",
        "consumer",
        "overlap",
        "epilogue",
        "tensor-maps",
        "check",
    ),
    # As Days 88 and 89: B, H, S and causal are run-time arguments, D a build (-DATTN_HEAD_DIM).
    size_macro="",
    size_constant="",
    run_size=1000,
    previous="day89",
    summary="Attention, part 2: each consumer warpgroup issues the next key tile's S = Q K^T and this "
    "tile's P V in one turn, waits for S alone (wgmma.wait_group 1) and runs its softmax while its own "
    "P V is still on the tensor cores; K and V go back to the producer on barriers of their own.",
    goals=(
        "order two asynchronous wgmma groups with wait_group 1 and wait_group 0 so that the softmax "
        "runs between them",
        "count the registers two tiles' scores cost (S in FP32, P in FP16) against setmaxnreg's 240",
        "say why a K stage is free a step before its V stage once S runs a tile ahead",
    ),
    minutes=60,
    requires=("day89",),
)
