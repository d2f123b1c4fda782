#!/bin/bash
# Build the six configurations of kernels/gemm7_shapes.cu here (nvcc, no
# GPU needed; ptxas reports to tools/gemm_dev/ptxas/gemm7_shapes.txt) and
# stage them with the source and dev scripts in $DEST (default
# /work/main/.dev86), the folder the device tool carries (git-excluded
# there). With TREE=1 it also stages this checkout's committed tree in
# $DEST/tree, so the course's own commands run this branch there.
set -e
WT=$(cd "$(dirname "$0")/../.." && pwd)
DEST=${DEST:-/work/main/.dev86}
rm -rf "$DEST"; mkdir -p "$DEST/bin"
cp "$WT"/kernels/gemm7_shapes.cu "$WT"/tools/gemm_dev/{bench86.py,chooser86.py,run86.sh,d86_call.sh,d86_gpu.sh} "$DEST/"
if [ -n "${TREE:-}" ]; then
  mkdir -p "$DEST/tree" && git -C "$WT" archive HEAD | tar -x -C "$DEST/tree"
  git -C "$WT" rev-parse --short HEAD > "$DEST/tree/.commit"
fi
REP="$WT"/tools/gemm_dev/ptxas/gemm7_shapes.txt
echo "# kernels/gemm7_shapes.cu, $(nvcc --version | tail -1)" > "$REP"
for c in "256 2" "256 1" "128 2" "128 1" "64 2" "64 1"; do
  set -- $c
  nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -DGEMM_BN=$1 -DGEMM_CLUSTER=$2 \
    -o "$DEST/bin/gemm7_bn$1_c$2" "$WT"/kernels/gemm7_shapes.cu > "$DEST/ptxas_bn$1_c$2.txt" 2>&1 &
done
wait
for c in "256 2" "256 1" "128 2" "128 1" "64 2" "64 1"; do
  set -- $c
  { echo "## nvcc -DGEMM_BN=$1 -DGEMM_CLUSTER=$2"; grep -E "ptxas|bytes|warning" "$DEST/ptxas_bn$1_c$2.txt" | grep -v "#177"; } >> "$REP"
done
chmod +x "$DEST/run86.sh"
ls -la "$DEST" "$DEST/bin"; du -sh "$DEST"
