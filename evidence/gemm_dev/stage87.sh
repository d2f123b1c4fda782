#!/bin/bash
# Build the four configurations of kernels/gemm8_fp8.cu here (nvcc, no GPU
# needed; ptxas reports to tools/gemm_dev/ptxas/gemm8_fp8.txt) and stage them
# with the source, the dev scripts and this tree's course package in
# /work/main/.dev87, the folder the device tool carries (git-excluded there).
set -e
WT=$(cd "$(dirname "$0")/../.." && pwd)
DEST=/work/main/.dev87
rm -rf "$DEST"; mkdir -p "$DEST/bin"
cp "$WT"/kernels/gemm8_fp8.cu "$WT"/tools/gemm_dev/{bench87.py,run87.sh} "$DEST/"
cp -r "$WT"/course "$DEST/course"
# A checkout of this tree for `python -m course run/bench day87` (the device gets /work/main's tree).
mkdir -p "$DEST/tree"; cp -r "$WT"/{course,kernels,content,evidence,notebooks,tests,pyproject.toml} "$DEST/tree/"
find "$DEST" -name __pycache__ -prune -exec rm -rf {} +
REP="$WT"/tools/gemm_dev/ptxas/gemm8_fp8.txt
echo "# kernels/gemm8_fp8.cu, $(nvcc --version | tail -1)" > "$REP"
for c in "256 2 0" "256 1 0" "128 2 1" "128 1 1"; do
  set -- $c
  nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -DGEMM_BN=$1 -DGEMM_CLUSTER=$2 -DGEMM_PROMOTE=$3 \
    -o "$DEST/bin/gemm8_bn$1_c$2_p$3" "$WT"/kernels/gemm8_fp8.cu > "$DEST/ptxas_bn$1_c$2_p$3.txt" 2>&1 &
done
wait
for c in "256 2 0" "256 1 0" "128 2 1" "128 1 1"; do
  set -- $c
  { echo "## nvcc -DGEMM_BN=$1 -DGEMM_CLUSTER=$2 -DGEMM_PROMOTE=$3"; grep -E "ptxas|bytes|warning" "$DEST/ptxas_bn$1_c$2_p$3.txt" | grep -v "#177"; } >> "$REP"
done
chmod +x "$DEST/run87.sh"
ls -la "$DEST" "$DEST/bin"; du -sh "$DEST"
