#!/bin/bash
# The GPU run of the early-release promoting builds of kernels/gemm8_fp8.cu (issue 40, session 18; copied
# from pstag40_gpu.sh). The builds (region "early-release"; the consumer loop of region "stagger-consumer"):
#   ea     -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_EARLY_RELEASE=1   the 128 x 128 promoting build, each stage
#                                                                  given back before its promotion
#   ea_c1  the same at cluster 1; e192: the 128 x 192 promoting build with the flag; eb: the block-scaled one
#   p128   -DGEMM_BN=128 -DGEMM_PROMOTE=1                          the 128 x 128 promoting build (reference)
#   OUT=$OUT bash evidence/gemm_dev/early40_gpu.sh                 # every step, in this order
# Steps: build (nvcc -Xptxas -v), check (main()'s ragged shapes, P = 0, 1, 3, and larger ragged shapes),
# sanitize (racecheck, synccheck, memcheck), tests (tests/lessons/day87/test_early40.py -m gpu), timeline
# (evidence/gemm_dev/tl87.py: the 128 x 128 promoting build and ea at N = 4096, P = 1), bench
# (course bench day87 at 512-8192 with COURSE_DAY87_PINGPONG=early,128x192,early192,block,earlyblock and the
# 128x64 launch-cost builds n64,n64nocl,n64pf,n64both,n64p,n64pboth at 512 and 1024), BUDGET 290 unless set.
# The GPU tests step also runs tests/lessons/day87/test_launch_costs.py (both kernels' launch-cost flags).
# Output: $OUT/early40/run.log, $OUT/early40/bench/ and $OUT/early40/tl87/.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/early40"
BIN=${EARLY40_BIN:-/tmp/early40_bin}
BUDGET=${BUDGET:-290}
RESERVE=${RESERVE:-130}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${EARLY40_STEPS:-${STEPS:-"build check sanitize tests timeline bench"}}  # EARLY40_STEPS: this script's own
[[ $STEPS == *bench* ]] || RESERVE=0
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=(
  [ea]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_EARLY_RELEASE=1"
  [ea_c1]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_EARLY_RELEASE=1 -DGEMM_CLUSTER=1"
  [e192]="-DGEMM_BN=192 -DGEMM_PROMOTE=1 -DGEMM_EARLY_RELEASE=1"
  [eb]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1 -DGEMM_EARLY_RELEASE=1"
  [p128]="-DGEMM_BN=128 -DGEMM_PROMOTE=1"
)
NEW="ea ea_c1 e192 eb"
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
    step "check $b: main()'s ragged shapes" 40 "$BIN/$b"
  done
  for b in ea ea_c1 e192; do
    for run in "2304 2504 768 1" "2304 2504 768 3" "1400 2504 400 1" "264 392 4096 1" "264 392 4096 3"; do
      step "check $b $run" 20 "$BIN/$b" $run
    done
  done
  for run in "2304 2504 768 1" "264 392 4096 1"; do
    step "check eb $run" 20 "$BIN/eb" $run
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in ea eb; do
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $b 1400 2504 400 1" 40 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 1400 2504 400 1
    done
  done
fi
if [[ $STEPS == *tests* ]]; then
  step "GPU tests: the early-release builds through NVRTC on ragged shapes, bit for bit their base builds" 120 \
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_early40.py tests/lessons/day87/test_launch_costs.py
fi
if [[ $STEPS == *timeline* ]]; then
  OUT=$LOGD TL87_BUILDS=${TL87_BUILDS:-promote,early} step "timelines of the promoting builds at N = 4096, P = 1" 60 \
    python3 evidence/gemm_dev/tl87.py
fi
if [[ $STEPS == *bench* ]]; then
  RESERVE=0
  COURSE_DAY87_PINGPONG=${EARLY40_DEV:-early,128x192,early192,block,earlyblock,n64,n64nocl,n64pf,n64both,n64p,n64pboth} step "course bench day87 with the early-release builds" 200 \
    python3 -m course bench day87 --sizes ${EARLY40_SIZES:-512 1024 2048 4096 8192} --out "$LOGD/bench"
  python3 - "$LOGD/bench/day87.json" <<'PY' || true
import json, sys
data = json.load(open(sys.argv[1]))
for r in data.get("reasons", []):
    t = r.get("title", "")
    if t.startswith("early") or t.startswith("128x192") or t.startswith("block-scaled") or t.startswith("128x64") or t.startswith("promoting build, every 128 (P=1) at N="):
        print(f'{t}: {r.get("value")} {r.get("unit", "")} {r.get("detail", "")}')
PY
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
