"""Day 86's pick against a variant of itself on the same buffers, both timed interleaved, one by one and
in CUDA graphs (``course bench day86`` records them beside the shape table): the deterministic split-K
build where the pick splits K, and the pick launched the plain way where it is launched dependent
(programmatic dependent launch)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ...bench import engine
from ...bench.arith import paired_ratios, rotation_buffers
from ...bench.result import Reason
from ...bench.timing import GRAPHS, in_graphs
from .._ladder import Shape
from . import chooser

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...bench.spec import Context


def shape_name(shape: Shape) -> str:
    return "x".join(map(str, shape))


def deterministic_title(shape: Shape) -> str:
    return f"{shape_name(shape)}: deterministic split-K against the default"


def deterministic_cost(ctx: Context, work: Any, shape: Shape, choice: chooser.Choice) -> list[Reason]:
    """The same build and split with ``-DGEMM_DETERMINISTIC=1`` (the last arriver adds every partial
    in split order) on the same buffers, checked, then timed interleaved with the default build:
    its rate over the default's, repeat by repeat, launched one by one and in CUDA graphs."""
    det = replace(choice, deterministic=True)
    compiled = ctx.compile(max(shape), defines=chooser.defines(det))
    launch = partial(work.launch, compiled=compiled)
    ctx.verify(max(shape), work, {"deterministic": (launch, None)})
    out, said = _paired(
        ctx, work, ("deterministic", launch), ("default", work.launch), deterministic_title(shape), choice
    )
    ctx.progress(
        f"{ctx.lesson.id} {shape_name(shape)} deterministic split-K against the default: " + "; ".join(said)
    )
    return out


def _paired(
    ctx: Context,
    work: Any,
    variant: tuple[str, Callable[[int], None]],
    base: tuple[str, Callable[[int], None]],
    title: str,
    choice: chooser.Choice,
) -> tuple[list[Reason], list[str]]:
    """``variant`` timed interleaved with ``base`` on the same buffers, one by one and in CUDA graphs: its
    rate over the base's, repeat by repeat, a reason per mode (``title``, then `` (CUDA graphs)``)."""
    (a, call_a), (b, call_b) = variant, base
    samples = ctx.timer.samples_together(
        {
            b: [partial(call_b, j) for j in range(work.sets)],
            a: [partial(call_a, j) for j in range(work.sets)],
        },
        graphs=True,
    )
    out = []
    said = []
    for mode in ("", GRAPHS):
        x, y = (in_graphs(n) if mode else n for n in (a, b))
        if x not in samples or y not in samples:
            continue
        r, lo, hi = paired_ratios(samples[x].per_call_ms, samples[y].per_call_ms)
        t_a, t_b = (samples[n].timing().median_ms * 1e3 for n in (x, y))
        how = (
            f"{choice.config} split {choice.split}, the same buffers; checked first; median of "
            f"{len(samples[x].per_call_ms)} interleaved repeats"
            + (", each batch in a CUDA graph" if mode else "")
        )
        out.append(
            Reason(
                title + mode,
                r,
                "x",
                "measured",
                f"{a} {t_a:.1f} us, {b} {t_b:.1f} us per call ({t_a - t_b:+.1f} us); {how}",
                lo,
                hi,
            )
        )
        said.append(f"{r:.3f}x{mode} ({t_a:.1f} vs {t_b:.1f} us)")
    return out, said


# Programmatic dependent launch, measured where a call is short (the kernel's launch and setup are a
# large part of it): the pick launched both ways on the same buffers. Every one is a single round of units
# (``host.dependent_launch``: a grid of more rounds is launched plain).
DEPENDENT_SHAPES: tuple[Shape, ...] = (
    (256, 256, 256),
    (512, 512, 512),
    (1024, 1024, 1024),
    (1, 8192, 8192),
    (128, 8192, 8192),
    (1000, 3000, 704),
    (4104, 776, 1240),
)


DEPENDENT = ": dependent launch against the plain launch"


def dependent_title(shape: Shape) -> str:
    return f"{shape_name(shape)}{DEPENDENT}"


def dependent_gain(ctx: Context, host: Any) -> list[Reason]:
    """What programmatic dependent launch buys: each of DEPENDENT_SHAPES' pick launched dependent (as the
    table's rows of one round are) and the plain way (CuPy's launch), checked, then timed interleaved; a
    shape whose grid takes more rounds is launched plain in the table too, and is left out."""
    out: list[Reason] = []
    for shape in DEPENDENT_SHAPES:
        m, n, k = shape
        choice = chooser.choose(m, n, k, ctx.sms)
        compiled = ctx.compile(max(shape), defines=chooser.defines(choice))
        sets = rotation_buffers((m * k + n * k + m * n) * 2, ctx.l2_bytes)
        work = host.workload(compiled, max(shape), sets, "bench", shape=shape, split=choice.split)
        if not work.config.dependent:  # more than one round of units (host.dependent_launch): launched plain
            continue
        plain = partial(work.launch, dependent=False)
        ctx.verify(max(shape), work, {"plain launch": (plain, None)})
        reasons, said = _paired(
            ctx, work, ("dependent", work.launch), ("plain", plain), dependent_title(shape), choice
        )
        out += reasons
        ctx.progress(f"{ctx.lesson.id} {shape_name(shape)} dependent launch over plain: " + "; ".join(said))
        del work
        engine.release()
    return out
