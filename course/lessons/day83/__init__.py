"""Day 83: Clusters of two and TMA multicast."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day83",
    day=83,
    title="Clusters of two and TMA multicast",
    kernel_file="gemm5_cluster.cu",
    warpgroup_roles=("producer", "consumer", "consumer"),
    kernel_name="gemm5Cluster",
    notebook="day83_cluster.ipynb",
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
    previous="day82",
    summary="Step 5: clusters of two CTAs share B through TMA multicast; releasing a stage in two CTAs, starting and stopping together.",
    goals=(
        "launch clusters of two and multicast one TMA copy into both CTAs",
        "release a stage in two CTAs and start and stop the cluster together",
        "tell a counted saving (bytes requested) from a measured one (time)",
    ),
    minutes=60,
    requires=("day82",),
)
