"""Dev timing of the GEMM ladder kernels against cuBLAS, on the GPU.

Usage (on the H200): python3 bench.py KERNEL_DIR [FILE ...] [N ...]

For every ladder file in KERNEL_DIR and every N (default 4096 8192):
compile it with CuPy/NVRTC (-DGEMM_DIM=N, sm_90a), read its launch
constants from the source, encode the tensor maps with cuda-python,
launch it on normally distributed FP16 inputs, check D against cuBLAS
(cupy.matmul(A, B.T), FP16 in/out, FP32 accumulate), then time kernel and
cuBLAS interleaved (CUDA events, warm-up, median of REPS). Prints one line
per (file, variant, N). These are dev numbers for choosing and checking
kernels, not the course's benchmark.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np
from cuda.bindings import driver

REPS = 10
WARMUP = 3

FILES = [
    ("gemm1_tma.cu", "gemm1Tma", [{}]),
    ("gemm2_pipeline.cu", "gemm2Pipeline", [{}]),
    ("gemm3_two_consumers.cu", "gemm3TwoConsumers", [{}, {"GEMM_SETMAXNREG": 0}]),
    ("gemm4_persistent.cu", "gemm4Persistent", [{}, {"GEMM_TILE_ORDER": 0}]),
    ("gemm5_cluster.cu", "gemm5Cluster", [{}, {"_grid": 128}]),
    ("gemm6_epilogue.cu", "gemm6Epilogue", [{}, {"_grid": 128}, {"GEMM_TILE_ORDER": 0}]),
]

MAP_DTYPE = np.dtype([("o", "<u8", (16,))], align=True)
_CONSTEXPR = re.compile(r"^\s*constexpr\s+int\s+(k\w+)\s*=\s*(\w+)\s*;", re.M)
_DEFINE = re.compile(r"^\s*#define\s+(\w+)\s+(\S+)\s*$", re.M)


def constants(src: str, defines: dict) -> dict[str, int]:
    macros = dict(_DEFINE.findall(src))
    macros.update({k: str(v) for k, v in defines.items()})
    out = {}
    for name, expr in _CONSTEXPR.findall(src):
        expr = macros.get(expr, expr)
        if re.fullmatch(r"-?\d+", expr):
            out[name] = int(expr)
    return out


def include_dirs() -> list[str]:
    cccl = Path(cp.__file__).parent / "_core" / "include" / "cupy" / "_cccl" / "libcudacxx"
    dirs = [f"-I{cccl}"]
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        found = find_nvidia_header_directory("cudart")
        if found:
            dirs.append(f"-I{found}")
    except Exception:
        pass
    for p in ("/usr/local/cuda/include",):
        if Path(p, "cuda_fp16.h").is_file():
            dirs.append(f"-I{p}")
    return dirs


def encode(ptr: int, rows: int, cols: int, box_cols: int, box_rows: int, swizzle) -> np.void:
    u64, u32 = driver.cuuint64_t, driver.cuuint32_t
    err, m = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        2,
        ptr,
        [u64(cols), u64(rows)],
        [u64(cols * 2)],
        [u32(box_cols), u32(box_rows)],
        [u32(1), u32(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        swizzle,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    assert err == driver.CUresult.CUDA_SUCCESS, err
    words = np.array([int(w) for w in m.opaque], dtype="<u8")
    return np.array([(words,)], dtype=MAP_DTYPE)[0]


def time_pair(run_k, run_ref) -> tuple[float, float]:
    """Median ms of kernel and reference, interleaved."""
    ev = [cp.cuda.Event() for _ in range(4)]
    for _ in range(WARMUP):
        run_k()
        run_ref()
    tk, tr = [], []
    for _ in range(REPS):
        ev[0].record()
        run_k()
        ev[1].record()
        run_ref()
        ev[2].record()
        ev[2].synchronize()
        tk.append(cp.cuda.get_elapsed_time(ev[0], ev[1]))
        tr.append(cp.cuda.get_elapsed_time(ev[1], ev[2]))
    return statistics.median(tk), statistics.median(tr)


def main() -> int:
    kdir = Path(sys.argv[1])
    sizes = [int(a) for a in sys.argv[2:] if a.isdigit()] or [4096, 8192]
    only = [a for a in sys.argv[2:] if not a.isdigit()]
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    sw128 = driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B
    rows_out = []
    failed = False
    for n in sizes:
        rng = cp.random.default_rng(1234 + n)
        a = rng.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
        b = rng.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)  # N x K
        ref = cp.empty((n, n), dtype=cp.float16)
        bt = b.T

        def run_ref():
            cp.matmul(a, bt, out=ref)

        run_ref()
        cp.cuda.Device().synchronize()
        ref32 = ref.astype(cp.float32)
        # An independent float64 reference on 16 rows spread over D.
        rows = cp.arange(16) * (n // 16) + 7
        ref64 = a[rows].astype(cp.float64) @ b.astype(cp.float64).T
        flops = 2.0 * n * n * n
        for fname, kname, variants in FILES:
            path = kdir / fname
            if not path.is_file() or (only and fname not in only):
                continue
            src = path.read_text()
            for defines in variants:
                label = fname + ("" if not defines else " " + ",".join(f"{k}={v}" for k, v in defines.items()))
                try:
                    grid_override = defines.get("_grid")
                    macros = {k: v for k, v in defines.items() if not k.startswith("_")}
                    c = constants(src, {"GEMM_DIM": n, **macros})
                    opts = ("-std=c++17", "-arch=sm_90a", f"-DGEMM_DIM={n}",
                            *[f"-D{k}={v}" for k, v in macros.items()], *include_dirs())
                    t0 = time.perf_counter()
                    mod = cp.RawModule(code=src, options=opts)
                    fn = mod.get_function(kname)
                    csec = time.perf_counter() - t0
                    smem = c["kSmemBytes"]
                    fn.max_dynamic_shared_size_bytes = smem
                    tm_a = encode(a.data.ptr, n, n, c["kBK"], c["kBoxARows"], sw128)
                    tm_b = encode(b.data.ptr, n, n, c["kBK"], c["kBoxBRows"], sw128)
                    d = cp.full((n, n), cp.nan, dtype=cp.float16)
                    if "tmD" in src and "kBoxDRows" in c:
                        sw = (sw128 if c.get("kSwizzleD", 1) else
                              driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE)
                        third = encode(d.data.ptr, n, n, c["kBoxDCols"], c["kBoxDRows"], sw)
                    else:
                        third = d
                    if c.get("kPersistent", 0):
                        cl = c.get("kClusterM", 1) * c.get("kClusterN", 1)
                        grid = (grid_override or sms // cl * cl,)
                    else:
                        grid = (n // c["kBN"], n // c["kBM"])
                    block = (c["kThreadsPerBlock"],)

                    def run_k():
                        fn(grid, block, (tm_a, tm_b, third), shared_mem=smem)

                    run_k()
                    cp.cuda.Device().synchronize()
                    got = d.astype(cp.float32)
                    nan = int(cp.isnan(got).sum())
                    rel = float(cp.max(cp.abs(got - ref32) / cp.maximum(cp.abs(ref32), 1.0)))
                    got64 = d[rows].astype(cp.float64)
                    rel64 = float(cp.max(cp.abs(got64 - ref64) / cp.maximum(cp.abs(ref64), 1.0)))
                    ok = nan == 0 and rel <= 1e-2 and rel64 <= 1e-2
                    tk, tr = time_pair(run_k, run_ref)
                    line = (f"{label:45s} N={n:5d} {'OK ' if ok else 'BAD'} nan={nan} maxrel_vs_cublas={rel:.2e} maxrel_f64_16rows={rel64:.2e} "
                            f"kernel {tk:7.3f} ms {flops / tk / 1e9:6.1f} TFLOP/s | cuBLAS {tr:7.3f} ms "
                            f"{flops / tr / 1e9:6.1f} TFLOP/s | ratio {tr / tk:5.3f} | nvrtc {csec:.1f}s")
                    failed |= not ok
                except Exception as e:  # report and carry on with the others
                    line = f"{label:45s} N={n:5d} ERROR {type(e).__name__}: {e}"
                    failed = True
                print(line, flush=True)
                rows_out.append(line)
    print("\n".join(["", "SUMMARY (dev numbers, median of %d, normal inputs, FP16 in/out):" % REPS, *rows_out]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
