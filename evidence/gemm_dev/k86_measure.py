"""Day 86 on a GPU, for issues 35 and 39 (helper k86): builds of gemm7_shapes.cu side by side on one
shape each, measured with the course's one timer, launched one by one and in CUDA graphs.

- the chooser's moved picks: where pricing a partial last wave at its share (chooser.LONE_UNIT)
  moved the pick on 132 SMs, the old (BN, cluster, split) against the new one;
- decode shapes (M <= 64): the chooser's 128-row pick against the 64-row tile with one consumer
  warpgroup (-DGEMM_BM=64), same split, and 64 x 128 with twice the tiles and half the split.

Every build is checked against float64 on the same N(0, 1) inputs first (output poisoned), then
all of them and cuBLAS gemmEx are timed interleaved (``Timer.samples_together(graphs=True)``).
Prints one line per shape and mode; writes JSON to argv[1]."""

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

LESSON = get_lesson("day86")
# shape -> {name: (BM, BN, cluster, split)}; the first entry is the baseline of each line
CASES = [
    ((512, 512, 512), {"old pick": (128, 64, 2, 1), "new pick": (128, 64, 1, 1)}),
    ((1000, 1032, 520), {"old pick": (128, 128, 2, 1), "new pick": (128, 128, 1, 1)}),
    ((130, 5000, 3000), {"old pick": (128, 256, 2, 3), "new pick": (128, 128, 1, 1)}),
    ((8, 8192, 8192), {"128x256": (128, 256, 1, 4), "64x256": (64, 256, 1, 4), "64x128": (64, 128, 1, 2)}),
    ((64, 8192, 8192), {"128x256": (128, 256, 1, 4), "64x256": (64, 256, 1, 4), "64x128": (64, 128, 1, 2)}),
    ((8, 4096, 14336), {"128x256": (128, 256, 1, 8), "64x256": (64, 256, 1, 8), "64x128": (64, 128, 1, 4)}),
]


def main() -> None:
    import cupy as cp

    host = host_of(LESSON)
    timer = Timer(20)
    gemm = Cublas(out="float16", b_layout="nk")
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    out = []
    for shape, builds in CASES:
        m, n, k = shape
        sets = rotation_buffers((m * k + n * k + m * n) * 2, l2)
        works = {}
        for name, (bm, bn, cl, split) in builds.items():
            flags = {"GEMM_BN": bn, "GEMM_CLUSTER": cl, **({"GEMM_BM": bm} if bm != 128 else {})}
            w = host.workload(
                compile_lesson(LESSON, defines=flags), max(shape), sets, "bench", shape=shape, split=split
            )
            w.poison(0)
            w.launch(0)
            check = w.check(w.out(0))
            assert check.passed, (shape, name, check)
            works[name] = w
        w0 = next(iter(works.values()))
        rot = {name: [partial(w.launch, j) for j in range(w.sets)] for name, w in works.items()}
        rot["cuBLAS"] = [partial(lambda w, j: gemm(w.a[j], w.b[j], w.d[j]), w0, j) for j in range(w0.sets)]
        s = timer.samples_together(rot, graphs=True)
        row = {
            "shape": shape,
            "builds": builds,
            "checked": "every build against float64, output poisoned first",
        }
        base = next(iter(builds))
        for mode in ("", GRAPHS):
            key = in_graphs if mode else (lambda x: x)
            us = {x: s[key(x)].timing().median_ms * 1e3 for x in rot if key(x) in s}
            vs = {
                x: paired_ratios(s[key(x)].per_call_ms, s[key(base)].per_call_ms)
                for x in builds
                if x != base and key(x) in s and key(base) in s
            }
            row["graphs" if mode else "one by one"] = {"us": us, "rate_over_" + base: vs}
            print(
                f"{'x'.join(map(str, shape))}{mode}: "
                + "; ".join(f"{x} {builds.get(x, '')} {t:.2f} us" for x, t in us.items())
                + "".join(f"; {x}/{base} {r:.3f} ({lo:.3f}-{hi:.3f})" for x, (r, lo, hi) in vs.items()),
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
