"""Day 80: A real pipeline: a ring of stages, full and empty barriers, phase parity."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day80",
    day=80,
    title="A real pipeline: a ring of stages, full and empty barriers, phase parity",
    kernel_file="gemm2_pipeline.cu",
    kernel_name="gemm2Pipeline",
    arch="sm_90a",
    min_cc=(9, 0),
    max_cc=(9, 0),
    feature="wgmma.mma_async and TMA (sm_90a), compute capability exactly 9.0 (Hopper)",
    notebook="day80_pipeline.ipynb",
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
    previous="day79",
)
