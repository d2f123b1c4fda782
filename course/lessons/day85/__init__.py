"""Day 85: the climb in one place, from Day 78's 0.03x to cuBLAS speed."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day85",
    day=85,
    title="The climb in one place: from 0.03x to cuBLAS",
    kernel_file="gemm6_epilogue.cu",  # where the climb ends: its page runs the finished kernel
    warpgroup_roles=("producer", "consumer", "consumer"),
    kernel_name="gemm6Epilogue",
    notebook="day85_climb.ipynb",
    snippets=("constants", "gate"),
    run_size=4096,
    previous="day78",
    summary="The climb in one place: every step's time against cuBLAS, what each idea bought, and what is left.",
    goals=(
        "read the whole climb, each step against cuBLAS timed in the same run",
        "say which bottleneck each step removed, and why one step bought nothing",
        "store a tile through the swizzle yourself",
    ),
    minutes=45,
    requires=("day84",),
)
