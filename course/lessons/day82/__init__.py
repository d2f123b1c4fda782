"""Day 82: Persistent CTAs and the order of tiles."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day82",
    day=82,
    title="Persistent CTAs and the order of tiles",
    kernel_file="gemm4_persistent.cu",
    warpgroup_roles=("producer", "consumer", "consumer"),
    kernel_name="gemm4Persistent",
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
    run_size=4096,  # a lesson run at 4096: 512 tiles for 132 CTAs, so every CTA walks several
    previous="day81",
    summary="Step 4: one persistent CTA per SM walks a list of tiles in a grouped order; the ring runs on across tiles.",
    goals=(
        "give each persistent CTA its tiles and keep the ring's counters running across them",
        "number tiles in a grouped order and draw which tiles run together",
        "read what the timing does and does not say about the order",
    ),
    minutes=60,
    requires=("day81",),
)
