"""Day 81: Bigger tiles, two consumer warpgroups, setmaxnreg."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day81",
    day=81,
    title="Bigger tiles, two consumer warpgroups, setmaxnreg",
    kernel_file="gemm3_two_consumers.cu",
    warpgroup_roles=("producer", "consumer", "consumer"),
    kernel_name="gemm3TwoConsumers",
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
    previous="day80",
    summary="Step 3: a 128 x 256 tile computed by two consumer warpgroups, and setmaxnreg to move registers between warpgroups.",
    goals=(
        "split a 128 x 256 tile between two consumer warpgroups that share B in shared memory",
        "count the empty barrier's arrivals for two consumers",
        "use setmaxnreg, and check in ptxas's report whether it was needed",
    ),
    minutes=60,
    requires=("day80",),
)
