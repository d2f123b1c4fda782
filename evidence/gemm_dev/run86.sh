#!/bin/bash
# One device call for the Day 86 kernel (kernels/gemm7_shapes.cu): the
# standalone binaries' ragged-shape checks (all six configurations, in
# parallel), compute-sanitizer at a small ragged size, the SASS's wgmma
# count, then bench86.py (NVRTC build of every configuration, check and
# timing against cuBLAS). Run from the staged folder (stage86.sh). Every
# step has a timeout: a deadlocked mbarrier never returns. Output goes to
# $OUT/run86.log. STEPS (default "check sanitize sass bench") picks steps;
# BENCH_ARGS is passed to bench86.py.
cd "$(dirname "$0")"
LOG=${OUT:-/tmp}/run86.log
exec > >(tee "$LOG") 2>&1
export PYTHONUNBUFFERED=1
STEPS=${STEPS:-"check sanitize sass bench"}
CFGS="bn256_c2 bn256_c1 bn128_c2 bn128_c1 bn64_c2 bn64_c1"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -2
python3 -c "import cupy, cuda.bindings; print('cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
build() {  # build one configuration here if the carried binary will not start
  local c=$1 bn=${1#bn}; bn=${bn%_c*}; local cl=${1##*_c}
  nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DGEMM_BN=$bn -DGEMM_CLUSTER=$cl -o bin/gemm7_$c gemm7_shapes.cu
}
if [[ $STEPS == *check* ]]; then
  pids=""
  for c in $CFGS; do
    ( timeout -k 5 ${CHECK_TIMEOUT:-60} ./bin/gemm7_$c > chk_$c.log 2>&1; rc=$?
      if [ $rc -eq 126 ] || [ $rc -eq 127 ]; then
        echo "binary would not start (rc $rc): building here" >> chk_$c.log
        build $c && timeout -k 5 ${CHECK_TIMEOUT:-60} ./bin/gemm7_$c >> chk_$c.log 2>&1; rc=$?
      fi
      echo "rc=$rc" >> chk_$c.log ) &
    pids="$pids $!"
  done
  # Wait for these jobs by id: a bare `wait` also waits for the tee of the
  # process substitution above, which never ends (the first call hung so).
  for p in $pids; do wait $p; done
  for c in $CFGS; do echo "=== check $c"; cat chk_$c.log; done
  # A timeout is a hang (a deadlocked barrier): then the sanitizer would hang too.
  if grep -qE "rc=(124|137)" chk_*.log; then echo "a check timed out: skipping the sanitizer"; STEPS=${STEPS/sanitize/}; fi
fi
if [[ $STEPS == *sanitize* ]]; then
  for run in ${SAN_RUNS:-"bn256_c2:200:136:200:3"}; do
    run=${run//:/ }
    set -- $run
    for tool in ${SAN_TOOLS:-racecheck synccheck memcheck}; do
      echo "=== sanitizer $tool $run"
      timeout -k 5 ${SAN_TIMEOUT:-60} compute-sanitizer --tool $tool ./bin/gemm7_$1 $2 $3 $4 $5 2>&1 | tail -3
    done
  done
fi
if [[ $STEPS == *sass* ]]; then
  for c in $CFGS; do
    echo "=== SASS $c: $(cuobjdump --dump-sass bin/gemm7_$c 2>/dev/null | grep -c HGMMA) HGMMA, $(cuobjdump --dump-sass bin/gemm7_$c 2>/dev/null | grep -cE 'LDL|STL') LDL/STL"
  done
fi
if [[ $STEPS == *bench* ]]; then
  echo "=== bench86"
  timeout -k 5 ${BENCH_TIMEOUT:-300} python3 bench86.py gemm7_shapes.cu $BENCH_ARGS
  echo "bench rc=$?"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
date -u
