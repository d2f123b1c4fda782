#!/bin/bash
# One device call for the Day 87 kernel (kernels/gemm8_fp8.cu): the
# standalone binaries' ragged-shape checks (four builds, in parallel),
# compute-sanitizer racecheck at small ragged sizes, then bench87.py (NVRTC
# builds, quantiser check, correctness and speed against cuBLASLt FP8 at
# 4096 and 8192, the accuracy curve against K). Run from the staged folder
# (stage87.sh). Every step has a timeout: a deadlocked mbarrier never
# returns; then `course run day87` and `course bench day87` from the
# staged tree. Output: $OUT/run87.log, $OUT/bench87.json, $OUT/bench/. STEPS (default
# "check sanitize bench") picks steps; BENCH_ARGS goes to bench87.py.
cd "$(dirname "$0")"
export OUT=${OUT:-/tmp}
LOG=$OUT/run87.log
exec > >(tee "$LOG") 2>&1
export PYTHONUNBUFFERED=1
if [ -d ../.whl ]; then  # nvmath-python, carried as a wheel
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site ../.whl/nvmath_python-*.whl
  export PYTHONPATH=/tmp/site
fi
STEPS=${STEPS:-"check sanitize bench course"}
CFGS="bn256_c2_p0 bn256_c1_p0 bn128_c2_p1 bn128_c1_p1"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -2
python3 -c "import cupy, cuda.bindings; print('cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
if [[ $STEPS == *check* ]]; then
  pids=""
  for c in $CFGS; do
    ( timeout -k 5 ${CHECK_TIMEOUT:-60} ./bin/gemm8_$c > chk_$c.log 2>&1; echo "rc=$?" >> chk_$c.log ) &
    pids="$pids $!"
  done
  for p in $pids; do wait $p; done
  for c in $CFGS; do echo "=== check $c"; cat chk_$c.log; done
  if grep -qE "rc=(124|137)" chk_*.log; then echo "a check timed out: skipping the sanitizer"; STEPS=${STEPS/sanitize/}; fi
fi
if [[ $STEPS == *sanitize* ]]; then
  for run in "bn256_c2_p0:200:136:144:0" "bn128_c2_p1:200:136:1104:3"; do
    set -- ${run//:/ }
    for tool in racecheck synccheck; do
      echo "=== sanitizer $tool $*"
      timeout -k 5 60 compute-sanitizer --tool $tool ./bin/gemm8_$1 $2 $3 $4 $5 2>&1 | tail -3
    done
  done
fi
if [[ $STEPS == *bench* ]]; then
  echo "=== bench87"
  timeout -k 5 ${BENCH_TIMEOUT:-300} python3 bench87.py gemm8_fp8.cu $BENCH_ARGS
  echo "bench rc=$?"
fi
if [[ $STEPS == *course* ]]; then  # the course's own host and benchmark, from the staged tree
  ( cd tree && export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1
    echo "=== course run day87"; timeout -k 5 120 python3 -m course run day87; echo "rc=$?"
    echo "=== course bench day87"; timeout -k 5 ${COURSE_BENCH_TIMEOUT:-240} python3 -m course bench day87 --out "$OUT/bench"; echo "rc=$?" )
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
date -u
