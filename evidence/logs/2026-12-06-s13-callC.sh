#!/bin/bash
# Session 13, a device call on whichever Hopper GPU starts: the jobs in $JOBS in order, each under
# its own budget and all under the call's 585 s. LESSON:PART runs evidence/gemm_dev/LESSON_gpu.sh
# PART (a day90 part 2 or 3 only runs if its part 1 passed in this call); LESSON:bench runs
# `course bench LESSON` alone; "fp8pp" runs the FP8
# ping-pong build's build, check and bench steps (issue 40) in the time left. Packed into
# $OUT/call.tgz (run brings back at most 8 files).
# run(command='JOBS="day88:3 day89:3 day90:1 day90:2 day90:3" bash evidence/logs/2026-12-06-s13-callC.sh', carry=['.whl'], timeout_s=600)
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/out}
R=/tmp/call
mkdir -p "$R"
JOBS=${JOBS:-"day88:3 day89:3 day90:1 day90:2 day90:3 fp8pp"}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
left() { echo $(( ${CALL_BUDGET:-585} - ($(date +%s) - T0) )); }
declare -A BUDGETS=([1]=170 [2]=100 [3]=160)
passed1=${NO_GUARD:+yes}  # NO_GUARD=1: a day90 part 2 or 3 without its part 1 in this call
mv .whl /tmp/whl-carried
for job in $JOBS; do
    L=$(left); [ "$L" -lt 30 ] && { echo "$job: not run, the call's time is spent"; continue; }
    if [ "$job" = fp8pp ]; then
        OUT=$R STEPS="build check bench" timeout -k 5 "$L" bash evidence/gemm_dev/fp8pp_gpu.sh > /dev/null 2>&1
        echo "fp8pp exit $? ($(date -u +%H:%M:%S))"; continue
    fi
    lesson=${job%:*} p=${job#*:}
    if [ "$p" = bench ]; then  # the speed table alone (course bench LESSON), under 120 s
        mkdir -p "$R/$lesson/bench"; b=120; [ "$L" -lt "$b" ] && b=$L
        timeout -k 5 "$b" python3 -m course bench "$lesson" --out "$R/$lesson/bench" > "$R/$lesson/bench.log" 2>&1
        echo "$job exit $? ($(date -u +%H:%M:%S))"; continue
    fi
    if [ "$p" != 1 ] && [ "$lesson" = day90 ] && [ "$passed1" != yes ]; then echo "$job: not run (part 1 did not pass)"; continue; fi
    b=${BUDGETS[$p]}; [ "$L" -lt "$b" ] && b=$L
    mkdir -p "$R/$lesson"
    OUT=$R/$lesson BUDGET=$b bash evidence/gemm_dev/${lesson}_gpu.sh "$p" > /dev/null 2>&1; rc=$?
    echo "$job exit $rc ($(date -u +%H:%M:%S))"
    [ "$p" = 1 ] && [ $rc = 0 ] && passed1=yes
done
mv /tmp/whl-carried .whl
tar czf "$OUT/call.tgz" -C "$R" .
for f in "$R"/day*/*.log; do echo "## $f"; grep -E "^--- .*exit [1-9]|FAIL|exit [0-9]+ \(" "$f" | tail -12; done
grep -hE "TFLOP/s" "$R"/day*/*part3.log "$R"/day*/bench.log 2>/dev/null | tail -40
grep -hE "^--- |FAIL|ping-pong|promoting build" "$R"/fp8pp/run.log 2>/dev/null | tail -40
