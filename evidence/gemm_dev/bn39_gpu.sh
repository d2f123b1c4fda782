#!/bin/bash
# Issue 39, branch bn39: Day 86's development widths on a GPU. Written in a session with no GPU; run on
# an H100 in session 16 (its results and the staging fix: evidence/gemm_dev/notes_bn39.md). The builds (kernels/gemm7_shapes.cu,
# course.lessons.day86.chooser.DEV_BUILDS; 128-row tiles, cluster 2 = B multicast, or 1):
#   w192 w192_c1  -DGEMM_BN=192  m64n192k16, 5 stages, D in 3 passes of one 64-column box
#   w160 w160_c1  -DGEMM_BN=160  m64n160k16, 5 stages, D in 5 passes of one 32-column box
#   w144 w144_c1  -DGEMM_BN=144  m64n144k16, 6 stages, D in 3 passes of one 48-column box
#   w96  w96_c1   -DGEMM_BN=96   m64n96k16,  7 stages, D in 2 passes of one 48-column box
#   w200_c1       -DGEMM_BN=200 -DGEMM_CLUSTER=1 (session 17; no cluster-2 build): m64n200k16, 5 stages,
#                 D in 5 passes of one 40-column (80-byte) box
#   n200 n256 n128  -DGEMM_BN=200/256/128 -DGEMM_CLUSTER=1 -DGEMM_CLUSTER_N=2 (session 21): a cluster of two
#                 along N sharing A by multicast (tests/lessons/day86/test_clustern39.py; GPUTESTS names it)
# Session 17's environment (all optional): NEW="w200_c1" the builds to build and check; SANITIZE="w200_c1"
# the builds to sanitize; MEASURE_BUILDS="128x200c1,128x144c2" the DEV_BUILDS to time beside the pick
# and cuBLAS; MEASURE_SHAPES="4104x776x1240 2560x2560x2560" the shapes to time, in that order;
# MEASURE_EXTRA="r64x128c2:GEMM_BM=64,GEMM_BN=128,GEMM_CLUSTER=2;..." other builds to time beside them
# (name:flags, split 1): the 64-row cluster-2 builds, cuBLAS's shape at 1024^3 (64 x 128, cluster 2).
# The 48- and 32-column boxes are new to the course: the 128B-swizzled staging box is laid out as the
# PTX ISA's swizzle tables say for a box narrower than the span (rows packed, swizzle by address);
# the ragged checks and racecheck below are the first test of that reading.
# Run from the tree's root on an H100 (then an H200), in one device call:
#   run(command='export PYTHONPATH=$PWD COURSE_REQUIRE_GPU=1; bash evidence/gemm_dev/bn39_gpu.sh',
#       timeout_s=600)
#   STEPS="measure" SHAPES=quick ... bash evidence/gemm_dev/bn39_gpu.sh     # one step, two shapes
# Steps (default all, in this order; each under its own timeout, cut to what is left of BUDGET
# seconds, 560 unless set; while measure is still to come, the steps before it leave it RESERVE
# seconds, 170 unless set; a step left under 10 s is skipped and says so; a failing step does not
# stop the others: read the log). If one call cannot hold them all: STEPS="build check sanitize",
# then STEPS="gputest measure" (neither needs the binaries).
#   build     nvcc -Xptxas -v, the header's build line: the eight standalone binaries; each must show
#             0 spills and no C75xx line
#   check     each binary's main(): 7 ragged shapes, split 1 and 3, every element against float64,
#             the guard past D, the second launch bit-identical; then its own ragged shapes: N = 1032
#             and 776 leave a last tile column 8-136 wide, 2056 rows a last tile row 8 deep, split 3,
#             and a grid capped at 5 clusters walks several units through the ring (1000 x 3000 x 704)
#   sanitize  compute-sanitizer racecheck, synccheck (split 1) and memcheck (split 3) on one ragged
#             shape per width, cluster 2: 260 x 1032 x 520 (2 cluster rows, the last tile row 4
#             deep; 9 K-tiles, more than the ring's stages; the last column 24-72 wide)
#   gputest   pytest -m gpu tests/lessons/day86/test_wide39.py (through NVRTC and the course host:
#             the eight builds on 8 ragged shapes, split 1 and 3; the Stream-K builds)
#   measure   each width, cluster 2 and 1, split 1, against the chooser's pick ("pick") and cuBLAS
#             gemmEx, each checked against float64 first (output poisoned), then timed interleaved
#             with the course's one timer, launched one by one and in CUDA graphs
#             (Timer.samples_together(graphs=True), as k86_measure.py and streamk_measure.py), at the
#             shapes where Day 86 is furthest below cuBLAS: 1536^3, 1200^3, 1000 x 3000 x 704,
#             4104 x 776 x 1240, 2560^3, 1024^3, 768^3, 512^3, and 2048^3 last (SHAPES=quick: the first two). Writes
#             $OUT/bn39/measure.json after every shape; a shape that would pass the budget is listed
#             as not measured.
# Output: $OUT/bn39/run.log, $OUT/bn39/measure.json. Copy both to evidence/logs/<date>-<gpu>-<session>/.
# No number from it goes to the chooser or the page before review (notes_bn39.md first).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/bn39"
BIN=${BN39_BIN:-/tmp/bn39_bin}
BUDGET=${BUDGET:-560}
RESERVE=${RESERVE:-170}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${STEPS:-"build check sanitize gputest measure"}
[[ $STEPS == *measure* ]] || RESERVE=0
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=(
  [w192]="-DGEMM_BN=192" [w192_c1]="-DGEMM_BN=192 -DGEMM_CLUSTER=1"
  [w160]="-DGEMM_BN=160" [w160_c1]="-DGEMM_BN=160 -DGEMM_CLUSTER=1"
  [w144]="-DGEMM_BN=144" [w144_c1]="-DGEMM_BN=144 -DGEMM_CLUSTER=1"
  [w96]="-DGEMM_BN=96" [w96_c1]="-DGEMM_BN=96 -DGEMM_CLUSTER=1"
  [w200_c1]="-DGEMM_BN=200 -DGEMM_CLUSTER=1"
  [n200]="-DGEMM_BN=200 -DGEMM_CLUSTER=1 -DGEMM_CLUSTER_N=2"
  [n256]="-DGEMM_BN=256 -DGEMM_CLUSTER=1 -DGEMM_CLUSTER_N=2"
  [n128]="-DGEMM_BN=128 -DGEMM_CLUSTER=1 -DGEMM_CLUSTER_N=2"
)
NEW=${NEW:-"w192 w192_c1 w160 w160_c1 w144 w144_c1 w96 w96_c1 w200_c1"}
SANITIZE=${SANITIZE:-"w192 w160 w144 w96 w200_c1"}
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - RESERVE - SECONDS))
  (( limit > left )) && limit=$left
  echo; echo "=== $name ($(date -u +%H:%M:%S), +${SECONDS}s, limit ${limit}s) ==="
  if (( limit < 10 )); then echo "--- $name: SKIPPED (${left}s of the ${BUDGET}s budget left)"; return; fi
  timeout -k 5 "$limit" "$@"; echo "--- $name: exit $?"
}
# The timing step's program (run by the measure step below): its own budget is MEASURE_BUDGET_S.
cat > "$BIN/bn39_measure.py" <<'EOF'
import json, os, sys, time
from functools import partial

import cupy as cp

from course.bench.arith import paired_ratios, rotation_buffers
from course.bench.peers import Cublas
from course.bench.timing import GRAPHS, Timer, in_graphs
from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons._ladder import sm_count
from course.lessons.day86 import chooser

T0, BUDGET = time.monotonic(), float(os.environ["MEASURE_BUDGET_S"])
SHAPES = [(1536,) * 3, (1200,) * 3, (1000, 3000, 704), (4104, 776, 1240), (2560,) * 3, (1024,) * 3, (768,) * 3, (512,) * 3, (2048,) * 3]
if os.environ.get("SHAPES") == "quick":
    SHAPES = SHAPES[:2]
if os.environ.get("MEASURE_SHAPES"):
    SHAPES = [tuple(int(x) for x in s.split("x")) for s in os.environ["MEASURE_SHAPES"].split()]
ONLY = [x for x in os.environ.get("MEASURE_BUILDS", "").split(",") if x]
EXTRA = {}
for item in filter(None, os.environ.get("MEASURE_EXTRA", "").split(";")):
    name, flags = item.split(":")
    EXTRA[name] = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in flags.split(",")}
LESSON = get_lesson("day86")
host, sms, timer = host_of(LESSON), sm_count(), Timer(20)
gemm = Cublas(out="float16", b_layout="nk")
l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
rows, last = [], 0.0
for shape in SHAPES:
    began = time.monotonic()
    if began - T0 + last > BUDGET:
        print(f"{shape}: not measured (budget: {began - T0:.0f} s spent, the last shape took {last:.0f} s)")
        rows.append({"shape": shape, "not measured": "budget"})
        continue
    m, n, k = shape
    sets = rotation_buffers((m * k + n * k + m * n) * 2, l2)
    pick = chooser.choose(m, n, k, sms)
    builds = {"pick": (chooser.defines(pick), pick.split, pick.describe())}
    for name, flags in chooser.DEV_BUILDS.items():
        if ONLY and name not in ONLY:
            continue
        builds[name] = (flags, 1, "development build, split 1")
    for name, flags in EXTRA.items():
        builds[name] = (flags, 1, "another build, split 1")
    works, ref = {}, None
    for name, (flags, split, what) in builds.items():
        w = host.workload(compile_lesson(LESSON, defines=flags), max(shape), sets, "bench", shape=shape, split=split)
        w.poison(0)
        w.launch(0)
        if ref is not None:  # every workload draws the same inputs: one float64 reference a shape
            assert bool(cp.array_equal(w.a[0], ref.a[0])) and bool(cp.array_equal(w.b[0], ref.b[0]))
            check = w.check(w.out(0), ref.want())
        else:
            check, ref = w.check(w.out(0)), w
        assert check.passed, (shape, name, flags, check)
        print(f"{m}x{n}x{k} {name} {flags} split {split} ({what}): PASS ({check.max_error:.3g})", flush=True)
        works[name] = w
    rot = {x: [partial(w.launch, j) for j in range(w.sets)] for x, w in works.items()}
    w0 = works["pick"]
    rot["cuBLAS"] = [partial(lambda w, j: gemm(w.a[j], w.b[j], w.d[j]), w0, j) for j in range(w0.sets)]
    s = timer.samples_together(rot, graphs=True)
    row = {"shape": shape, "sms": sms, "builds": {x: {"flags": f, "split": sp, "what": d} for x, (f, sp, d) in builds.items()},
           "checked": "every build against float64, output poisoned first"}
    for mode in ("", GRAPHS):
        key = in_graphs if mode else (lambda x: x)
        us = {x: s[key(x)].timing().median_ms * 1e3 for x in rot if key(x) in s}
        vs = {f"{x} rate over {base}": paired_ratios(s[key(x)].per_call_ms, s[key(base)].per_call_ms)
              for base in ("pick", "cuBLAS") for x in rot if x != base and key(x) in s and key(base) in s}
        row["graphs" if mode else "one by one"] = {"us": us, "rate_over (x faster than base above 1)": vs}
        ranked = sorted(us, key=us.__getitem__)
        print(f"{m}x{n}x{k}{mode} fastest first: " + "; ".join(f"{x} {us[x]:.2f} us" for x in ranked), flush=True)
        if mode:
            print(f"{m}x{n}x{k}{mode} over cuBLAS: " + "; ".join(
                f"{x} {vs[f'{x} rate over cuBLAS'][0]:.3f}" for x in ranked if f"{x} rate over cuBLAS" in vs), flush=True)
    row["seconds"] = last = round(time.monotonic() - began, 1)
    rows.append(row)
    with open(sys.argv[1], "w") as f:  # after every shape: a run cut short keeps what it measured
        json.dump({"rows": rows}, f, indent=1)
    del works, rot
    cp.get_default_memory_pool().free_all_blocks()
print("graph capture failures:", timer.graph_failures or "none")
with open(sys.argv[1], "w") as f:
    json.dump({"rows": rows, "graph capture failures": timer.graph_failures or None}, f, indent=1)
EOF
main() {
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
git log --oneline -1
if [[ $STEPS == *build* ]]; then
  for b in $NEW; do
    step "build $b (${FLAGS[$b]})" 60 $NVCC ${FLAGS[$b]} -o "$BIN/$b" kernels/gemm7_shapes.cu
  done
fi
if [[ $STEPS == *check* ]]; then
  for b in $NEW; do
    step "check $b: main()'s ragged shapes, split 1 and 3" 40 "$BIN/$b"
    for run in "1000 1032 520 3" "2056 776 520 1" "1000 3000 704 1 5"; do
      step "check $b $run" 30 "$BIN/$b" $run
    done
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in $SANITIZE; do
    for tool in racecheck synccheck; do
      step "compute-sanitizer --tool $tool $b 260 1032 520 1" 40 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 260 1032 520 1
    done
    step "compute-sanitizer --tool memcheck $b 260 1032 520 3" 40 \
      compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/$b" 260 1032 520 3
  done
fi
if [[ $STEPS == *gputest* ]]; then
  step "GPU tests: the development widths through NVRTC and the course host" 150 \
    python3 -m pytest -q -p no:cacheprovider -m gpu ${GPUTESTS:-tests/lessons/day86/test_wide39.py}
fi
if [[ $STEPS == *measure* ]]; then
  RESERVE=0
  step "measure: the development widths against the pick and cuBLAS" 400 \
    env MEASURE_BUDGET_S=$((BUDGET - SECONDS - 20)) python3 "$BIN/bn39_measure.py" "$LOGD/measure.json"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
