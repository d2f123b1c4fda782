#!/bin/bash
# Session 12, device call 3: Stream-K's "run measure" (course run day86, the day86 GPU tests with
# the Stream-K builds, then the shape table against cuBLAS, one by one and in CUDA graphs), alone
# on the GPU. Results under $OUT/sk.
# run(command='bash evidence/logs/2026-12-05-s12-call3.sh', carry=['.whl'], timeout_s=600)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/sk"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
OUT=$OUT/sk STEPS="${STEPS:-run measure}" TESTS_TIMEOUT=${TESTS_TIMEOUT:-200} MEASURE_TIMEOUT=${MEASURE_TIMEOUT:-300} \
    bash evidence/gemm_dev/streamk_gpu.sh > /dev/null 2>&1
echo "streamk exit $?"
tail -100 "$OUT/sk/streamk.log"
