#!/bin/bash
# The GPU run of the split-N promoting build of kernels/gemm8_fp8.cu (issue 40, session 19; copied from
# early40_gpu.sh). The builds (regions "splitn-constants" and "splitn-consumer"):
#   sn     -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_SPLITN=1   each consumer's chain as two 64-column
#                                                                   halves, the left promoted under the right
#   sn_c1  the same at cluster 1;  p128: the 128 x 128 promoting build (reference)
#   s192   -DGEMM_BN=192 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_SPLITN=1   the 128 x 192 build's chains as two of 96
#   OUT=$OUT bash evidence/gemm_dev/splitn40_gpu.sh                 # every step, in this order
# Steps: build (nvcc -Xptxas -v), check (main()'s ragged shapes and larger ragged shapes), sanitize
# (racecheck, synccheck, memcheck), tests (tests/lessons/day87/test_splitn40.py -m gpu), bench (course bench
# day87 at SPLITN40_SIZES, default 2048 4096 8192, with COURSE_DAY87_PINGPONG=splitn), BUDGET 290 unless set.
# Output: $OUT/splitn40/run.log and $OUT/splitn40/bench/.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/splitn40"
BIN=${SPLITN40_BIN:-/tmp/splitn40_bin}
BUDGET=${BUDGET:-290}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${SPLITN40_STEPS:-"build check sanitize tests bench"}
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=(
  [sn]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_SPLITN=1"
  [sn_c1]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_SPLITN=1 -DGEMM_CLUSTER=1"
  [p128]="-DGEMM_BN=128 -DGEMM_PROMOTE=1"
  [s192]="-DGEMM_BN=192 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_SPLITN=1"
)
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
if [[ $STEPS == *build* ]]; then
  for b in sn sn_c1 s192 p128; do
    step "build $b (${FLAGS[$b]})" 60 $NVCC ${FLAGS[$b]} -o "$BIN/$b" kernels/gemm8_fp8.cu
  done
fi
if [[ $STEPS == *check* ]]; then
  for b in sn sn_c1 s192 p128; do
    step "check $b: main()'s ragged shapes" 40 "$BIN/$b"
  done
  for b in sn sn_c1 s192; do
    for run in "2304 2504 768 1" "1400 2504 400 1" "264 392 4096 1" "4096 4096 4096 1"; do
      step "check $b $run" 20 "$BIN/$b" $run
    done
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in sn s192; do
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $b 1400 2504 400 1" 40 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 1400 2504 400 1
    done
  done
fi
if [[ $STEPS == *tests* ]]; then
  step "GPU tests: the split-N build through NVRTC on ragged shapes, bit for bit the promoting build" 120 \
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_splitn40.py
fi
if [[ $STEPS == *bench* ]]; then
  COURSE_DAY87_PINGPONG=${SPLITN40_DEV:-splitn,splitn192,128x192} step "course bench day87 with the split-N build" 200 \
    python3 -m course bench day87 --sizes ${SPLITN40_SIZES:-2048 4096 8192} --out "$LOGD/bench"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
