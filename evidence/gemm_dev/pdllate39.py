"""Where should a GEMM let the next one launch? (issues 39 and 40, session 24) On a GPU.

Session 22's kernels trigger ``griddepcontrol.launch_dependents`` at setup, right after their
``griddepcontrol.wait``; launched dependent, 1536^3 (one round, 128 x 144 c2) ran 0.974x and then 0.964x
of its plain launch in CUDA graphs (two calls), and Day 87's promoting build 0.94x at 4096^3 (7.8
rounds). CUTLASS's sm90 kernels trigger late, after the mainloop. ``-DGEMM_PDL_LATE=1`` (both kernels)
moves the trigger to the producer thread after its last load is issued.

Per shape, the chooser's pick (Day 86) or the page's builds (Day 87) are built twice, as they are and with
``GEMM_PDL_LATE=1``; both checked (output poisoned, a dependent launch, every element against float64,
then 48 dependent launches over the sets and set 0 again, bit for bit at split 1); then timed
interleaved with the course's timer, one by one and in CUDA graphs, on the same buffers: ``early``
(dependent, the kernel as it is), ``late`` (dependent, the variant), ``plain`` (the kernel as it is,
launched plain) and, for Day 86, cuBLAS gemmEx. Prints a line per shape and mode; JSON to argv[1].
"""

from __future__ import annotations

import json
import sys
from functools import partial

from course.bench.arith import paired_ratios, rotation_buffers
from course.bench.peers import Cublas
from course.bench.timing import GRAPHS, Timer, in_graphs
from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons._ladder import sm_count
from course.lessons.day86 import chooser

SHAPES = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (1200, 1200, 1200), (1536, 1536, 1536),
          (1000, 3000, 704), (4104, 776, 1240), (2500, 2504, 2504), (4096, 4096, 4096)]
PAIRS = (("late", "early"), ("early", "plain"), ("late", "plain"), ("early", "cuBLAS"), ("late", "cuBLAS"),
         ("plain", "cuBLAS"))


def checked(w, compiled, split: int) -> str:
    import cupy as cp

    w.poison(0)
    w.launch(0, compiled, True)
    cp.cuda.Device().synchronize()
    first = w.check(w.out(0))
    assert first.passed, ("first", first)
    bits = w.out(0).copy()
    for i in range(48):
        w.launch(0 if i % 3 == 0 else i % w.sets, compiled, True)
    cp.cuda.Device().synchronize()
    again = w.check(w.out(0))
    assert again.passed, ("chain", again)
    if split == 1:
        assert bool((w.out(0).view(cp.uint16) == bits.view(cp.uint16)).all()), "set 0 differs after the chain"
    return f"PASS ({first.max_error:.3g}, {again.max_error:.3g} after 48 dependent launches)"


def timed(timer, label: str, rot: dict, row: dict) -> None:
    s = timer.samples_together(rot, graphs=True)
    for mode in ("", GRAPHS):
        key = in_graphs if mode else (lambda x: x)
        us = {x: s[key(x)].timing().median_ms * 1e3 for x in rot if key(x) in s}
        vs = {
            f"{x} rate over {b}": paired_ratios(s[key(x)].per_call_ms, s[key(b)].per_call_ms)
            for x, b in PAIRS
            if key(x) in s and key(b) in s
        }
        row["graphs" if mode else "one by one"] = {"us": us, "rate_over": vs}
        print(
            f"{label}{mode}: "
            + "; ".join(f"{x} {t:.2f} us" for x, t in us.items())
            + "".join(f"; {x} {r:.3f} ({lo:.3f}-{hi:.3f})" for x, (r, lo, hi) in vs.items()),
            flush=True,
        )


def main() -> None:
    import cupy as cp

    lesson = get_lesson("day86")
    host = host_of(lesson)
    sms = sm_count()
    timer = Timer(20)
    gemm = Cublas(out="float16", b_layout="nk")
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    out: list = []

    def save() -> None:
        with open(sys.argv[1], "w") as f:
            json.dump({"rows": out, "graph capture failures": timer.graph_failures}, f, indent=1)

    for shape in SHAPES:
        m, n, k = shape
        pick = chooser.choose(*shape, sms)
        flags = chooser.defines(pick)
        late = compile_lesson(lesson, defines={**flags, "GEMM_PDL_LATE": 1})
        sets = rotation_buffers((m * k + n * k + m * n) * 2, l2)
        w = host.workload(compile_lesson(lesson, defines=flags), max(shape), sets, "bench", shape=shape,
                          split=pick.split)
        label = f"{m}x{n}x{k}"
        row: dict = {"shape": shape, "pick": pick.describe(), "flags": flags,
                     "check": {"early": checked(w, None, pick.split), "late": checked(w, late, pick.split)}}
        print(f"{label} {pick.describe()}: {row['check']}", flush=True)
        rot = {
            "early": [partial(w.launch, j, None, True) for j in range(w.sets)],
            "late": [partial(w.launch, j, late, True) for j in range(w.sets)],
            "plain": [partial(w.launch, j, None, False) for j in range(w.sets)],
            "cuBLAS": [partial(lambda w, j: gemm(w.a[j], w.b[j], w.d[j]), w, j) for j in range(w.sets)],
        }
        timed(timer, label, rot, row)
        out.append(row)
        save()
        del w, rot
        cp.get_default_memory_pool().free_all_blocks()

    from course.lessons.day87.chooser import BLOCK_BUILD, PROMOTE_BUILD, WIDE_BUILD

    lesson = get_lesson("day87")
    host = host_of(lesson)
    for n in (1024, 2048, 4096, 8192):
        for name, flags in (("never", WIDE_BUILD), ("promoting", PROMOTE_BUILD), ("block", BLOCK_BUILD)):
            late = compile_lesson(lesson, defines={**flags, "GEMM_PDL_LATE": 1})
            w = host.workload(compile_lesson(lesson, defines=flags), n, rotation_buffers(n * n * 4, l2), "bench",
                              shape=(n, n, n))
            label = f"day87 {n}^3 {name}"
            row = {"day87": n, "build": name, "flags": flags,
                   "check": {"early": checked(w, None, 1), "late": checked(w, late, 1)}}
            print(f"{label}: {row['check']}", flush=True)
            rot = {
                "early": [partial(w.launch, j, None, True) for j in range(w.sets)],
                "late": [partial(w.launch, j, late, True) for j in range(w.sets)],
                "plain": [partial(w.launch, j, None, False) for j in range(w.sets)],
            }
            timed(timer, label, rot, row)
            out.append(row)
            save()
            del w, rot
            cp.get_default_memory_pool().free_all_blocks()
    print("graph capture failures:", timer.graph_failures or "none", flush=True)


if __name__ == "__main__":
    main()
