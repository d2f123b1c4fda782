"""Day 78: a GEMM on wgmma.mma_async, producer and consumer warpgroups."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day78",
    day=78,
    title="A GEMM on wgmma.mma_async: producer and consumer warpgroups",
    kernel_file="wgmma_gemm.cu",
    kernel_name="wgmmaGemm",
    arch="sm_90a",
    min_cc=(9, 0),
    max_cc=(9, 0),
    feature="wgmma.mma_async (sm_90a), compute capability exactly 9.0 (Hopper)",
    notebook="day78_wgmma.ipynb",
    snippets=("descriptor", "pipeline", "gate"),
    size_macro="GEMM_DIM",
    size_constant="kDim",
)
