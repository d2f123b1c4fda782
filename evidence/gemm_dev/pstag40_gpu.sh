#!/bin/bash
# The GPU run of the staggered-promotion build of kernels/gemm8_fp8.cu (issue 40, session 17; copied from
# pover40_gpu.sh). The builds:
#   st     -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_STAGGER=1   consumer 1 promotes half a K-tile after
#                                                                   consumer 0 (region "stagger-consumer")
#   sd, de st and the promoting build with -DGEMM_DESC_ITER=1 (descriptors advanced by adds)
#   p128   -DGEMM_BN=128 -DGEMM_PROMOTE=1                           the 128 x 128 promoting build (reference)
# st with a cluster of 2 and of 1 (st_c1). The build promotes every K-tile whatever P it is given, so its
# checks at P = 0 and 3 hold it to a looser tolerance than it meets; P = 1 is the one that tests it.
#   OUT=$OUT bash evidence/gemm_dev/pstag40_gpu.sh                 # every step, in this order
# Steps as pover40_gpu.sh's (build, check, sanitize, tests: tests/lessons/day87/test_stagger40.py; bench:
# COURSE_DAY87_PINGPONG=stagger,desc,stagdesc), BUDGET 290 unless set.
# Output: $OUT/pstag40/run.log and $OUT/pstag40/bench/.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/pstag40"
BIN=${PSTAG40_BIN:-/tmp/pstag40_bin}
BUDGET=${BUDGET:-290}
RESERVE=${RESERVE:-150}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${STEPS:-"build check sanitize tests bench"}
[[ $STEPS == *bench* ]] || RESERVE=0
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=(
  [st]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_STAGGER=1"
  [st_c1]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_STAGGER=1 -DGEMM_CLUSTER=1"
  [sd]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_STAGGER=1 -DGEMM_DESC_ITER=1"
  [de]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_DESC_ITER=1"
  [p128]="-DGEMM_BN=128 -DGEMM_PROMOTE=1"
)
NEW="st st_c1 sd de"
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
  for run in "2304 2504 768 1" "2304 2504 768 2" "2304 2504 768 3" "1400 2504 400 1" \
             "1400 2504 400 3" "264 392 4096 1" "264 392 4096 3"; do
    step "check st $run" 20 "$BIN/st" $run
  done
  for b in st_c1 sd de; do
    for run in "2304 2504 768 1" "264 392 4096 1"; do
      step "check $b $run" 20 "$BIN/$b" $run
    done
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in st sd; do
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $b 1400 2504 400 1" 40 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 1400 2504 400 1
    done
  done
fi
if [[ $STEPS == *tests* ]]; then
  step "GPU tests: the staggered build through NVRTC on ragged shapes" 90 \
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_stagger40.py
fi
if [[ $STEPS == *bench* ]]; then
  RESERVE=0
  COURSE_DAY87_PINGPONG=stagger,desc,stagdesc step "course bench day87 with the staggered and descriptor-adds builds" 180 \
    python3 -m course bench day87 --sizes 2048 4096 8192 --out "$LOGD/bench"
  python3 - "$LOGD/bench/day87.json" <<'PY' || true
import json, sys
data = json.load(open(sys.argv[1]))
for r in data.get("reasons", []):
    t = r.get("title", "")
    if t.startswith("staggered") or t.startswith("descriptor-adds") or t.startswith("promoting build, every 128 (P=1) at N="):
        print(f'{t}: {r.get("value")} {r.get("unit", "")} {r.get("detail", "")}')
PY
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
