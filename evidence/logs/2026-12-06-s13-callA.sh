#!/bin/bash
# Session 13, device call A (an H200): Days 88 and 89's part 3 (course record, course bench with the
# new head-dimension rows, course timeline), then the FP8 ping-pong build's script (issue 40) in the
# time left. Results packed into $OUT/callA.tgz (run brings back at most 8 files).
# run(command='bash evidence/logs/2026-12-06-s13-callA.sh', carry=['.whl'], kind='nvidia-h200', timeout_s=600)
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
R=/tmp/callA
mkdir -p "$R/d88" "$R/d89"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
mv .whl /tmp/whl-carried
OUT=$R/d88 BUDGET=150 bash evidence/gemm_dev/day88_gpu.sh 3 > /dev/null 2>&1; echo "day88 part 3 exit $?"
OUT=$R/d89 BUDGET=300 bash evidence/gemm_dev/day89_gpu.sh 3 > /dev/null 2>&1; echo "day89 part 3 exit $?"
mv /tmp/whl-carried .whl
LEFT=$(( ${CALL_BUDGET:-585} - ($(date +%s) - T0) ))
echo "fp8pp gets ${LEFT}s"
# speed first (does the ping-pong hide the promotion?), then the sanitizers and the NVRTC tests
OUT=$R STEPS="build check bench" timeout -k 5 $LEFT bash evidence/gemm_dev/fp8pp_gpu.sh > /dev/null 2>&1; echo "fp8pp exit $?"
LEFT=$(( ${CALL_BUDGET:-585} - ($(date +%s) - T0) ))
[ $LEFT -gt 30 ] && { OUT=$R/then STEPS="sanitize tests" timeout -k 5 $LEFT bash evidence/gemm_dev/fp8pp_gpu.sh > /dev/null 2>&1; echo "fp8pp sanitize/tests exit $?"; }
tar czf "$OUT/callA.tgz" -C "$R" .
grep -hE "^=== |^--- |exit [0-9]+ \(" "$R"/d88/*.log "$R"/d89/*.log
grep -hE "TFLOP/s|PASS|FAIL|x \(" "$R"/d88/*.log "$R"/d89/*.log | tail -40
grep -hE "^=== |^--- |FAIL|PASS|ping-pong|promoting build" "$R"/fp8pp/run.log "$R"/then/fp8pp/run.log 2>/dev/null | tail -80
