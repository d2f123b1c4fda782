"""Day 86's chooser: tile shape, cluster and split of K per problem.

A small model of a persistent GEMM on an SM-count-sized grid, not a table
of measured winners. For every configuration the kernel can be compiled
in (tile 128 x BN with BN in {256, 128, 64}, cluster of 1 or 2 CTAs along M)
and every split of K, it estimates the time as

    full waves x (K-tiles per unit x time of one K-tile + fixed cost per unit)
    + the last, partial wave at its share (below) + split-K reduction traffic

where

- units = ceil(ceil(M / 128) / cluster) x ceil(N / BN) x split are handed
  out round-robin to SMs // cluster clusters: full waves, then a last wave
  of the rest;
- a partial last wave is not priced whole. A unit that runs alone finishes
  sooner than one of a full wave (nothing shares L2, device memory or the
  power budget with it): the benchmark measures one unit past a full wave
  at 0.57-0.75 of a full wave's time with clusters of two (H200 and H100
  recordings, ``bench.wave_table``). The model prices a last wave of r
  units on S slots as LONE_UNIT + (1 - LONE_UNIT) x (r - 1) / (S - 1) of a
  full one, LONE_UNIT = 0.65 fitted to those (clusters of one measure
  0.26-0.61, but a per-cluster 0.45 picked clusters of one where the H100
  measured them slower: evidence/logs/2026-12-05-h100-s10-k86-call2.log);
- one K-tile of a 128 x BN tile is 128 x BN x 64 x 2 FLOP at one SM's
  rate (SM_TFLOPS, scaled by the SM count: a GPU with fewer SMs has less
  in total, not faster SMs), times an efficiency that is lower for the
  narrower tile (128 x 128 does half the MMA work of 128 x 256 per K-tile
  for two thirds of the staged bytes, and its wgmmas are shorter; 128 x 64
  a quarter of it for half the bytes) and for a cluster of one (no
  multicast: every CTA loads its own B from L2);
- the fixed cost per unit is the ring's fill (the first K-tile's load
  latency) and the epilogue that does not overlap the next unit;
- split-K adds, per unit, the partial written to the workspace and, for
  the last split of a tile, the other partials read back (its own too,
  deterministic), at the busy SMs' share of L2 bandwidth; and SPLIT_US for
  the reduction's chain of round trips that nothing overlaps (of the order
  the page's timeline shows at N = 1024, split 4);
- the whole problem cannot run faster than its bytes through device
  memory (A, B read once, D written once) allow, at the device's rate
  (STREAM_TBPS) nor at one SM's (``memory_floor_us``): each CTA streams an
  even share of the bytes at most at SM_STREAM_GBPS, wave after wave. It
  binds where fewer CTAs than SMs hold the bytes (the decode rows; the
  constant's comment gives the H100 times it was fitted to). Where K is
  split, the last wave's reduction comes after that floor, not under it
  (``reduction_tail_us``): on the H100's decode rows this tail is the gap
  between a split build and a less split one (tests/lessons/day86/
  test_chooser_measured.py reads the runs).
- a cluster along N (``ALONG_N``, -DGEMM_CLUSTER_N=2, session 21): the pair
  shares A instead of B; units = ceil(M / 128) x ceil(ceil(N / BN) / 2),
  on SMs // 2 clusters, at the width's own efficiency, unsplit;
- where K is not a multiple of 16 a cluster-1 build's K loop runs at ODD_K
  of its rate: each CTA loads rows of A and B that start mid-sector, and
  none is multicast (measured: notes_clustern39.md).

``streamk=True`` (to ``candidates`` and ``choose``) also prices the Stream-K build (``-DGEMM_STREAMK=1``;
the schedule is ``course.lessons._streamk``, CUTLASS's data-parallel + Stream-K hybrid): whole waves of
data-parallel tiles, then the last one or two waves' tiles shared out evenly as K-iterations over the
clusters, so there is no partial wave to price: the slowest cluster's iterations (the Stream-K units
differ by at most one) plus a fill per piece of work it computes, plus, per piece shared with other units,
the fixup: its partial out, its share of the last arriver's reads, and SPLIT_US. The default leaves
Stream-K out: its picks are the measured ones' until a GPU has measured the Stream-K build
(evidence/gemm_dev/streamk_gpu.sh).

Two more kinds of build, 64-row tiles (``-DGEMM_BM=64``: one consumer
warpgroup, m64nBN wgmmas), issue 39:

- the 64-row builds: ``candidates`` prices every width with 64-row
  tiles, cluster 1 or 2 (``ROWS64_CLUSTERS``), at every shape: a K-tile is
  64 x BN x 64 x 2 FLOP (half the 128-row tile's), at the same width's and
  cluster's efficiency times ROWS64_EFFICIENCY (one consumer warpgroup
  issues every wgmma, with no second one to cover its waits), and the
  split-K partial is 64 x BN floats. They win where 128-row tiles make too
  few units: the decode rows, where M <= 128 is a single row of 128-row
  tiles (at M <= 64 half or more of its rows zeros) and the units come only
  from N's tile columns and a split of K, which 64-row tiles double with no
  reduction to pay for; and the squares 512 to 1024 (session 19), where
  64 x 64 and 64 x 128 at cluster 1 measured fastest of every build.
  ``rows64=False`` leaves them out (the 128-row builds only);
- the small builds (``-DGEMM_SMALL=1``: BM 64, cluster 1, BN 64 or 128, a 72 KiB ring so two CTAs share an
  SM), in the default where ``small_competes``: K-loops of at most SMALL_MAX_K_TILES K-tiles (K <= 1024)
  and M > 64. Slots are 2 x SMs; a wave with more CTAs than SMs puts two on one SM, whose K loops share
  its tensor cores (the busiest SM's K-tiles take SMALL_SHARED, 1.5x, as long: one consumer warpgroup
  leaves them idle part of the time) while one CTA's fill and epilogue overlap the other's loop (one
  FILL_US a unit, as before). A launch costs SMALL_SAVES_US less than the regular plain grid's (72 KiB
  instead of 226 KiB of shared memory a CTA), and its K loop runs at SMALL_EFFICIENCY of the regular
  build's (0.45 at BN 64, 4 stages; 0.6 at BN 128, 3 stages: too few to cover the loads' latency with one
  CTA an SM): round figures (session 19's refit) that pick it at 256^3 alone, where it measured fastest.
  On the decode rows (K = 8192, 14336) the same tile and split ran 0.74-1.00x as fast small as regular
  (session 13), a loss the model has no term for, hence the limits. ``small=False`` leaves them out.

A 64-row tile at cluster 1 where M <= 32 (the decode rows) loads M rounded up to 8, 16 or 32 rows of A a
K-tile (``A_ROWS``, -DGEMM_A_ROWS), not 64 rows of which the TMA zero-fills every one past M; the model
prices both alike (the same bytes from device memory) and ``defines`` builds the short box.

A cluster of one launches as a plain grid (the kernel's launch-costs region) and costs PLAIN_GRID_SAVES_US
less. Session 19 refit that, the small build's constants, the cluster-1 efficiencies and the 64-row
builds' reach to the H100's sweeps of the plain-grid kernels (28 shapes; the table:
evidence/gemm_dev/notes_refit86.md; tests/lessons/day86/test_chooser_sweep.py holds the model to them).

On a tie (at the memory floor), the build with more units wins: more SMs streaming. The constants are
round figures, named below for what they are: not datasheet rates (an H100 or H200 SXM datasheet gives 989
TFLOP/s dense FP16, and 3.35 TB/s (H100) or 4.8 TB/s (H200) of memory bandwidth), but what a cuBLAS-class
kernel sustains on a 132-SM part, an L2 bandwidth and latencies of the right order. ``choose`` returns the
cheapest estimate and the whole ranked list, so a caller can report what was chosen and why;
``deterministic=True`` prices (and ``defines`` builds) the split-K reduction that sums in split order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

from ...errors import CourseError
from .._ladder import check_shape
from .._streamk import schedule as streamk_schedule
from . import LESSON
from .table import DECODE, ENGINE_SQUARES, LARGE, MIDDLE, PAGE_SHAPES, SHAPES, SQUARES  # noqa: F401 (re-exported)


@cache
def kernel_shape() -> tuple[int, int, int]:
    """(tile height, K-tile depth, the N and K multiple) from the kernel's default build: 128, 64 and
    8 (the 64-row builds' height is ``Choice.bm``).

    Read when first asked, not on import: the lesson's host imports this module, and discovery
    imports the host even where the course material (the kernels) is absent."""
    c = LESSON.constants()
    return int(c["kBM"]), int(c["kBK"]), int(c["kMinMultiple"])


CONFIGS: tuple[tuple[int, int], ...] = (
    (256, 2),
    (256, 1),
    (128, 2),
    (128, 1),
    (64, 2),
    (64, 1),
)  # (BN, cluster)
# Decode: A box rows (-DGEMM_A_ROWS; evidence/gemm_dev/notes_arows39.md)
A_ROWS: tuple[int, ...] = (8, 16, 32)
MAX_SPLIT = 8
SMALL_BNS: tuple[int, ...] = (128, 64)  # the small builds' widths (-DGEMM_SMALL=1, BM 64, cluster 1)
# Issue 39's widths (-DGEMM_BN=200, 192, 160, 144, 96; 128-row tiles, cluster 2 or 1), for the middle-sized
# shapes where 256 or 128 leaves a wave part-empty (1536^3 in 128 x 144 tiles: 132, one an SM).
# evidence/gemm_dev/bn39_gpu.sh times them by these names (notes_bn39.md). 200 (session 17) is cuBLAS's
# width at 4104 x 776 x 1240; along M it builds at cluster 1 only (100 rows of B are no whole 8-row atoms).
DEV_BNS: tuple[int, ...] = (200, 192, 160, 144, 96)
# The widths the model prices and picks: those the H100 measured faster than the pick of the time
# somewhere (evidence/logs/2026-12-06-h100-s16/call2-bn39-measure.json, CUDA graphs; 96 and the other
# cluster-1 widths never were), and 128 x 200 at cluster 1 (session 17; 1.21x 128x256 c1 at 4104 x 776 x 1240).
WIDE_CONFIGS: tuple[tuple[int, int], ...] = ((192, 2), (160, 2), (144, 2), (200, 1))
# A cluster of two along N sharing A by multicast (-DGEMM_CLUSTER=1 -DGEMM_CLUSTER_N=2, session 21): its K
# loop's efficiency by width, priced unsplit, as timed; 0.91 for 200, inside the window the tests hold.
ALONG_N: dict[int, float] = {200: 0.91}
# A cluster-1 build's K loop where K is not a multiple of 16 (a row of A or B, K x 2 bytes, then starts
# mid-sector): 128 x 200 at cluster 1 took 1.55x as long a K-tile at 2560 x 2560 x 2504 as at K = 2496,
# the multicasting 128 x 256 at cluster 2 1.03x (evidence/logs/2026-12-07-h100-s21/call4-k2504.log).
ODD_K = 0.65
DEV_BUILDS: dict[str, dict[str, int]] = {
    f"128x{bn}c{cluster}": {"GEMM_BN": bn, "GEMM_CLUSTER": cluster}
    for bn in DEV_BNS
    for cluster in (2, 1)
    if bn // cluster % 8 == 0
}

# Model constants (round figures, not fitted per shape).
SM_TFLOPS = 5.0  # dense FP16 TFLOP/s one SM sustains in a cuBLAS-class kernel: 660 TFLOP/s over 132 SMs
SUSTAINED_TFLOPS_132 = SM_TFLOPS * 132  # 660: what cuBLAS sustains on an H100/H200 (not the datasheet's 989)
STREAM_TBPS = 4.0  # device memory a streaming kernel reaches on an H200 (datasheet 4.8 TB/s; H100 SXM 3.35)
# What one SM streams from device memory at most, GB/s: a CTA's ring holds only so many bytes in
# flight. Fitted to the H100 sweep of every build (evidence/logs/2026-12-06-h100-s14/
# call5-sweep39-measure.json, CUDA graphs): the 64x64 c1 unsplit pick at 1 and 32 x 4096 x 14336 has
# 64 units, so 64 SMs stream 117 MB (1.8 MB each) in 64.3 and 55.3 us past the launch: 28.5 and
# 33.5 GB/s an SM; 31 is their mean. 132 SMs x 31 = 4.1 TB/s >= STREAM_TBPS: a full GPU is held
# by the device's rate, as before; only where fewer SMs hold a unit does this bind. One figure for
# every build is a simplification: the sweep's other cluster-1 builds with 64 units streamed 18-39
# GB/s an SM, in the order of the bytes of B their rings hold in flight (64 KiB at 128x64, 96 at
# 64x64 and 128x128, 128 at 64x128, 64x256 and 128x256; evidence/gemm_dev/notes_small39.md).
SM_STREAM_GBPS = 31.0
L2_TBPS = 8.0  # L2 bandwidth for the split-K workspace traffic, TB/s, shared by the busy SMs
FILL_US = 1.0  # per unit: the ring's first load latency + the part of the epilogue not overlapped
LAUNCH_US = 2.5  # launch and teardown of one persistent kernel
SPLIT_US = 3.0  # per split unit: the reduction's round trips (stores, fence, counter, the last one's reads)
# What one unit alone in the last wave costs, as a fraction of a full wave's time: fitted to the
# recorded last-wave measurements with clusters of two (H200 0.64-0.75, H100 0.57-0.68;
# ``bench.wave_table``), used for both clusters (the docstring says why). A last wave of r units
# on S slots costs LONE_UNIT + (1 - LONE_UNIT) (r - 1) / (S - 1) of a full one.
LONE_UNIT = 0.65
# A 64-row tile's K loop against the 128-row tile's of the same width and cluster (a round figure: one
# consumer warpgroup issues every wgmma). The H100's squares need 0.85-1.12 (evidence/logs/2026-12-06-
# h100-s13/call2-small39-measure.json; tests/lessons/day86/test_chooser_measured.py refits them); 0.90
# (0.80, a guess, priced 64x128 c1 25% slow at M = 128, where it ran 1.20-1.23x the 128-row pick).
ROWS64_EFFICIENCY = 0.90
# The 64-row builds' clusters the model prices. Cluster 2 (session 17): 64x128 c2 ran 1.02x and 1.03x the
# pick at 128 x 8192 x 8192 in the H100 sweeps of sessions 14 and 17, 1.10x at 128 x 4096 x 14336 (s17;
# evidence/logs/2026-12-06-h100-s17/call2-sweep39.log). Since session 19's refit the model picks cluster 1
# there (level with cluster 2 as a plain grid) and cluster 2 nowhere in SHAPES.
ROWS64_CLUSTERS = (1, 2)
# What a plain grid (every cluster-1 build since session 18) saves a launch. The same 64-row tile measured
# 1.0-1.6 us faster at cluster 1 than 2 at 256^3 to 1024^3, part of it the K loop's (EFFICIENCY); 0.75 is the
# round figure that, with session 19's refit (evidence/gemm_dev/notes_refit86.md), picks nowhere slower than
# the chooser before it (by more than 0.4%) on the 28 shapes swept.
PLAIN_GRID_SAVES_US = 0.75
# The small build (-DGEMM_SMALL=1) against the regular 64-row build of the same tile, both plain grids:
# - What it saves a launch beyond the plain grid's: 72 KiB of shared memory a CTA instead of 226.
SMALL_SAVES_US = 1.0
# - Its K loop's rate against the regular build's, by width: the 72 KiB ring holds 4 stages at BN 64
#   and 3 at BN 128, too few to cover the loads' latency with one CTA on an SM. With one CTA an SM,
#   64x64 measured 0.48 us faster small than regular at 256^3 (4 K-tiles) and 0.59 us slower at 512^3 (8):
#   a fixed saving of about 1.5 us and 0.27 us more a K-tile, 0.39 of the regular rate; 64x128 1.35 us
#   slower at 512^3. 1.0 and 0.45 are round figures that keep the small build on 256^3 alone, where it
#   measured fastest, and off 512^3 to 1024^3, where the regular 64-row builds did.
SMALL_EFFICIENCY = {64: 0.45, 128: 0.6}
# - Two CTAs on one SM: each one's K-tiles take 1.5x as long, not 2x (a 64-row tile's one consumer
#   warpgroup leaves the tensor cores idle part of the time, and the other CTA fills it): 64x64 measured
#   5.23 us at 512^3 (no SM holds two) and 8.91 at 1024^3 (124 SMs hold two), a factor of about 1.4.
SMALL_SHARED = 1.5
# - Where it competes: K-loops of at most 16 K-tiles (K <= 1024, the squares it was measured faster
#   on) and M > 64. Where K is long (the decode rows, K = 8192 and 14336) the same tile and split ran
#   0.74-1.00x as fast small as regular (slower on 21 of 22 pairs, level on one): a loss the model has
#   no term for (those rows sit at its memory floor).
SMALL_MAX_K_TILES = 16
EFFICIENCY = {  # fraction of SM_TFLOPS a K-tile loop sustains, by (BN, cluster)
    (256, 2): 1.00,
    # 0.96 before the plain grid; as one, 128 x 256 at cluster 1 ran level with cluster 2 at 4096^3 and
    # 8192 x 8192 x 1024 (session 19's refit)
    (256, 1): 0.98,
    (128, 2): 0.86,
    # 0.83 before the plain grid; as one, 128 x 128 at cluster 1 ran 1.09-1.15x cluster 2 on the large rows of
    # session 19's sweep (4096^3, 8192 x 8192 x 1024, 4096 x 4096 x 11008; 0.93-0.96 of 128x256 c2's rate)
    (128, 1): 0.90,
    (64, 2): 0.70,
    (64, 1): 0.67,
    # Issue 39's widths: the efficiency each needs for the model to give its measured time came to
    # 0.96-1.02 of 128x256 c2's on the four shapes timed beside it (1536^3, 2048^3, 2560^3, 1000 x
    # 3000 x 704: WIDE_CONFIGS' file), but to 0.80 at the ragged 2500 x 2504 x 2504 (128x144 c2 in
    # the H100 bench of session 16, 128x256 c2 in session 15's; the model has no term for why).
    # 0.90 for all three, inside that spread: they are picked where their waves gain more than it
    # (1536^3, 1000 x 3000 x 704), not where the gain is a few percent (tests/lessons/day86/test_wide39.py).
    (192, 2): 0.90,
    (160, 2): 0.90,
    (144, 2): 0.90,
    # 128 x 200 at cluster 1, a plain grid: 0.92 (session 21), the middle of 0.88-0.96, where the model picks
    # it exactly where the H100 ran it faster than the pick before (tests/lessons/day86/test_clustern39.py).
    (200, 1): 0.92,
}


@dataclass(frozen=True)
class Choice:
    bn: int
    cluster: int
    split: int
    units: int
    waves: int
    slots: int
    est_us: float
    deterministic: bool = False  # split-K sums in split order (-DGEMM_DETERMINISTIC=1)
    streamk: bool = False  # the Stream-K build (-DGEMM_STREAMK=1); split is 1
    shared: int = 0  # Stream-K: tiles that several units share (one fixup each)
    bm: int = 128  # tile rows: 128, or 64 (-DGEMM_BM=64, one consumer warpgroup)
    small: bool = False  # the small build (-DGEMM_SMALL=1): two CTAs an SM, no cluster launch
    along_n: bool = False  # the cluster's two CTAs side by side along N, sharing A (-DGEMM_CLUSTER_N=2)
    a_rows: int = 0  # rows of A a TMA box where fewer than bm (-DGEMM_A_ROWS, ``A_ROWS``), else 0

    @property
    def config(self) -> str:
        return f"{self.bm}x{self.bn} c{self.cluster}" + (" small" if self.small else "") + self.axis

    @property
    def axis(self) -> str:
        return " along N" if self.along_n else ""

    def describe(self) -> str:
        det = ", deterministic" if self.deterministic and (self.split > 1 or self.shared) else ""
        if self.streamk:
            return (
                f"tile {self.bm}x{self.bn}, cluster {self.cluster}, Stream-K{det}: {self.units} units on "
                f"{self.slots} clusters, {self.shared} tile(s) shared, no partial wave, model {self.est_us:.1f} us"
            )
        small = ", small build (2 CTAs an SM)" if self.small else ""
        small += f", A box {self.a_rows} rows" if self.a_rows else ""
        return (
            f"tile {self.bm}x{self.bn}, cluster {self.cluster}{self.axis}{small}, split {self.split}{det}: {self.units} units "
            f"on {self.slots} clusters = {self.waves} wave(s), model {self.est_us:.1f} us"
        )


def wave_share(units: int, slots: int) -> float:
    """Waves' worth of time for ``units`` on ``slots``: the full waves, then the last partial wave
    at LONE_UNIT for a lone unit, rising linearly to 1 for a full one."""
    full, rest = divmod(units, slots)
    if rest == 0:
        return float(full)
    return full + LONE_UNIT + (1.0 - LONE_UNIT) * ((rest - 1) / (slots - 1) if slots > 1 else 1.0)


def estimate(
    m: int,
    n: int,
    k: int,
    sms: int,
    bn: int,
    cluster: int,
    split: int,
    deterministic: bool = False,
    bm: int = 128,
    small: bool = False,
    along_n: bool = False,
) -> Choice | None:
    """The model's time for one configuration and split, or None if the split is invalid (``bm``
    64: the 64-row build; ``small``: the small build, which is 64 rows and cluster 1; ``along_n``: the
    cluster of ``cluster`` = 2 along N, units of one tile row and two tile columns)."""
    if bm not in (128, 64) or (small and (bm != 64 or cluster != 1 or bn not in SMALL_BNS)):
        raise CourseError(
            f"no build {bm}x{bn} c{cluster}{' small' if small else ''}: tiles are 128 or 64 rows, and the "
            f"small build is 64 rows, cluster 1, BN in {SMALL_BNS}"
        )
    _modelled(bm, bn, cluster, along_n)
    _, tile_k, _ = kernel_shape()
    tile_m = bm
    k_tiles = math.ceil(k / tile_k)
    if split < 1 or split > k_tiles:
        return None
    tiles_m = math.ceil(m / tile_m)
    tiles_n = math.ceil(n / bn)
    cluster_tiles_m = tiles_m if along_n else math.ceil(tiles_m / cluster)
    units = cluster_tiles_m * (math.ceil(tiles_n / cluster) if along_n else tiles_n) * split
    ctas_per_sm = 2 if small else 1
    slots = sms * ctas_per_sm // cluster
    waves = math.ceil(units / slots)
    per_sm_flops = SM_TFLOPS * 1e12 * (ALONG_N[bn] if along_n else EFFICIENCY[(bn, cluster)])
    if bm == 64:
        per_sm_flops *= ROWS64_EFFICIENCY
    if small:
        per_sm_flops *= SMALL_EFFICIENCY[bn]
    if k % 16 and cluster == 1:  # rows of A and B not 32-byte aligned, and no multicast: ODD_K
        per_sm_flops *= ODD_K
    k_tile_us = tile_m * bn * tile_k * 2 / per_sm_flops * 1e6
    # The small build: a wave of more CTAs than SMs puts two on the busiest SM, sharing its tensor
    # cores (its K-tiles take SMALL_SHARED as long); their fills and epilogues overlap each other's loops.
    sharing = SMALL_SHARED if small and min(units, slots) > sms else 1.0
    unit_us = math.ceil(k_tiles / split) * k_tile_us * sharing + FILL_US
    if split > 1:
        # Each unit writes its FP32 partial; the last of a tile reads split - 1 of them (all split
        # of them, its own too, when deterministic). Only the busy SMs share L2, spread over the
        # units of one wave. And the reduction is a chain of round trips through L2 that nothing
        # overlaps (SPLIT_US).
        partial_bytes = tile_m * bn * 4
        busy = min(units, slots) * cluster
        l2_per_sm = L2_TBPS * 1e12 / max(busy, 1)
        reads = (split - 1 + (1 if deterministic else 0)) / split
        unit_us += (partial_bytes + partial_bytes * reads) / l2_per_sm * 1e6 + SPLIT_US
    compute_us = wave_share(units, slots) * unit_us
    memory_us = memory_floor_us(m, n, k, units * cluster, sms)
    # The last wave's split-K reduction starts when its K loops end, so the memory floor does not
    # hide it (``reduction_tail_us``); the compute path already holds each unit's reduction.
    tail = reduction_tail_us(units, slots, cluster, split, tile_m * bn * 4, deterministic)
    est = launch_us(cluster, small) + max(compute_us, memory_us + tail)
    det = deterministic and split > 1
    c = Choice(bn, cluster, split, units, waves, slots, est, det, bm=bm, small=small, along_n=along_n)
    rows = next((r for r in A_ROWS if m <= r), 0) if bm == 64 and cluster == 1 and not along_n else 0
    return replace(c, a_rows=rows) if rows else c


def launch_us(cluster: int, small: bool = False) -> float:
    """A launch and its teardown: LAUNCH_US with a cluster launch (cluster 2), PLAIN_GRID_SAVES_US less as a
    plain grid (cluster 1), and SMALL_SAVES_US less again for the small build."""
    return LAUNCH_US - (PLAIN_GRID_SAVES_US if cluster == 1 else 0.0) - (SMALL_SAVES_US if small else 0.0)


def _modelled(bm: int, bn: int, cluster: int, along_n: bool = False) -> None:
    """Refuse, with a CourseError, a configuration the model has no efficiency for: a development width
    outside ``WIDE_CONFIGS`` (96, or cluster 1 but 200's), a development width at a cluster it has no
    build for (200 at cluster 2), or no build at all; along N, a width outside ``ALONG_N``."""
    if along_n and not (bm == 128 and cluster == 2 and bn in ALONG_N):
        raise CourseError(
            f"no model of {bm}x{bn} c{cluster} along N: it prices 128-row pairs of {tuple(ALONG_N)}"
        )
    if along_n or (bn, cluster) in EFFICIENCY:
        return
    if bn in DEV_BNS and bn // cluster % 8:  # not among DEV_BUILDS: B's slices are no whole swizzle atoms
        raise CourseError(
            f"{bm}x{bn} c{cluster} is a development build width with no cluster-{cluster} build (issue 39, "
            f"-DGEMM_BN={bn}: {bn} / {cluster} rows of B a CTA are no whole 8-row swizzle atom); use cluster 1"
        )
    if bn in DEV_BNS:
        raise CourseError(
            f"{bm}x{bn} c{cluster} is a development build (issue 39, -DGEMM_BN={bn}) that measured slower than "
            f"another build wherever it was timed: the chooser has no model of it and never picks it; give the "
            f"split yourself (split=...)"
        )
    raise CourseError(f"no configuration {bm}x{bn} with cluster {cluster}; the builds are {CONFIGS}")


def memory_floor_us(m: int, n: int, k: int, ctas: int, sms: int) -> float:
    """The problem's bytes through device memory (A, B read once, D written once): no faster than the
    device's STREAM_TBPS, nor than each SM pulls its CTAs' share at SM_STREAM_GBPS, wave after wave
    (``ctas`` CTAs, each an even share of the bytes, on ``sms`` SMs). The second binds where fewer
    CTAs than SMs stream (64 units of 64x64 at N = 4096: half the SMs) or a last wave is partial."""
    total = (m * k + n * k + m * n) * 2
    device_us = total / (STREAM_TBPS * 1e12) * 1e6
    per_sm = max(SM_STREAM_GBPS * 1e9, STREAM_TBPS * 1e12 / sms)  # at least its share of the device
    per_sm_us = wave_share(ctas, sms) * total / ctas / per_sm * 1e6
    return max(device_us, per_sm_us)


def reduction_tail_us(
    units: int, slots: int, cluster: int, split: int, partial_bytes: int, deterministic: bool = False
) -> float:
    """The split-K reduction after the last wave's K loops: it cannot start before the last bytes of A
    and B are in, so the memory floor does not hide it. The critical path is the last arriver's: its
    partial out, then every other partial in (its own too, deterministic), at the last wave's share of
    L2, then SPLIT_US of round trips. 0 unsplit."""
    if split <= 1:
        return 0.0
    busy = min(units - (math.ceil(units / slots) - 1) * slots, slots) * cluster
    l2_per_sm = L2_TBPS * 1e12 / max(busy, 1)
    reads = split - 1 + (1 if deterministic else 0)
    return partial_bytes * (1 + reads) / l2_per_sm * 1e6 + SPLIT_US


def estimate_streamk(
    m: int, n: int, k: int, sms: int, bn: int, cluster: int, deterministic: bool = False
) -> Choice | None:
    """The model's time for the Stream-K build of one configuration, or None where its schedule
    shares no tile (whole waves, or too few K-iterations: then it is the unsplit schedule)."""
    _modelled(128, bn, cluster)
    tile_m, tile_k, _ = kernel_shape()
    k_tiles = math.ceil(k / tile_k)
    tiles = math.ceil(math.ceil(m / tile_m) / cluster) * math.ceil(n / bn)
    slots = sms // cluster
    if slots < 1:
        return None
    s = streamk_schedule(tiles, k_tiles, slots)
    if s.sk_tiles == 0:
        return None
    k_tile_us = tile_m * bn * tile_k * 2 / (SM_TFLOPS * 1e12 * EFFICIENCY[(bn, cluster)]) * 1e6
    partial_bytes = tile_m * bn * 4
    l2_per_sm = L2_TBPS * 1e12 / (slots * cluster)
    worst = 0.0
    for u in range(s.sk_units):  # the slowest Stream-K unit: its iterations, fills and fixups
        pieces = s.pieces(u)
        us = sum(pc.k_end - pc.k_begin for pc in pieces) * k_tile_us + len(pieces) * FILL_US
        for pc in pieces:
            if pc.segs > 1:  # out, its share of the last arriver's reads, the round trips
                reads = (pc.segs - 1 + (1 if deterministic else 0)) / pc.segs
                us += partial_bytes * (1 + reads) / l2_per_sm * 1e6 + SPLIT_US
        worst = max(worst, us)
    dp_waves = s.dp_tiles // slots  # whole waves: the hybrid leaves no partial one
    compute_us = worst + dp_waves * (k_tiles * k_tile_us + FILL_US)
    memory_us = (m * k + n * k + m * n) * 2 / (STREAM_TBPS * 1e12) * 1e6
    est = launch_us(cluster) + max(compute_us, memory_us)
    return Choice(
        bn,
        cluster,
        1,
        s.units,
        dp_waves + 1,
        slots,
        est,
        deterministic,
        streamk=True,
        shared=s.shared_tiles(),
    )


def _rank(c: Choice) -> tuple[float, bool, bool, int, bool, int, int, int]:
    """Cheapest first; on a tie (candidates at the memory floor) the split-K build, the regular build,
    the one with more units (more SMs streaming), the 128-row tile, the smaller split, the wider tile,
    the bigger cluster."""
    return (c.est_us, c.streamk, c.small, -c.units, c.bm != 128, c.split, -c.bn, -c.cluster)


def _splits(
    m: int,
    n: int,
    k: int,
    sms: int,
    bn: int,
    cluster: int,
    deterministic: bool,
    bm: int = 128,
    small: bool = False,
) -> list[Choice]:
    found = (
        estimate(m, n, k, sms, bn, cluster, s, deterministic, bm, small) for s in range(1, MAX_SPLIT + 1)
    )
    return [c for c in found if c is not None]


def wastes_half(m: int) -> bool:
    """Whether 128-row tiles over M rows compute half or more zero rows (M <= 64): where the small
    builds are not candidates (the regular 64-row build measured faster there)."""
    return math.ceil(m / 128) * 128 >= 2 * m


def small_competes(m: int, k: int) -> bool:
    """Whether the small builds are candidates: K-loops of at most SMALL_MAX_K_TILES K-tiles, and
    M > 64 (there the regular 64-row build measured faster)."""
    return math.ceil(k / kernel_shape()[1]) <= SMALL_MAX_K_TILES and not wastes_half(m)


def candidates(
    m: int,
    n: int,
    k: int,
    sms: int,
    deterministic: bool = False,
    streamk: bool = False,
    rows64: bool = True,
    small: bool = True,
    along_n: bool = True,
) -> list[Choice]:
    """Every valid (configuration, split), cheapest first (``WIDE_CONFIGS`` and ``ALONG_N`` unsplit only);
    the 64-row builds too (clusters ``ROWS64_CLUSTERS``), and the small builds where ``small_competes``
    (``rows64=False``: neither, the 128-row builds only; ``small=False``: not the small builds;
    ``along_n=False``: no cluster along N); with ``streamk``, the Stream-K build of every
    configuration of ``CONFIGS`` (where its schedule shares a tile)."""
    # the wide widths were timed unsplit only: neither their split-K nor their Stream-K schedule
    out = [c for bn, cluster in WIDE_CONFIGS if (c := estimate(m, n, k, sms, bn, cluster, 1, deterministic))]
    if along_n:
        out += [c for bn in ALONG_N if (c := estimate(m, n, k, sms, bn, 2, 1, deterministic, along_n=True))]
    for bn, cluster in CONFIGS:
        out += _splits(m, n, k, sms, bn, cluster, deterministic)
        if rows64 and cluster in ROWS64_CLUSTERS:
            out += _splits(m, n, k, sms, bn, cluster, deterministic, bm=64)
        if streamk:
            c = estimate_streamk(m, n, k, sms, bn, cluster, deterministic)
            if c is not None:
                out.append(c)
    if small and rows64 and small_competes(m, k):
        for bn in SMALL_BNS:
            out += _splits(m, n, k, sms, bn, 1, deterministic, bm=64, small=True)
    out.sort(key=_rank)
    return out


def choose(
    m: int,
    n: int,
    k: int,
    sms: int,
    deterministic: bool = False,
    streamk: bool = False,
    rows64: bool = True,
    small: bool = True,
    along_n: bool = True,
) -> Choice:
    """The configuration and split the model expects to be fastest (``deterministic``: with
    split-K sums in split order, the same bits every launch; ``streamk``: the Stream-K build may be
    picked too, which the default leaves out until a GPU has measured it; ``small=False``: not the
    small builds; ``rows64=False``: the 128-row builds only; ``along_n=False``: no cluster along N)."""
    check_shape(m, n, k, kernel_shape()[2])
    if isinstance(sms, bool) or not isinstance(sms, int) or sms < 1:
        raise CourseError(f"the SM count must be a positive integer (got {sms!r})")
    return candidates(m, n, k, sms, deterministic, streamk, rows64, small, along_n)[0]


def best_for(
    m: int,
    n: int,
    k: int,
    sms: int,
    bn: int,
    cluster: int,
    deterministic: bool = False,
    bm: int = 128,
    small: bool = False,
    along_n: bool = False,
) -> Choice:
    """The cheapest split for one configuration (a build already compiled; along N, unsplit)."""
    _modelled(bm, bn, cluster, along_n)
    choose(m, n, k, sms)  # the shape's rule, once
    if along_n:
        return estimate(m, n, k, sms, bn, cluster, 1, deterministic, along_n=True)  # type: ignore[return-value]
    return min(_splits(m, n, k, sms, bn, cluster, deterministic, bm, small), key=_rank)


def defines(choice: Choice) -> dict[str, int]:
    """The -D flags that build the kernel for a choice (``GEMM_BN``, ``GEMM_CLUSTER``; ``GEMM_BM``
    for a 64-row tile and ``GEMM_SMALL`` for the small build; ``GEMM_STREAMK`` for a Stream-K
    choice, ``GEMM_DETERMINISTIC`` for a deterministic choice that shares a tile: unsplit, both
    builds are the same; ``GEMM_A_ROWS`` for a decode shape's short A box)."""
    out = {"GEMM_BN": choice.bn, "GEMM_CLUSTER": choice.cluster}
    if choice.along_n:
        out.update(GEMM_CLUSTER=1, GEMM_CLUSTER_N=2)
    if choice.bm != 128:
        out["GEMM_BM"] = choice.bm
    if choice.small:
        out["GEMM_SMALL"] = 1
    if choice.streamk:
        out["GEMM_STREAMK"] = 1
    if choice.deterministic and (choice.split > 1 or choice.streamk):
        out["GEMM_DETERMINISTIC"] = 1
    if choice.a_rows:
        out["GEMM_A_ROWS"] = choice.a_rows
    return out
