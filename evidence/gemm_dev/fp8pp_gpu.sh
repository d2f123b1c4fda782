#!/bin/bash
# The GPU runs the ping-pong promoting build (kernels/gemm8_fp8.cu, -DGEMM_PROMOTE_PINGPONG=1) still
# needs: nothing here has run on a GPU yet (evidence/gemm_dev/notes_fp8pp.md). For one H100 (or
# H200), from the repository root of this tree, with nvcc, CuPy, cuda-bindings and nvmath-python
# (the cuBLASLt peer) as Day 87's own runs have them (evidence/gemm_dev/run87.sh):
#
#   OUT=$OUT bash evidence/gemm_dev/fp8pp_gpu.sh                 # every step, most needed first
#   STEPS="check sanitize" OUT=$OUT bash evidence/gemm_dev/fp8pp_gpu.sh
#
# Steps (each under its own time limit: a deadlocked barrier never returns):
#   build     nvcc: the ping-pong build with a cluster of 2 and of 1, and the 128x128 promoting build
#   check     the standalone binaries' self-checks: every element of D against float64 of the inputs,
#             the guard past D, two launches bit-identical; main()'s 7 ragged shapes at P = 0, 1, 3, and
#             shapes with many 64-row tiles (CTAs with a pair of units and a lone one) at P = 1 and
#             12 (a chain longer than the 8-stage ring)
#   sanitize  compute-sanitizer racecheck, synccheck and memcheck, cluster 2 and 1, on a ragged shape
#             whose every CTA runs a pair of units and a lone one (1400 x 2304 x 144, N a multiple of 8 (2300, first written here, was refused by the host on the GPU): 198 units on
#             66 clusters of two; cluster 1: 396 units on 132 CTAs)
#   tests     the course's NVRTC path on the GPU: pytest -m gpu tests/lessons/day87/test_gpu.py -k pingpong
#   bench     the course's bench, interleaved with cuBLASLt FP8 (its default, which promotes, and fast
#             accumulation), at 4096 and 8192, with the ping-pong build timed in the same batches as the
#             promoting build at P = 0, 1, 2, 4 (COURSE_DAY87_PINGPONG=1): reasons titled "ping-pong ..."
#             in $OUT/fp8pp/bench/day87.json; then the same without it, for the page's own numbers
#
# Output: $OUT/fp8pp/run.log and $OUT/fp8pp/bench*/. The page renders none of it: a measured number for
# the new build goes into the notes first (and the page only after review).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/fp8pp"
BIN=${FP8PP_BIN:-/tmp/fp8pp_bin}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
STEPS=${STEPS:-"build check sanitize tests bench"}
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2; shift 2
  echo; echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s) ==="
  timeout -k 5 "$limit" "$@"; echo "--- $name: exit $?"
}
main() {
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
git log --oneline -1
if [[ $STEPS == *build* ]]; then
  step "build pp_c2" 120 $NVCC -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_PINGPONG=1 -o "$BIN/pp_c2" kernels/gemm8_fp8.cu
  step "build pp_c1" 120 $NVCC -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_PINGPONG=1 -DGEMM_CLUSTER=1 -o "$BIN/pp_c1" kernels/gemm8_fp8.cu
  step "build p_c2 (the 128x128 promoting build, for comparison)" 120 $NVCC -DGEMM_BN=128 -DGEMM_PROMOTE=1 -o "$BIN/p_c2" kernels/gemm8_fp8.cu
fi
if [[ $STEPS == *check* ]]; then
  for b in pp_c2 pp_c1 p_c2; do
    step "check $b: main()'s ragged shapes, P = 0, 1, 3" 90 "$BIN/$b"
  done
  for b in pp_c2 pp_c1; do
    for run in "2304 2504 768 1" "2304 2504 768 12" "4100 264 2064 1" "4100 264 2064 12" "4100 264 2064 0" \
               "1400 2304 144 1" "1 8 1008 12"; do
      step "check $b $run" 60 "$BIN/$b" $run
    done
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in pp_c2 pp_c1; do
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $b 1400 2304 144 1" 240 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 1400 2304 144 1
    done
    step "compute-sanitizer --tool synccheck $b 200 136 1104 3" 120 \
      compute-sanitizer --tool synccheck --error-exitcode 9 "$BIN/$b" 200 136 1104 3
  done
fi
if [[ $STEPS == *tests* ]]; then
  COURSE_REQUIRE_GPU=1 step "GPU tests: the ping-pong build through NVRTC" 300 \
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_gpu.py -k pingpong
fi
if [[ $STEPS == *bench* ]]; then
  COURSE_REQUIRE_GPU=1 COURSE_DAY87_PINGPONG=1 step "course bench day87 with the ping-pong build" 420 \
    python3 -m course bench day87 --sizes 4096 8192 --out "$LOGD/bench"
  COURSE_REQUIRE_GPU=1 step "course bench day87 (the page's, unchanged)" 420 \
    python3 -m course bench day87 --sizes 4096 8192 --out "$LOGD/bench_page"
  python3 - "$LOGD/bench/day87.json" <<'EOF' || true
import json, sys
data = json.load(open(sys.argv[1]))
for r in data.get("reasons", []):
    if "ping-pong" in r.get("title", "") or "promoting build" in r.get("title", ""):
        print(f'{r["title"]}: {r.get("value")} {r.get("unit", "")} {r.get("detail", "")}')
EOF
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
date -u
}
main 2>&1 | tee "$LOGD/run.log"
