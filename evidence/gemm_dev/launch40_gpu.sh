#!/bin/bash
# Issues 39 and 40, session 18: cluster-1 builds launched as plain grids (the kernels' "launch-costs"
# regions: GEMM_NO_CLUSTER defaults to GEMM_CLUSTER == 1). The standalone builds (nvcc -Xptxas -v):
#   f64    gemm8_fp8.cu -DGEMM_BN=64 -DGEMM_CLUSTER=1            Day 87's pick where few tiles
#   f64p   the same with -DGEMM_PROMOTE=1
#   s64    gemm7_shapes.cu -DGEMM_BM=64 -DGEMM_BN=64 -DGEMM_CLUSTER=1   Day 86's decode rows' pick
#   s200   gemm7_shapes.cu -DGEMM_BN=200 -DGEMM_CLUSTER=1               Day 86's pick at 4104 x 776 x 1240
# Steps: build, check (each main()'s ragged shapes), sanitize (racecheck, synccheck, memcheck on a ragged
# shape), tests (pytest -m gpu tests/lessons/day87/test_launch_costs.py). BUDGET 200 unless set.
#   OUT=$OUT bash evidence/gemm_dev/launch40_gpu.sh          Output: $OUT/launch40/run.log
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/launch40"
BIN=${LAUNCH40_BIN:-/tmp/launch40_bin}
BUDGET=${BUDGET:-200}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A SRC=([f64]=gemm8_fp8 [f64p]=gemm8_fp8 [s64]=gemm7_shapes [s200]=gemm7_shapes)
declare -A FLAGS=(
  [f64]="-DGEMM_BN=64 -DGEMM_CLUSTER=1"
  [f64p]="-DGEMM_BN=64 -DGEMM_CLUSTER=1 -DGEMM_PROMOTE=1"
  [s64]="-DGEMM_BM=64 -DGEMM_BN=64 -DGEMM_CLUSTER=1"
  [s200]="-DGEMM_BN=200 -DGEMM_CLUSTER=1"
)
declare -A SHAPE=([f64]="1000 1032 528 1" [f64p]="1000 1032 528 1" [s64]="260 1032 520 3" [s200]="260 1032 520 1")
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - SECONDS))
  (( limit > left )) && limit=$left
  echo; echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s) ==="
  if (( limit < 10 )); then echo "--- $name: SKIPPED (${left}s of the ${BUDGET}s budget left)"; return; fi
  timeout -k 5 "$limit" "$@"; echo "--- $name: exit $?"
}
main() {
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
for b in f64 f64p s64 s200; do
  step "build $b (kernels/${SRC[$b]}.cu ${FLAGS[$b]})" 60 $NVCC ${FLAGS[$b]} -o "$BIN/$b" "kernels/${SRC[$b]}.cu"
done
for b in f64 f64p s64 s200; do
  step "check $b: main()'s ragged shapes" 40 "$BIN/$b"
done
for b in f64 f64p s64 s200; do
  for tool in racecheck synccheck memcheck; do
    step "compute-sanitizer --tool $tool $b ${SHAPE[$b]}" 40 \
      compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" ${SHAPE[$b]}
  done
done
step "GPU tests: plain-grid cluster-1 builds, exact and bit for bit their cluster-launch twins" 120 \
  python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_launch_costs.py
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
