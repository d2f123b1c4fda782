#!/bin/bash
# Session 13, device call B (an H100): Day 90's first runs (part 1: builds, own shapes, the matrix,
# the sanitizers; parts 2 and 3 only if part 1 passed), Day 88's bench with the head-dimension rows,
# Day 89's part 3 (bench, timeline, and the record with the two experiments session 12 cut off),
# then the FP8 ping-pong build's script (issue 40) in the time left. Packed into $OUT/callB.tgz.
# run(command='bash evidence/logs/2026-12-06-s13-callB.sh', carry=['.whl'], kind='nvidia-h100-x1', timeout_s=600)
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
R=/tmp/callB
mkdir -p "$R/day88/bench" "$R/day89" "$R/day90"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
left() { echo $(( ${CALL_BUDGET:-585} - ($(date +%s) - T0) )); }
part() {  # part LESSON N BUDGET
    local b=$3; [ "$(left)" -lt "$b" ] && b=$(left)
    OUT=$R/$1 BUDGET=$b bash evidence/gemm_dev/$1_gpu.sh $2 > /dev/null 2>&1; local rc=$?
    echo "$1 part $2 exit $rc ($(date -u +%H:%M:%S))"; return $rc
}
mv .whl /tmp/whl-carried
if part day90 1 170; then part day90 2 100; part day90 3 150; fi
timeout 90 python3 -m course bench day88 --out "$R/day88/bench" > "$R/day88/bench.log" 2>&1; echo "day88 bench exit $?"
part day89 3 200
mv /tmp/whl-carried .whl
L=$(left); echo "fp8pp gets ${L}s"
[ "$L" -gt 40 ] && { OUT=$R STEPS="build check bench" timeout -k 5 $L bash evidence/gemm_dev/fp8pp_gpu.sh > /dev/null 2>&1; echo "fp8pp exit $?"; }
tar czf "$OUT/callB.tgz" -C "$R" .
for f in "$R"/day90/*.log "$R"/day89/*.log; do echo "## $f"; grep -E "^=== |^--- .*exit [1-9]|FAIL|hazard|ERROR SUMMARY|exit [0-9]+ \(" "$f" | grep -vE "^=== " | tail -25; done
grep -hE "TFLOP/s|D=64|D=256" "$R"/day88/bench.log "$R"/day89/*part3.log "$R"/day90/*part3.log 2>/dev/null | tail -40
grep -hE "^--- |FAIL|ping-pong|promoting build" "$R"/fp8pp/run.log 2>/dev/null | tail -40
