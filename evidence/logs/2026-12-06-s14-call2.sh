#!/bin/bash
# Session 14, device call 2 on an H200: the recordings issues 41 and 42 lack (Days 88, 89, 90, part 3
# of their evidence/gemm_dev/DAY_gpu.sh: record, bench, timeline), then Day 86 with the chooser refit
# (evidence/gemm_dev/d86_gpu.sh: run, record, bench, timeline, GPU tests) in the time left, unless D86=0.
# run(command='rm -rf .whl; mv .whl-gpu .whl; bash evidence/logs/2026-12-06-s14-call2.sh',
#     carry=['.whl-gpu'], kind='nvidia-h200', needs_h200=True, timeout_s=600)
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
rm -rf /tmp/call; mkdir -p /tmp/outC
OUT=/tmp/outC JOBS="day88:3 day89:3 day90:3" CALL_BUDGET=380 bash evidence/logs/2026-12-06-s13-callC.sh
L=$(( 575 - ($(date +%s) - T0) ))
echo "day86: $L s left"
if [ "${D86:-1}" = 1 ] && [ "$L" -gt 60 ]; then
    mkdir -p /tmp/call/day86
    OUT=/tmp/call/day86 BUDGET=$L D86_NO_TESTS=${D86_NO_TESTS:-} bash evidence/gemm_dev/d86_gpu.sh > /dev/null 2>&1
    echo "d86 exit $? ($(date -u +%H:%M:%S))"
    grep -E "^=== |^--- |passed|failed" /tmp/call/day86/d86_gpu.log | tail -14
fi
tar czf "$OUT/call.tgz" -C /tmp/call .
