#!/bin/bash
# The GPU run of the turns builds of kernels/gemm8_fp8.cu (issue 40, session 20; copied from
# splitn40_gpu.sh). The builds (regions "turns-constants" and "turns-order"): the consumers issue each
# K-tile's wgmmas in turns, ordered by named barriers.
#   tn     -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_TURNS=1    the 128 x 128 promoting build in turns
#   tn_c1  the same at cluster 1;  p128: the 128 x 128 promoting build (reference)
#   t192   -DGEMM_BN=192 ... TURNS=1;  t3: -DGEMM_BM=192 ... (three consumers);  tb: block scales, in turns
#   tl     -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1 -DGEMM_SCALES_LATE=1 (region scales-late);
#   tlt    the same in turns;  tl2: -DGEMM_SCALES_LATE=2 (the scales walked by pointer adds)
#   OUT=$OUT bash evidence/gemm_dev/turns40_gpu.sh                  # every step, in this order
# Steps: build (nvcc -Xptxas -v, in parallel), check (main()'s ragged shapes and larger ragged shapes),
# sanitize (racecheck, synccheck, memcheck), tests (tests/lessons/day87/test_turns40.py -m gpu), bench
# (course bench day87 at TURNS40_SIZES, default 2048 4096 8192, with COURSE_DAY87_PINGPONG=TURNS40_DEV),
# BUDGET 560 unless set. Output: $OUT/turns40/run.log and $OUT/turns40/bench/.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/turns40"
BIN=${TURNS40_BIN:-/tmp/turns40_bin}
BUDGET=${BUDGET:-560}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${TURNS40_STEPS:-"build check sanitize tests bench"}
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=(
  [tn]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_TURNS=1"
  [tn_c1]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_TURNS=1 -DGEMM_CLUSTER=1"
  [p128]="-DGEMM_BN=128 -DGEMM_PROMOTE=1"
  [t192]="-DGEMM_BN=192 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_TURNS=1"
  [t3]="-DGEMM_BN=128 -DGEMM_BM=192 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_TURNS=1"
  [tb]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1 -DGEMM_PROMOTE_TURNS=1"
  [tl]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1 -DGEMM_SCALES_LATE=1"
  [tl2]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1 -DGEMM_SCALES_LATE=2"
  [tlt]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1 -DGEMM_SCALES_LATE=1 -DGEMM_PROMOTE_TURNS=1"
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
  for b in ${TURNS40_BUILDS:-tn tn_c1 t192 t3 tb tl tlt tl2 p128}; do  # in parallel, each log printed after
    ( $NVCC ${FLAGS[$b]} -o "$BIN/$b" kernels/gemm8_fp8.cu > "$BIN/$b.log" 2>&1; echo "exit $?" >> "$BIN/$b.log" ) &
  done
  wait
  for b in ${TURNS40_BUILDS:-tn tn_c1 t192 t3 tb tl tlt tl2 p128}; do echo "=== build $b (${FLAGS[$b]})"; grep -v "^$" "$BIN/$b.log" | tail -4; done
fi
if [[ $STEPS == *check* ]]; then
  for b in ${TURNS40_BUILDS:-tn tn_c1 t192 t3 tb tl tlt tl2 p128}; do
    step "check $b: main()'s ragged shapes" 40 "$BIN/$b"
  done
  for b in ${TURNS40_CHECK:-tn tn_c1 t192 t3 tb tl tlt tl2}; do
    for run in "2304 2504 768 1" "1400 2504 400 1" "264 392 4096 1"; do
      step "check $b $run" 20 "$BIN/$b" $run
    done
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in ${TURNS40_SANITIZE:-tn t3 tb tl tl2}; do
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $b 1400 2504 400 1" 40 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 1400 2504 400 1
    done
  done
fi
if [[ $STEPS == *tests* ]]; then
  step "GPU tests: the turns builds through NVRTC on ragged shapes, bit for bit their bases" 120 \
    python3 -m pytest -q -p no:cacheprovider -m gpu ${TURNS40_TESTS:-tests/lessons/day87/test_turns40.py \
    tests/lessons/day87/test_scales_late40.py}
fi
if [[ $STEPS == *bench* ]]; then
  COURSE_DAY87_PINGPONG=${TURNS40_DEV:-turns,turns192,128x192,turns3,192x128,turnsblock,block,late,lateturns} \
    step "course bench day87 with the turns builds" 330 \
    python3 -m course bench day87 --sizes ${TURNS40_SIZES:-2048 4096 8192} --out "$LOGD/bench"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
