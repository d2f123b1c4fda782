"""Day 80: A real pipeline: a ring of stages, full and empty barriers, phase parity."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day80",
    day=80,
    title="A real pipeline: a ring of stages, full and empty barriers, phase parity",
    kernel_file="gemm2_pipeline.cu",
    warpgroup_roles=("producer", "consumer"),
    kernel_name="gemm2Pipeline",
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
    previous="day79",
)
