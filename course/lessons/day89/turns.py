"""The ping-pong turns of attn89_pingpong.cu on the CPU: two named barriers, warp by warp.

A named barrier (PTX ISA, "bar, barrier") counts the threads that reach it: ``bar.sync a, b``
adds the calling warp's 32 and waits; ``bar.arrive a, b`` adds them and goes on; when the count
reaches ``b`` the barrier releases every warp waiting on it and counts again from 0. The kernel's
two consumers (4 warps each) use barriers 1 and 2 with b = 256, in this order (the consumer
snippet and ``qkTile``)::

    if (cons == 0) turnPass(0);          # consumer 0 gives itself the first turn
    turnWait(cons);
    for kt in 0..n-1:
        issue S(kt); turnPass(1 - cons)  # qkTile: issue, commit, pass, then wait for S
        softmax ...
        turnWait(cons); issue PV(kt)
    if (cons == 0) turnPass(1);          # consumer 0's last turn, for consumer 1's last P V

``run`` plays those programs (``program``), one warp step at a time, in an order a seeded
random generator picks among the warps that can move, and reports what happened: every GEMM
issue in order, whether every warp finished (else who is stuck where), and each barrier's count
at the end. The tests run it for many tile counts and orders, and for the broken variants the
page and the quiz name (``VARIANTS``).

The turns are not the consumers' only waits: K and V come through a ring of ``STAGES`` stages
(``ATTN_STAGES``), and the producer refills a stage only when both consumers have released it
(``empty[stage]`` counts one arrival per consumer, after its P V of that tile). So S(kt) can be
issued only once both consumers have issued P V(kt - STAGES). ``run`` plays that rule too
(``stages=None`` leaves it out): a variant whose turns alone finish can still hang on the ring,
as passing to oneself does on an H100 (``evidence/h100-80gb-hbm3/day89.pass-to-self.json``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

WARPS = 4  # warps per consumer warpgroup
THREADS = 256  # kTurnThreads: one warpgroup's bar.sync and the other's bar.arrive
FIRST_BARRIER = 1  # kTurnBarrier: consumer c waits on barrier 1 + c
STAGES = 2  # ATTN_STAGES: the K/V ring's depth in the kernel's default build

# The kernel as written, and the variants the page and the quiz discuss.
VARIANTS = (
    "kernel",  # attn89_pingpong.cu
    "no-last-pass",  # consumer 0 skips the pass after its loop
    "both-last-pass",  # consumer 1 passes one after its loop too
    "no-first-pass",  # nobody gives consumer 0 its first turn
    "pass-to-self",  # qkTile passes to its own barrier (turnPass(cons))
)


@dataclass(frozen=True)
class Step:
    op: str  # "sync", "arrive", "S", "PV"
    arg: int  # the barrier (sync, arrive) or the key tile (S, PV)


def program(cons: int, tiles: int, variant: str = "kernel") -> list[Step]:
    """One consumer warp's steps for a CTA of ``tiles`` key tiles."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; the variants are {', '.join(VARIANTS)}")
    mine, other = FIRST_BARRIER + cons, FIRST_BARRIER + 1 - cons
    to = mine if variant == "pass-to-self" else other
    steps = []
    if cons == 0 and variant != "no-first-pass":
        steps.append(Step("arrive", mine))
    steps.append(Step("sync", mine))
    for kt in range(tiles):
        steps += [Step("S", kt), Step("arrive", to), Step("sync", mine), Step("PV", kt)]
    if (cons == 0 and variant != "no-last-pass") or (cons == 1 and variant == "both-last-pass"):
        steps.append(Step("arrive", other))
    return steps


@dataclass
class Outcome:
    issued: list[tuple[int, int, str, int]] = field(default_factory=list)  # (consumer, warp, "S"|"PV", tile)
    stuck: list[tuple[int, int, Step]] = field(default_factory=list)  # warps that never finished
    counts: dict[int, int] = field(default_factory=dict)  # each barrier's count at the end

    @property
    def finished(self) -> bool:
        return not self.stuck

    @property
    def balanced(self) -> bool:
        return all(c == 0 for c in self.counts.values())

    def turns(self) -> list[tuple[int, int]]:
        """(consumer, turn) of every issue in order: turn 0 is S(0), turn t > 0 is PV(t-1) and S(t)."""
        return [(c, tile + (kind == "PV")) for c, _, kind, tile in self.issued]


def run(tiles: int, seed: int = 0, variant: str = "kernel", stages: int | None = STAGES) -> Outcome:
    """Play both consumers' warps to the end, or until none can move (a hang). With ``stages``,
    S(kt) waits for the ring: both consumers' warp 0 (the thread that releases the stage) past
    P V(kt - stages)."""
    rng = random.Random(seed)
    programs = {(c, w): program(c, tiles, variant) for c in (0, 1) for w in range(WARPS)}
    at = dict.fromkeys(programs, 0)  # next step of each warp
    waiting: dict[tuple[int, int], int] = {}  # warp -> the barrier generation it waits to see complete
    count = {FIRST_BARRIER: 0, FIRST_BARRIER + 1: 0}
    generation = dict.fromkeys(count, 0)
    released = [0, 0]  # key tiles each consumer has released to the producer (its warp 0's P V)
    out = Outcome()

    def loaded(step: Step) -> bool:  # K(kt) is in its stage: the producer had the stage back
        return step.op != "S" or stages is None or step.arg < stages or min(released) > step.arg - stages

    while True:
        movable = [
            k
            for k in programs
            if at[k] < len(programs[k])
            and (k not in waiting or generation[programs[k][at[k]].arg] > waiting[k])
            and loaded(programs[k][at[k]])
        ]
        if not movable:
            break
        k = rng.choice(movable)
        step = programs[k][at[k]]
        if k in waiting:  # its barrier completed: past the bar.sync
            del waiting[k]
            at[k] += 1
            continue
        if step.op in ("S", "PV"):
            out.issued.append((k[0], k[1], step.op, step.arg))
            at[k] += 1
            if step.op == "PV" and k[1] == 0:
                released[k[0]] += 1
            continue
        count[step.arg] += 32
        if count[step.arg] == THREADS:
            count[step.arg] = 0
            generation[step.arg] += 1
            if step.op == "sync":  # the last arrival: it does not wait
                at[k] += 1
                continue
        if step.op == "sync":
            waiting[k] = generation[step.arg]
        else:
            at[k] += 1
    out.stuck = [(k[0], k[1], programs[k][at[k]]) for k in programs if at[k] < len(programs[k])]
    out.counts = count
    return out


def in_turn_order(outcome: Outcome) -> bool:
    """Every issue of one turn comes before any issue of the next: consumer 0's turn t, then
    consumer 1's turn t, then consumer 0's turn t + 1."""
    keys = [2 * turn + c for c, turn in outcome.turns()]
    return keys == sorted(keys)


def schedule_lines(tiles: int) -> list[str]:
    """The order of the turns for a CTA of ``tiles`` key tiles, one line per turn, from ``run``."""
    outcome = run(tiles)
    lines: list[str] = []
    last: tuple[int, int] | None = None
    for (c, turn), (_, w, kind, tile) in zip(outcome.turns(), outcome.issued, strict=True):
        if w:
            continue  # warp 0 speaks for its warpgroup
        gemm = f"S({tile}) = Q K({tile})^T" if kind == "S" else f"O += P({tile}) V({tile})"
        if (c, turn) != last:
            lines.append(f"turn {turn}, consumer {c}: {gemm}")
            last = (c, turn)
        else:
            lines[-1] += f", then {gemm}"
    return lines
