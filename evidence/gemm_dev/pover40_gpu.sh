#!/bin/bash
# The GPU run of the overlapped-promotion build of kernels/gemm8_fp8.cu (issue 40), run on an H100 in
# session 16 (results: evidence/gemm_dev/notes_pover40.md). The builds:
#   ov     -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_OVERLAP=1   two chain accumulators a consumer,
#                                                                   chains in pairs (region "overlap-order")
#   p128   -DGEMM_BN=128 -DGEMM_PROMOTE=1                           the 128 x 128 promoting build (reference)
# ov with a cluster of 2 (B multicast, the file's default) and of 1 (ov_c1); p128 with a cluster of 2.
# For one H100 (or H200), from the repository root of this tree, with nvcc, compute-sanitizer, CuPy,
# cuda-bindings and nvmath-python (the cuBLASLt peer) as Day 87's own runs have them:
#
#   OUT=$OUT bash evidence/gemm_dev/pover40_gpu.sh                 # every step, in this order
#   STEPS="bench" OUT=$OUT bash evidence/gemm_dev/pover40_gpu.sh    # one step
#
# Steps (each under its own time limit, cut to what is left of BUDGET seconds, 290 unless set: the
# whole run stays under 300 s; in one device call of up to 600 s, BUDGET=560 lets every step run; a
# step that would get under 10 s is skipped and says so; while the bench is still to come, the steps
# before it leave it RESERVE seconds, 150 unless set):
#   build     nvcc -Xptxas -v: ov, ov_c1, p128; the log must show 0 spills and no C75xx line
#             (C7514 would mean ptxas serialized the wgmmas: the build would be pointless)
#   check     the standalone binaries' self-checks: every element of D against float64 of the inputs,
#             the guard past D, two launches bit-identical; main()'s 7 ragged shapes at P = 0, 1, 3
#             (P = 0: one chain, consumer 0 and 1 each alone; 1: pairs of one K-tile; 3: pairs of
#             three and a short last chain), then shapes with more units than clusters and more K-tiles
#             than the 6-stage ring at P = 1, 2 and 3, and a long K (32 K-tiles) at P = 1 and 3 (ov;
#             two of them for ov_c1)
#   sanitize  compute-sanitizer racecheck, synccheck and memcheck on ov (cluster 2), 1400 x 2504 x 400
#             at P = 1 (11 tile rows of 128 in 6 cluster rows x 20 columns = 120 units on 66 clusters;
#             4 K-tiles, the last 16 deep, so 4 chains: consumer 0 two pairs, consumer 1 a lone
#             chain, a pair and a lone chain)
#   tests     the course's NVRTC path on the GPU: pytest -m gpu tests/lessons/day87/test_overlap40.py
#             (ragged shapes at P = 0, 1, 3 against float64, and D bit for bit the 128 x 128 promoting
#             build's at the same P, clusters 2 and 1)
#   bench     the course's bench at N = 2048, 4096, 8192 with COURSE_DAY87_PINGPONG=overlap: the build
#             checked and timed at P = 1 in one interleaved batch with the 128 x 128 promoting build at
#             P = 1 and cuBLASLt FP8 (its default, which promotes); reasons titled "overlap promoting
#             build, every 128 (P=1) at N=..." in $OUT/pover40/bench/day87.json (the page's own tables
#             are in the same run, unchanged)
#
# Output: $OUT/pover40/run.log and $OUT/pover40/bench/. The page renders none of it: a measured number
# for the new build goes into the notes first (and the chooser and the page only after review).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/pover40"
BIN=${POVER40_BIN:-/tmp/pover40_bin}
BUDGET=${BUDGET:-290}
RESERVE=${RESERVE:-150}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${STEPS:-"build check sanitize tests bench"}
[[ $STEPS == *bench* ]] || RESERVE=0
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=(
  [ov]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_OVERLAP=1"
  [ov_c1]="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_OVERLAP=1 -DGEMM_CLUSTER=1"
  [p128]="-DGEMM_BN=128 -DGEMM_PROMOTE=1"
)
NEW="ov ov_c1"
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - RESERVE - SECONDS))
  (( limit > left )) && limit=$left
  echo; echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s) ==="
  if (( limit < 10 )); then echo "--- $name: SKIPPED (${left}s of the ${BUDGET}s budget left)"; return; fi
  timeout -k 5 "$limit" "$@"; echo "--- $name: exit $?"
}
main() {
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
git log --oneline -1
if [[ $STEPS == *build* ]]; then
  for b in $NEW p128; do
    step "build $b (${FLAGS[$b]})" 60 $NVCC ${FLAGS[$b]} -o "$BIN/$b" kernels/gemm8_fp8.cu
  done
fi
if [[ $STEPS == *check* ]]; then
  for b in $NEW p128; do
    step "check $b: main()'s ragged shapes, P = 0, 1, 3" 40 "$BIN/$b"
  done
  for run in "2304 2504 768 1" "2304 2504 768 2" "2304 2504 768 3" "1400 2504 400 1" \
             "1400 2504 400 3" "264 392 4096 1" "264 392 4096 3"; do
    step "check ov $run" 20 "$BIN/ov" $run
  done
  for run in "2304 2504 768 1" "264 392 4096 3"; do
    step "check ov_c1 $run" 20 "$BIN/ov_c1" $run
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  for tool in racecheck synccheck memcheck; do
    step "compute-sanitizer --tool $tool ov 1400 2504 400 1" 40 \
      compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/ov" 1400 2504 400 1
  done
fi
if [[ $STEPS == *tests* ]]; then
  step "GPU tests: the overlap build through NVRTC, and bit for bit against the promoting build" 90 \
    python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_overlap40.py
fi
if [[ $STEPS == *bench* ]]; then
  RESERVE=0
  COURSE_DAY87_PINGPONG=overlap step "course bench day87 with the overlap build" 180 \
    python3 -m course bench day87 --sizes 2048 4096 8192 --out "$LOGD/bench"
  python3 - "$LOGD/bench/day87.json" <<'PY' || true
import json, sys
data = json.load(open(sys.argv[1]))
for r in data.get("reasons", []):
    t = r.get("title", "")
    if t.startswith("overlap") or t.startswith("promoting build, every 128 (P=1) at N="):
        print(f'{t}: {r.get("value")} {r.get("unit", "")} {r.get("detail", "")}')
PY
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
date -u
}
main 2>&1 | tee "$LOGD/run.log"
