"""Day 82: Persistent CTAs and the order of tiles."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day82",
    day=82,
    title="Persistent CTAs and the order of tiles",
    kernel_file="gemm4_persistent.cu",
    kernel_name="gemm4Persistent",
    arch="sm_90a",
    min_cc=(9, 0),
    max_cc=(9, 0),
    feature="wgmma.mma_async and TMA (sm_90a), compute capability exactly 9.0 (Hopper)",
    notebook="day82_persistent.ipynb",
    snippets=(
        "constants",
        "smem-layout",
        "descriptor",
        "mbarrier",
        "tma-load",
        "wgmma",
        "schedule",
        "setup",
        "producer",
        "consumer",
        "epilogue",
        "tensor-maps",
        "check",
        "gate",
    ),
    size_macro="GEMM_DIM",
    size_constant="kDim",
    run_size=4096,  # a lesson run at 4096: 512 tiles for 132 CTAs, so every CTA walks several
    previous="day81",
)
