"""Decode shapes with an A box of M rounded up to 8, 16 or 32 rows (issue 39, session 24). On a GPU.

Session 24's ncu (``ncu_gap.py`` NCU_GAP=shapes, H100): at 1 x 8192 x 8192 the chooser's pick (64 x 64,
cluster 1, one consumer) moves 75.5% of DRAM's peak against cuBLAS's 83.5% (nvjet 64x8, swap AB: its
activation box is 8 rows), with more SM and L1 work (Compute 20.3% against 9.0%, L1/TEX 25.3% against
15.8%). The pick's A box is 64 rows, the TMA zero-filling 63 of them every K-tile at M = 1.
``-DGEMM_A_ROWS=R`` loads R rows instead (the rest of each stage's A tile zeroed once at setup).

Per shape: the pick, built as it is and with GEMM_A_ROWS; both checked (every element against float64,
then 48 launches over the sets and set 0 again, bit for bit at split 1); then timed interleaved with cuBLAS
gemmEx, one by one and in CUDA graphs, each launched as the workload launches it. The variant has its own
workload (the same sizes, its own buffers): its A tensor maps' box differs. JSON to argv[1].
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

from course.bench.arith import rotation_buffers
from course.bench.peers import Cublas
from course.bench.timing import Timer
from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons._ladder import sm_count
from course.lessons.day86 import chooser

sys.path.insert(0, str(Path(__file__).parent))
import pdllate39  # noqa: E402

SHAPES = [(m, n, k) for n, k in ((8192, 8192), (4096, 14336)) for m in (1, 2, 4, 8, 16, 32)]
pdllate39.PAIRS = (("rows", "base"), ("base", "cuBLAS"), ("rows", "cuBLAS"))


def main() -> None:
    import cupy as cp

    lesson = get_lesson("day86")
    host = host_of(lesson)
    timer = Timer(20)
    gemm = Cublas(out="float16", b_layout="nk")
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    out: list = []
    for shape in SHAPES:
        m, n, k = shape
        pick = chooser.choose(*shape, sm_count())
        flags = chooser.defines(pick)
        rows = next(r for r in (8, 16, 32) if m <= r)
        if flags.get("GEMM_BM") != 64 or flags.get("GEMM_CLUSTER", 2) != 1:
            print(f"{shape}: pick {pick.describe()} is not the 64-row cluster-1 build; skipped", flush=True)
            continue
        sets = rotation_buffers((m * k + n * k + m * n) * 2, l2)
        w = host.workload(
            compile_lesson(lesson, defines=flags), max(shape), sets, "bench", shape=shape, split=pick.split
        )
        # Its own workload: the A tensor maps' box is part of the launch contract (kBoxARows).
        v = host.workload(
            compile_lesson(lesson, defines={**flags, "GEMM_A_ROWS": rows}),
            max(shape),
            sets,
            "bench",
            shape=shape,
            split=pick.split,
        )
        label = f"{m}x{n}x{k} A rows {rows}"
        row: dict = {
            "shape": shape,
            "pick": pick.describe(),
            "flags": flags,
            "a_rows": rows,
            "check": {"base": pdllate39.checked(w, None, pick.split), "rows": pdllate39.checked(v, None, pick.split)},
        }
        print(f"{label} {pick.describe()}: {row['check']}", flush=True)
        rot = {
            "base": [partial(w.launch, j) for j in range(w.sets)],
            "rows": [partial(v.launch, j) for j in range(v.sets)],
            "cuBLAS": [partial(lambda w, j: gemm(w.a[j], w.b[j], w.d[j]), w, j) for j in range(w.sets)],
        }
        pdllate39.timed(timer, label, rot, row)
        out.append(row)
        with open(sys.argv[1], "w") as f:
            json.dump({"rows": out, "graph capture failures": timer.graph_failures}, f, indent=1)
        del w, v, rot
        cp.get_default_memory_pool().free_all_blocks()
    print("graph capture failures:", timer.graph_failures or "none", flush=True)


if __name__ == "__main__":
    main()
