"""Day 83's byte count: what TMA multicast takes off the L2, from the kernels' constants.

In step 4 (gemm4_persistent.cu) two CTAs that compute vertically adjacent
tiles (tile rows 2m and 2m+1, the same tile column) each copy the same
256 x 64 slice of B per K-tile: its bytes are requested twice. In step 5
(gemm5_cluster.cu) the two CTAs form a cluster; each copies one 128-row half
of that slice with ``.multicast::cluster`` and ctaMask 0b11, and the PTX ISA
says the box lands "at the same offset as dstMem in the shared memory of
each destination CTA" (PTX ISA, cp.async.bulk.tensor,
#data-movement-and-conversion-instructions-cp-async-bulk-tensor). So each
byte of B is requested once per pair, and each CTA's shared memory still
receives the whole slice. A is not shared: each CTA requests its own.

Every number here is computed from the two kernels' ``constexpr`` lines
(``Lesson.constants``); none is measured. How much of these requests the L2
serves, and whether the L2 was a bottleneck, is not something this page
measured (it times the kernel; it reads no hardware counters).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._html import escape
from ...hopper.wgmma import ModelError
from .. import get_lesson
from . import LESSON

__all__ = [
    "CTA_ROW_LINE",
    "KERNEL_LINES",
    "STEP4_LINES",
    "PairTraffic",
    "TrafficRow",
    "TrafficTable",
    "pair_traffic",
    "traffic_table",
]

HALF = 2  # bytes of one __half

# The lines of gemm5_cluster.cu the count rests on; the tests require each to occur exactly once.
KERNEL_LINES: dict[str, str] = {
    "a_copy": "tmaLoad2d(s.a[stage], &tmA, &s.full[stage], kt * kBK, mBlock * kBM);",
    "b_multicast": "tmaLoad2dMulticast(&s.b[stage][rank * kBoxBRows * kBK], &tmB,",
    "b_rows": "nBlock * kBN + static_cast<int>(rank) * kBoxBRows,",
    "cta_mask": "static_cast<uint16_t>((1u << kClusterSize) - 1));",
    "expect_tx": "mbarArriveExpectTx(&s.full[stage], kStageBytes);",
}
# Written twice, by the producer and by the consumers: the CTA of rank r takes tile row 2m + r.
CTA_ROW_LINE = "mBlock = mBlock * kClusterM + static_cast<int>(rank);"
# And the two copies of step 4 it is compared with (gemm4_persistent.cu), each once.
STEP4_LINES: dict[str, str] = {
    "a_copy": "tmaLoad2d(s.a[stage], &tmA, &s.full[stage], kt * kBK, mBlock * kBM);",
    "b_copy": "tmaLoad2d(s.b[stage], &tmB, &s.full[stage], kt * kBK, nBlock * kBN);",
}


@dataclass(frozen=True)
class PairTraffic:
    """Bytes per K-tile for one pair of CTAs with tiles (2m, n) and (2m+1, n)."""

    k_depth: int  # kBK
    a_box: int  # bytes of one A box: kBoxARows x kBK halves (each CTA, both steps)
    b_box_step4: int  # bytes of step 4's B box: kBoxBRows (256) x kBK halves, one per CTA
    b_box_step5: int  # bytes of step 5's B box: kBoxBRows (128) x kBK halves, multicast
    cluster: int  # kClusterM x kClusterN CTAs per cluster
    stage_bytes: int  # kStageBytes: what lands in each CTA's stage (the expect-tx count)

    @property
    def step4_a(self) -> int:
        return self.cluster * self.a_box

    @property
    def step4_b(self) -> int:
        return self.cluster * self.b_box_step4  # the same B slice, requested by both CTAs

    @property
    def step5_a(self) -> int:
        return self.cluster * self.a_box

    @property
    def step5_b(self) -> int:
        return self.cluster * self.b_box_step5  # each CTA requests one half, delivered to both

    @property
    def step4_total(self) -> int:
        return self.step4_a + self.step4_b

    @property
    def step5_total(self) -> int:
        return self.step5_a + self.step5_b

    @property
    def landed_per_cta_step5(self) -> int:
        """What reaches one CTA's stage in step 5: its A box, its own B half, the peer's B half."""
        return self.a_box + self.cluster * self.b_box_step5


def pair_traffic() -> PairTraffic:
    """The per-K-tile byte counts, from gemm5_cluster.cu's constants and gemm4_persistent.cu's B box."""
    c5 = LESSON.constants()
    c4 = get_lesson(LESSON.previous).constants() if LESSON.previous else {}
    if "kBoxBRows" not in c4:
        raise ModelError(f"the previous step ({LESSON.previous}) must declare kBoxBRows")
    k = int(c5["kBK"])
    cluster = int(c5["kClusterM"]) * int(
        c5["kClusterN"]
    )  # constexpr int kClusterSize = kClusterM * kClusterN;
    stage = int(c5["kBM"]) * k * HALF + int(c5["kBN"]) * k * HALF  # kTileBytesA + kTileBytesB
    return PairTraffic(
        k_depth=k,
        a_box=int(c5["kBoxARows"]) * k * HALF,
        b_box_step4=int(c4["kBoxBRows"]) * k * HALF,
        b_box_step5=int(c5["kBoxBRows"]) * k * HALF,
        cluster=cluster,
        stage_bytes=stage,
    )


@dataclass(frozen=True)
class TrafficRow:
    what: str
    step4: int  # bytes
    step5: int  # bytes


@dataclass(frozen=True)
class TrafficTable:
    """Bytes the TMA copies request, step 4 against step 5, per pair and K-tile and for a whole GEMM."""

    n: int
    pair: PairTraffic
    rows: tuple[TrafficRow, ...]

    def _repr_html_(self) -> str:
        cell = "text-align:left;padding:2px 8px"
        head = "".join(
            f"<th style='{cell}'>{escape(h)}</th>"
            for h in (
                "",
                "step 4 (Day 82): two CTAs",
                "step 5 (Day 83): one cluster of two",
                "step 5 / step 4",
            )
        )
        body = "".join(
            f"<tr><td style='{cell}'>{escape(r.what)}</td><td style='{cell}'>{_size(r.step4)}</td>"
            f"<td style='{cell}'>{_size(r.step5)}</td><td style='{cell}'>{r.step5 / r.step4:.3g}</td></tr>"
            for r in self.rows
        )
        return (
            f"<p>Bytes requested by the TMA copies of two CTAs computing tiles (2m, n) and (2m+1, n); "
            f"whole-GEMM rows at N = {self.n}. Computed from the kernels' constants, not measured.</p>"
            f"<table><tr>{head}</tr>{body}</table>"
        )

    def __str__(self) -> str:
        width = max(len(r.what) for r in self.rows)
        lines = [f"{'':{width}}  {'step 4':>10}  {'step 5':>10}  ratio"]
        lines += [
            f"{r.what:{width}}  {_size(r.step4):>10}  {_size(r.step5):>10}  {r.step5 / r.step4:.3g}"
            for r in self.rows
        ]
        return "\n".join(lines)


def _size(b: int) -> str:
    if b >= 2**30:
        return f"{b / 2**30:.2f} GiB"
    if b >= 2**20:
        return f"{b / 2**20:.1f} MiB"
    return f"{b / 2**10:.0f} KiB"


def traffic_table(n: int = 4096) -> TrafficTable:
    """The table the page shows: per pair and K-tile, then the whole GEMM at size ``n``."""
    p = pair_traffic()
    c5 = LESSON.constants({"GEMM_DIM": n})
    tile_m, tile_n = int(c5["kBM"]), int(c5["kBN"])
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or n % (tile_m * p.cluster) or n % tile_n:
        raise ModelError(
            f"n must be a positive multiple of {tile_m * p.cluster} and {tile_n}, as GEMM_DIM (got {n!r})"
        )
    k_tiles = n // p.k_depth  # constexpr int kTiles = kDim / kBK;
    pairs = (n // tile_m // p.cluster) * (n // tile_n)  # kNumTiles: cluster tiles
    rows = (
        TrafficRow("A per pair and K-tile", p.step4_a, p.step5_a),
        TrafficRow("B per pair and K-tile", p.step4_b, p.step5_b),
        TrafficRow("A + B per pair and K-tile", p.step4_total, p.step5_total),
        TrafficRow("landing in each CTA's stage (expect-tx)", p.stage_bytes, p.landed_per_cta_step5),
        TrafficRow(
            f"A + B for the whole GEMM, N = {n}",
            pairs * k_tiles * p.step4_total,
            pairs * k_tiles * p.step5_total,
        ),
    )
    return TrafficTable(n, p, rows)
