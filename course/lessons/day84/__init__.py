"""Day 84: The epilogue: through shared memory and a TMA store."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day84",
    day=84,
    title="The epilogue: through shared memory and a TMA store",
    kernel_file="gemm6_epilogue.cu",
    warpgroup_roles=("producer", "consumer", "consumer"),
    kernel_name="gemm6Epilogue",
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
    run_size=4096,  # a lesson run at 4096: 512 tiles for 132 CTAs, so every CTA walks several
    previous="day83",
)
