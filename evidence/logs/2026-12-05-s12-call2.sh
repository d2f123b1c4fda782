#!/bin/bash
# Session 12, device call 2: Day 88's part 3 (course bench day88 against the SDPA peers, the
# timeline, course record day88), alone on the GPU (timing). Results under $OUT/d88.
# run(command='bash evidence/logs/2026-12-05-s12-call2.sh', carry=['.whl'], timeout_s=600)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/d88"
OUT=$OUT/d88 BUDGET=${BUDGET:-575} bash evidence/gemm_dev/day88_gpu.sh 3 > /dev/null 2>&1
echo "day88 part 3 exit $?"
cat "$OUT/d88/day88_gpu_part3.log" | tail -80
