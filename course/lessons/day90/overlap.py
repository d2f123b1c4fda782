"""One consumer warpgroup of attn90_overlap.cu on the CPU: its wgmma groups and its registers.

wgmma is asynchronous (PTX ISA, "wgmma.mma_async"): ``wgmma.commit_group`` closes the wgmmas
issued since the last commit into one group, and ``wgmma.wait_group N`` waits until at most
``N`` of the warpgroup's groups are pending, the oldest completing first. Until its group has
completed, a wgmma's accumulator must not be read or written, nor its A registers written, by
other instructions (PTX ISA, "wgmma.mma_async": accessing them before the wait is undefined).
The model tracks the kernel's arrays (S, P, O), not the physical registers ptxas gives them.

The kernel's consumer, per key tile after the first (the overlap snippet)::

    issue S(kt) = Q K(kt)^T; commit       # group 1
    issue O += P(kt-1) V(kt-1); commit    # group 2
    wait_group 1                          # S(kt) has completed; P V may run on
    softmax(S(kt))                        # under this warpgroup's own P V
    wait_group 0                          # P V has completed
    rescale O; P(kt) = FP16(S(kt))

``program`` writes those operations for a CTA of ``tiles`` key tiles, for the kernel and for the
variants the page and the quiz discuss (``VARIANTS``); ``play`` runs one against the rules above
and reports every hazard (an operation touching registers a pending group owns), which
softmaxes ran under a pending P V, and the most registers live at once. ``rows`` is the page's
schedule: one line per operation with the groups pending after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

VARIANTS = (
    "kernel",  # attn90_overlap.cu
    "day89",  # Day 89's order: S, wait 0, softmax, P V, wait 0: nothing under the softmax
    "wait-0",  # the kernel's order with wait_group 0 where it has 1: correct, no overlap
    "pv-first",  # P V committed before S, then wait_group 1: the softmax reads a pending S
    "rescale-early",  # O rescaled before wait_group 0: P V still accumulates into O
)
# What ptxas makes of the two broken variants (tests/lessons/day90/test_compile.py builds both):
# it sees a non-wgmma instruction touch a pending wgmma's accumulator and serializes the wgmmas
# (info C7514), so the build is correct and the overlap is gone. The PTX ISA calls the access
# itself undefined; the model lists it as a hazard.


@dataclass(frozen=True)
class Op:
    kind: str  # "S", "PV" (issue and commit a group), "wait", "softmax", "rescale", "pack"
    arg: int  # the key tile (S, PV, softmax, pack, rescale) or N of wait_group N


def program(tiles: int, variant: str = "kernel") -> list[Op]:
    """One consumer warpgroup's operations for a CTA of ``tiles`` key tiles (tiles >= 1)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; the variants are {', '.join(VARIANTS)}")
    if tiles < 1:
        raise ValueError(f"a CTA has at least one key tile; got tiles={tiles}")
    ops = [Op("S", 0), Op("wait", 0), Op("softmax", 0), Op("pack", 0)]
    if variant == "day89":
        for kt in range(1, tiles):
            ops += [Op("PV", kt - 1), Op("wait", 0), Op("S", kt), Op("wait", 0), Op("softmax", kt)]
            ops += [Op("rescale", kt), Op("pack", kt)]
        return [*ops, Op("PV", tiles - 1), Op("wait", 0)]
    for kt in range(1, tiles):
        first, second = (
            (Op("PV", kt - 1), Op("S", kt)) if variant == "pv-first" else (Op("S", kt), Op("PV", kt - 1))
        )
        ops += [first, second, Op("wait", 0 if variant == "wait-0" else 1), Op("softmax", kt)]
        if variant == "rescale-early":
            ops += [Op("rescale", kt), Op("wait", 0), Op("pack", kt)]
        else:
            ops += [Op("wait", 0), Op("rescale", kt), Op("pack", kt)]
    return [*ops, Op("PV", tiles - 1), Op("wait", 0)]


@dataclass(frozen=True)
class Registers:
    """Floats (32-bit registers) a thread holds for each array, from the kernel's constants:
    kSAccRegs = 64 * kBN / 128, kOAccRegs = 64 * D / 128, P: two FP16 values a register."""

    s: int
    o: int

    @property
    def p(self) -> int:
        return self.s // 2

    @classmethod
    def of(cls, head_dim: int) -> Registers:
        bn = 128 - 64 * (head_dim // 256)  # kBN
        return cls(s=64 * bn // 128, o=64 * head_dim // 128)


@dataclass
class Played:
    hazards: list[str] = field(default_factory=list)  # what touched a pending group's registers
    overlapped: list[int] = field(default_factory=list)  # tiles whose softmax ran under a pending P V
    rows: list[tuple[Op, tuple[str, ...]]] = field(default_factory=list)  # each op, then pending groups
    most_s: int = 0  # most FP32 S accumulators live at once
    most_registers: int = 0  # most S + P + O registers live at once (a thread's arrays, nothing else)


def _group(op: Op) -> str:
    return f"S({op.arg})" if op.kind == "S" else f"PV({op.arg})"


def play(ops: list[Op], regs: Registers | None = None) -> Played:
    """Run one warpgroup's operations against wgmma's rules; never raises on a hazard, lists it.
    ``regs``: the array sizes whose live total is counted (default: the D = 128 build's)."""
    regs = regs or Registers.of(128)
    out = Played()
    pending: list[Op] = []  # committed groups, oldest first
    live_s: set[int] = set()  # S accumulators, from their issue to their pack into P
    p_tile: int | None = None  # the tile whose FP16 P is live: from its pack to its P V's completion
    for op in ops:
        pv_pending = any(g.kind == "PV" for g in pending)  # a P V group owns O and P
        if op.kind == "wait":
            while len(pending) > op.arg:
                done = pending.pop(0)
                if done.kind == "PV" and done.arg == p_tile:
                    p_tile = None
        elif op.kind in ("S", "PV"):
            pending.append(op)
            if op.kind == "S":
                live_s.add(op.arg)
        elif op.kind == "softmax":
            if any(g.kind == "S" and g.arg == op.arg for g in pending):
                out.hazards.append(f"softmax({op.arg}) reads S({op.arg}) while its group is pending")
            if pv_pending:
                out.overlapped.append(op.arg)
        elif op.kind == "rescale":
            if pv_pending:
                out.hazards.append(f"rescale({op.arg}) writes O while a P V group accumulates into it")
        elif op.kind == "pack":
            if pv_pending:
                out.hazards.append(f"pack({op.arg}) writes P while a P V group reads it as A")
            live_s.discard(op.arg)
            p_tile = op.arg
        out.rows.append((op, tuple(_group(g) for g in pending)))
        out.most_s = max(out.most_s, len(live_s))
        p_regs = regs.p if p_tile is not None else 0
        out.most_registers = max(out.most_registers, len(live_s) * regs.s + p_regs + regs.o)
    if pending:
        out.hazards.append(f"{len(pending)} group(s) still pending at the end")
    return out


def rows(tiles: int, variant: str = "kernel") -> list[str]:
    """The page's schedule: one line per operation, with the groups pending after it."""
    played = play(program(tiles, variant))
    names = {
        "S": "issue S({}) = Q K({})^T, commit",
        "PV": "issue O += P({}) V({}), commit",
        "softmax": "softmax of S({})",
        "rescale": "rescale O by S({})'s factors",
        "pack": "P({}) = FP16(S({}))",
    }
    lines = []
    for op, pend in played.rows:
        text = f"wait_group {op.arg}" if op.kind == "wait" else names[op.kind].format(op.arg, op.arg)
        lines.append(f"{text:<38} pending: {', '.join(pend) if pend else '-'}")
    return lines
