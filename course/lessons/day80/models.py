"""CPU model for Day 80's coding exercise: the producer's walk around the ring of stages.

``kernels/gemm2_pipeline.cu`` keeps ``kStages`` tiles in flight. Its producer
thread, for K-tile ``kt``, waits until the stage it is about to refill has
been released by the consumer, arms that stage's ``full`` barrier, copies
the two boxes into that stage, and moves to the next stage, flipping its
phase bit when the ring wraps. :func:`producer_step` states what step ``i``
of that walk must do, from two definitions rather than from the kernel's
lines: the ring (k-tile i uses stage i mod kStages, for the
(i div kStages)-th time) and the PTX ISA's mbarrier phase rule (a wait on
parity p returns once the barrier's phase with parity p has completed, and
a freshly initialised barrier counts the phase before phase 0, parity 1, as
completed).
"""

from __future__ import annotations

from ...hopper.wgmma import check_range
from . import LESSON

__all__ = ["producer_step"]

_K = LESSON.constants(LESSON.run_defines)
STAGES = int(_K["kStages"])
BM, BN, BK = int(_K["kBM"]), int(_K["kBN"]), int(_K["kBK"])
ELEM_BYTES = 2  # FP16
STEPS = 64  # steps the exercise's check walks (more than kTiles at 1024: the ring wraps many times)


def producer_step(i: int) -> tuple[int, ...]:
    """What the producer's loop body does at its ``i``-th iteration (k-tile ``i``), and its state after.

    Mirrors the kernel's producer body::

        mbarWait(&s.empty[stage], phase ^ 1);
        mbarArriveExpectTx(&s.full[stage], kStageBytes);
        tmaLoad2d(s.a[stage], &tmA, &s.full[stage], kt * kBK, mBlock * kBM);
        tmaLoad2d(s.b[stage], &tmB, &s.full[stage], kt * kBK, nBlock * kBN);
        if (++stage == kStages) { stage = 0; phase ^= 1; }

    From the definitions: k-tile i goes to stage ``i % kStages`` and is
    that stage's round ``r = i // kStages``. Before refilling it the
    producer must see the consumer's release of round r - 1, i.e. phase
    r - 1 of ``empty[stage]`` completed: parity ``(r - 1) & 1``. For r = 0
    that is parity 1, the phase "before" phase 0, which a fresh barrier
    reports complete, so the first kStages copies go out at once. The
    copies and the expect-tx use the same stage's ``full`` barrier; the
    box is K-tile i, columns ``i * kBK``. After the step the ring points at
    k-tile i + 1: stage ``(i + 1) % kStages``, phase bit
    ``((i + 1) // kStages) & 1``.

    Returns (empty_waited, parity, full_armed, bytes, a_stage, b_stage,
    copy_barrier, k, stage_after, phase_after).
    """
    check_range("i", i, STEPS)
    stage, rnd = i % STAGES, i // STAGES
    parity = (rnd - 1) & 1
    nxt = i + 1
    stage_bytes = (BM * BK + BN * BK) * ELEM_BYTES
    return (stage, parity, stage, stage_bytes, stage, stage, stage, i * BK, nxt % STAGES, (nxt // STAGES) & 1)
