#!/bin/bash
# Session 14, device call 1 on an H100 (the learners' GPU): Day 86 with the chooser refit of
# session 13 (small build and 64-row decode picks in the default): course run, record, bench,
# timeline and the GPU tests (evidence/gemm_dev/d86_gpu.sh, under 300 s), then Day 90's record
# again so that its sixth experiment (no-first-pass) is recorded. Packed into $OUT/call.tgz.
# run(command='rm -rf .whl; mv .whl-gpu .whl; bash evidence/logs/2026-12-06-s14-call1.sh',
#     carry=['.whl-gpu'], kind='nvidia-h100-x1', timeout_s=600)
set -u
OUT=${OUT:-/tmp/out}
R=/tmp/call; rm -rf "$R"; mkdir -p "$R/day86" "$R/day90/evidence"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
OUT=$R/day86 BUDGET=300 bash evidence/gemm_dev/d86_gpu.sh > /dev/null 2>&1; echo "d86 exit $? ($(date -u +%H:%M:%S))"
timeout -k 5 200 python3 -m course record day90 --out "$R/day90/evidence" > "$R/day90/record.log" 2>&1
echo "day90 record exit $? ($(date -u +%H:%M:%S))"
tar czf "$OUT/call.tgz" -C "$R" .
grep -E "^=== |^--- |FAIL|passed|failed" "$R/day86/d86_gpu.log" | tail -30
tail -25 "$R/day90/record.log"
