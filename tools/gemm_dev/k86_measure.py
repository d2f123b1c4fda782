"""Day 86 on a GPU, for issue 35/39 (helper k86): the chooser's changed picks against the picks it
made before, and the timer's two modes, measured with the course's one timer.

For each shape whose pick moved when the model began to price a partial last wave at its share
(chooser.LONE_UNIT), the old and the new (build, split) are checked against float64, then timed
interleaved, launched one by one and in CUDA graphs (``Timer.samples_together(graphs=True)``),
beside cuBLAS gemmEx. Prints one line per shape and writes JSON to argv[1]."""

from __future__ import annotations

import json
import sys
from functools import partial

from course.bench.arith import paired_ratios, rotation_buffers
from course.bench.peers import Cublas
from course.bench.timing import Timer, in_graphs
from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson

LESSON = get_lesson("day86")
# (shape, old (BN, cluster, split), new (BN, cluster, split)) on 132 SMs
MOVED = [
    ((512, 512, 512), (64, 2, 1), (64, 1, 1)),
    ((1000, 1032, 520), (128, 2, 1), (128, 1, 1)),
    ((130, 5000, 3000), (256, 2, 3), (128, 1, 1)),
]


def main() -> None:
    import cupy as cp

    host = host_of(LESSON)
    timer = Timer(20)
    gemm = Cublas(out="float16", b_layout="nk")
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    out = []
    for shape, old, new in MOVED:
        m, n, k = shape
        sets = rotation_buffers((m * k + n * k + m * n) * 2, l2)
        works = {}
        for name, (bn, cl, split) in (("old", old), ("new", new)):
            compiled = compile_lesson(LESSON, defines={"GEMM_BN": bn, "GEMM_CLUSTER": cl})
            w = host.workload(compiled, max(shape), sets, "bench", shape=shape, split=split)
            w.poison(0)
            w.launch(0)
            check = w.check(w.out(0))
            assert check.passed, (shape, name, check)
            works[name] = w
        w0 = works["old"]
        rot = {name: [partial(w.launch, j) for j in range(w.sets)] for name, w in works.items()}
        rot["cuBLAS"] = [partial(lambda w, j: gemm(w.a[j], w.b[j], w.d[j]), w0, j) for j in range(w0.sets)]
        s = timer.samples_together(rot, graphs=True)
        row = {"shape": shape, "old": old, "new": new, "failures": dict(timer.graph_failures)}
        for mode in ("", " (CUDA graphs)"):
            key = (lambda x: x) if not mode else in_graphs
            if key("old") not in s:
                continue
            us = {
                x: s[key(x)].timing().median_ms * 1e3 if key(x) in s else float("nan")
                for x in ("old", "new", "cuBLAS")
            }
            r, lo, hi = paired_ratios(s[key("new")].per_call_ms, s[key("old")].per_call_ms)
            row["one by one" if not mode else "graphs"] = {"us": us, "new_over_old": [r, lo, hi]}
            print(
                f"{'x'.join(map(str, shape))}{mode}: old {old} {us['old']:.2f} us, new {new} {us['new']:.2f} us "
                f"(new rate / old {r:.3f}, {lo:.3f}-{hi:.3f}); cuBLAS {us['cuBLAS']:.2f} us",
                flush=True,
            )
        out.append(row)
        del works, rot
        cp.get_default_memory_pool().free_all_blocks()
    print("graph capture failures:", timer.graph_failures or "none")
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
