"""The Day 86 kernel's chooser: tile shape, cluster and split of K per problem.

The lesson's chooser is course/lessons/day86/chooser.py (the same model, the
tile read from the kernel); this copy stays standalone for the staged dev
bench (stage86.sh copies it without the course package), and
tests/lessons/day86/test_chooser.py holds the two to the same picks.

A small model of a persistent GEMM on an SM-count-sized grid, not a table
of measured winners. For every configuration the kernel can be compiled
in (tile 128 x BN with BN in {256, 128}, cluster of 1 or 2 CTAs along M)
and every split of K, it estimates the time as

    full waves x (K-tiles per unit x time of one K-tile + fixed cost per unit)
    + the last, partial wave at its share + split-K reduction traffic

with the terms, the constants and their sources as the lesson's chooser
states them (its docstring): a lone unit of the last wave priced at
LONE_UNIT of a full wave, rising linearly to 1; one SM's rate
SM_TFLOPS scaled by the SM count; not datasheet rates.
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

# Model constants (round figures, not fitted per shape): as the lesson's chooser.
SM_TFLOPS = 5.0  # dense FP16 TFLOP/s one SM sustains in a cuBLAS-class kernel: 660 over 132 SMs
STREAM_TBPS = 4.0  # device memory a streaming kernel reaches on an H200 (datasheet 4.8; H100 SXM 3.35)
L2_TBPS = 8.0  # L2 bandwidth for the split-K workspace traffic, TB/s, shared by the busy SMs
FILL_US = 1.0  # per unit: the ring's first load latency + the part of the epilogue not overlapped
LAUNCH_US = 2.5  # launch and teardown of one persistent kernel
SPLIT_US = 3.0  # per split unit: the reduction's round trips (stores, fence, counter, the last one's reads)
LONE_UNIT = 0.65  # one unit alone in the last wave, as a fraction of a full wave
EFFICIENCY = {  # fraction of SM_TFLOPS a K-tile loop sustains, by (BN, cluster)
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
    per_sm_flops = SM_TFLOPS * 1e12 * EFFICIENCY[(bn, cluster)]
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
    full, rest = divmod(units, slots)
    share = float(full)
    if rest:
        lone = LONE_UNIT
        share += lone + (1.0 - lone) * ((rest - 1) / (slots - 1) if slots > 1 else 1.0)
    compute_us = share * unit_us
    memory_us = (m * k + n * k + m * n) * 2 / (STREAM_TBPS * 1e12) * 1e6
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
