#!/bin/bash
# Build the ladder binaries here (nvcc, no GPU needed) and stage them with
# the sources and dev scripts in /work/main/.gpuwork-kernels, the folder
# the device tool carries (git-ignored there).
set -e
WT=$(cd "$(dirname "$0")/../.." && pwd)
DEST=/work/main/.gpuwork-kernels
rm -rf "$DEST"; mkdir -p "$DEST/kernels" "$DEST/bin"
cp "$WT"/kernels/gemm*.cu "$DEST/kernels/"
# dev-only variants, if any (not course files)
cp "$WT"/tools/gemm_dev/variants/gemm*.cu "$DEST/kernels/" 2>/dev/null || true
cp "$WT"/tools/gemm_dev/bench.py "$WT"/tools/gemm_dev/gpu_run.sh "$DEST/"
for f in "$DEST"/kernels/gemm*.cu; do
  b=$(basename "$f" .cu)
  nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o "$DEST/bin/$b" "$f" &
done
wait
ls -la "$DEST" "$DEST/bin"
du -sh "$DEST"
