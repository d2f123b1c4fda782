#!/bin/bash
# Day 86 in ONE device call (the time allowed is short): run from the
# folder stage86.sh filled with TREE=1 (binaries, sources, this branch's
# committed tree in tree/), the wheels in ../.whl (carried as .whl):
#
#   run(command='bash .dev86s/d86_call.sh', carry=['.dev86s', '.whl'], timeout_s=...)
#
# Most needed first, each step with its own time limit:
#   1. the standalone binaries' ragged checks, every build (run86.sh:
#      every element against float64, the guard after D, a second launch
#      bit-identical), compute-sanitizer on the new pieces (racecheck on
#      the 128x64 build, memcheck on the new split-K count), HGMMA count;
#   2. only if every check passed: the course with the GPU required, from
#      tree/: course run/record/bench/timeline day86 (d86_gpu.sh; the
#      bench times cuBLAS gemmEx and cuBLASLt through nvmath-python);
#   3. the GPU tests of Day 86, the peers and the coding exercise;
#   4. bench86.py: the model's best candidates per shape (kernel against
#      kernel; its cuBLAS column is launch-bound at small sizes).
# $OUT gets call.log and the seven evidence files (8 files come back).
# LEAN=1 RUN86_STEPS=check: the checks alone before the course (a second
# call after a small change); BENCH_SHAPES: the candidates' shapes.
set -u
cd "$(dirname "$0")"
HERE=$PWD
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
main() {
  echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'): bash .dev86s/d86_call.sh, tree at $(cat tree/.commit 2>/dev/null)"
  nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl
  export PYTHONPATH=/tmp/site
  python3 -c "import sys, cupy, cuda.bindings, nvmath; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__, 'nvmath-python', nvmath.__version__)"
  STEPS=${RUN86_STEPS:-"check sanitize sass"} CHECK_TIMEOUT=60 SAN_TIMEOUT=40 SAN_TOOLS="racecheck memcheck" \
    SAN_RUNS="bn64_c2:200:136:200:3" OUT=/tmp bash run86.sh
  [ -n "${LEAN:-}" ] || SAN_RUNS="bn256_c2:200:136:200:3" SAN_TOOLS=memcheck STEPS=sanitize SAN_TIMEOUT=40 OUT=/tmp bash run86.sh
  if grep -q "FAIL" chk_*.log || ! grep -qx "rc=0" chk_bn64_c2.log || [ "$(grep -lx 'rc=0' chk_*.log | wc -l)" != 6 ]; then
    echo "A CHECK FAILED: nothing recorded"; return 1
  fi
  ln -sfn ../../.whl tree/.whl
  (cd tree && OUT=/tmp/d86 D86_NO_TESTS=1 BUDGET=${COURSE_BUDGET:-150} bash tools/gemm_dev/d86_gpu.sh)
  for d in evidence bench timeline; do mkdir -p "$OUT/$d" && cp /tmp/d86/$d/* "$OUT/$d/" 2>/dev/null; done
  echo; echo "=== GPU tests ($(date -u +%H:%M:%S))"
  (cd tree && COURSE_REQUIRE_GPU=1 PYTHONPATH=/tmp/site:$PWD timeout -k 5 ${TEST_TIMEOUT:-100} python3 -m pytest -q \
    -p no:cacheprovider -m gpu tests/lessons/day86 tests/bench/test_engine.py tests/exercises/coding/test_gpu.py \
    -k "day86 or cublaslt" -W ignore::DeprecationWarning; echo "--- GPU tests: exit $?")
  echo; echo "=== bench86 candidates ($(date -u +%H:%M:%S))"
  cd "$HERE" && timeout -k 5 ${BENCH_TIMEOUT:-45} python3 bench86.py gemm7_shapes.cu --quick --top=3 \
    ${BENCH_SHAPES:-512,512,512 1024,1024,1024 128,8192,8192 1024,1024,16384}
  echo "--- bench86: exit $?"
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
  echo "# end $(date -u +%H:%M:%S)"
}
main 2>&1 | tee "$OUT/call.log"
