"""The Day 86 kernel's chooser: tile shape, cluster and split of K per problem.

The lesson's chooser is course/lessons/day86/chooser.py (the same model, the
tile read from the kernel); this copy stays standalone for the staged dev
bench (stage86.sh copies it without the course package), and
tests/lessons/day86/test_chooser.py holds the two to the same picks.

A small model of a persistent GEMM on an SM-count-sized grid, not a table
of measured winners. For every configuration the kernel can be compiled
in (tile 128 x BN with BN in {256, 128}, cluster of 1 or 2 CTAs along M)
and every split of K, it estimates the time as

    waves x (K-tiles per unit x time of one K-tile + fixed cost per unit)
    + split-K reduction traffic

where

- units = ceil(ceil(M / 128) / cluster) x ceil(N / BN) x split are handed
  out round-robin to SMs // cluster clusters, so the last wave counts
  whole (wave quantization: a wave that is 10% full costs as much as a
  full one);
- one K-tile of a 128 x BN tile is 128 x BN x 64 x 2 FLOP at the SM's
  share of the dense FP16 rate, times an efficiency that is lower for the
  narrower tile (128 x 128 does half the MMA work of 128 x 256 per K-tile
  for two thirds of the staged bytes, and its wgmmas are shorter) and for
  a cluster of one (no multicast: every CTA loads its own B from L2);
- the fixed cost per unit is the ring's fill (the first K-tile's load
  latency) and the epilogue that does not overlap the next unit;
- split-K adds, per unit, the partial written to the workspace and, for
  the last split of a tile, the other partials read back, at the SM's
  share of L2 bandwidth;
- the whole problem cannot run faster than its bytes through device
  memory (A, B read once, D written once) allow.

The constants are round figures for an H100/H200-class part (the
datasheet's dense FP16 rate and memory bandwidth, an L2 bandwidth and
latencies of the right order), named below. ``choose`` returns the
cheapest estimate and the whole ranked list, so a caller can report what
was chosen and why.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

TILE_M = 128
TILE_K = 64
CONFIGS: tuple[tuple[int, int], ...] = (
    (256, 2),
    (256, 1),
    (128, 2),
    (128, 1),
    (64, 2),
    (64, 1),
)  # (BN, cluster)
MAX_SPLIT = 8

# Model constants (round figures, not fitted per shape).
PEAK_TFLOPS = 660.0  # dense FP16 rate a good kernel sustains on an H200 (cuBLAS-class), TFLOP/s
MEM_TBPS = 4.0  # device-memory bandwidth reached by a streaming kernel, TB/s
L2_TBPS = 8.0  # L2 bandwidth for the split-K workspace traffic, TB/s
FILL_US = 1.0  # per unit: the ring's first load latency + the part of the epilogue not overlapped
LAUNCH_US = 2.5  # launch and teardown of one persistent kernel
SPLIT_US = 3.0  # per split unit: the reduction's round trips (stores, fence, counter, the last one's reads)
EFFICIENCY = {  # fraction of PEAK_TFLOPS a K-tile loop sustains, by (BN, cluster)
    (256, 2): 1.00,
    (256, 1): 0.96,
    (128, 2): 0.86,
    (128, 1): 0.83,
    (64, 2): 0.70,
    (64, 1): 0.67,
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

    @property
    def config(self) -> str:
        return f"128x{self.bn} c{self.cluster}"

    def describe(self) -> str:
        return (
            f"tile 128x{self.bn}, cluster {self.cluster}, split {self.split}: {self.units} units "
            f"on {self.slots} clusters = {self.waves} wave(s), model {self.est_us:.1f} us"
        )


def estimate(m: int, n: int, k: int, sms: int, bn: int, cluster: int, split: int) -> Choice | None:
    """The model's time for one configuration and split, or None if the split is invalid."""
    k_tiles = math.ceil(k / TILE_K)
    if split < 1 or split > k_tiles:
        return None
    tiles_m = math.ceil(m / TILE_M)
    tiles_n = math.ceil(n / bn)
    cluster_tiles_m = math.ceil(tiles_m / cluster)
    units = cluster_tiles_m * tiles_n * split
    slots = sms // cluster
    waves = math.ceil(units / slots)
    per_sm_flops = PEAK_TFLOPS * 1e12 / sms * EFFICIENCY[(bn, cluster)]
    k_tile_us = TILE_M * bn * TILE_K * 2 / per_sm_flops * 1e6
    unit_us = math.ceil(k_tiles / split) * k_tile_us + FILL_US
    if split > 1:
        # Each unit writes its FP32 partial; the last of a tile reads split - 1 of them. Only
        # the busy SMs share L2, spread over the units of one wave. And the reduction is a
        # chain of round trips through L2 that nothing overlaps (SPLIT_US).
        partial_bytes = TILE_M * bn * 4
        busy = min(units, slots) * cluster
        l2_per_sm = L2_TBPS * 1e12 / max(busy, 1)
        unit_us += (partial_bytes + partial_bytes * (split - 1) / split) / l2_per_sm * 1e6 + SPLIT_US
    compute_us = waves * unit_us
    memory_us = (m * k + n * k + m * n) * 2 / (MEM_TBPS * 1e12) * 1e6
    est = LAUNCH_US + max(compute_us, memory_us)
    return Choice(bn, cluster, split, units, waves, slots, est)


def candidates(m: int, n: int, k: int, sms: int) -> list[Choice]:
    """Every valid (configuration, split), cheapest first."""
    out = []
    for bn, cluster in CONFIGS:
        for split in range(1, MAX_SPLIT + 1):
            c = estimate(m, n, k, sms, bn, cluster, split)
            if c is not None:
                out.append(c)
    out.sort(key=lambda c: (c.est_us, c.split, -c.bn, -c.cluster))
    return out


def choose(m: int, n: int, k: int, sms: int) -> Choice:
    """The configuration and split the model expects to be fastest."""
    if m < 1 or n < 8 or k < 8 or n % 8 or k % 8:
        raise ValueError(
            f"{m}x{n}x{k}: N and K must be positive multiples of 8 (a TMA row stride is a "
            "multiple of 16 bytes), M at least 1"
        )
    return candidates(m, n, k, sms)[0]


TABLE = [
    (512, 512, 512),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (4096, 11008, 4096),
    (4096, 4096, 11008),
    (8192, 8192, 1024),
    (16384, 4096, 4096),
    (2048, 28672, 8192),
    (128, 8192, 8192),
    (1024, 1024, 16384),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("shape", nargs="*", type=int, help="M N K (default: the shape table)")
    args = ap.parse_args()
    shapes = [tuple(args.shape)] if args.shape else TABLE
    for m, n, k in shapes:
        c = choose(m, n, k, args.sms)
        print(f"{m:6d} x {n:6d} x {k:6d}: {c.describe()}")


if __name__ == "__main__":
    main()
