"""Day 84: The epilogue: through shared memory and a TMA store."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day84",
    day=84,
    title="The epilogue: through shared memory and a TMA store",
    kernel_file="gemm6_epilogue.cu",
    kernel_name="gemm6Epilogue",
    arch="sm_90a",
    min_cc=(9, 0),
    max_cc=(9, 0),
    feature="wgmma.mma_async and TMA (sm_90a), compute capability exactly 9.0 (Hopper)",
    notebook="day84_epilogue.ipynb",
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
        "teardown",
        "tensor-maps",
        "check",
        "gate",
    ),
    size_macro="GEMM_DIM",
    size_constant="kDim",
    run_size=4096,  # a lesson run at 4096: 512 tiles for 132 CTAs, so every CTA walks several
    previous="day83",
)
