"""Day 76: load a tile with the Tensor Memory Accelerator."""

from ...lesson import Lesson

LESSON = Lesson(
    id="day76",
    day=76,
    title="Load a tile with the Tensor Memory Accelerator",
    kernel_file="tma_tile.cu",
    kernel_name="loadTileTma",
    arch="sm_90",
    min_cc=(9, 0),
    max_cc=None,
    feature="the Tensor Memory Accelerator (cp.async.bulk.tensor), compute capability 9.0 or newer",
    notebook="day76_tma.ipynb",
    snippets=("issue-tma", "plain-store", "encode-map"),
    size_macro="TMA_DIM",
    size_constant="kGmemWidth",
    summary="One thread loads a whole 64 x 64 tile with one TMA copy; the tensor map, the zero fill over the edge, and the mbarrier that counts bytes.",
    goals=(
        "describe a tile to the TMA with a tensor map (cuTensorMapEncodeTiled) and know which of its rules the driver enforces",
        "issue one cp.async.bulk.tensor from one thread and wait for it on an mbarrier that counts bytes as well as arrivals",
        "say what lands in shared memory when a box hangs over the edge of the tensor (the zero fill)",
    ),
    minutes=60,
    requires=(),
)
