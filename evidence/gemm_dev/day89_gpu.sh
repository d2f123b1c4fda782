#!/bin/bash
# Day 89's first runs on a GPU (ping-pong between the two consumer warpgroups), in three device
# calls on an H100 (then the same on an H200). The kernel (kernels/attn89_pingpong.cu) is Day 88's
# plus the turns on named barriers 1 and 2 and the 24/240 register split; it was written and
# compile-checked without a GPU (2026-12-05, branch day89): nothing below has run yet, and Day 88's
# own first runs (day88_gpu.sh) come first: Day 89 shares every line of Day 88's kernel but the
# turns, so a Day 88 failure is one here too. The GPU is required throughout (COURSE_REQUIRE_GPU=1).
# From the repo root:
#
#   run(command='bash evidence/gemm_dev/day89_gpu.sh 1', timeout_s=600)   # correctness, sanitizers
#   run(command='bash evidence/gemm_dev/day89_gpu.sh 2', timeout_s=600)   # course run, GPU tests, coding exercise
#   run(command='bash evidence/gemm_dev/day89_gpu.sh 3', timeout_s=600)   # bench vs Day 88 and SDPA, timeline, record
#
# Part 1, each step with its own time limit (a turn that never comes is a bar.sync that never
# returns, so a hang shows as "exit 124" on that step and the later steps still run):
#   1. the header's build line at D = 128, 64 and 256 (ptxas -v: 0 spills each); each program's
#      own shapes (S = 128, 1000, 1, 129, 4097; causal and not; O and LSE against float64): ALL PASS
#   2. the shape matrix: B in {1, 2}, H in {2, 16}, S in {128, 1000, 4096, 4097}, causal and not,
#      at D = 128; and ragged S at D = 64 and 256
#   3. compute-sanitizer racecheck, synccheck and memcheck on ragged shapes (S = 1000 causal,
#      S = 129 non-causal; S = 1 and 1 key tile: the turns' shortest program), D = 128; synccheck
#      is the one that knows named barriers (a bar.sync or bar.arrive with mismatched counts)
# Part 2:
#   4. python -m course run day89 (B = 2, H = 3, S = 1000, D = 128, non-causal)
#   5. pytest -m gpu tests/lessons/day89 (every head dim on every shape, causal and not; N(0, 1)
#      inputs at the benchmark's shape against float64; five launches bit for bit; Day 88's kernel
#      through this workload), and the coding exercise on the GPU (its "fault" wrong piece,
#      tile-for-stage, is the least certain outcome: a wgmma descriptor past the block's shared
#      memory; if it comes back failed-check, change its expect in content/coding/day89.toml)
# Part 3:
#   6. python -m course bench day89 (S = 4096, 8192, 16384; Day 88's kernel is the first peer,
#      interleaved batch by batch; the SDPA peers need PyTorch on the device machine, as Day 88's)
#   7. python -m course timeline day89; python -m course record day89 (the run, the cases causal
#      and one-row, the four experiments: two hangs, two passes)
# Then: copy $OUT/evidence/* to evidence/<model>/, $OUT/bench/* to evidence/<model>/bench/,
# $OUT/timeline/* to evidence/<model>/timeline/, take day89 out of NOT_RECORDED in
# tests/recordings.py, and run python tools/keep_renderings.py.
# If Day 88 passes and Day 89 hangs: the turns (compare with turns.run in course/lessons/day89);
# if Day 89 gives wrong values where Day 88 is right: nothing but the turns and setmaxnreg
# changed (tests/lessons/day89/test_compile.py holds the rest to Day 88's lines), so suspect the
# consumers' 240 registers first (build with kConsumerRegs = 232, kProducerRegs = 40 to compare).
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
        step "nvcc D=$d" 150 $BUILD -DATTN_HEAD_DIM=$d -o /tmp/build/attn89_d$d kernels/attn89_pingpong.cu \
            > /tmp/build/nvcc89_d$d.log 2>&1 &
    done
    wait
    for d in d128 d64 d256; do
        cat /tmp/build/nvcc89_$d.log
        [ -x /tmp/build/attn89_$d ] || { echo "BUILD FAILED: attn89_$d"; status=1; }
    done
    for d in 128 64 256; do
        step "./attn89_pingpong D=$d (its own shapes)" 120 /tmp/build/attn89_d$d
    done
    for b in 1 2; do for h in 2 16; do for s in 128 1000 4096 4097; do for c in 0 1; do
        step "D=128 B=$b H=$h S=$s causal=$c" 60 /tmp/build/attn89_d128 $b $h $s $c
    done; done; done; done
    for d in 64 256; do for c in 0 1; do
        step "D=$d B=2 H=16 S=4097 causal=$c" 60 /tmp/build/attn89_d$d 2 16 4097 $c
    done; done
    for tool in racecheck synccheck memcheck; do
        step "compute-sanitizer --tool $tool, S=1000 causal" 120 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn89_d128 1 2 1000 1
        step "compute-sanitizer --tool $tool, S=129 non-causal" 90 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn89_d128 1 2 129 0
        step "compute-sanitizer --tool $tool, S=1 (one key tile)" 60 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn89_d128 2 3 1 1
    done
}
part2() {
    step "course run day89" 120 python3 -m course run day89
    step "GPU tests: tests/lessons/day89" 330 \
        python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day89 -W ignore::DeprecationWarning
    step "the coding exercise on the GPU (reference passes, each wrong piece its outcome)" 120 \
        python3 -m pytest -q -p no:cacheprovider -m gpu tests/exercises/coding/test_gpu.py -k day89 \
        -W ignore::DeprecationWarning
}
part3() {
    step "course bench day89" 300 python3 -m course bench day89 --out "$OUT/bench"
    step "course timeline day89" 90 python3 -m course timeline day89 --out "$OUT/timeline"
    step "course record day89 (the run, its cases and experiments)" 240 \
        python3 -m course record day89 --out "$OUT/evidence"
}
main() {
    nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
    nvcc --version | tail -1
    python3 -c "import sys, cupy, cuda.bindings; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
    python3 -c "import torch; print('torch', torch.__version__, 'cuDNN', torch.backends.cudnn.version())" \
        || echo "no PyTorch here: the bench's SDPA peers will be named unavailable"
    "part$PART"
    echo; echo "files in $OUT:"; find "$OUT" -type f | sort
    echo "day89_gpu.sh part $PART: exit $status ($(date -u +%H:%M:%S))"
    return $status
}
main 2>&1 | tee "$OUT/day89_gpu_part$PART.log"
exit "${PIPESTATUS[0]}"
