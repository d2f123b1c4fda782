"""Day 85: the climb in one place, from Day 78's 0.03x to cuBLAS speed."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day85",
    day=85,
    title="The climb in one place: from 0.03x to cuBLAS",
    kernel_file="gemm6_epilogue.cu",  # where the climb ends: its page runs the finished kernel
    kernel_name="gemm6Epilogue",
    arch="sm_90a",
    min_cc=(9, 0),
    max_cc=(9, 0),
    feature="wgmma.mma_async and TMA (sm_90a), compute capability exactly 9.0 (Hopper)",
    notebook="day85_climb.ipynb",
    snippets=("constants", "gate"),
    size_macro="GEMM_DIM",
    size_constant="kDim",
    run_size=4096,
    previous="day78",
)
