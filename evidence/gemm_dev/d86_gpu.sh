#!/bin/bash
# Day 86's evidence, in one device call on an H100 or H200 (the GPU is
# required throughout: COURSE_REQUIRE_GPU=1 turns any "cannot run here"
# into a failure). From the repo root:
#
#   run(command='bash tools/gemm_dev/d86_gpu.sh', timeout_s=600)
#
# Steps, most needed first, each with its own time limit inside the call's
# 10 minutes (a deadlocked barrier never returns):
#   1. python -m course run day86                       (the lesson run)
#   2. python -m course record day86 --out $OUT/evidence (day86.json and its
#      experiments' day86.no-split.json, day86.one-row.json)
#   3. python -m course bench day86 --out $OUT/bench     (the shape table vs
#      cuBLAS: day86.json, day86.png)
#   4. python -m course timeline day86 --n 1024 --out $OUT/timeline (the
#      kernel's own timeline at a size where the default build splits K)
#   5. pytest -m gpu tests/lessons/day86 (every build on the C++ program's
#      ragged shapes, splits 1 and 3, every element against float64; a
#      refused shape) and the coding exercise on the GPU (the reference
#      passes; each wrong piece gives its declared outcome)
# Everything lands in $OUT (8 files, the most that come back): the three
# folders above and d86_gpu.log. Copy $OUT/evidence/* to evidence/<model>/ (h100-80gb-hbm3, h200: the GPU it ran on),
# $OUT/bench/* to evidence/<model>/bench/ and $OUT/timeline/* to evidence/<model>/timeline/,
# then take day86 out of NOT_RECORDED in tests/kernel/test_evidence.py and
# tests/timeline/test_trace.py.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/evidence" "$OUT/bench" "$OUT/timeline"
export COURSE_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
if [ -d .whl ]; then  # the test tools, carried as wheels (as tools/gpu_session.sh does)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
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
main() {
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
python3 -c "import sys, cupy, cuda.bindings; print(sys.version.split()[0], 'cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__)"
step "course run day86" 120 python3 -m course run day86
step "course record day86" 150 python3 -m course record day86 --out "$OUT/evidence"
step "course bench day86" 300 python3 -m course bench day86 --out "$OUT/bench"
step "course timeline day86 --n 1024" 90 python3 -m course timeline day86 --n 1024 --out "$OUT/timeline"
# D86_NO_TESTS=1: the GPU tests run elsewhere in the same call (tools/gpu_session.sh gputests).
[ -n "${D86_NO_TESTS:-}" ] || step "GPU tests: tests/lessons/day86 and the coding exercise" 240 \
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day86 tests/exercises/coding/test_gpu.py -k "day86" \
    -W ignore::DeprecationWarning
echo; echo "files in $OUT:"; find "$OUT" -type f | sort
echo "d86_gpu.sh: exit $status ($(date -u +%H:%M:%S))"
return $status
}
main 2>&1 | tee "$OUT/d86_gpu.log"
exit "${PIPESTATUS[0]}"
