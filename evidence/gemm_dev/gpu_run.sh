#!/bin/bash
# One device call: run every built ladder binary standalone (N = 1024),
# compute-sanitizer racecheck + synccheck + memcheck on each, then the
# dev timing against cuBLAS. Run from the folder holding kernels/, bin/
# and bench.py. Everything has a timeout: a deadlocked mbarrier never
# returns. Output is tee'd to $OUT/gpu_run.log.
cd "$(dirname "$0")"
LOG=${OUT:-/tmp}/gpu_run.log
exec > >(tee "$LOG") 2>&1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
BINS=${BINS:-"gemm1_tma gemm2_pipeline gemm3_two_consumers gemm4_persistent gemm5_cluster gemm6_epilogue"}
for b in $BINS; do
  [ -x bin/$b ] || continue
  echo "=== $b"
  timeout 60 ./bin/$b; rc=$?
  if [ $rc -eq 126 ] || [ $rc -eq 127 ]; then
    echo "binary would not start (rc $rc): building here"
    nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o bin/$b kernels/$b.cu && timeout 60 ./bin/$b; rc=$?
  fi
  echo "rc=$rc"
done
for b in $BINS; do
  [ -x bin/$b ] || continue
  for tool in racecheck synccheck memcheck; do
    echo "=== sanitizer $tool $b"
    timeout 180 compute-sanitizer --tool $tool ./bin/$b 2>&1 | tail -4
  done
done
for f in ${BENCH_FILES:-$(cd kernels && ls gemm*.cu)}; do
  echo "=== bench $f"
  timeout 150 python3 bench.py kernels $f ${BENCH_SIZES:-4096 8192} 2>&1 | grep -v "^SUMMARY\|^$" | sort -u
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv
