#!/bin/bash
# Day 88's first runs on a GPU, in three device calls on an H100 (then the same on an H200). The
# kernel (kernels/attn88_forward.cu) was written and compile-checked without a GPU (2026-12-05,
# branch day88k): nothing below has run yet. The GPU is required throughout
# (COURSE_REQUIRE_GPU=1). From the repo root:
#
#   run(command='bash evidence/gemm_dev/day88_gpu.sh 1', timeout_s=600)   # correctness, sanitizers
#   run(command='bash evidence/gemm_dev/day88_gpu.sh 2', timeout_s=600)   # course run, GPU tests, coding exercise
#   run(command='bash evidence/gemm_dev/day88_gpu.sh 3', timeout_s=600)   # bench vs SDPA, timeline, record
#
# Part 1, each step with its own time limit (a deadlocked mbarrier never returns, so a hang shows
# as "exit 124" on that step and the later steps still run):
#   1. the header's build line at D = 128, and -DATTN_HEAD_DIM=64 and 256, and -DATTN_PV_SPLIT=1
#      (P V as n64 wgmmas); each program's own shapes (S = 128, 1000, 1, 129, 4097; causal and
#      not; O and LSE against float64): ALL PASS
#   2. the shape matrix the issue asks for: B in {1, 2}, H in {2, 16}, S in {128, 1000, 4096, 4097},
#      causal and not, at D = 128
#   3. compute-sanitizer racecheck, synccheck and memcheck on ragged shapes (S = 1000 causal,
#      S = 129 non-causal), D = 128
# Part 2:
#   4. python -m course run day88 (B = 2, H = 3, S = 1000, D = 128, non-causal)
#   5. pytest -m gpu tests/lessons/day88 (every head dim on every shape, causal and not; the split
#      P V build; N(0, 1) inputs at the benchmark's shape against float64; five launches bit for
#      bit), and the coding exercise on the GPU
# Part 3:
#   6. python -m course bench day88 (S = 4096, 8192, 16384; the SDPA peers need PyTorch on the
#      device machine: the first lines say whether it is there; without it they are named
#      unavailable and the kernel is timed alone). PyTorch is the optional attention-peers extra
#      (pyproject.toml), in no CUDA or test extra; its wheel is far over run's 64 MiB carry and the
#      device machine reaches no registry, so only an image that already has it times the peers.
#   7. python -m course timeline day88; python -m course record day88 (the run, the cases causal and
#      one-row, the three experiments)
# Then: copy $OUT/evidence/* to evidence/<model>/, $OUT/bench/* to evidence/<model>/bench/,
# $OUT/timeline/* to evidence/<model>/timeline/, take day88 out of NOT_RECORDED in
# tests/recordings.py, and run python tools/keep_renderings.py.
# If step 1 fails at the first shape with wrong values everywhere (not NaN), suspect the V
# descriptor first (pv-wgmma: MN-major 128B-swizzle, LBO = kBN x 128 B, SBO = 1024 B, trans-b 1):
# the split build passing where the default fails points at LBO; D = 64 failing too, at SBO or
# the transpose;
# if O is right and LSE wrong, the epilogue's log2/ln 2; NaN left in O: a store path (epilogue).
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
    # the four builds side by side (16 cores there), each with its own log, shown in order
    for d in 128 64 256; do
        step "nvcc D=$d" 150 $BUILD -DATTN_HEAD_DIM=$d -o /tmp/build/attn88_d$d kernels/attn88_forward.cu \
            > /tmp/build/nvcc_d$d.log 2>&1 &
    done
    step "nvcc D=128 -DATTN_PV_SPLIT=1" 150 $BUILD -DATTN_PV_SPLIT=1 -o /tmp/build/attn88_split \
        kernels/attn88_forward.cu > /tmp/build/nvcc_split.log 2>&1 &
    wait
    for d in d128 d64 d256 split; do
        cat /tmp/build/nvcc_$d.log
        [ -x /tmp/build/attn88_$d ] || { echo "BUILD FAILED: attn88_$d"; status=1; }
    done
    for d in 128 64 256; do
        step "./attn88_forward D=$d (its own shapes)" 120 /tmp/build/attn88_d$d
    done
    # O += P V as n64 wgmmas, one per 64-column chunk of V: right here and wrong above means V's
    # leading byte offset (mnMajorDesc) is wrong.
    step "./attn88_forward D=128 -DATTN_PV_SPLIT=1 (its own shapes)" 120 /tmp/build/attn88_split
    for b in 1 2; do for h in 2 16; do for s in 128 1000 4096 4097; do for c in 0 1; do
        step "D=128 B=$b H=$h S=$s causal=$c" 60 /tmp/build/attn88_d128 $b $h $s $c
    done; done; done; done
    for tool in racecheck synccheck memcheck; do
        step "compute-sanitizer --tool $tool, S=1000 causal" 120 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn88_d128 1 2 1000 1
        step "compute-sanitizer --tool $tool, S=129 non-causal" 90 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn88_d128 1 2 129 0
    done
}
part2() {
    step "course run day88" 120 python3 -m course run day88
    step "GPU tests: tests/lessons/day88" 330 \
        python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day88 -W ignore::DeprecationWarning
    step "the coding exercise on the GPU (reference passes, each wrong piece its outcome)" 120 \
        python3 -m pytest -q -p no:cacheprovider -m gpu tests/exercises/coding/test_gpu.py -k day88 \
        -W ignore::DeprecationWarning
}
part3() {  # the recording first (the page's runs), then the speed table, then the timeline
    step "course record day88 (the run, its cases and experiments)" 170 \
        python3 -m course record day88 --out "$OUT/evidence"
    step "course bench day88" 300 python3 -m course bench day88 --out "$OUT/bench"
    step "course timeline day88" 90 python3 -m course timeline day88 --out "$OUT/timeline"
}
main() {
    nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
    nvcc --version | tail -1
    python3 -c "import sys, cupy, cuda.bindings; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
    python3 -c "import torch; print('torch', torch.__version__, 'cuDNN', torch.backends.cudnn.version())" \
        || echo "no PyTorch here: the bench's SDPA peers will be named unavailable"
    "part$PART"
    echo; echo "files in $OUT:"; find "$OUT" -type f | sort
    echo "day88_gpu.sh part $PART: exit $status ($(date -u +%H:%M:%S))"
    return $status
}
main 2>&1 | tee "$OUT/day88_gpu_part$PART.log"
exit "${PIPESTATUS[0]}"
