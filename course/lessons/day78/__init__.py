"""Day 78: a GEMM on wgmma.mma_async, producer and consumer warpgroups."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day78",
    day=78,
    title="A GEMM on wgmma.mma_async: producer and consumer warpgroups",
    kernel_file="wgmma_gemm.cu",
    warpgroup_roles=("consumer", "producer"),
    kernel_name="wgmmaGemm",
    notebook="day78_wgmma.ipynb",
    snippets=("descriptor", "pipeline", "gate"),
)
