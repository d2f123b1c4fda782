#!/bin/bash
# Session 12, device call 1 (H100): correctness before any timing, for both waiting branches at
# once (no timing runs here, so sharing the GPU changes no result):
#   Day 88 (issue 41): day88_gpu.sh part 1 (builds, own shapes, shape matrix, sanitizers), and
#   Stream-K (issue 39): streamk_gpu.sh "build ragged sanitize default", side by side;
#   then Day 88 part 2 (course run day88, its GPU tests, the coding exercise) in what time is left.
# run(command='bash evidence/logs/2026-12-05-s12-call1.sh', carry=['.whl'], timeout_s=600)
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/d88" "$OUT/sk"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
(OUT=$OUT/d88 BUDGET=420 bash evidence/gemm_dev/day88_gpu.sh 1 > /dev/null 2>&1; echo "day88 part 1 exit $?" >> "$OUT/summary.txt") &
(export PYTHONPATH=$PWD; OUT=$OUT/sk STEPS="build ragged sanitize default" bash evidence/gemm_dev/streamk_gpu.sh > /dev/null 2>&1; echo "streamk part 1 exit $?" >> "$OUT/summary.txt") &
wait
LEFT=$(( 575 - ($(date +%s) - T0) ))
echo "part 2 gets ${LEFT}s" >> "$OUT/summary.txt"
OUT=$OUT/d88 BUDGET=$LEFT bash evidence/gemm_dev/day88_gpu.sh 2 > /dev/null 2>&1; echo "day88 part 2 exit $?" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
grep -E "^(===|---)|PASS|FAIL|ERROR|exit|passed|failed" "$OUT/d88/day88_gpu_part1.log" | head -120
grep -E "^===|exit|PASS|FAIL|ERROR SUMMARY|mismatch" "$OUT/sk/streamk.log" | head -80
tail -40 "$OUT/d88/day88_gpu_part2.log"
