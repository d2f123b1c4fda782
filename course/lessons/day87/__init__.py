"""Day 87: FP8 on Hopper's tensor cores, and what its accumulator keeps."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day87",
    day=87,
    title="FP8 on the tensor cores: scales, and what the accumulator keeps",
    kernel_file="gemm8_fp8.cu",
    kernel_name="gemm8Fp8",
    warpgroup_roles=("producer", "consumer", "consumer"),
    notebook="day87_fp8.ipynb",
    snippets=(
        "constants",
        "smem-layout",
        "descriptor",
        "mbarrier",
        "tma-load",
        "wgmma",
        "schedule",
        "epilogue",
        "promote",
        "block-scales",
        "setup",
        "producer",
        "consumer",
        "tensor-maps",
        "check",
        "refuse",
        "gate",
    ),
    # M, N, K, the scale and the promotion interval are run-time arguments: no size macro; the
    # lesson run's shape is the host's (course.lessons._fp8.RUN_SHAPE).
    size_macro="",
    size_constant="",
    run_size=1032,
    previous="day86",
    summary="Step 8: e4m3 inputs at twice the FP16 rate, per-tensor scales applied in the epilogue, and "
    "promotion of the tensor cores' partial sums into FP32 registers, measured against K.",
    goals=(
        "quantise a matrix to e4m3 with a per-tensor scale, and say what saturation at 448 and 3 mantissa bits cost",
        "change the ladder's kernel to FP8 wgmma (k32, K-major only) and apply the scales in the epilogue",
        "measure how the tensor cores' FP8 accumulation loses accuracy with K, and what promotion buys and costs",
    ),
    minutes=60,
    requires=("day86",),
)
