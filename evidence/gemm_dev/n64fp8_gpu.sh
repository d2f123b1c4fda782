#!/bin/bash
# Issue 40's small sizes: the 128 x 64 build of Day 87's kernel (-DGEMM_BN=64, m64n64k32; kernels/gemm8_fp8.cu,
# region wgmma-n64) on a GPU, in one device call (evidence/gemm_dev/notes_n64fp8.md). The builds:
#   n64c1  -DGEMM_BN=64 -DGEMM_CLUSTER=1      n64c2  -DGEMM_BN=64      n64p  -DGEMM_BN=64 -DGEMM_CLUSTER=1 -DGEMM_PROMOTE=1
#   OUT=$OUT BUDGET=... bash evidence/gemm_dev/n64fp8_gpu.sh          (STEPS="..." for a subset)
# Steps, each under its own limit, cut to what is left of BUDGET (300 unless set; while measure is to
# come the steps before it leave it RESERVE, 120 unless set):
#   build     nvcc -Xptxas -v: 0 spills and no C75xx line
#   check     each binary's main(): its ragged shapes (every element against float64, the guard past D,
#             two launches bit-identical), then 1000 x 1032 x 528 and 2304 x 2504 x 768 (P = 0; n64p at 1 and 3)
#   sanitize  compute-sanitizer racecheck, synccheck, memcheck on n64c2 and n64c1 at 1000 x 1032 x 528
#   gputest   pytest -m gpu tests/lessons/day87/test_n64.py (through NVRTC: ragged shapes, and D bit for bit
#             the 128 x 128 build's)
#   measure   at N = 512, 1024, 1536, 2048: the default build (128x256 c2), 128x128 c1 (the few-tiles build of
#             the time), 128x64 c1 and c2, and cuBLASLt FP8 default and fast accumulation, each checked
#             against float64 first, timed interleaved one by one and in CUDA graphs; $OUT/n64/measure.json
#   bench     python -m course bench day87 (whatever the tree's chooser picks): $OUT/n64/bench/
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
LOGD="$OUT/n64"
BIN=${N64_BIN:-/tmp/n64_bin}
BUDGET=${BUDGET:-300}
RESERVE=${RESERVE:-120}
mkdir -p "$LOGD" "$BIN"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} COURSE_REQUIRE_GPU=1
STEPS=${STEPS:-"build check sanitize gputest measure bench"}
[[ $STEPS == *measure* ]] || RESERVE=0
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
declare -A FLAGS=([n64c1]="-DGEMM_BN=64 -DGEMM_CLUSTER=1" [n64c2]="-DGEMM_BN=64" [n64p]="-DGEMM_BN=64 -DGEMM_CLUSTER=1 -DGEMM_PROMOTE=1")
step() {  # step NAME LIMIT CMD...
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - RESERVE - SECONDS))
  (( limit > left )) && limit=$left
  echo; echo "=== $name ($(date -u +%H:%M:%S), +${SECONDS}s, limit ${limit}s) ==="
  if (( limit < 10 )); then echo "--- $name: SKIPPED (${left}s of the ${BUDGET}s budget left)"; return; fi
  timeout -k 5 "$limit" "$@"; echo "--- $name: exit $?"
}
cat > "$BIN/n64_measure.py" <<'PY'
import json, sys
from functools import partial

import cupy as cp

from course.bench.arith import paired_ratios, rotation_buffers
from course.bench.timing import GRAPHS, Timer, in_graphs
from course.kernel.compile import compile_lesson
from course.lessons import get_lesson
from course.lessons.day87.bench import lt_peers
from course.lessons.day87.host import HOST

LESSON = get_lesson("day87")
BUILDS = {"128x256c2": {}, "128x128c1": {"GEMM_BN": 128, "GEMM_CLUSTER": 1},
          "128x64c1": {"GEMM_BN": 64, "GEMM_CLUSTER": 1}, "128x64c2": {"GEMM_BN": 64}}
timer, peers = Timer(20), lt_peers()
l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
rows = []
for n in (512, 1024, 1536, 2048):
    sets = rotation_buffers(4 * n * n, l2)
    works = {name: HOST.workload(compile_lesson(LESSON, defines=f), n, sets, "bench") for name, f in BUILDS.items()}
    for name, w in works.items():
        w.poison(0)
        w.launch(0)
        check = w.check(w.out(0))
        assert check.passed, (n, name, check)
        print(f"N={n} {name}: PASS ({check.max_error:.3g})", flush=True)
    base = works["128x256c2"]
    rot = {name: [partial(w.launch, j) for j in range(sets)] for name, w in works.items()}
    for p in peers:  # cuBLASLt on the default build's buffers, checked there first
        base.poison(0)
        p.call(base, 0)
        assert base.check(base.out(0)).passed, (n, p.name)
        rot[p.name] = [partial(p.call, base, j) for j in range(sets)]
    s = timer.samples_together(rot, graphs=True)
    row = {"n": n, "builds": BUILDS, "checked": "every build and peer against float64, output poisoned first"}
    for mode in ("", GRAPHS):
        key = in_graphs if mode else (lambda x: x)
        us = {x: s[key(x)].timing().median_ms * 1e3 for x in rot if key(x) in s}
        vs = {f"{x} rate over {b}": paired_ratios(s[key(x)].per_call_ms, s[key(b)].per_call_ms)
              for b in ("128x128c1", *(p.name for p in peers)) for x in rot if x != b and key(x) in s and key(b) in s}
        row["graphs" if mode else "one by one"] = {"us": us, "rate_over (x faster than base above 1)": vs}
        print(f"N={n}{mode}: " + "; ".join(f"{x} {us[x]:.2f} us" for x in sorted(us, key=us.__getitem__)), flush=True)
        print(f"N={n}{mode} ratios: " + "; ".join(f"{k} {v[0]:.3f}" for k, v in vs.items()), flush=True)
    rows.append(row)
    with open(sys.argv[1], "w") as f:
        json.dump({"rows": rows}, f, indent=1)
print("graph capture failures:", timer.graph_failures or "none")
PY
main() {
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
git log --oneline -1
if [[ $STEPS == *build* ]]; then
  for b in n64c1 n64c2 n64p; do step "build $b (${FLAGS[$b]})" 60 $NVCC ${FLAGS[$b]} -o "$BIN/$b" kernels/gemm8_fp8.cu; done
fi
if [[ $STEPS == *check* ]]; then
  for b in n64c1 n64c2 n64p; do
    step "check $b: main()'s ragged shapes" 40 "$BIN/$b"
    for run in "1000 1032 528 0" "2304 2504 768 0"; do step "check $b $run" 20 "$BIN/$b" $run; done
  done
  for run in "1000 1032 528 1" "2304 2504 768 3"; do step "check n64p $run" 20 "$BIN/n64p" $run; done
fi
if [[ $STEPS == *sanitize* ]]; then
  for b in n64c2 n64c1; do
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $b 1000 1032 528 0" 40 \
        compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/$b" 1000 1032 528 0
    done
  done
fi
if [[ $STEPS == *gputest* ]]; then
  step "GPU tests: the 128 x 64 build through NVRTC" 90 python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day87/test_n64.py
fi
if [[ $STEPS == *measure* ]]; then
  RESERVE=$([[ $STEPS == *bench* ]] && echo 60 || echo 0)
  step "measure: 128x64 beside the other builds and cuBLASLt" 150 python3 "$BIN/n64_measure.py" "$LOGD/measure.json"
fi
if [[ $STEPS == *bench* ]]; then
  RESERVE=0
  step "course bench day87" 120 python3 -m course bench day87 --out "$LOGD/bench"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
echo "elapsed ${SECONDS}s of the ${BUDGET}s budget"
}
main 2>&1 | tee "$LOGD/run.log"
