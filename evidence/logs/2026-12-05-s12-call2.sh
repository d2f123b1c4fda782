#!/bin/bash
# Session 12, device call 2 (timing, one thing at a time on the GPU): Day 88's part 3 (course bench
# day88 against the SDPA peers, the timeline, course record day88), then Stream-K's measure on the
# quick shape list (SHAPES=quick: six shapes of the table) in the time left.
# run(command='bash evidence/logs/2026-12-05-s12-call2.sh', carry=['.whl'], timeout_s=600)
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/d88" "$OUT/sk"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
mv .whl /tmp/whl-carried
OUT=$OUT/d88 BUDGET=${D88_BUDGET:-380} bash evidence/gemm_dev/day88_gpu.sh 3 > /dev/null 2>&1
echo "day88 part 3 exit $?"
LEFT=$(( 580 - ($(date +%s) - T0) ))
echo "Stream-K measure gets ${LEFT}s"
OUT=$OUT/sk STEPS=measure SHAPES=${SHAPES:-quick} MEASURE_TIMEOUT=$LEFT bash evidence/gemm_dev/streamk_gpu.sh > /dev/null 2>&1
echo "streamk measure exit $?"
mv /tmp/whl-carried .whl
tail -60 "$OUT/d88/day88_gpu_part3.log"
grep -vE "^\s*$" "$OUT/sk/streamk.log" | tail -40
