#!/bin/bash
# The larger promoting tiles' compile evidence (no GPU): nvcc -Xptxas -v for their builds (cluster 2 and
# 1, with COURSE_TIMELINE), the registers their setmaxnreg regions use (nvdisasm, when NVDISASM names
# one), and every existing build's cubin compared byte for byte with the same build of a base revision's
# file. Usage: evidence/gemm_dev/fp8wide/ptxas.sh [BASE_REV] (default main) > evidence/gemm_dev/fp8wide/ptxas.txt
set -u
cd "$(dirname "$0")/../../.."
BASE=${1:-main}
NVCC="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a"
NVDISASM=${NVDISASM:-$(command -v nvdisasm || true)}
tmp=$(mktemp -d)
echo "# kernels/gemm8_fp8.cu, $(nvcc --version | tail -1)"
for build in "-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BM=192" "-DGEMM_BN=192 -DGEMM_PROMOTE=1"; do
  for fl in "" "-DGEMM_CLUSTER=1" "-DCOURSE_TIMELINE"; do
    echo "## nvcc $build $fl"
    $NVCC -Xptxas -v -cubin -o "$tmp/w.cubin" $build $fl kernels/gemm8_fp8.cu 2>&1 | grep -v -e '^$' -e 'Compile time'
    if [[ -n $NVDISASM ]]; then
      "$NVDISASM" -c "$tmp/w.cubin" > "$tmp/w.sass"
      # setmaxnreg: USETMAXREG.DEALLOC (the producer's ceiling) and TRY_ALLOC (the consumers'), in hex
      grep -o 'USETMAXREG[^;]*' "$tmp/w.sass" | sed 's/  */ /g'
      echo "highest register in the code: R$(grep -o '\bR[0-9]\+\b' "$tmp/w.sass" | tr -d R | sort -n | tail -1);" \
        "from USETMAXREG.DEALLOC to the end (the producer's code where ptxas lays it out last;" \
        "not so in the timeline builds):" \
        "R$(awk '/USETMAXREG.DEALLOC/{f=1} f' "$tmp/w.sass" | grep -o '\bR[0-9]\+\b' | tr -d R | sort -n | tail -1)"
    fi
  done
done
echo "## setmaxnreg_dec.cu: does ptxas hold code after setmaxnreg.dec 24 to 24 registers? (it spills to)"
$NVCC -Xptxas -v -cubin -o "$tmp/d.cubin" evidence/gemm_dev/fp8wide/setmaxnreg_dec.cu 2>&1 | grep -e spill -e Used
if [[ -n $NVDISASM ]]; then
  "$NVDISASM" -c "$tmp/d.cubin" > "$tmp/d.sass"
  echo "highest register between USETMAXREG.DEALLOC and TRY_ALLOC:" \
    "R$(awk '/USETMAXREG.DEALLOC/{f=1} /USETMAXREG.TRY_ALLOC/{f=0} f' "$tmp/d.sass" | grep -o '\bR[0-9]\+\b' | tr -d R | sort -n | tail -1)"
fi
echo "## every existing build: this file's cubin against $BASE's ($(git rev-parse --short "$BASE"))"
mkdir -p "$tmp/base/kernels"
git show "$BASE:kernels/gemm8_fp8.cu" > "$tmp/base/kernels/gemm8_fp8.cu"
status=0
for fl in "" "-DGEMM_BN=256 -DGEMM_CLUSTER=1" "-DGEMM_BN=128" "-DGEMM_BN=128 -DGEMM_CLUSTER=1" \
          "-DGEMM_BN=128 -DGEMM_PROMOTE=1" "-DGEMM_BN=128 -DGEMM_CLUSTER=1 -DGEMM_PROMOTE=1" \
          "-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_BLOCK_SCALES=1" "-DGEMM_SETMAXNREG=0" \
          "-DCOURSE_TIMELINE" "-DCOURSE_TIMELINE -DGEMM_BN=128 -DGEMM_PROMOTE=1" \
          "-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_PINGPONG=1" \
          "-DGEMM_BN=128 -DGEMM_PROMOTE=1 -DGEMM_PROMOTE_PINGPONG=1 -DGEMM_CLUSTER=1"; do
  # The same relative path on both sides: nvcc records it in the cubin.
  (cd "$tmp/base" && $NVCC -cubin -o "$tmp/old.cubin" $fl kernels/gemm8_fp8.cu)
  $NVCC -cubin -o "$tmp/new.cubin" $fl kernels/gemm8_fp8.cu
  if cmp -s "$tmp/old.cubin" "$tmp/new.cubin"; then echo "identical: [${fl:-default}]"
  else echo "DIFFERENT: [${fl:-default}]"; status=1; fi
done
rm -rf "$tmp"
exit $status
