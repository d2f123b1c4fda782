#!/bin/bash
# Issue 39, branch small39: the 64-row decode picks and the small builds (-DGEMM_SMALL=1) on a GPU.
# Written in a session with no GPU; NOTHING in it has run yet. Run from the tree's root on an H100
# (then an H200), PYTHONPATH set to the tree, COURSE_REQUIRE_GPU=1. Logs and JSON under $OUT. One
# device call of at most 540 s: the last two steps' timeouts shrink to what is left of 535 s
# (correctness first; a failing step does not stop the others, read the log):
#   run(command='export PYTHONPATH=$PWD COURSE_REQUIRE_GPU=1; bash evidence/gemm_dev/small39_gpu.sh',
#       timeout_s=600)
# STEPS picks steps (default: all, in this order):
#   build     nvcc the standalone binaries with -Xptxas -v: the two small builds, a deterministic
#             one, and the two 64-row builds the chooser now picks for decode rows
#   ragged    each binary's own ragged list (7 shapes, splits 1 and 3), every element vs float64,
#             the guard after D, the second launch bit-identical; then grids capped to 5 and 3
#             (so each CTA walks several units through the ring)
#   sanitize  compute-sanitizer racecheck, synccheck, memcheck: three ragged shapes on capped grids
#   gputest   pytest -m gpu tests/lessons/day86 -k "small or 64_row" (through the course host)
#   measure   streamk_measure.py with MEASURE=small39: the new builds on ragged shapes through the
#             course host, then the small squares (256..1024) and decode rows (M 1..128,
#             N = K = 8192 and N 4096, K 14336): today's pick vs the 64-row pick vs the small builds
#             vs cuBLAS, one by one and in CUDA graphs, interleaved; JSON $OUT/small39-measure.json
# (SHAPES=quick measures four shapes only.)
set -u
T0=$(date +%s)
STEPS=${STEPS:-"build ragged sanitize gputest measure"}
OUT=${OUT:-/tmp/small39_out}; mkdir -p "$OUT"
exec > >(tee "$OUT/small39.log") 2>&1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S), +$(( $(date +%s) - T0 )) s)"; }
left() { local l=$(( 535 - ($(date +%s) - T0) )); echo $(( l < $1 ? (l > 5 ? l : 5) : $1 )); }  # min(arg, time left)
step env
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
git -C . log -1 --format=%H 2>/dev/null || true
B=/tmp/small39bin; mkdir -p $B
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a"
S="-DGEMM_SMALL=1,-DGEMM_BM=64,-DGEMM_CLUSTER=1"
BUILDS="small_64:$S,-DGEMM_BN=64 small_128:$S,-DGEMM_BN=128 smalldet_128:$S,-DGEMM_BN=128,-DGEMM_DETERMINISTIC=1 \
bm64_64_c1:-DGEMM_BM=64,-DGEMM_BN=64,-DGEMM_CLUSTER=1 bm64_128_c1:-DGEMM_BM=64,-DGEMM_BN=128,-DGEMM_CLUSTER=1"
if [[ $STEPS == *build* ]]; then
  step "nvcc: the small and 64-row binaries"
  for b in $BUILDS; do
    name=${b%%:*}; flags=${b#*:}; flags=${flags//,/ }
    timeout -k 5 20 $NVCC $flags -Xptxas -v -o $B/$name kernels/gemm7_shapes.cu 2>&1 | grep -E "registers|spill|error"
    echo "$name ($flags): exit ${PIPESTATUS[0]}"
  done
fi
if [[ $STEPS == *ragged* ]]; then
  for b in $BUILDS; do
    name=${b%%:*}
    step "standalone $name: its ragged list, splits 1 and 3"
    timeout -k 2 10 $B/$name | tail -4; echo "exit ${PIPESTATUS[0]}"
  done
  for run in "small_64 1000 1032 520 3 5" "small_128 1200 1200 1200 1 3" "smalldet_128 130 392 1096 3 5" \
             "bm64_64_c1 1 8192 8192 1 0" "bm64_64_c1 8 4104 1000 2 3"; do
    set -- $run
    step "standalone $run (last: clusters, 0 = all SMs)"
    timeout -k 2 15 $B/$1 $2 $3 $4 $5 $6 | tail -2; echo "exit ${PIPESTATUS[0]}"
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for run in "small_64 200 136 1096 3 5" "smalldet_128 130 392 520 3 3" "bm64_64_c1 8 1032 1000 2 7"; do
    set -- $run
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $run"
      timeout -k 2 15 compute-sanitizer --tool $tool $B/$1 $2 $3 $4 $5 $6 2>&1 | tail -3
      echo "exit ${PIPESTATUS[0]}"
    done
  done
fi
if [[ $STEPS == *gputest* ]]; then
  step "pytest -m gpu tests/lessons/day86 -k 'small or 64_row'"
  timeout -k 5 $(left 75) python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day86/test_gpu.py \
    -k "small or 64_row" -W ignore::DeprecationWarning -rA 2>&1 | grep -vE "^(PASSED|$)" | tail -20
  echo "exit ${PIPESTATUS[0]}"
fi
if [[ $STEPS == *measure* ]]; then
  step "streamk_measure.py MEASURE=small39: today's pick vs 64-row vs small vs cuBLAS, one by one and in graphs"
  MEASURE=small39 timeout -k 5 $(left ${MEASURE_TIMEOUT:-230}) python3 evidence/gemm_dev/streamk_measure.py \
    $OUT/small39-measure.json; echo "exit $?"
fi
step done
