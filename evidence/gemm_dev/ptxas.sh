#!/bin/bash
# ptxas resource reports (registers, spills, wgmma notes) for every ladder
# file, with nvcc and with NVRTC, plus the setmaxnreg-off builds. Writes
# tools/gemm_dev/ptxas/<file>.txt. No GPU needed.
cd "$(dirname "$0")/../.."
OUTD=tools/gemm_dev/ptxas
mkdir -p $OUTD
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -cubin -o /dev/null"
for f in kernels/gemm*.cu; do
  b=$(basename $f .cu)
  {
    echo "# $f, $(nvcc --version | tail -1)"
    echo "## nvcc (GEMM_DIM default 1024)"
    $NVCC $f 2>&1
    echo "## nvcc -DGEMM_DIM=8192"
    $NVCC -DGEMM_DIM=8192 $f 2>&1
    if grep -q GEMM_SETMAXNREG $f; then
      echo "## nvcc -DGEMM_SETMAXNREG=0 (no setmaxnreg)"
      $NVCC -DGEMM_SETMAXNREG=0 $f 2>&1
    fi
    echo "## NVRTC (cuda-python), --gpu-architecture=sm_90a"
    /work/venv/bin/python tools/gemm_dev/nvrtc_check.py $f 2>&1
  } | grep -v "^$" > $OUTD/$b.txt
  echo "$b: $(grep -m1 -E 'Used' $OUTD/$b.txt)  $(grep -m1 spill $OUTD/$b.txt | sed 's/^ *//')"
done
