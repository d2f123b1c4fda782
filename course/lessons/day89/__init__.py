"""Day 89: attention, part 2: ping-pong between the two consumer warpgroups on named barriers."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day89",
    day=89,
    title="Attention: ping-pong between two consumer warpgroups",
    kernel_file="attn89_pingpong.cu",
    kernel_name="attn89Pingpong",
    warpgroup_roles=("producer", "consumer", "consumer"),
    notebook="day89_pingpong.ipynb",
    snippets=(
        "constants",
        "smem-layout",
        "mbarrier",
        "tma-load",
        "pingpong",
        "qk-wgmma",
        "causal-mask",
        "online-softmax",
        "p-fragment",
        "pv-wgmma",
        "producer",
        "consumer",
        "epilogue",
        "tensor-maps",
        "check",
    ),
    # As Day 88: B, H, S and causal are run-time arguments, D a build (-DATTN_HEAD_DIM).
    size_macro="",
    size_constant="",
    run_size=1000,
    previous="day88",
    summary="Attention, part 2: the two consumer warpgroups take turns on two named barriers "
    "(bar.sync before a warpgroup's wgmmas, bar.arrive once they are issued), so one warpgroup's "
    "softmax runs while the other's matrix products do; setmaxnreg moves registers from the "
    "producer to the consumers (24 and 240).",
    goals=(
        "order two warpgroups' wgmmas with bar.sync and bar.arrive on named barriers, and count the "
        "arrivals so that every barrier balances",
        "say which work of one warpgroup runs under which of the other's, and why the check cannot see the turns",
        "read setmaxnreg's register split against __launch_bounds__ and ptxas's report",
    ),
    minutes=60,
    requires=("day88",),
)
