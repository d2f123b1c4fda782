"""The list of lessons: the one place that says what each lesson is.

Every other file (the notebooks, the quizzes, the evidence, the CLI, the
tests) is checked against this registry.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from . import _paths
from .errors import CourseError


@dataclass(frozen=True)
class Lesson:
    id: str  # "day76": the name on the command line and in file names
    day: int
    title: str
    kernel_file: str  # in kernels/
    kernel_name: str  # the extern "C" __global__ function
    arch: str  # the NVRTC/nvcc target the kernel needs
    min_cc: tuple[int, int]  # lowest compute capability that runs it
    max_cc: tuple[int, int] | None  # highest, when the target is architecture-specific
    feature: str  # what the hardware must have, in words
    notebook: str  # in notebooks/
    snippets: tuple[str, ...]  # the regions the page shows

    @property
    def kernel_path(self) -> Path:
        return _paths.kernels_dir() / self.kernel_file

    @property
    def notebook_path(self) -> Path:
        return _paths.notebooks_dir() / self.notebook

    @property
    def quiz_path(self) -> Path:
        return _paths.content_dir() / "quizzes" / f"{self.id}.toml"

    @property
    def annotations_path(self) -> Path:
        return _paths.content_dir() / "annotations" / f"{self.id}.toml"

    @property
    def evidence_path(self) -> Path:
        return _paths.evidence_dir() / f"{self.id}.json"

    def host(self) -> ModuleType:
        """The lesson's host side (``course.day76``): run(), the check, the PASS line."""
        return importlib.import_module(f"{__package__}.{self.id}")

    def supports(self, cc: tuple[int, int]) -> bool:
        if cc < self.min_cc:
            return False
        return self.max_cc is None or cc <= self.max_cc


LESSONS: dict[str, Lesson] = {
    lesson.id: lesson
    for lesson in (
        Lesson(
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
        ),
        Lesson(
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
        ),
    )
}


def get_lesson(lesson_id: str) -> Lesson:
    try:
        return LESSONS[lesson_id]
    except KeyError:
        raise CourseError(f"no lesson named {lesson_id!r}; the lessons are: {', '.join(LESSONS)}") from None
