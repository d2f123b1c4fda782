"""The page's table: which cards have wgmma, which have TMA, and what the rest use.

One row per card family the course talks about. Every fact in a row has a
citation, and a lesson's hardware requirements come from the ``Lesson``
handed in (its ``min_cc`` and ``max_cc``), so ``runs_lesson`` and the gate
cannot disagree with the lesson. Facts checked against (2026-11):

- CUDA C++ Programming Guide, 5.1 "Compute Capabilities": Table 29
  "Feature Support per Compute Capability" (row "Tensor Memory Accelerator
  (TMA) unit": No for 7.x and 8.x, Yes for 9.0, 10.x, 11.0 and 12.x) and
  Table 31 "Memory Information per Compute Capability" (row "Maximum amount
  of shared memory per thread block": 163 KB for 8.0, 99 KB for 8.6 and
  8.9, 227 KB for 9.0, 10.x and 11.0, 99 KB for 12.x; footnote: over 48 KB
  needs dynamic shared memory and an explicit opt-in).
- PTX ISA, wgmma.mma_async, Target ISA notes: "Requires sm_90a". sm_90a is
  an architecture-specific target: code built for it runs on compute
  capability 9.0 only (CUDA guide 5.1.2.1), so no Blackwell card runs it.
- PTX ISA, cp.async.bulk.tensor, Target ISA notes: "Requires sm_90 or
  higher". A plain sm_90 target, so compute_90 PTX is JIT-compiled on 10.0
  and 12.0 too. The same section lists restrictions "for sm_120a" (no
  sub-byte types, no .swizzle_atomicity on .shared::cluster destinations),
  which only makes sense because RTX 50 has the instruction. The seed's
  claim that RTX 50 runs the Day 76 kernel holds: that kernel copies FP32
  with no swizzle.
- PTX ISA, tcgen05 ("TensorCore 5th Generation Family Instructions"):
  tcgen05.mma is for sm_100a / sm_100f (and sm_103, sm_110 family
  targets); sm_120 is not among them. libcu++'s generated wrappers say the
  same ("tcgen05_mma_is_only_supported_on_SM_100a_100f_103a_103f").
- PTX ISA, mma (warp-level matrix multiply-accumulate): the .m16n8k16 FP16
  shape requires sm_80 or higher; cp.async (non-bulk): "Requires sm_80 or
  higher", 4, 8 or 16 bytes per thread per instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .._html import escape, scroll_box
from ..errors import CourseError
from ..lesson import Lesson

__all__ = [
    "CARDS",
    "FEATURES",
    "Card",
    "Citation",
    "card_for_cc",
    "cards_for",
    "cards_phrase",
    "runs_lesson",
    "table_html",
]

Feature = Literal["wgmma", "tma", "tcgen05", "mma.sync", "cp.async"]
FEATURES: tuple[str, ...] = ("wgmma", "tma", "tcgen05", "mma.sync", "cp.async")

_PTX = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"
_GUIDE = "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html"


@dataclass(frozen=True)
class Citation:
    """Where a fact comes from: document, section, and a link."""

    source: str
    section: str
    url: str

    def __str__(self) -> str:
        return f"{self.source}, {self.section}"


WGMMA_SM90A = Citation(
    "PTX ISA",
    "wgmma.mma_async, Target ISA notes: Requires sm_90a",
    f"{_PTX}#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async",
)
ARCH_SPECIFIC = Citation(
    "CUDA C++ Programming Guide",
    "5.1.2 Feature Availability: code built for an 'a' target runs only on that exact compute capability",
    f"{_GUIDE}#compute-capabilities-feature-set-compiler-targets",
)
TMA_SM90 = Citation(
    "PTX ISA",
    "cp.async.bulk.tensor, Target ISA notes: Requires sm_90 or higher",
    f"{_PTX}#data-movement-and-conversion-instructions-cp-async-bulk-tensor",
)
TMA_TABLE = Citation(
    "CUDA C++ Programming Guide",
    "5.1.3 Table 29, Feature Support per Compute Capability: Tensor Memory Accelerator (TMA) unit",
    f"{_GUIDE}#compute-capabilities-table-features-and-technical-specifications-feature-support-per-compute-capability",
)
SMEM_TABLE = Citation(
    "CUDA C++ Programming Guide",
    "5.1.3 Table 31, Memory Information per Compute Capability: maximum shared memory per thread block",
    f"{_GUIDE}#compute-capabilities-table-memory-information-per-compute-capability",
)
TCGEN05 = Citation(
    "PTX ISA",
    "TensorCore 5th Generation Family Instructions: tcgen05.mma (sm_100a / sm_100f family)",
    f"{_PTX}#tensorcore-5th-generation-instructions-tcgen05-mma",
)
MMA_SYNC = Citation(
    "PTX ISA",
    "Warp-level matrix multiply-accumulate: mma (.m16n8k16 FP16 requires sm_80 or higher)",
    f"{_PTX}#warp-level-matrix-instructions-mma",
)
CP_ASYNC = Citation(
    "PTX ISA",
    "cp.async, Target ISA notes: Requires sm_80 or higher",
    f"{_PTX}#data-movement-and-conversion-instructions-cp-async",
)


@dataclass(frozen=True)
class Card:
    """One row of the table."""

    name: str  # how the page and the gate name it: "H100/H200"
    products: str  # what that covers, in words
    architecture: str
    cc: tuple[int, int]
    has_wgmma: bool
    has_tma: bool
    has_tcgen05: bool
    matrix_path: str  # the tensor-core instruction a GEMM uses on this card
    copy_path: str  # how tiles get from global to shared memory
    smem_per_block_kib: int  # opt-in maximum per thread block, KiB
    citations: tuple[Citation, ...]

    @property
    def cc_str(self) -> str:
        return f"{self.cc[0]}.{self.cc[1]}"

    @property
    def smem_per_block_bytes(self) -> int:
        return self.smem_per_block_kib * 1024

    def has(self, feature: str) -> bool:
        _check_feature(feature)
        return {
            "wgmma": self.has_wgmma,
            "tma": self.has_tma,
            "tcgen05": self.has_tcgen05,
            # Every card here has the warp-level mma.sync and cp.async of sm_80.
            "mma.sync": self.cc >= (8, 0),
            "cp.async": self.cc >= (8, 0),
        }[feature]


CARDS: tuple[Card, ...] = (
    Card(
        name="H100/H200",
        products="H100, H200 (Hopper)",
        architecture="Hopper",
        cc=(9, 0),
        has_wgmma=True,
        has_tma=True,
        has_tcgen05=False,
        matrix_path="wgmma.mma_async (warpgroup, asynchronous, operands from shared memory)",
        copy_path="TMA: cp.async.bulk.tensor",
        smem_per_block_kib=227,
        citations=(WGMMA_SM90A, TMA_SM90, TMA_TABLE, SMEM_TABLE),
    ),
    Card(
        name="B200/GB200",
        products="B200, GB200 (datacenter Blackwell)",
        architecture="Blackwell (datacenter)",
        cc=(10, 0),
        has_wgmma=False,
        has_tma=True,
        has_tcgen05=True,
        matrix_path="tcgen05.mma (UMMA: single-thread issue, accumulator in Tensor Memory)",
        copy_path="TMA: cp.async.bulk.tensor",
        smem_per_block_kib=227,
        citations=(WGMMA_SM90A, ARCH_SPECIFIC, TCGEN05, TMA_SM90, TMA_TABLE, SMEM_TABLE),
    ),
    Card(
        name="RTX 50",
        products="GeForce RTX 50 series (consumer Blackwell)",
        architecture="Blackwell (consumer)",
        cc=(12, 0),
        has_wgmma=False,
        has_tma=True,
        has_tcgen05=False,
        matrix_path="mma.sync (warp-level); no wgmma, no tcgen05",
        copy_path="TMA: cp.async.bulk.tensor",
        smem_per_block_kib=99,
        citations=(WGMMA_SM90A, ARCH_SPECIFIC, TCGEN05, MMA_SYNC, TMA_SM90, TMA_TABLE, SMEM_TABLE),
    ),
    Card(
        name="L4 / RTX 40",
        products="L4, GeForce RTX 40 series (Ada)",
        architecture="Ada",
        cc=(8, 9),
        has_wgmma=False,
        has_tma=False,
        has_tcgen05=False,
        matrix_path="mma.sync (warp-level)",
        copy_path="cp.async (per-thread, 4/8/16 bytes), no TMA",
        smem_per_block_kib=99,
        citations=(WGMMA_SM90A, MMA_SYNC, CP_ASYNC, TMA_TABLE, SMEM_TABLE),
    ),
    Card(
        name="A100",
        products="A100 (Ampere)",
        architecture="Ampere",
        cc=(8, 0),
        has_wgmma=False,
        has_tma=False,
        has_tcgen05=False,
        matrix_path="mma.sync (warp-level)",
        copy_path="cp.async (per-thread, 4/8/16 bytes), no TMA",
        smem_per_block_kib=163,
        citations=(WGMMA_SM90A, MMA_SYNC, CP_ASYNC, TMA_TABLE, SMEM_TABLE),
    ),
)


def _check_feature(feature: str) -> None:
    if feature not in FEATURES:
        raise CourseError(f"feature must be one of {', '.join(FEATURES)} (got {feature!r})")


def cards_for(feature: str) -> list[Card]:
    """The rows that have ``feature`` ("wgmma", "tma", "tcgen05", "mma.sync", "cp.async")."""
    _check_feature(feature)
    return [card for card in CARDS if card.has(feature)]


def card_for_cc(cc: tuple[int, int]) -> Card | None:
    """The row for a compute capability, or None if the table has none."""
    return next((card for card in CARDS if card.cc == tuple(cc)), None)


def runs_lesson(lesson: Lesson) -> list[Card]:
    """The cards whose compute capability the lesson accepts (its ``min_cc`` and ``max_cc``)."""
    return [card for card in CARDS if lesson.supports(card.cc)]


def cards_phrase(lesson: Lesson) -> str:
    """A short phrase for the page: "H100/H200, B200/GB200, RTX 50" or "H100/H200 only"."""
    cards = runs_lesson(lesson)
    if not cards:
        return "none of the cards in the table"
    names = ", ".join(card.name for card in cards)
    return f"{names} only" if len(cards) == 1 else names


def _breakable(text: str) -> str:
    """Escaped, with a line-break chance after each dot or underscore inside a name
    (``cp.async.<wbr>bulk.<wbr>tensor``): a narrow column breaks an instruction's name where
    its parts meet, never inside a word."""
    return re.sub(r"([._])(?=\w)", r"\1<wbr>", escape(text))


def table_html() -> str:
    """The cards table; each row's sources as numbered notes listed once below the table."""
    e = escape
    cell = "text-align:left;vertical-align:top;padding:2px 5px"
    # A word never breaks (at 1024 px "anywhere" let the table squeeze these columns mid-word, issue 38):
    # a column is at least as wide as its longest word; break-word only for a word wider than the table.
    long = f"{cell};overflow-wrap:break-word"

    def yes_no(flag: bool) -> str:
        return "yes" if flag else "no"

    notes: list[Citation] = []
    for card in CARDS:
        notes += [c for c in card.citations if c not in notes]
    head = "".join(
        f"<th style='{cell}'>{h}</th>"
        for h in (
            "Card",
            "CC",
            "wgmma",
            "TMA",
            "Tensor-core path",
            "Global to shared copies",
            "Shared memory per block",
            "Sources",
        )
    )
    rows = []
    for card in CARDS:
        refs = " ".join(f"[{notes.index(c) + 1}]" for c in card.citations)
        rows.append(
            "<tr>"
            f"<td style='{cell}'>{e(card.name)}<br>"
            f"<small>{e(card.products)}</small></td>"
            f"<td style='{cell};white-space:nowrap'>{e(card.cc_str)}</td>"
            f"<td style='{cell}'>{yes_no(card.has_wgmma)}</td>"
            f"<td style='{cell}'>{yes_no(card.has_tma)}</td>"
            f"<td style='{long}'>{_breakable(card.matrix_path)}</td>"
            f"<td style='{long}'>{_breakable(card.copy_path)}</td>"
            f"<td style='{cell};white-space:nowrap'>{card.smem_per_block_kib} KiB</td>"
            f"<td style='{cell};white-space:nowrap'><small>{refs}</small></td>"
            "</tr>"
        )
    listed = "".join(f'<li><a href="{e(c.url)}">{e(str(c))}</a></li>' for c in notes)
    return (
        # A window narrower than the table scrolls it sideways instead of cutting its last column.
        scroll_box(
            f'<table class="course-gpus" style="font-size:12px"><tr>{head}</tr>{"".join(rows)}</table>'
        )
        + f"<ol style='font-size:smaller'>{listed}</ol>"
    )
