#!/bin/bash
# Stream-K (issue 39, branch sk39): the GPU runs this branch needs before anything reaches main.
# Written in a session with no GPU; NOTHING in it has run yet. Run from the tree's root on an H100
# (then on an H200), PYTHONPATH set to the tree, COURSE_REQUIRE_GPU=1. Logs and JSON under $OUT.
# STEPS picks steps (default: all, in this order; correctness before any timing):
#   build     nvcc the standalone Stream-K binaries (5 builds, one at a time is ~1 s of ptxas each)
#   ragged    each binary's own ragged list (7 shapes x grids of all SMs, 7 and 3 clusters: the
#             hybrid's data-parallel waves, shared tiles and the fixup), every element vs float64,
#             the guard after D, the second launch bit-identical (the counters' reset)
#   sanitize  compute-sanitizer racecheck, synccheck, memcheck on three ragged shapes (two builds
#             and a deterministic one), each on a 3- or 7-cluster grid so that tiles are shared
#   default   the split-K builds still pass (their cubins are byte-identical to main's: see notes)
#   run       python -m course run day86 and the day86 GPU tests (the split-K builds as before; the
#             Stream-K builds through the course host: 9 ragged shapes x 4 builds, every element, and
#             the deterministic Stream-K build bit-identical over 12 launches)
#   measure   streamk_measure.py: the shape table, Stream-K vs the chooser's pick vs cuBLAS,
#             one by one and in CUDA graphs, every build checked against float64 first
# Two device calls (the sanitizers and the shape table together may pass one call's 600 s; the
# step timeouts below add up to more). Correctness first; stop if it fails:
#   run(command='export PYTHONPATH=$PWD COURSE_REQUIRE_GPU=1; STEPS="build ragged sanitize default" bash evidence/gemm_dev/streamk_gpu.sh',
#       timeout_s=600)
#   run(command='export PYTHONPATH=$PWD COURSE_REQUIRE_GPU=1; STEPS="run measure" bash evidence/gemm_dev/streamk_gpu.sh',
#       timeout_s=600)
# (SHAPES=quick in the second runs six shapes of the table only.)
set -u
T0=$(date +%s)
STEPS=${STEPS:-"build ragged sanitize default run measure"}
OUT=${OUT:-/tmp/streamk_out}; mkdir -p "$OUT"
LOG=$OUT/streamk.log
exec > >(tee "$LOG") 2>&1
step() { echo; echo "=== $* ($(date -u +%H:%M:%S), +$(( $(date +%s) - T0 )) s)"; }
step env
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -1
git -C . log -1 --format=%H 2>/dev/null || true
B=/tmp/skbin; mkdir -p $B
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a"
# name: flags (the 128-row tiles the chooser can pick, a deterministic one, a 64-row one)
BUILDS="sk_256_c2:-DGEMM_BN=256,-DGEMM_CLUSTER=2 sk_128_c1:-DGEMM_BN=128,-DGEMM_CLUSTER=1 \
sk_64_c2:-DGEMM_BN=64,-DGEMM_CLUSTER=2 skdet_256_c1:-DGEMM_BN=256,-DGEMM_CLUSTER=1,-DGEMM_DETERMINISTIC=1 \
sk_bm64_128_c2:-DGEMM_BM=64,-DGEMM_BN=128,-DGEMM_CLUSTER=2"
if [[ $STEPS == *build* ]]; then
  step "nvcc: the Stream-K binaries, then the default split-K one"
  for b in $BUILDS; do
    name=${b%%:*}; flags=${b#*:}; flags=${flags//,/ }
    $NVCC -DGEMM_STREAMK=1 $flags -Xptxas -v -o $B/$name kernels/gemm7_shapes.cu 2>&1 | grep -E "registers|spill|error"
    echo "$name ($flags): exit ${PIPESTATUS[0]}"
  done
  $NVCC -o $B/split_256_c2 kernels/gemm7_shapes.cu; echo "split_256_c2: exit $?"
fi
if [[ $STEPS == *ragged* ]]; then
  for b in $BUILDS; do
    name=${b%%:*}
    step "standalone $name: 7 ragged shapes on all SMs, 7 and 3 clusters"
    timeout -k 5 90 $B/$name; echo "exit $?"
  done
  # The ragged shapes small enough for the binary's host float64 reference.
  for shape in "1000 3000 704" "4104 776 1240" "640 6144 2048" "1200 1200 1200" "1 8192 8192"; do
    for cap in 0 5; do
      step "standalone sk_256_c2 $shape, clusters ${cap} (0: all SMs)"
      timeout -k 5 120 $B/sk_256_c2 $shape 1 $cap | tail -3; echo "exit ${PIPESTATUS[0]}"
    done
  done
fi
if [[ $STEPS == *sanitize* ]]; then
  # (each shares 2 tiles; 130x392x1096 on 3 clusters also has a data-parallel wave: model in _streamk)
  for run in "sk_256_c2 256 264 1096 1 3" "sk_128_c1 130 392 1096 1 3" "skdet_256_c1 200 136 1096 1 3"; do
    set -- $run
    for tool in racecheck synccheck memcheck; do
      step "compute-sanitizer --tool $tool $1 $2 $3 $4 $5 $6"
      timeout -k 5 60 compute-sanitizer --tool $tool $B/$1 $2 $3 $4 $5 $6 2>&1 | tail -4
    done
  done
fi
if [[ $STEPS == *default* ]]; then
  step "standalone split_256_c2 (the default build, splits 1 and 3)"
  timeout -k 5 60 $B/split_256_c2; echo "exit $?"
fi
if [[ $STEPS == *run* ]]; then
  step "python -m course run day86"
  timeout -k 5 60 python3 -m course run day86; echo "exit $?"
  step "pytest -m gpu tests/lessons/day86"
  timeout -k 5 ${TESTS_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -m gpu tests/lessons/day86 -W ignore::DeprecationWarning -rA 2>&1 | grep -vE "^(PASSED|$)" | tail -30
  echo "exit ${PIPESTATUS[0]}"
fi
if [[ $STEPS == *measure* ]]; then
  step "streamk_measure.py: Stream-K vs the chooser's pick vs cuBLAS, one by one and in CUDA graphs"
  timeout -k 5 ${MEASURE_TIMEOUT:-330} python3 evidence/gemm_dev/streamk_measure.py $OUT/streamk-measure.json; echo "exit $?"
fi
step done
