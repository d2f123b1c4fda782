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
    summary="Step 6: the epilogue writes the accumulators to swizzled shared memory and one thread stores them with the TMA.",
    goals=(
        "write accumulators to shared memory in the layout a TMA store reads, with the proxy fence it needs",
        "store 64 x 64 boxes with cp.async.bulk.tensor and wait for them with bulk async-groups",
        "start the accumulators with scale-d instead of zeroing them",
    ),
    minutes=60,
    requires=("day83",),
)
