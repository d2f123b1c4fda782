"""Day 79: TMA feeds wgmma: 128-byte swizzle and an mbarrier."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day79",
    day=79,
    title="TMA feeds wgmma: 128-byte swizzle and an mbarrier",
    kernel_file="gemm1_tma.cu",
    kernel_name="gemm1Tma",
    arch="sm_90a",
    min_cc=(9, 0),
    max_cc=(9, 0),
    feature="wgmma.mma_async and TMA (sm_90a), compute capability exactly 9.0 (Hopper)",
    notebook="day79_tma_wgmma.ipynb",
    snippets=(
        "constants",
        "smem-layout",
        "descriptor",
        "mbarrier",
        "tma-load",
        "wgmma",
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
    previous="day78",
)
