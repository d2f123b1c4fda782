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
    summary="Step 1 of the ladder: the TMA feeds wgmma, with the 128-byte swizzle on both sides and an mbarrier instead of __syncthreads().",
    goals=(
        "load wgmma's operands with the TMA and read them with a matching 128-byte swizzle descriptor",
        "wait for a copy by the phase parity of an mbarrier that counts bytes",
        "read ptxas's report and a recorded timeline of the kernel",
    ),
    minutes=60,
    requires=(
        "day76",
        "day78",
    ),
)
