"""What a lesson is: the declaration each lesson package makes.

A lesson is one package under ``course/lessons/`` (its host side, its
benchmark specification, its figures and models) plus its files: the kernel
in ``kernels/``, the page in ``notebooks/``, the quiz, annotations and
exercises in ``content/``. The package's ``__init__`` declares a ``LESSON``
(this class); ``course.lessons`` discovers the packages. The shared
machinery (gate, compile, run and check, timing, peers, evidence, page,
quiz) reads these declarations and knows no lesson by name.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from . import _paths
from .constants import kernel_constants
from .content import content_kind
from .errors import CourseError


@dataclass(frozen=True)
class Lesson:
    id: str  # "day<N>": the name on the command line and in file names
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
    size_macro: (
        str  # the -D that sets the problem size (the benchmarks rebuild with it); "": a run-time argument
    )
    size_constant: str  # the constexpr that holds the size the lesson itself runs at; "": none (run_size)
    previous: str = ""  # the lesson this one changes one idea of (its page diffs their regions)
    run_size: int = 0  # the size page.run() and `course run` use; 0: the kernel's own default
    package: str = ""  # the lesson's Python package; set by discovery (course.lessons)
    # What each warpgroup of a CTA does, by warpgroup index, as the kernel's header says
    # ("producer", "consumer", or "producer+consumer" for one warpgroup doing both); the
    # timeline names its rows and trace tracks by it. Empty: the kernel records no timeline.
    warpgroup_roles: tuple[str, ...] = ()
    # What the start page and the top of the page say (course.page.contents):
    summary: str = ""  # what the day teaches, in a sentence
    goals: tuple[str, ...] = ()  # "After this page you can ...": one per item
    minutes: int = 0  # about how long the page takes a learner, running every cell and the exercises
    requires: tuple[str, ...] = ()  # the lessons to read first (ids)

    @property
    def kernel_path(self) -> Path:
        return _paths.kernels_dir() / self.kernel_file

    @property
    def notebook_path(self) -> Path:
        return _paths.notebooks_dir() / self.notebook

    def content_path(self, kind: str) -> Path:
        """The lesson's file of one kind of content (``course.content.CONTENT_KINDS``)."""
        return _paths.content_dir() / content_kind(kind).folder / f"{self.id}.toml"

    @property
    def quiz_path(self) -> Path:
        return self.content_path("quiz")

    @property
    def annotations_path(self) -> Path:
        return _paths.content_dir() / "annotations" / f"{self.id}.toml"

    @property
    def exercise_path(self) -> Path:
        """The annotation exercise's file."""
        return self.content_path("annotation")

    def module(self, name: str) -> ModuleType:
        """A module of the lesson's own package (``host``, ``bench``, ``figures``).

        The rooms that own those contracts read them: ``course.kernel.host.host_of``,
        ``course.bench.spec.bench_spec``; discovery (``course.lessons``) checks them.
        """
        if not self.package:
            raise CourseError(f"lesson {self.id!r} was not loaded from a lesson package")
        return importlib.import_module(f"{self.package}.{name}")

    def function(self, reference: str) -> Callable[..., Any] | None:
        """The function a content or spec file names as ``"module:function"`` in the lesson's own
        package (a coding exercise's CPU model, a benchmark's own table); None where that module
        has no such callable."""
        module_name, _, name = reference.partition(":")
        found = getattr(self.module(module_name), name, None)
        return found if callable(found) else None

    def has_module(self, name: str) -> bool:

        return bool(self.package) and importlib.util.find_spec(f"{self.package}.{name}") is not None

    def supports(self, cc: tuple[int, int]) -> bool:
        if cc < self.min_cc:
            return False
        return self.max_cc is None or cc <= self.max_cc

    def constants(self, defines: Any = None) -> dict[str, int | float]:
        """The kernel's ``constexpr`` constants (``course.constants.kernel_constants``)."""

        return kernel_constants(self.kernel_path, defines)

    @property
    def default_size(self) -> int:
        """The problem size the kernel file builds for without a -D (its ``size_constant``; a kernel
        that takes its size at run time has none, and this is ``run_size``)."""
        if not self.size_constant:
            return self.run_size
        return int(self.constants()[self.size_constant])

    @property
    def run_defines(self) -> dict[str, int] | None:
        """The -D a lesson run compiles with: none, unless ``run_size`` differs from the kernel's default."""
        return {self.size_macro: self.run_size} if self.run_size and self.size_macro else None

    @property
    def size(self) -> int:
        """The problem size a lesson run uses (``run_size``, else the kernel's default)."""
        return self.run_size or self.default_size


WGMMA_FEATURE = "wgmma.mma_async (sm_90a), compute capability exactly 9.0 (Hopper)"


def wgmma_gemm_lesson(**fields: Any) -> Lesson:
    """A lesson whose kernel is a GEMM on wgmma: target sm_90a, compute capability 9.0 alone,
    sized by ``-DGEMM_DIM`` (``kDim``). ``fields`` are the rest of the ``Lesson``."""
    defaults: dict[str, Any] = {
        "arch": "sm_90a",
        "min_cc": (9, 0),
        "max_cc": (9, 0),
        "feature": WGMMA_FEATURE,
        "size_macro": "GEMM_DIM",
        "size_constant": "kDim",
    }
    return Lesson(**{**defaults, **fields})
