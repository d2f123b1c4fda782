"""Day 86: every shape and size; at cuBLAS speed on the large shapes only (the recorded shape table says how far below it the small ones run)."""

from ...lesson import wgmma_gemm_lesson

LESSON = wgmma_gemm_lesson(
    id="day86",
    day=86,
    title="Every shape and size: ragged edges, split-K and a chooser",
    kernel_file="gemm7_shapes.cu",
    kernel_name="gemm7Shapes",
    warpgroup_roles=("producer", "consumer", "consumer"),
    notebook="day86_shapes.ipynb",
    snippets=(
        "constants",
        "smem-layout",
        "descriptor",
        "mbarrier",
        "tma-load",
        "wgmma",
        "schedule",
        "streamk",
        "setup",
        "producer",
        "consumer",
        "epilogue",
        "split-k",
        "fixup",
        "tensor-maps",
        "refuse",
        "check",
        "gate",
    ),
    # M, N, K and the split are run-time arguments: no size macro; the lesson run's shape is the
    # host's (host.RUN_SHAPE), the benchmark's squares and shapes its bench's.
    size_macro="",
    size_constant="",
    run_size=1032,
    previous="day84",
    summary="Step 7: any M x N x K (N and K multiples of 8): ragged edges by the TMA, split-K with an in-kernel reduction, and a chooser that picks tile, cluster and split per shape.",
    goals=(
        "explain why TMA zero fill and store clipping make a ragged edge exact, with no branch in the kernel",
        "split K across CTAs and reduce the partials in the kernel, with no CTA waiting for another",
        "predict tiles, waves and the split a shape needs from the SM count, and read the chooser's pick",
    ),
    minutes=60,
    requires=("day85",),
)
