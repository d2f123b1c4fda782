#!/bin/bash
# The ping-pong build's compile evidence (no GPU): nvcc -Xptxas -v for its builds, and every
# existing build's cubin compared byte for byte with the same build of a base revision's file.
# Usage: evidence/gemm_dev/fp8pp/ptxas.sh [BASE_REV] (default main) > evidence/gemm_dev/fp8pp/ptxas.txt
set -u
cd "$(dirname "$0")/../../.."
BASE=${1:-main}
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a"
echo "# kernels/gemm8_fp8.cu, $(nvcc --version | tail -1)"
for fl in "" "-DGEMM_CLUSTER=1" "-DCOURSE_TIMELINE" "-DGEMM_SETMAXNREG=0"; do
  echo "## nvcc -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_PINGPONG=1 $fl"
  $NVCC -Xptxas -v -cubin -o /dev/null -DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_PINGPONG=1 $fl \
    kernels/gemm8_fp8.cu 2>&1 | grep -v -e '^$' -e 'Compile time'
done
echo "## every existing build: this file's cubin against $BASE's ($(git rev-parse --short "$BASE"))"
tmp=$(mktemp -d)
mkdir -p "$tmp/base/kernels"
git show "$BASE:kernels/gemm8_fp8.cu" > "$tmp/base/kernels/gemm8_fp8.cu"
status=0
for fl in "" "-DGEMM_BN=256 -DGEMM_CLUSTER=1" "-DGEMM_BN=128" "-DGEMM_BN=128 -DGEMM_CLUSTER=1" \
          "-DGEMM_BN=128 -DGEMM_PROMOTE=1" "-DGEMM_BN=128 -DGEMM_CLUSTER=1 -DGEMM_PROMOTE=1" \
          "-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1" "-DGEMM_SETMAXNREG=0" \
          "-DCOURSE_TIMELINE" "-DCOURSE_TIMELINE -DGEMM_BN=128 -DGEMM_PROMOTE=1"; do
  # The same relative path on both sides: nvcc records it in the cubin.
  (cd "$tmp/base" && $NVCC -cubin -o "$tmp/old.cubin" $fl kernels/gemm8_fp8.cu)
  $NVCC -cubin -o "$tmp/new.cubin" $fl kernels/gemm8_fp8.cu
  if cmp -s "$tmp/old.cubin" "$tmp/new.cubin"; then echo "identical: [${fl:-default}]"
  else echo "DIFFERENT: [${fl:-default}]"; status=1; fi
done
rm -rf "$tmp"
exit $status
