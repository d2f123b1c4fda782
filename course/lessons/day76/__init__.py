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
)
