#!/bin/bash
# One device call for the Day 87 kernel (kernels/gemm8_fp8.cu), run from the
# staged folder (stage87.sh), most needed first, each step with its own time
# limit inside BUDGET seconds (a deadlocked mbarrier never returns):
#   check     the standalone binaries' ragged-shape self-checks (four builds, in parallel)
#   course    from the staged tree: python -m course run day87, record day87
#             (--out $OUT/evidence), bench day87 (--out $OUT/bench: against cuBLASLt
#             FP8, the promotion intervals, the accuracy curve against K), timeline
#             day87 --n 1024 (--out $OUT/timeline), then
#             pytest -m gpu tests/lessons/day87
#   bench     bench87.py: the quantiser against ml_dtypes, every build at 4096 and
#             8192 beside cuBLASLt and torch._scaled_mm (BENCH_ARGS, e.g. --no-accuracy)
#   sanitize  compute-sanitizer racecheck and synccheck at small ragged shapes
# Output: $OUT/run87.log, $OUT/bench87.json, $OUT/evidence/, $OUT/bench/.
cd "$(dirname "$0")"
export OUT=${OUT:-/tmp}
mkdir -p "$OUT/evidence" "$OUT/bench" "$OUT/timeline"
export PYTHONUNBUFFERED=1
if [ -d ../.whl ]; then  # nvmath-python and the test tools (tomli_w, nbval, ...), carried as wheels
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ../.whl/*.whl
  export PYTHONPATH=/tmp/site
fi
STEPS=${STEPS:-"check probe course bench sanitize"}
CFGS="bn256_c2_p0 bn256_c1_p0 bn128_c2_p1 bn128_c1_p1"
START=$(date +%s)
BUDGET=${BUDGET:-450}
left() { echo $((BUDGET - ($(date +%s) - START))); }
step() {  # step NAME LIMIT CMD...: run CMD with at most LIMIT seconds (less if the budget is short)
  local name=$1 limit=$2; shift 2
  local l; l=$(left); [ "$l" -lt "$limit" ] && limit=$l
  echo; echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s) ==="
  if [ "$limit" -le 10 ]; then echo "NOT RUN: the call's time is spent"; return; fi
  timeout -k 5 "$limit" "$@"; echo "--- $name: exit $?"
}
main() {
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -2
python3 -c "import sys, cupy, cuda.bindings; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
if [[ $STEPS == *check* ]]; then
  pids=""
  for c in $CFGS; do
    ( timeout -k 5 60 ./bin/gemm8_$c > chk_$c.log 2>&1; echo "rc=$?" >> chk_$c.log ) &
    pids="$pids $!"
  done
  for p in $pids; do wait $p; done
  for c in $CFGS; do echo "=== check $c"; cat chk_$c.log; done
  if grep -qE "rc=(124|137)" chk_*.log; then echo "a check timed out: skipping the sanitizer"; STEPS=${STEPS/sanitize/}; fi
fi
if [[ $STEPS == *probe* ]]; then  # one cuBLASLt FP8 call at 1024^3, with cuBLASLt's error log on
  CUBLASLT_LOG_LEVEL=1 PYTHONPATH=/tmp/site:$PWD step "cuBLASLt FP8 probe" 40 python3 -c "
import cupy as cp, numpy as np
from course.hopper import fp8
from course.bench.lt_fp8 import LtFp8, device_scales
rng = cp.random.default_rng(1)
qa = fp8.quantize(rng.standard_normal((1024, 1024), dtype=cp.float32), cp)
qb = fp8.quantize(rng.standard_normal((1024, 1024), dtype=cp.float32), cp)
d = cp.empty((1024, 1024), dtype=cp.float16)
for fast in (False, True):
    plan = LtFp8(1024, 1024, 1024, fast_accum=fast)
    plan(qa.bits, qb.bits, d, device_scales(qa.scale, qb.scale))
    ref = (fp8.decode(qa.bits, cp) * qa.scale) @ (fp8.decode(qb.bits, cp) * qb.scale).T
    print(plan.name, 'normwise error', float(cp.linalg.norm(d.astype(cp.float64) - ref) / cp.linalg.norm(ref)))
"
fi
if [[ $STEPS == *course* ]]; then  # the course's own host and benchmark, from the staged tree
  cd tree
  export COURSE_REQUIRE_GPU=1
  export PYTHONPATH=/tmp/site:$PWD CUBLASLT_LOG_LEVEL=1  # cuBLASLt prints its errors, nothing else
  for c in ${COURSE_STEPS:-run bench record timeline tests}; do
    case $c in
      run) step "course run day87" 60 python3 -m course run day87 ;;
      bench) step "course bench day87" ${COURSE_BENCH_TIMEOUT:-150} python3 -m course bench day87 \
               --out "$OUT/bench" ${COURSE_BENCH_ARGS:-} ;;
      record) step "course record day87" 60 python3 -m course record day87 --out "$OUT/evidence" ;;
      timeline) step "course timeline day87 --n 1024" 45 python3 -m course timeline day87 --n 1024 \
                  --out "$OUT/timeline" ;;
      tests) step "GPU tests: tests/lessons/day87" 90 python3 -m pytest -q -p no:cacheprovider -m gpu \
               tests/lessons/day87 tests/exercises/coding/test_gpu.py -k day87 -W ignore::DeprecationWarning ;;
    esac
  done
  export PYTHONPATH=/tmp/site; unset CUBLASLT_LOG_LEVEL
  unset COURSE_REQUIRE_GPU
  cd ..
fi
if [[ $STEPS == *bench* ]]; then
  step "bench87" 90 python3 bench87.py gemm8_fp8.cu $BENCH_ARGS
fi
if [[ $STEPS == *sanitize* ]]; then
  for run in "bn256_c2_p0:200:136:144:0" "bn128_c2_p1:200:136:1104:3"; do
    set -- ${run//:/ }
    for tool in racecheck synccheck; do
      step "sanitizer $tool $*" 40 compute-sanitizer --tool $tool ./bin/gemm8_$1 $2 $3 $4 $5
    done
  done
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
date -u
}
main 2>&1 | tee "$OUT/run87.log"
