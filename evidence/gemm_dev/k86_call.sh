#!/bin/bash
# One device call for helper k86 (issues 35 and 39, Day 86): correctness first (course run day86,
# the Day 86 GPU tests, the deterministic build's standalone ragged checks and compute-sanitizer),
# then the measurements (k86_measure.py: moved picks, both timing modes) and `course bench day86`
# (its shape table timed both ways, the deterministic build's cost). Run from the tree's root with
# PYTHONPATH set to it and COURSE_REQUIRE_GPU=1. STEPS picks steps (default: all). Logs under $OUT.
set -u
T0=$(date +%s)
STEPS=${STEPS:-"run tests standalone sanitize measure bench"}
LOG=$OUT/k86.log
exec > >(tee "$LOG") 2>&1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S), +$(( $(date +%s) - T0 )) s)"; }
step env
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
git -C . log -1 --format=%H 2>/dev/null || true
B=/tmp/k86bin; mkdir -p $B
if [[ $STEPS == *standalone* || $STEPS == *sanitize* ]]; then
  ( for bm in 128 64; do for cl in 2 1; do
      nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DGEMM_DETERMINISTIC=1 -DGEMM_CLUSTER=$cl \
        -DGEMM_BM=$bm -o $B/gemm7_det_bm${bm}_c$cl kernels/gemm7_shapes.cu > $B/build_bm${bm}_c$cl.log 2>&1 &
    done; done; wait ) &
  BUILD=$!
fi
if [[ $STEPS == *run* ]]; then
  step "python -m course run day86"
  timeout -k 5 60 python3 -m course run day86; echo "exit $?"
fi
if [[ $STEPS == *tests* ]]; then
  step "pytest -m gpu tests/lessons/day86"
  timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day86 -W ignore::DeprecationWarning -s -rA 2>&1 | grep -vE "^(PASSED|$)" | tail -40
  echo "exit ${PIPESTATUS[0]}"
fi
if [[ $STEPS == *standalone* || $STEPS == *sanitize* ]]; then
  wait $BUILD; cat $B/build_*.log
fi
if [[ $STEPS == *standalone* ]]; then
  for b in bm128_c2 bm128_c1 bm64_c2 bm64_c1; do
    step "standalone, -DGEMM_DETERMINISTIC=1 $b: the ragged shapes, splits 1 and 3"
    timeout -k 5 60 $B/gemm7_det_$b; echo "exit $?"
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for run in "bm128_c2 200 136 200 3" "bm64_c1 130 392 1096 3" "bm64_c2 72 136 520 3"; do
    set -- $run
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool gemm7_det_$1 $2 $3 $4 $5"
      timeout -k 5 40 compute-sanitizer --tool $tool $B/gemm7_det_$1 $2 $3 $4 $5 2>&1 | tail -3
    done
  done
fi
if [[ $STEPS == *measure* ]]; then
  step "k86_measure.py: moved picks and 64-row decode builds, launches and CUDA graphs"
  timeout -k 5 90 python3 evidence/gemm_dev/k86_measure.py $OUT/k86-measure.json; echo "exit $?"
fi
if [[ $STEPS == *bench* ]]; then
  step "python -m course bench day86"
  timeout -k 5 ${BENCH_TIMEOUT:-150} python3 -m course bench day86 --out $OUT; echo "exit $?"
fi
step done
