"""Day 76's benchmark: the TMA tile kernel against a copy of the same bytes.

The kernel is a copy with a +1 on the way, so its yardstick is memory
bandwidth: bytes read plus bytes written over time. Peers, in the same run
on the same buffers: CuPy's own ``x + 1`` (``cupy.add(x, 1, out=y)``) and a
plain device-to-device copy (``cudaMemcpyAsync``), which must reproduce
the input rather than input + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...bench.arith import copy_bytes, floor_ms
from ...bench.peers import device_copy
from ...bench.result import BenchResult, Reason, SizeRow
from ...bench.spec import BenchSpec, Context, Extras, Peer

PEER_ADD = "x + 1 (CuPy)"
PEER_COPY = "D2D copy"
COPY_CEILING = f"{PEER_COPY}, best of the run"
# A lead from an earlier H200 run, used only when a run measured no copy, and labelled so.
LEAD_COPY_BYTES_PER_S = 4.3e12


def _add(work: Any, j: int) -> None:  # work: this lesson's TileWorkload
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    cp.add(work.x[j], np.float32(1.0), out=work.y[j])


def _copy(work: Any, j: int) -> None:
    device_copy(work.y[j], work.x[j])


def _input(work: Any) -> Any:
    return work.x[0]  # a copy must reproduce its input


def peers() -> tuple[Peer, ...]:
    return (Peer(PEER_ADD, _add), Peer(PEER_COPY, _copy, want=_input))


def reasons(rows: Sequence[SizeRow], sms: int) -> tuple[Reason, ...]:
    """What the numbers say, from the rows of one run."""
    if not rows:
        return ()
    small, large = rows[0], rows[-1]
    copies = [r.peer(PEER_COPY).rate for r in rows if any(p.name == PEER_COPY for p in r.peers)]
    best, source = (
        (max(copies) * 1e9, "the best copy rate of this run")
        if copies
        else (LEAD_COPY_BYTES_PER_S, "a lead from an earlier H200 run")
    )
    us = small.kernel.timing.median_ms * 1e3
    from .figures import tma_tile_plan  # heavy: matplotlib (the figures), when the plan is asked for

    ctas = len(tma_tile_plan(small.size))
    out = [
        Reason(
            "Small sizes measure the launch, not the memory",
            us,
            "µs",
            "measured",
            f"at N={small.size} the kernel moves {small.work / 1e6:.2f} MB in {us:.1f} µs with "
            f"{ctas} CTAs on {sms} SMs; at {best / 1e12:.2f} TB/s ({source}) those bytes take "
            f"{floor_ms(small.work, best) * 1e3:.2f} µs. The rest is launch and one tile's latency.",
        )
    ]
    if copies:
        copy = large.peer(PEER_COPY)
        out.append(
            Reason(
                "Against a plain device-to-device copy of the same bytes",
                copy.ratio,
                "x",
                "measured",
                f"at N={large.size}: kernel {large.kernel.rate:,.0f} GB/s, copy {copy.rate:,.0f} GB/s. One "
                "thread issues each 16 KiB tile load and the CTA waits for it before storing (read from the "
                "code): each CTA has one load in flight, so only the other resident CTAs hide its latency.",
            )
        )
    return tuple(out)


def finish(ctx: Context) -> Extras:
    best_copy = max(r.peer(PEER_COPY).rate for r in ctx.rows)
    return Extras(reasons=reasons(ctx.rows, ctx.sms), ceilings={COPY_CEILING: best_copy})


def findings(result: BenchResult) -> list[str]:
    """The sentences the page quotes, from the recorded numbers."""
    small, large = result.rows[0], result.rows[-1]
    add, copy = large.peer(PEER_ADD), large.peer(PEER_COPY)
    us = small.kernel.timing.median_ms * 1e3
    return [
        f"At the smallest size, N = {small.size}, the kernel takes {us:.1f} µs for {small.work / 1e6:.2f} MB "
        f"({small.kernel.rate:,.0f} GB/s): it measures the launch and one tile's round trip, not the memory.",
        f"At N = {large.size} it moves {large.kernel.rate:,.0f} GB/s: {copy.ratio:.2f}x the device-to-device "
        f"copy of the same bytes ({copy.rate:,.0f} GB/s) and {add.ratio:.2f}x CuPy's x + 1 "
        f"({add.rate:,.0f} GB/s).",
    ]


SPEC = BenchSpec(
    sizes=(256, 512, 1024, 2048, 4096, 8192, 16384),
    page_sizes=(256, 1024, 4096, 8192),
    max_size=32768,
    unit="GB/s",
    work=copy_bytes,
    set_bytes=copy_bytes,
    kernel_label="loadTileTma (TMA tile load, +1, store)",
    peers=peers,
    finish=finish,
    findings=findings,
    notes=(
        "rates count N*N*4 bytes read plus N*N*4 written",
        "D2D copy: cudaMemcpyAsync device to device; x + 1: cupy.add(x, float32(1), out=y), preallocated",
        "checked bit for bit on random inputs before timing (the copy against the input)",
    ),
)
