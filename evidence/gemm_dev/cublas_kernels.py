"""Which kernels cuBLAS runs for Day 86's small, decode and middle-sized shapes (issue 39): run
under ncu, this makes the same gemmEx call the course's bench times (FP16 in and out, FP32
accumulate, B stored N x K: course.bench.peers.Cublas) three times per shape, so that ncu's
launch statistics name cuBLAS's kernel, grid, cluster, registers and shared memory per shape.

    ncu --section LaunchStats --metrics gpu__time_duration.sum --csv --page details \
        python3 evidence/gemm_dev/cublas_kernels.py > cublas_kernels.csv
"""

from __future__ import annotations

import sys

import cupy as cp

from course.bench.peers import Cublas

SHAPES = [
    (256, 256, 256), (512, 512, 512), (768, 768, 768), (1024, 1024, 1024), (1536, 1536, 1536),
    (2048, 2048, 2048), (1200, 1200, 1200), (1000, 3000, 704), (640, 6144, 2048),
    (1, 8192, 8192), (32, 8192, 8192), (64, 8192, 8192), (128, 8192, 8192), (128, 4096, 14336),
    (1024, 1024, 16384),
]  # fmt: skip

gemm = Cublas(out="float16", b_layout="nk")
for m, n, k in SHAPES:
    a = cp.random.standard_normal((m, k), dtype=cp.float32).astype(cp.float16)
    b = cp.random.standard_normal((n, k), dtype=cp.float32).astype(cp.float16)
    d = cp.empty((m, n), dtype=cp.float16)
    for _ in range(3):
        gemm(a, b, d)
    cp.cuda.runtime.deviceSynchronize()
    print(f"{m}x{n}x{k}: done", file=sys.stderr)
