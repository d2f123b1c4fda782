#!/bin/bash
# The BF16 builds of the attention kernels (Days 88, 89, 90: -DATTN_BF16=1, issues 41 and 42) on a
# GPU for the first time, in one device call on an H100 (then the same on an H200). Written and
# compile-checked without a GPU (2026-12-06, branch bf16attn): every BF16 build compiles with nvcc
# 13.0 and through NVRTC at D = 64, 128 and 256 with 0 spills and no ptxas message, and the FP16
# builds' cubins are byte-identical to before the change (nvcc -cubin and NVRTC, all nine each).
# The GPU is required throughout (COURSE_REQUIRE_GPU=1). From the repo root:
#
#   run(command='bash evidence/gemm_dev/bf16attn_gpu.sh', timeout_s=330)
#
# Each step has its own time limit (a wait that never returns shows as "exit 124" on that step and
# the later steps still run); all of them together at most BUDGET = 290 s:
#   1. nvcc -Xptxas -v of each file with -DATTN_BF16=1 at D = 128, 64 and 256 (nine builds side by
#      side); each ptxas report must show 0 spill bytes and no C7514/C7515/C7519
#   2. each BF16 program's own shapes at D = 128 (S = 128, 1000, 1, 129, 4097; causal and not; O in
#      BF16 and LSE against float64 within kRelTolerance = 3.2e-2 and kLseTolerance): ALL PASS
#   3. compute-sanitizer racecheck, synccheck and memcheck on Day 90's BF16 build, D = 128, one ragged
#      shape (B = 1, H = 2, S = 1000, causal: a ragged last key tile and the diagonal)
#   4. pytest -m gpu -k bf16 of tests/lessons/day88, day89, day90 (the BF16 build through the course's
#      NVRTC path: ragged and whole S, causal and not, D = 64/128/256; page.run(dtype="bfloat16");
#      N(0, 1) inputs at the benchmark's shape) and Day 88's coding exercise on the GPU (its store now
#      names Elem2/toElem2; the FP16 build it compiles is the same code)
#   5. the BF16 programs' own shapes at D = 64 and 256, while the budget lasts
# Then: copy $OUT/bf16attn_gpu.log to evidence/logs/<date>-<gpu>/ and say in the GPU tests' docstrings
# when they first passed. The bench rows (course bench day88/89/90 times the BF16 build at D = 128,
# S = 8192, against the SDPA backends on bfloat16) are the bench call's, not this script's.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/build
export COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
if [ -d .whl ]; then  # the test tools, carried as wheels (as tools/gpu_session.sh does)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
if [ -d /tmp/site ]; then export PYTHONPATH=/tmp/site:$PWD; else export PYTHONPATH=$PWD; fi
START=$(date +%s)
BUDGET=${BUDGET:-290}  # seconds for all steps together
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
BUILD="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -DATTN_BF16=1"
FILES="attn88_forward attn89_pingpong attn90_overlap"
builds() {
    for f in $FILES; do for d in 128 64 256; do
        $BUILD -DATTN_HEAD_DIM=$d -o /tmp/build/${f}_bf16_d$d kernels/$f.cu > /tmp/build/${f}_bf16_d$d.log 2>&1 &
    done; done
    wait
    local bad=0
    for f in $FILES; do for d in 128 64 256; do
        echo "--- $f -DATTN_BF16=1 -DATTN_HEAD_DIM=$d"
        grep -E "registers|spill|C75|warning|error" /tmp/build/${f}_bf16_d$d.log
        [ -x /tmp/build/${f}_bf16_d$d ] || { echo "BUILD FAILED: ${f}_bf16_d$d"; cat /tmp/build/${f}_bf16_d$d.log; bad=1; }
        if grep -E "[1-9][0-9]* bytes spill (stores|loads)" /tmp/build/${f}_bf16_d$d.log \
            || grep -E "C751[45]|C7519" /tmp/build/${f}_bf16_d$d.log; then
            echo "SPILL OR SERIALIZATION: ${f}_bf16_d$d"; bad=1
        fi
    done; done
    return $bad
}
main() {
    nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
    nvcc --version | tail -1
    python3 -c "import sys, cupy, cuda.bindings; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
    # builds is a shell function, which timeout cannot run: its nine nvcc runs go side by side, unguarded
    # (session 14's first H100 call ran `timeout builds` and built nothing)
    local name="nvcc -DATTN_BF16=1, three files x D = 128, 64, 256 (ptxas -v: 0 spills, no C7514)"
    echo; echo "=== $name ($(date -u +%H:%M:%S)) ==="
    builds; local rc=$?
    echo "--- $name: exit $rc"; [ "$rc" = 0 ] || status=1
    for f in $FILES; do
        step "./${f} BF16 D=128 (its own shapes)" 60 /tmp/build/${f}_bf16_d128
    done
    for tool in racecheck synccheck memcheck; do
        step "compute-sanitizer --tool $tool, attn90 BF16 D=128 B=1 H=2 S=1000 causal" 60 \
            compute-sanitizer --tool $tool --error-exitcode 3 /tmp/build/attn90_overlap_bf16_d128 1 2 1000 1
    done
    step "GPU tests: the BF16 build, tests/lessons/day88 day89 day90 (-m gpu -k bf16)" 150 \
        python3 -m pytest -q -p no:cacheprovider -m gpu -k bf16 tests/lessons/day88 tests/lessons/day89 \
        tests/lessons/day90 -W ignore::DeprecationWarning
    step "Day 88's coding exercise on the GPU (the store names Elem2, toElem2)" 60 \
        python3 -m pytest -q -p no:cacheprovider -m gpu tests/exercises/coding/test_gpu.py -k day88 \
        -W ignore::DeprecationWarning
    for f in $FILES; do for d in 64 256; do
        step "./${f} BF16 D=$d (its own shapes)" 40 /tmp/build/${f}_bf16_d$d
    done; done
    echo; echo "bf16attn_gpu.sh: exit $status ($(date -u +%H:%M:%S), $(( $(date +%s) - START )) s)"
    return $status
}
main 2>&1 | tee "$OUT/bf16attn_gpu.log"
exit "${PIPESTATUS[0]}"
