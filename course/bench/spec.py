"""What a lesson declares so that ``course bench`` can time it.

A lesson's ``bench.py`` defines ``SPEC = BenchSpec(...)``: its sizes, its
unit and work per call, its peers, and optionally ``finish`` (extra
measurements after the sizes, such as variants of the kernel, and the
reasons drawn from all the numbers), ``findings`` (the sentences its
page quotes, rendered from a recorded result so that re-recording cannot
leave stale prose) and ``table`` (its own table of a result, shown in place
of the engine's). The engine (``course.bench.engine``) does the rest.

``climb`` names the family of lessons whose recorded rates its steps climb on one picture
(``Climb``: the GEMM ladder against cuBLAS by default, attention against cuDNN), drawn by
``course.bench.climb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import CourseError
from .result import BenchResult, Reason, SizeRow

if TYPE_CHECKING:  # types only: a spec is declared without the toolchain loaded
    from ..kernel.compile import Compiled
    from ..kernel.host import Workload
    from ..lesson import Lesson
    from .timing import Samples, Timer

KERNEL = "kernel"


class Context(Protocol):
    """What a spec's ``finish`` gets: the lesson, the timer, the run's numbers so far.

    The engine hands its ``RunContext`` (``course.bench.engine``); a spec names only this."""

    @property
    def lesson(self) -> Lesson: ...
    @property
    def spec(self) -> BenchSpec: ...
    @property
    def timer(self) -> Timer: ...
    @property
    def l2_bytes(self) -> int: ...
    @property
    def sms(self) -> int: ...
    @property
    def progress(self) -> Callable[[str], Any]: ...
    @property
    def sizes(self) -> tuple[int, ...]: ...
    @property
    def rows(self) -> list[SizeRow]: ...
    @property
    def peers(self) -> Sequence[Peer]: ...
    @property
    def graph_samples(self) -> dict[int, dict[str, Samples]]: ...

    def compile(self, n: int, source: str | None = None, defines: dict[str, int] | None = None) -> Compiled:
        """The kernel at size N (or ``source``, a variant of it; or with extra ``defines``)."""
        ...

    def workload(self, n: int, compiled: Compiled | None = None, kernel: bool = True) -> Workload:
        """The lesson's workload at size N with random inputs, in enough sets to rotate past L2."""
        ...

    def time_calls(self, work: Workload, call: Callable[[int], None]) -> float:
        """Median milliseconds of ``call(j)`` over the workload's rotation."""
        ...

    def verify(self, n: int, work: Workload, calls: dict[str, tuple[Callable[[int], None], Any]]) -> str:
        """Run each call on set 0 and check it; CheckFailed names the first wrong one."""
        ...

    def rate(self, n: int, ms: float) -> float:
        """The spec's unit (TFLOP/s, GB/s) for size N done in ``ms``."""
        ...


@dataclass(frozen=True)
class Peer:
    """A library call timed beside the kernel on the same buffers."""

    name: str
    call: Callable[[Workload, int], None]  # do the work on buffer set j, writing workload.out(j)
    want: Callable[[Workload], Any] | None = None  # its expected output, when not workload.want()
    # Why it cannot run on this machine (an optional library missing, ...): such a peer is not
    # called or timed, and the result's notes say so in one line. '' when it runs.
    unavailable: str = ""


@dataclass(frozen=True)
class Extras:
    """What ``BenchSpec.finish`` adds to a result."""

    reasons: tuple[Reason, ...] = ()
    ceilings: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Climb:
    """A family of lessons whose recorded rates climb, step by step, toward a library's on one picture
    (``course.bench.climb``): the GEMM ladder toward cuBLAS, attention toward cuDNN. A lesson is a
    step of the family its ``BenchSpec.climb`` names (by ``name``)."""

    name: str  # what a page names it by: page.climb(family="attention")
    title: str  # the picture's title: "<title> up to Day <day>"
    size_name: str  # what the size is called in the table's sentence ("N", "S")
    size_label: str  # the picture's size axis
    peer: str  # how the table's columns name the peer each step is set against ("cuBLAS", "cuDNN")
    # The peers drawn, by their recorded names; the first is the table's. (): every peer recorded, and
    # the table's is each size's first (the GEMMs: cuBLAS with the step's own types).
    peers: tuple[str, ...] = ()
    note: str = ""  # the table's sentence on how the peer was timed


# The GEMM ladder's climb (Days 78-87): every TFLOP/s step, each against its cuBLAS call.
GEMM_CLIMB = Climb(
    name="gemm",
    title="The climb",
    size_name="N",
    size_label="N (M = N = K)",
    peer="cuBLAS",
    note="cuBLAS is the same run's, with the step's own types (Day 78: FP32 out; the ladder: FP16 out).",
)


SIZE_LABEL = "N (matrix is N x N)"  # what N is under a speed picture, unless a lesson says (BenchSpec)


@dataclass(frozen=True)
class BenchSpec:
    sizes: tuple[int, ...]  # what the command line measures
    page_sizes: tuple[int, ...]  # what the page's button measures (quicker)
    max_size: int  # the largest size the kernel can be built for
    unit: str  # "GB/s" or "TFLOP/s"
    work: Callable[[int], float]  # bytes or FLOPs per call at size N
    set_bytes: Callable[[int], int]  # bytes of one buffer set at size N (rotation, memory check)
    kernel_label: str  # how tables and plots name the kernel
    peers: Callable[[], Sequence[Peer]]  # made on the GPU (a cuBLAS handle, ...)
    finish: Callable[[Context], Extras] | None = None
    findings: Callable[[BenchResult], list[str]] | None = None
    notes: tuple[str, ...] = ()
    # The lesson's own table of a result, shown in the speed section in place of the engine's
    # per-size table, where the page would otherwise show the same numbers twice (Day 86: every
    # shape, the squares among them; Day 87: each build beside its like): "module:function" of the
    # lesson's package (its figures module reads this one, so it is named, not imported), the
    # function taking a BenchResult and returning an object with ``_repr_html_``, ``str`` and
    # ``rows`` (an empty one leaves the engine's table).
    table: str | None = None
    size_step: int = 64  # sizes are multiples of this (the kernels tile by it)
    # What N is, under the picture's size axis (attention's N is the sequence length, not a matrix's).
    size_label: str = SIZE_LABEL
    # The -D flags beyond the size that the kernel is built with at size N on a GPU of SMS SMs, for
    # a lesson that picks its build per problem (a chooser); None: the size alone.
    build: Callable[[int, int], dict[str, int]] | None = None
    # Peers whose ratio to the kernel would set unlike things side by side (Day 87: cuBLASLt's default
    # promotes its FP8 accumulator, the kernel's default build does not): the page's table gives their
    # rate alone, and the ratios recorded against them ("Against <peer> at ...") are not listed.
    unlike: tuple[str, ...] = ()
    # Also time every size's kernel and peers inside CUDA graphs, interleaved with the launches one
    # by one (``Timer.samples_together(graphs=True)``); the samples reach ``finish`` as
    # ``ctx.graph_samples[size][name]`` (``timing.in_graphs(name)`` keys) for it to record.
    graphs: bool = False
    # The climb this lesson is a step of (``course.bench.climb``): the GEMM ladder's TFLOP/s against
    # cuBLAS by default, drawn on every page from Day 79 on; attention's (Days 88 on) against cuDNN
    # (``course.lessons._attention_bench``). None: a step of no climb, whose page draws none.
    climb: Climb | None = GEMM_CLIMB

    def validate_sizes(self, lesson_id: str, sizes: Sequence[int]) -> tuple[int, ...]:
        """The sizes, checked against what the lesson's kernel can be built for."""
        if not sizes:
            raise CourseError(f"at least one size is needed for {lesson_id} (got none)")
        out = []
        for n in sizes:
            if (
                isinstance(n, bool)
                or not isinstance(n, int)
                or n < self.size_step
                or n % self.size_step
                or n > self.max_size
            ):
                raise CourseError(
                    f"sizes for {lesson_id} must be multiples of {self.size_step} from {self.size_step} to "
                    f"{self.max_size} (got {n!r}): the kernel tiles the matrix by {self.size_step}"
                )
            out.append(n)
        return tuple(sorted(set(out)))


def bench_spec(lesson: Lesson) -> BenchSpec | None:
    """What ``course bench`` measures for this lesson (its package's ``bench.SPEC``), or None
    when the package has no ``bench.py``. Discovery (``course.lessons``) checked it is a ``BenchSpec``."""
    if not lesson.has_module("bench"):
        return None
    spec: BenchSpec = lesson.module("bench").SPEC
    return spec
