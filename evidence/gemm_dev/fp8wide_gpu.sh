#!/bin/bash
# The GPU runs the two larger promoting tiles of kernels/gemm8_fp8.cu (issue 40) still need: nothing
# here has run on a GPU yet (evidence/gemm_dev/notes_fp8wide.md). The builds:
#   w192r  -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BM=192   192 x 128, three consumer warpgroups of 64 x 128
#   w192c  -DGEMM_BN=192 -DGEMM_PROMOTE=1                 128 x 192, two consumers of 64 x 192 (m64n192k32)
# each with a cluster of 2 (B multicast, the file's default) and of 1 (suffix _c1).
# For one H100 (or H200), from the repository root of this tree, with nvcc, compute-sanitizer, CuPy,
# cuda-bindings and nvmath-python (the cuBLASLt peer) as Day 87's own runs have them:
#
#   OUT=$OUT bash evidence/gemm_dev/fp8wide_gpu.sh                 # every step, in this order
#   STEPS="bench" OUT=$OUT bash evidence/gemm_dev/fp8wide_gpu.sh    # one step
#
# Steps (each under its own time limit, cut to what is left of BUDGET seconds, 290 unless set: the
# whole run stays under 300 s; a step that would get under 10 s is skipped and says so; while the
# bench is still to come, the steps before it leave it RESERVE seconds, 120 unless set):
#   build     nvcc -Xptxas -v: the four new binaries and the 128x128 promoting build (for comparison);
#             the log must show 0 spills and no C75xx line for each
#   check     the standalone binaries' self-checks: every element of D against float64 of the inputs,
#             the guard past D, two launches bit-identical; main()'s 7 ragged shapes at P = 0, 1, 3, and
#             two shapes with more units than clusters and more K-tiles than the 5-stage ring at P = 1
#             and 3
#   sanitize  compute-sanitizer racecheck, synccheck and memcheck on one ragged shape per new build
#             (cluster 2): 1400 x 2504 x 400 at P = 1 (192 x 128: 4 cluster rows x 20 columns = 80
#             units on 66 clusters; 128 x 192: 6 x 14 = 84; 4 K-tiles, the last 16 deep)
#   tests     the course's NVRTC path on the GPU: pytest -m gpu tests/lessons/day87/test_gpu.py -k larger
#             (both builds, cluster 2 and 1, 8 ragged shapes, P = 0, 1, 3, through run_lesson)
#   bench     the course's bench at N = 2048, 4096, 8192 with COURSE_DAY87_PINGPONG=192x128,128x192:
#             each new build checked and timed at P = 1 in one interleaved batch with the 128 x 128
#             promoting build at P = 1 and cuBLASLt FP8 (its default, which promotes), reasons titled
#             "192x128 promoting build, every 128 (P=1) at N=..." and "128x192 ..." in
#             $OUT/fp8wide/bench/day87.json (the page's own tables are in the same run, unchanged)
#
# Output: $OUT/fp8wide/run.log and $OUT/fp8wide/bench/. The page renders none of it: a measured number
# for the new builds goes into the notes first (and the chooser and the page only after review).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/fp8wide"
BIN=${FP8WIDE_BIN:-/tmp/fp8wide_bin}
BUDGET=${BUDGET:-290}
RESERVE=${RESERVE:-120}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${STEPS:-"build check sanitize tests bench"}
[[ $STEPS == *bench* ]] || RESERVE=0
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=(
  [w192r]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BM=192"
  [w192r_c1]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BM=192 -DGEMM_CLUSTER=1"
  [w192c]="-DGEMM_BN=192 -DGEMM_PROMOTE=1"
  [w192c_c1]="-DGEMM_BN=192 -DGEMM_PROMOTE=1 -DGEMM_CLUSTER=1"
  [p128]="-DGEMM_BN=128 -DGEMM_PROMOTE=1"
)
NEW="w192r w192r_c1 w192c w192c_c1"
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - RESERVE - SECONDS))
  (( limit > left )) && limit=$left
  echo; echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s) ==="
  if (( limit < 10 )); then echo "--- $name: SKIPPED (${left}s of the ${BUDGET}s budget left)"; return; fi
  timeout -k 5 "$limit" "$@"; echo "--- $name: exit $?"
}
main() {
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
git log --oneline -1
if [[ $STEPS == *build* ]]; then
  for b in $NEW p128; do
    step "build $b (${FLAGS[$b]})" 60 $NVCC ${FLAGS[$b]} -o "$BIN/$b" kernels/gemm8_fp8.cu
  done
fi
if [[ $STEPS == *check* ]]; then
  for b in $NEW p128; do
    step "check $b: main()'s ragged shapes, P = 0, 1, 3" 40 "$BIN/$b"
  done
  for b in $NEW; do
    for run in "2304 2504 768 1" "2304 2504 768 3" "1400 2504 400 1" "1400 2504 400 3"; do
      step "check $b $run" 20 "$BIN/$b" $run
    done
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in w192r w192c; do
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $b 1400 2504 400 1" 40 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 1400 2504 400 1
    done
  done
fi
if [[ $STEPS == *tests* ]]; then
  step "GPU tests: the larger tiles through NVRTC" 90 \
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_gpu.py -k larger
fi
if [[ $STEPS == *bench* ]]; then
  RESERVE=0
  COURSE_DAY87_PINGPONG=192x128,128x192 step "course bench day87 with the 192x128 and 128x192 builds" 150 \
    python3 -m course bench day87 --sizes 2048 4096 8192 --out "$LOGD/bench"
  python3 - "$LOGD/bench/day87.json" <<'EOF' || true
import json, sys
data = json.load(open(sys.argv[1]))
for r in data.get("reasons", []):
    t = r.get("title", "")
    if t.startswith(("192x128", "128x192")) or "every 128 (P=1)" in t and "ping" not in t and "accuracy" not in t:
        print(f'{t}: {r.get("value")} {r.get("unit", "")} {r.get("detail", "")}')
EOF
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
