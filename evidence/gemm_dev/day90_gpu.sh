#!/bin/bash
# Day 90's first runs on a GPU (the softmax overlapped inside each consumer warpgroup), in three
# device calls on an H100 (then the same on an H200). The kernel (kernels/attn90_overlap.cu) is
# Day 89's plus FlashAttention-3's intra-warpgroup overlap (the next tile's S and this tile's P V
# issued in one turn, wgmma.wait_group 1, the softmax under P V, wait_group 0) and K and V freed on
# mbarriers of their own; it was written and compile-checked without a GPU (2026-12-06, branch
# day90) and first ran on an H100 the same day (all three parts passed: evidence/logs/2026-12-06-h100-s13/). Day 89 passed every check on an H100 (evidence/logs/
# 2026-12-06-h100-s12/), and Day 90 keeps every line of it but the consumer's loop, qkTile/pvTile
# (split from their waits) and the release barriers (tests/lessons/day90/test_compile.py). The
# GPU is required throughout (COURSE_REQUIRE_GPU=1). From the repo root:
#
#   run(command='bash evidence/gemm_dev/day90_gpu.sh 1', timeout_s=600)   # correctness, sanitizers
#   run(command='bash evidence/gemm_dev/day90_gpu.sh 2', timeout_s=600)   # course run, GPU tests, coding exercise
#   run(command='bash evidence/gemm_dev/day90_gpu.sh 3', timeout_s=600)   # bench vs Day 89 and SDPA, timeline, record
#
# Part 1, each step with its own time limit (a turn or a K/V stage that never comes is a wait
# that never returns, so a hang shows as "exit 124" on that step and the later steps still run):
#   1. the header's build line at D = 128, 64 and 256 (ptxas -v: 0 spills each, no C7514); each
#      program's own shapes (S = 128, 1000, 1, 129, 4097; causal and not; O and LSE against
#      float64): ALL PASS
#   2. the shape matrix: B in {1, 2}, H in {2, 16}, S in {128, 1000, 4096, 4097}, causal and not,
#      at D = 128; and ragged S at D = 64 and 256
#   3. compute-sanitizer racecheck, synccheck and memcheck on ragged shapes (S = 1000 causal,
#      S = 129 non-causal: two key tiles, one step; S = 1: one key tile, no step), D = 128
# Part 2:
#   4. python -m course run day90 (B = 2, H = 3, S = 1000, D = 128, non-causal)
#   5. pytest -m gpu tests/lessons/day90 (every head dim on every shape, causal and not; N(0, 1)
#      inputs at the benchmark's shape against float64; five launches bit for bit; Day 89's kernel
#      through this workload), and the coding exercise on the GPU (its "fault" wrong piece,
#      tile-for-stage, is Day 89's, which faulted there; if it comes back failed-check, change its
#      expect in content/coding/day90.toml)
# Part 3:
#   6. python -m course bench day90 (S = 4096, 8192, 16384; Day 89's kernel is the first peer,
#      interleaved batch by batch; the SDPA peers need PyTorch on the device machine)
#   7. python -m course timeline day90; python -m course record day90 (the run, the cases causal
#      and one-row, the five experiments: four passes, one hang)
# Then: copy $OUT/evidence/* to evidence/<model>/, $OUT/bench/* to evidence/<model>/bench/,
# $OUT/timeline/* to evidence/<model>/timeline/, take day90 out of NOT_RECORDED in
# tests/recordings.py (and add it to NOT_RECORDED_ON / TIMELINE_NOT_RECORDED for the model not
# yet run), and run python tools/keep_renderings.py.
# If Day 90 hangs where Day 89 does not: the K/V release barriers (kEmpty, vEmpty: each stage's
# K is released after wait_group 1, its V after wait_group 0) or the turns (Day 89's count, one
# bar.sync site more); if it gives wrong values where Day 89 is right: the order of the waits
# (course/lessons/day90/overlap.py's program is the kernel's; the experiment wait-zero waits for
# both groups before the softmax, so a pass there and a failure here point at wait_group 1).
set -u
PART=${1:-1}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/evidence" "$OUT/bench" "$OUT/timeline" /tmp/build
export COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
if [ -d .whl ]; then  # the test tools, carried as wheels (as tools/gpu_session.sh does)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
if [ -d /tmp/site ]; then export PYTHONPATH=/tmp/site:$PWD; else export PYTHONPATH=$PWD; fi
START=$(date +%s)
BUDGET=${BUDGET:-570}  # seconds for all steps together, under the call's 600
status=0
left() { echo $((BUDGET - ($(date +%s) - START))); }
step() {  # step NAME LIMIT CMD...: run CMD with at most LIMIT seconds (less if the budget is short)
    local name=$1 limit=$2; shift 2
    local l; l=$(left); [ "$l" -lt "$limit" ] && limit=$l
    echo; echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s) ==="
    if [ "$limit" -le 10 ]; then echo "NOT RUN: the call's time is spent"; status=1; return; fi
    timeout -k 5 "$limit" "$@"; local rc=$?
    echo "--- $name: exit $rc"; [ "$rc" = 0 ] || status=1
}
BUILD="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
part1() {
    # the three builds side by side (16 cores there), each with its own log, shown in order
    for d in 128 64 256; do
        step "nvcc D=$d" 150 $BUILD -DATTN_HEAD_DIM=$d -o /tmp/build/attn90_d$d kernels/attn90_overlap.cu \
            > /tmp/build/nvcc90_d$d.log 2>&1 &
    done
    wait
    for d in d128 d64 d256; do
        cat /tmp/build/nvcc90_$d.log
        [ -x /tmp/build/attn90_$d ] || { echo "BUILD FAILED: attn90_$d"; status=1; }
    done
    for d in 128 64 256; do
        step "./attn90_overlap D=$d (its own shapes)" 120 /tmp/build/attn90_d$d
    done
    for b in 1 2; do for h in 2 16; do for s in 128 1000 4096 4097; do for c in 0 1; do
        step "D=128 B=$b H=$h S=$s causal=$c" 60 /tmp/build/attn90_d128 $b $h $s $c
    done; done; done; done
    for d in 64 256; do for c in 0 1; do
        step "D=$d B=2 H=16 S=4097 causal=$c" 60 /tmp/build/attn90_d$d 2 16 4097 $c
    done; done
    for tool in racecheck synccheck memcheck; do
        step "compute-sanitizer --tool $tool, S=1000 causal" 120 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn90_d128 1 2 1000 1
        step "compute-sanitizer --tool $tool, S=129 non-causal" 90 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn90_d128 1 2 129 0
        step "compute-sanitizer --tool $tool, S=1 (one key tile)" 60 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn90_d128 2 3 1 1
    done
}
part2() {
    step "course run day90" 120 python3 -m course run day90
    step "GPU tests: tests/lessons/day90" 330 \
        python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day90 -W ignore::DeprecationWarning
    step "the coding exercise on the GPU (reference passes, each wrong piece its outcome)" 120 \
        python3 -m pytest -q -p no:cacheprovider -m gpu tests/exercises/coding/test_gpu.py -k day90 \
        -W ignore::DeprecationWarning
}
part3() {
    step "course bench day90" 300 python3 -m course bench day90 --out "$OUT/bench"
    step "course timeline day90" 90 python3 -m course timeline day90 --out "$OUT/timeline"
    step "course record day90 (the run, its cases and experiments)" 170 \
        python3 -m course record day90 --out "$OUT/evidence"
}
main() {
    nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
    nvcc --version | tail -1
    python3 -c "import sys, cupy, cuda.bindings; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
    python3 -c "import torch; print('torch', torch.__version__, 'cuDNN', torch.backends.cudnn.version())" \
        || echo "no PyTorch here: the bench's SDPA peers will be named unavailable"
    "part$PART"
    echo; echo "files in $OUT:"; find "$OUT" -type f | sort
    echo "day90_gpu.sh part $PART: exit $status ($(date -u +%H:%M:%S))"
    return $status
}
main 2>&1 | tee "$OUT/day90_gpu_part$PART.log"
exit "${PIPESTATUS[0]}"
