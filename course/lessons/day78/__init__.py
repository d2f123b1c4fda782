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
    summary="A 256 x 256 FP16 GEMM on wgmma.mma_async: shared-memory core matrices, the matrix descriptor, a producer and a consumer warpgroup.",
    goals=(
        "lay out wgmma's operands in shared memory as 8 x 16-byte core matrices and compute an element's offset",
        "build the 64-bit matrix descriptor (start address, leading and stride byte offsets) for that layout",
        "follow a producer and a consumer warpgroup through a two-stage pipeline, and find the race a missing barrier leaves",
    ),
    minutes=90,
    requires=(),
)
