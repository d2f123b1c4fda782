#!/bin/bash
# Issue 39: every build Day 86's chooser can pick, timed on the GPU, for the next refit of its model.
# Written in a session with NO GPU; NOTHING in it has run yet. Run from the tree's root on an H100
# (then an H200), in one device call of at most 240 s:
#   run(command='export PYTHONPATH=$PWD COURSE_REQUIRE_GPU=1; bash evidence/gemm_dev/sweep39_gpu.sh',
#       timeout_s=300)
# What it does (streamk_measure.py with MEASURE=sweep39, the course's one timer):
#   at 256^3, 512^3, 768^3, 1024^3, 1536^3, 1200^3 and the decode rows M = 1, 32, 128 with
#   N = K = 8192, then, as the budget allows, M = 1 and 32 with N = 4096, K = 14336 (where the refit's
#   picks were not timed) (streamk_measure.SWEEP39_SHAPES), every build the chooser can pick: BM 128 and 64
#   x BN 256, 128, 64 x cluster 2 and 1, and the small builds (BM 64, cluster 1, BN 128 and 64), each
#   at split 1, 2 and 4 (42 a shape; 64-row clusters of two too, which the default does not pick
#   until they are timed), plus the default pick as "pick". Each is checked against float64 first
#   (output poisoned; one reference a shape), then all of them and cuBLAS gemmEx are timed
#   interleaved, launched one by one and in CUDA graphs (20 repeats). Per shape it prints the eight
#   fastest in graphs with the model's estimate beside each, and writes $OUT/sweep39-measure.json
#   (the layout of evidence/logs/2026-12-06-h100-s13/call2-small39-measure.json, plus "pick is" and
#   "seconds") after every shape. A shape that would pass SWEEP_BUDGET_S (215 s from the start) is
#   listed as not measured. SHAPES=quick: 512^3 and 128 x 8192 x 8192 only.
# Copy $OUT/sweep39-measure.json and $OUT/sweep39.log to evidence/logs/<date>-<gpu>-<session>/.
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/sweep39_out}; mkdir -p "$OUT"
exec > >(tee "$OUT/sweep39.log") 2>&1
echo "=== env ($(date -u +%H:%M:%S))"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
git -C . log -1 --format=%H 2>/dev/null || true
echo "=== streamk_measure.py MEASURE=sweep39 ($(date -u +%H:%M:%S), +$(( $(date +%s) - T0 )) s)"
MEASURE=sweep39 timeout -k 5 ${SWEEP_TIMEOUT:-232} python3 evidence/gemm_dev/streamk_measure.py \
  "$OUT/sweep39-measure.json"
echo "exit $? ($(date -u +%H:%M:%S), +$(( $(date +%s) - T0 )) s)"
