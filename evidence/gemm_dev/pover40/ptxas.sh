#!/bin/bash
# The overlap build's compile evidence (no GPU): nvcc -Xptxas -v for its builds, the reduced kernels,
# and, when NVDISASM names an nvdisasm (13.x: the nvidia-cuda-nvdisasm wheel, not a course
# dependency), each build's setmaxnreg values and highest register in its SASS.
# Usage: NVDISASM=/path/to/nvdisasm evidence/gemm_dev/pover40/ptxas.sh > evidence/gemm_dev/pover40/ptxas.txt
set -u
cd "$(dirname "$0")/../../.."
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a"
OV="-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_OVERLAP=1"
tmp=$(mktemp -d)
echo "# kernels/gemm8_fp8.cu, $(nvcc --version | tail -1)"
for fl in "" "-DGEMM_CLUSTER=1" "-DCOURSE_TIMELINE" "-DCOURSE_TIMELINE -DGEMM_CLUSTER=1"; do
  echo "## nvcc $OV $fl"
  $NVCC -Xptxas -v -cubin -o "$tmp/ov.cubin" $OV $fl kernels/gemm8_fp8.cu 2>&1 | grep -v -e '^$' -e 'Compile time'
  if [[ -n ${NVDISASM:-} ]]; then
    "$NVDISASM" -c "$tmp/ov.cubin" > "$tmp/ov.sass"
    echo "   SASS: $(grep -o 'USETMAXREG[A-Z_.]* [^;]*' "$tmp/ov.sass" | tr '\n' ' ')"
    echo "   SASS: highest register R$(grep -o '\bR[0-9]\+\b' "$tmp/ov.sass" | tr -d R | sort -n | tail -1)," \
         "$(grep -c 'QGMMA' "$tmp/ov.sass") QGMMA, $(grep -c 'WARPGROUP.DEPBAR' "$tmp/ov.sass") WARPGROUP.DEPBAR"
  fi
done
for f in cross_iteration straight_line same_iteration; do
  echo "## nvcc evidence/gemm_dev/pover40/$f.cu"
  $NVCC -Xptxas -v -cubin -o /dev/null evidence/gemm_dev/pover40/$f.cu 2>&1 | grep -v -e '^$' -e 'Compile time'
done
rm -rf "$tmp"
