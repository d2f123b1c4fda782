r"""Why Day 86 and Day 87 trail the library where they do (issues 39 and 40): one launch of each item
below under ncu, in an NVTX range named "prof", so that ncu profiles those launches only and in this
order (the script prints the order to stderr, and the rows of ncu's CSV follow it).

    ncu --nvtx --nvtx-include "prof/" --section SpeedOfLight --section WarpStateStats \
        --section LaunchStats --section Occupancy --csv --page details \
        python3 evidence/gemm_dev/ncu_gap.py > ncu_gap.csv 2> ncu_gap.order
    NCU_GAP=fp8 ncu --nvtx --nvtx-include "prof/" --section SpeedOfLight \
        --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
         --csv --page details \
        python3 evidence/gemm_dev/ncu_gap.py > ncu_fp8_stalls.csv 2> ncu_fp8_stalls.order

Day 86 (FP16): the course's build (the chooser's pick, and the width that measured differently)
and cuBLAS gemmEx at the shapes furthest below it; Day 87 (e4m3 -> FP16, N = 4096): the
never-promoting build, the 128 x 128 promoting build at P = 1, and cuBLASLt's default (which
promotes). ``NCU_GAP=fp8`` profiles Day 87's items only (for the stall reasons, above). Every
output is checked against float64 before its profiled launch (a wrong kernel's
counters say nothing). Needs a Hopper GPU, CuPy, nvmath-python; COURSE_REQUIRE_GPU=1.
"""

from __future__ import annotations

import os
import sys

import cupy as cp

from course.bench.lt_fp8 import LtFp8
from course.bench.peers import Cublas
from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons._ladder import sm_count
from course.lessons.day86 import chooser

D86 = [  # (shape, build flags, split)
    ((1024, 1024, 1024), {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_SMALL": 1}, 1),
    ((512, 512, 512), {"GEMM_BM": 64, "GEMM_BN": 64, "GEMM_CLUSTER": 1, "GEMM_SMALL": 1}, 1),
    ((4104, 776, 1240), {"GEMM_BN": 256, "GEMM_CLUSTER": 1}, 1),
    ((4104, 776, 1240), {"GEMM_BN": 144, "GEMM_CLUSTER": 2}, 1),
    ((2500, 2504, 2504), {"GEMM_BN": 144, "GEMM_CLUSTER": 2}, 1),
    ((2560, 2560, 2560), {"GEMM_BN": 144, "GEMM_CLUSTER": 2}, 1),
    ((2500, 2504, 2504), {"GEMM_BN": 256, "GEMM_CLUSTER": 2}, 1),
]
CUBLAS = [(1024, 1024, 1024), (512, 512, 512), (4104, 776, 1240), (2500, 2504, 2504)]
N87 = 4096
D87 = [("never promoting (default build)", {}, 0), ("128x128 promoting, P=1", {"GEMM_BN": 128, "GEMM_PROMOTE": 1}, 1)]
if os.environ.get("NCU_GAP_OVERLAP"):  # session 17: the overlapped-promotion build too (slower on the H100)
    D87.append(
        ("128x128 overlapped promotion, P=1", {"GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_OVERLAP": 1}, 1)
    )

if os.environ.get("NCU_GAP_BLOCK"):  # session 20: the block-scaled build, and with its scales loaded late
    _B = {"GEMM_BN": 128, "GEMM_PROMOTE": 1, "GEMM_BLOCK_SCALES": 1}
    D87.append(("block-scaled (1x128 / 128x128), P=1", _B, 1))
    D87.append(("block-scaled, scales loaded late, P=1", {**_B, "GEMM_SCALES_LATE": 1}, 1))
    D87.append(("block-scaled, scales loaded late by pointer adds, P=1", {**_B, "GEMM_SCALES_LATE": 2}, 1))


def profiled(name: str, call) -> None:
    call()  # warm: the module loaded, the plan made
    cp.cuda.runtime.deviceSynchronize()
    print(name, file=sys.stderr, flush=True)
    cp.cuda.nvtx.RangePush("prof")
    call()
    cp.cuda.nvtx.RangePop()
    cp.cuda.runtime.deviceSynchronize()


def main() -> None:
    if os.environ.get("NCU_GAP") == "fp8":  # Day 87's items only (the stall-reason run)
        D86.clear()
        CUBLAS.clear()
    if os.environ.get("NCU_GAP") == "shapes":  # session 24: the chooser's picks where Day 86 trails most, and cuBLAS
        D86.clear()
        CUBLAS.clear()
        D87.clear()
        for shape in ((1, 8192, 8192), (2, 4096, 14336), (1536, 1536, 1536), (2500, 2504, 2504), (1200, 1200, 1200)):
            pick = chooser.choose(*shape, sm_count())
            D86.append((shape, chooser.defines(pick), pick.split))
            CUBLAS.append(shape)
    d86 = get_lesson("day86")
    host = host_of(d86)
    gemm = Cublas(out="float16", b_layout="nk")
    for shape, flags, split in D86:
        w = host.workload(compile_lesson(d86, defines=flags), max(shape), 1, "bench", shape=shape, split=split)
        w.poison(0)
        w.launch(0)
        assert w.check(w.out(0)).passed, (shape, flags)
        profiled(f"day86 {'x'.join(map(str, shape))} {flags} split {split}", lambda w=w: w.launch(0))
        if shape in CUBLAS:
            CUBLAS.remove(shape)
            w.poison(0)
            gemm(w.a[0], w.b[0], w.d[0])
            assert w.check(w.out(0)).passed, (shape, "cuBLAS")
            profiled(f"day86 {'x'.join(map(str, shape))} cuBLAS gemmEx", lambda w=w: gemm(w.a[0], w.b[0], w.d[0]))
    if not D87:
        return
    d87 = get_lesson("day87")
    host = host_of(d87)
    base = None
    for name, flags, every in D87:
        w = host.workload(compile_lesson(d87, defines=flags), N87, 1, "bench")
        launch = (lambda w=w: w.launch(0)) if not flags else (lambda w=w, e=every: w.launch_every(0, e))
        w.poison(0)
        launch()
        assert w.check(w.out(0)).passed, name
        profiled(f"day87 {N87} {name}", launch)
        base = base or w
    plan = LtFp8(N87, N87, N87)

    def lt() -> None:
        plan(base.qa[0].bits, base.qb[0].bits, base.d[0], base.device_scales(0))

    base.poison(0)
    lt()
    assert base.check(base.out(0)).passed, "cuBLASLt"
    profiled(f"day87 {N87} cuBLASLt FP8 default (promotes)", lt)


if __name__ == "__main__":
    main()
