"""Day 81: Bigger tiles, two consumer warpgroups, setmaxnreg."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day81",
    day=81,
    title="Bigger tiles, two consumer warpgroups, setmaxnreg",
    kernel_file="gemm3_two_consumers.cu",
    kernel_name="gemm3TwoConsumers",
    arch="sm_90a",
    min_cc=(9, 0),
    max_cc=(9, 0),
    feature="wgmma.mma_async and TMA (sm_90a), compute capability exactly 9.0 (Hopper)",
    notebook="day81_two_consumers.ipynb",
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
    previous="day80",
)
