#!/bin/bash
# Session 12, device call 1: correctness before any timing, three chains side by side on one GPU
# (nothing here is timed, so sharing the GPU changes no result):
#   a. Day 88 (issue 41) day88_gpu.sh part 1: builds, its own shapes, the shape matrix, sanitizers;
#   b. Day 88 part 2: course run day88, its GPU tests, the coding exercise on the GPU;
#   c. Stream-K (issue 39) streamk_gpu.sh "build ragged sanitize default run";
#   d. Day 89 (issue 42, ping-pong) day89_gpu.sh part 1: builds, shapes, sanitizers.
# run(command='bash evidence/logs/2026-12-05-s12-call1.sh', carry=['.whl'], timeout_s=600)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/d88" "$OUT/sk" "$OUT/d89"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
# day88_gpu.sh installs the wheels itself when .whl is there; once is enough here
mv .whl /tmp/whl-carried
(export PYTHONPATH=/tmp/site:$PWD; OUT=$OUT/d88 BUDGET=${CHAIN_BUDGET:-560} bash evidence/gemm_dev/day88_gpu.sh 1 > /dev/null 2>&1; echo "day88 part 1 exit $?" >> "$OUT/summary.txt") &
(export PYTHONPATH=/tmp/site:$PWD; OUT=$OUT/d88 BUDGET=${CHAIN_BUDGET:-560} bash evidence/gemm_dev/day88_gpu.sh 2 > /dev/null 2>&1; echo "day88 part 2 exit $?" >> "$OUT/summary.txt") &
(export PYTHONPATH=/tmp/site:$PWD; OUT=$OUT/sk TESTS_TIMEOUT=200 STEPS="build ragged sanitize default run" bash evidence/gemm_dev/streamk_gpu.sh > /dev/null 2>&1; echo "streamk exit $?" >> "$OUT/summary.txt") &
(export PYTHONPATH=/tmp/site:$PWD; OUT=$OUT/d89 BUDGET=${CHAIN_BUDGET:-540} bash evidence/gemm_dev/day89_gpu.sh 1 > /dev/null 2>&1; echo "day89 part 1 exit $?" >> "$OUT/summary.txt") &
wait
mv /tmp/whl-carried .whl
cat "$OUT/summary.txt"
grep -E "^(===|---)|PASS|FAIL|ERROR|passed|failed|registers|spill" "$OUT/d88/day88_gpu_part1.log" | grep -v "^=== " | head -90
tail -25 "$OUT/d88/day88_gpu_part2.log"
grep -E "^===|exit|PASS|FAIL|ERROR SUMMARY|mismatch|passed|failed" "$OUT/sk/streamk.log" | head -70
grep -E "^---|PASS|FAIL|ERROR|registers|spill" "$OUT/d89/day89_gpu_part1.log" | head -60
