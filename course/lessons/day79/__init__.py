"""Day 79: TMA feeds wgmma: 128-byte swizzle and an mbarrier."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day79",
    day=79,
    title="TMA feeds wgmma: 128-byte swizzle and an mbarrier",
    kernel_file="gemm1_tma.cu",
    warpgroup_roles=("producer+consumer",),
    kernel_name="gemm1Tma",
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
    previous="day78",
)
