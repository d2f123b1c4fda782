"""A model of the ping-pong build's order (``kernels/gemm8_fp8.cu`` with ``-DGEMM_PROMOTE_PINGPONG=1``).

The build's two consumer warpgroups own whole 64 x 128 tiles (a CTA's units in pairs) and take
turns on the tensor cores chain by chain, ordered by two named barriers (``bar.sync`` to wait,
``bar.arrive`` to hand over; PTX ISA "bar, barrier"). This module transcribes, step by step, what
each warpgroup of each CTA of a cluster does: the producer's loads into the ring, each consumer's
turn waits, K-tile issues, stage releases and hand-overs, and runs them under many interleavings
with the hardware's rules:

- a named barrier's generation completes when 256 threads have arrived (a warpgroup is 128:
  one ``bar.sync`` and one ``bar.arrive``); ``bar.sync`` blocks until then, ``bar.arrive`` does not;
- a full barrier lets a consumer read ring slot ``it`` once the producer loaded it; the producer
  refills a slot once every CTA of the cluster released its previous K-tile (the multicast of B).

``simulate`` reports the order the chains were issued in, every barrier's arrivals and waits, and
raises ``OrderError`` on a deadlock or a barrier generation that one warpgroup arrived at twice.
No GPU, no CuPy: the CPU tests (``tests/lessons/day87/test_pingpong.py``) check that every chain is
issued in turn order, nothing deadlocks and every barrier is balanced at exit.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

WARPGROUP = 128  # threads a warpgroup brings to a named barrier
TURN_THREADS = 256  # kTurnThreads: both consumers count toward one barrier
STAGES = 8  # kStages of the ping-pong build (192 KiB of 24 KiB stages)

# The kernel's two conditions, as its lines read (test_pingpong checks the source still says so).
WAIT_TURN_SOURCE = "cons == 1 || (k0 > 0 && partner) || (k0 == 0 && pairUnit != firstUnit)"
HAND_OVER_SOURCE = "cons == 0 ? partner : (!lastChain || nextPair)"


class OrderError(RuntimeError):
    """The modelled kernel deadlocked, or a named barrier saw one warpgroup twice in a generation."""


@dataclass(frozen=True)
class Chain:
    """One turn: consumer ``cons`` issues K-tiles ``k0 .. k0 + length - 1`` of the CTA's unit ``unit``."""

    cons: int
    unit: int
    k0: int
    length: int


def chain_lengths(k_tiles: int, every: int) -> list[int]:
    """K-tiles per chain: ``every`` (the last chain what is left), or the whole K when ``every`` is 0."""
    if k_tiles < 1 or every < 0:
        raise ValueError(f"k_tiles must be >= 1 and every >= 0 (got {k_tiles}, {every})")
    step = every or k_tiles
    return [min(step, k_tiles - k0) for k0 in range(0, k_tiles, step)]


def turn_order(units: int, k_tiles: int, every: int) -> list[Chain]:
    """The CTA's turns as the kernel intends them: units in pairs (consumer 0's, consumer 1's), and in
    a pair, chain by chain, consumer 0's then consumer 1's; a last unit without a partner alone."""
    out: list[Chain] = []
    for first in range(0, units, 2):
        owners = 2 if first + 1 < units else 1
        k0 = 0
        for length in chain_lengths(k_tiles, every):
            out.extend(Chain(c, first + c, k0, length) for c in range(owners))
            k0 += length
    return out


def wait_turn(cons: int, k0: int, partner: bool, first_pair: bool) -> bool:
    """The kernel's ``waitTurn``: the turn before this chain's was the other consumer's."""
    return cons == 1 or (k0 > 0 and partner) or (k0 == 0 and not first_pair)


def hand_over(cons: int, partner: bool, last_chain: bool, next_pair: bool) -> bool:
    """The kernel's ``handOver``: the turn after this chain's is the other consumer's."""
    return partner if cons == 0 else (not last_chain or next_pair)


# One step of a warpgroup's program: what it does, on what.
Op = tuple[str, int]  # ("wait" | "arrive", barrier), ("load" | "issue" | "release", ring index)


def producer_program(units: int, k_tiles: int, every: int) -> tuple[list[Op], list[tuple[int, int]]]:
    """The producer's loads, in ring order, and what each ring index holds: (unit, K-tile)."""
    ops: list[Op] = []
    holds: list[tuple[int, int]] = []
    for first in range(0, units, 2):
        partner = first + 1 < units
        k0 = 0
        for length in chain_lengths(k_tiles, every):
            for unit in (first, first + 1) if partner else (first,):
                for kt in range(k0, k0 + length):
                    ops.append(("load", len(holds)))
                    holds.append((unit, kt))
            k0 += length
    return ops, holds


WaitRule = Callable[[int, int, bool, bool], bool]
HandRule = Callable[[int, bool, bool, bool], bool]


def consumer_program(
    cons: int,
    units: int,
    k_tiles: int,
    every: int,
    waits: WaitRule = wait_turn,
    hands: HandRule = hand_over,
) -> tuple[list[Op], list[tuple[int, int]]]:
    """Consumer ``cons``'s steps, as the kernel's loop takes them, and the (unit, K-tile) it believes
    each issued ring index holds. ``waits`` and ``hands`` are the turn rules (the kernel's by default;
    the tests pass broken ones to see the model catch them)."""
    ops: list[Op] = []
    reads: list[tuple[int, int]] = []
    it = 0
    for first in range(0, units, 2):
        unit = first + cons
        if unit >= units:
            break
        partner = first + 1 < units
        next_pair = first + 2 < units
        k0 = 0
        lengths = chain_lengths(k_tiles, every)
        for i, length in enumerate(lengths):
            last_chain = i == len(lengths) - 1
            if cons == 1:
                it += length  # consumer 0's K-tiles of this chain
            if waits(cons, k0, partner, first == 0):
                ops.append(("wait", cons))
            for j in range(length):
                ops.append(("issue", it))
                reads.append((unit, k0 + j))
                if j > 0:
                    ops.append(("release", it - 1))  # after wait_group 1
                it += 1
            if hands(cons, partner, last_chain, next_pair):
                ops.append(("arrive", cons ^ 1))
            ops.append(("release", it - 1))  # after wait_group 0
            if cons == 0 and partner:
                it += length  # consumer 1's K-tiles of this chain
            k0 += length
    return ops, reads


@dataclass
class Barrier:
    """One named barrier: threads arrived in the current generation, and who brought them."""

    arrived: int = 0
    by: list[tuple[int, int]] = field(default_factory=list)  # (cta, consumer) of this generation
    generation: int = 0
    arrives: int = 0  # bar.arrive executed, all generations
    waits: int = 0  # bar.sync executed, all generations


@dataclass
class Outcome:
    """What one interleaving did."""

    issued: list[list[tuple[int, int, int]]]  # per CTA: (consumer, unit, K-tile) in issue order
    barriers: list[dict[int, Barrier]]  # per CTA: barrier id -> its counts at exit
    steps: int


def simulate(
    units: int,
    k_tiles: int,
    every: int,
    cluster: int = 1,
    stages: int = STAGES,
    seed: int = 0,
    waits: WaitRule = wait_turn,
    hands: HandRule = hand_over,
) -> Outcome:
    """Run the CTAs of one cluster (each with ``units`` units) under one random interleaving."""
    rng = random.Random(seed)
    prod_ops, holds = producer_program(units, k_tiles, every)
    programs: list[tuple[int, int, list[Op]]] = []  # (cta, role: -1 producer / consumer, ops)
    beliefs: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for cta in range(cluster):
        programs.append((cta, -1, prod_ops))
        for cons in (0, 1):
            ops, reads = consumer_program(cons, units, k_tiles, every, waits, hands)
            programs.append((cta, cons, ops))
            beliefs[(cta, cons)] = reads
    pc = [0] * len(programs)
    blocked_gen: dict[int, int] = {}  # program index -> barrier generation it waits to complete
    loaded: list[set[int]] = [
        set() for _ in range(cluster)
    ]  # ring indices whose full barrier completed, per CTA
    released: dict[int, int] = {}  # ring index -> CTAs that released it
    bars = [{0: Barrier(), 1: Barrier()} for _ in range(cluster)]
    issued: list[list[tuple[int, int, int]]] = [[] for _ in range(cluster)]
    issue_count = [{0: 0, 1: 0} for _ in range(cluster)]
    steps = 0

    def ready(i: int) -> bool:
        cta, role, ops = programs[i]
        if pc[i] >= len(ops):
            return False
        if i in blocked_gen:
            bar = bars[cta][programs[i][1]]
            return bar.generation > blocked_gen[i]
        kind, arg = ops[pc[i]]
        if kind == "load":  # the slot's previous K-tile released by every CTA of the cluster
            return arg < stages or released.get(arg - stages, 0) == cluster
        if kind == "issue":
            return arg in loaded[cta]
        return True

    while True:
        live = [i for i in range(len(programs)) if pc[i] < len(programs[i][2])]
        if not live:
            break
        runnable = [i for i in live if ready(i)]
        if not runnable:
            where = [
                f"cta {programs[i][0]} {'producer' if programs[i][1] < 0 else f'consumer {programs[i][1]}'} "
                f"at {programs[i][2][pc[i]]}"
                for i in live
            ]
            raise OrderError(f"deadlock after {steps} steps: " + "; ".join(where))
        i = rng.choice(runnable)
        cta, role, ops = programs[i]
        steps += 1
        if i in blocked_gen:  # its bar.sync's generation completed: go on
            del blocked_gen[i]
            pc[i] += 1
            continue
        kind, arg = ops[pc[i]]
        if kind == "load":
            loaded[cta].add(arg)
        elif kind == "issue":
            unit, kt = beliefs[(cta, role)][issue_count[cta][role]]
            if holds[arg] != (unit, kt):
                raise OrderError(
                    f"cta {cta} consumer {role} read ring index {arg} as unit {unit} K-tile {kt}, "
                    f"but the producer loaded unit {holds[arg][0]} K-tile {holds[arg][1]} there"
                )
            issue_count[cta][role] += 1
            issued[cta].append((role, unit, kt))
        elif kind == "release":
            released[arg] = released.get(arg, 0) + 1
        else:  # a named barrier: "wait" (bar.sync) or "arrive" (bar.arrive)
            bar = bars[cta][arg]
            if (cta, role) in bar.by:
                raise OrderError(
                    f"cta {cta} barrier {arg}: consumer {role} arrived twice in generation "
                    f"{bar.generation} (hardware would complete it with nobody else)"
                )
            bar.by.append((cta, role))
            bar.arrived += WARPGROUP
            if kind == "wait":
                bar.waits += 1
            else:
                bar.arrives += 1
            if bar.arrived == TURN_THREADS:
                bar.arrived, bar.by = 0, []
                bar.generation += 1
                if kind == "wait":  # completed by its own arrival: no blocking
                    pc[i] += 1
                    continue
            if kind == "wait":
                blocked_gen[i] = bar.generation
                continue
        pc[i] += 1
    return Outcome(issued, bars, steps)


def expected_issues(units: int, k_tiles: int, every: int) -> list[tuple[int, int, int]]:
    """(consumer, unit, K-tile) in the order the turns should reach the tensor cores."""
    return [
        (c.cons, c.unit, kt) for c in turn_order(units, k_tiles, every) for kt in range(c.k0, c.k0 + c.length)
    ]
