"""Day 86 with programmatic dependent launch (issue 39, session 22) on a GPU: is it correct, and what
does it buy?

The kernel (kernels/gemm7_shapes.cu, end of the setup snippet) runs ``griddepcontrol.wait`` and then
``griddepcontrol.launch_dependents`` after its shared-memory setup and before it touches global
memory; the host (``Compiled.enqueue_dependent``) launches it with cuLaunchKernelEx and the
programmatic-stream-serialization attribute, so each GEMM's launch and setup overlap the tail of the
one before it in the stream.

Per shape, the chooser's pick is built once and:
1. checked: output poisoned, one dependent launch, every element against float64; then 48 dependent
   launches back to back over the buffer sets, 16 of them on set 0 (the same D, the same split-K
   workspace and counters: each launch's writes must wait for the one before), then set 0 checked
   again, bit for bit the first result at split 1, and every split-K counter back at zero;
2. timed, interleaved with the course's one timer (``Timer.samples_together(graphs=True)``):
   ``pdl`` (dependent launches), ``plain`` (the same kernel, the same buffers, launched the plain way,
   as every recording before this one) and cuBLAS gemmEx, one by one and in CUDA graphs (the
   dependence is then a programmatic edge of the graph).
(Session 22, after its first run: the workloads launch dependent only where the grid is one round of
units, ``host.dependent_launch``; this script forces both ways.) Prints one line per shape and mode; writes JSON to argv[1] after every shape. ``PDL_SHAPES="256x256x256
..."`` picks the shapes, in that order.
"""

from __future__ import annotations

import json
import os
import sys
import time
from functools import partial

from course.bench.arith import paired_ratios, rotation_buffers
from course.bench.peers import Cublas
from course.bench.timing import GRAPHS, Timer, in_graphs
from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons._ladder import sm_count
from course.lessons.day86 import chooser

LESSON = get_lesson("day86")
SHAPES = [
    (256, 256, 256),
    (512, 512, 512),
    (768, 768, 768),
    (1024, 1024, 1024),
    (1, 8192, 8192),
    (128, 8192, 8192),
    (1, 4096, 14336),
    (1200, 1200, 1200),
    (1536, 1536, 1536),
    (1000, 3000, 704),
    (4104, 776, 1240),
    (2560, 2560, 2560),
    (1024, 1024, 16384),
    (4096, 4096, 4096),
]


def check_chain(w, split: int) -> str:
    import cupy as cp

    w.poison(0)
    w.launch(0, None, True)
    cp.cuda.Device().synchronize()
    first = w.check(w.out(0))
    assert first.passed, ("first", first)
    bits = w.out(0).copy()
    for i in range(48):
        w.launch(0 if i % 3 == 0 else i % w.sets, None, True)
    cp.cuda.Device().synchronize()
    again = w.check(w.out(0))
    assert again.passed, ("chain", again)
    same = bool((w.out(0).view(cp.uint16) == bits.view(cp.uint16)).all())
    if split == 1:
        assert same, "split 1: set 0 after the chain differs from its first result"
    zero = int(cp.count_nonzero(w.counters))
    assert zero == 0, f"{zero} split-K counters left non-zero"
    return f"PASS ({first.max_error:.3g}, after 48 dependent launches {again.max_error:.3g}, bits {'same' if same else 'differ'})"


def main() -> None:
    import cupy as cp

    host = host_of(LESSON)
    sms = sm_count()
    timer = Timer(20)
    gemm = Cublas(out="float16", b_layout="nk")
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    shapes = SHAPES
    if os.environ.get("PDL_SHAPES"):
        shapes = [tuple(int(x) for x in s.split("x")) for s in os.environ["PDL_SHAPES"].split()]
    out: list = []
    for shape in shapes:
        began = time.monotonic()
        m, n, k = shape
        pick = chooser.choose(*shape, sms)
        flags = chooser.defines(pick)
        sets = rotation_buffers((m * k + n * k + m * n) * 2, l2)
        w = host.workload(
            compile_lesson(LESSON, defines=flags), max(shape), sets, "bench", shape=shape, split=pick.split
        )
        checked = check_chain(w, pick.split)
        print(f"{m}x{n}x{k} {pick.describe()} {flags}: {checked}", flush=True)
        rot = {
            "pdl": [partial(w.launch, j, None, True) for j in range(w.sets)],
            "plain": [partial(w.launch, j, None, False) for j in range(w.sets)],
            "cuBLAS": [partial(lambda w, j: gemm(w.a[j], w.b[j], w.d[j]), w, j) for j in range(w.sets)],
        }
        s = timer.samples_together(rot, graphs=True)
        row: dict = {"shape": shape, "sms": sms, "pick": pick.describe(), "flags": flags, "check": checked}
        for mode in ("", GRAPHS):
            key = in_graphs if mode else (lambda x: x)
            us = {x: s[key(x)].timing().median_ms * 1e3 for x in rot if key(x) in s}
            vs = {
                f"{x} rate over {base}": paired_ratios(s[key(x)].per_call_ms, s[key(base)].per_call_ms)
                for x, base in (("pdl", "plain"), ("pdl", "cuBLAS"), ("plain", "cuBLAS"))
                if key(x) in s and key(base) in s
            }
            row["graphs" if mode else "one by one"] = {"us": us, "rate_over (x faster than base above 1)": vs}
            print(
                f"{m}x{n}x{k}{mode}: "
                + "; ".join(f"{x} {t:.2f} us" for x, t in us.items())
                + "".join(f"; {x} {r:.3f} ({lo:.3f}-{hi:.3f})" for x, (r, lo, hi) in vs.items()),
                flush=True,
            )
        row["seconds"] = round(time.monotonic() - began, 1)
        out.append(row)
        with open(sys.argv[1], "w") as f:
            json.dump({"rows": out, "graph capture failures": timer.graph_failures}, f, indent=1)
        del w, rot
        cp.get_default_memory_pool().free_all_blocks()
    if os.environ.get("PDL_DAY87", "1") != "0":
        out.append({"day87": day87(timer, l2, sys.argv[1], out)})
    print("graph capture failures:", timer.graph_failures or "none", flush=True)


def day87(timer, l2: int, path: str, out: list) -> list:
    """Day 87's builds (never promoting, promoting every 128, block scales) at the page's squares: checked,
    then dependent launches against plain ones, interleaved, one by one and in graphs (no peer here:
    ``course bench day87`` times cuBLASLt beside whichever launch the workload makes)."""
    import cupy as cp

    from course.lessons.day87.chooser import BLOCK_BUILD, PROMOTE_BUILD, WIDE_BUILD

    lesson = get_lesson("day87")
    host = host_of(lesson)
    rows: list = []
    for n in (512, 1024, 2048, 4096):
        for name, flags in (("never", WIDE_BUILD), ("promoting", PROMOTE_BUILD), ("block", BLOCK_BUILD)):
            shape = (n, n, n)
            sets = rotation_buffers(n * n * 4, l2)
            w = host.workload(compile_lesson(lesson, defines=flags), n, sets, "bench", shape=shape)
            w.poison(0)
            w.launch(0, None, True)
            cp.cuda.Device().synchronize()
            check = w.check(w.out(0))
            assert check.passed, (n, name, check)
            rot = {
                "pdl": [partial(w.launch, j, None, True) for j in range(w.sets)],
                "plain": [partial(w.launch, j, None, False) for j in range(w.sets)],
            }
            s = timer.samples_together(rot, graphs=True)
            row = {"n": n, "build": name, "flags": flags, "check": f"PASS ({check.max_error:.3g})"}
            for mode in ("", GRAPHS):
                key = in_graphs if mode else (lambda x: x)
                if key("pdl") not in s or key("plain") not in s:
                    continue
                us = {x: s[key(x)].timing().median_ms * 1e3 for x in rot}
                r = paired_ratios(s[key("pdl")].per_call_ms, s[key("plain")].per_call_ms)
                row["graphs" if mode else "one by one"] = {"us": us, "pdl rate over plain": r}
                print(
                    f"day87 {n}^3 {name}{mode}: pdl {us['pdl']:.2f} us, plain {us['plain']:.2f} us; "
                    f"pdl over plain {r[0]:.3f} ({r[1]:.3f}-{r[2]:.3f})",
                    flush=True,
                )
            rows.append(row)
            with open(path, "w") as f:
                json.dump(
                    {"rows": [*out, {"day87": rows}], "graph capture failures": timer.graph_failures},
                    f,
                    indent=1,
                )
            del w, rot
            cp.get_default_memory_pool().free_all_blocks()
    return rows


if __name__ == "__main__":
    main()
