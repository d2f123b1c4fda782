"""Dev check and timing of kernels/gemm7_shapes.cu against cuBLAS, on the GPU.

Usage (on an H100 or H200): python3 bench86.py KERNEL_FILE [--quick [--top=N]] [M,N,K ...]

--quick times only the model's N best candidates (default 1: its pick).

Compiles the kernel with CuPy/NVRTC in every configuration the chooser can
pick (-DGEMM_BN=256/128, -DGEMM_CLUSTER=2/1), then for every shape of the
table and a few ragged shapes:

- check: random normal FP16 inputs; D from the chooser's pick compared with
  cuBLAS (whole matrix) and with a float64 product on 16 rows that include
  the last row, every column (so the ragged N edge too); every candidate
  timed is checked against cuBLAS before its time counts;
- time: CUDA graphs of a batch of launches (inputs rotated over enough
  sets to pass twice this GPU's L2: 100 MiB on an H100, 120 MiB on an H200), kernel and cuBLAS gemmEx
  (FP16 in/out, FP32 compute, the same TN layout) interleaved batch by
  batch, median of REPS batches; every (configuration, split) candidate,
  so the chooser's pick can be compared with the best measured one.

Prints one line per candidate and a summary table at the end. Dev
numbers for choosing and checking kernels, not the course's benchmark.
"""

from __future__ import annotations

import ctypes
import math
import statistics
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np
from cuda.bindings import driver

sys.path.insert(0, str(Path(__file__).parent))
import chooser86  # noqa: E402

REPS = 15


def l2_rotate() -> int:
    """Twice this GPU's L2 size in bytes (CUDA's L2CacheSize attribute): rotated sets miss it."""
    return 2 * int(cp.cuda.Device().attributes["L2CacheSize"])


MAP_DTYPE = np.dtype([("o", "<u8", (16,))], align=True)
SW128 = driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B
RAGGED = [(1000, 1032, 520), (4000, 4104, 4040), (130, 5000, 3000), (3000, 200, 7000)]
SPLITS = (1, 2, 3, 4, 6, 8)


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
    if Path("/usr/local/cuda/include/cuda_fp16.h").is_file():
        dirs.append("-I/usr/local/cuda/include")
    return dirs


def encode(ptr: int, rows: int, cols: int, box_cols: int, box_rows: int) -> np.void:
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
        SW128,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    assert err == driver.CUresult.CUDA_SUCCESS, err
    words = np.array([int(w) for w in m.opaque], dtype="<u8")
    return np.array([(words,)], dtype=MAP_DTYPE)[0]


class Cublas:
    """D = A B^T, B stored N x K: cublasGemmEx TN, FP16 in/out, FP32 compute."""

    def __init__(self, stream):
        self.c = cp.cuda.cublas
        self.one = np.array(1.0, dtype=np.float32)
        self.zero = np.array(0.0, dtype=np.float32)
        self.handle = cp.cuda.device.get_cublas_handle()
        # One stream for everything, and a workspace of our own: cublasSetStream resets the
        # workspace to the default pool, which graph capture may not allocate from.
        self.c.setStream(self.handle, stream.ptr)
        self.workspace = cp.empty(64 << 20, dtype=cp.uint8)
        self.note = "cuBLAS workspace: default"
        for lib in ("libcublas.so.13", "libcublas.so.12"):
            try:
                f = ctypes.CDLL(lib).cublasSetWorkspace_v2
                f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
                rc = f(
                    ctypes.c_void_p(self.handle),
                    ctypes.c_void_p(self.workspace.data.ptr),
                    ctypes.c_size_t(self.workspace.nbytes),
                )
                self.note = f"cuBLAS workspace: own 64 MiB via {lib} (rc {rc})"
                break
            except OSError:
                continue

    def __call__(self, a, b, d):
        c = self.c
        m, k = a.shape
        n = d.shape[1]
        handle = self.handle
        f16 = cp.cuda.runtime.CUDA_R_16F
        c.gemmEx(
            handle,
            c.CUBLAS_OP_T,
            c.CUBLAS_OP_N,
            n,
            m,
            k,
            self.one.ctypes.data,
            b.data.ptr,
            f16,
            k,
            a.data.ptr,
            f16,
            k,
            self.zero.ctypes.data,
            d.data.ptr,
            f16,
            n,
            c.CUBLAS_COMPUTE_32F,
            c.CUBLAS_GEMM_DEFAULT_TENSOR_OP,
        )


class Config:
    def __init__(self, src: str, bn: int, cluster: int):
        self.bn, self.cluster = bn, cluster
        t0 = time.perf_counter()
        opts = ("-std=c++17", "-arch=sm_90a", f"-DGEMM_BN={bn}", f"-DGEMM_CLUSTER={cluster}", *include_dirs())
        self.mod = cp.RawModule(code=src, options=opts)
        self.fn = self.mod.get_function("gemm7Shapes")
        self.fn.max_dynamic_shared_size_bytes = 231424
        self.compile_s = time.perf_counter() - t0

    def name(self) -> str:
        return f"128x{self.bn} c{self.cluster}"


class Problem:
    def __init__(self, m: int, n: int, k: int, seed: int, cublas: Cublas):
        self.m, self.n, self.k = m, n, k
        per_set = 2 * (m * k + n * k + m * n)
        self.sets = max(2, min(64, math.ceil(l2_rotate() / per_set)))
        rng = cp.random.default_rng(seed)
        self.a = [rng.standard_normal((m, k), dtype=cp.float32).astype(cp.float16) for _ in range(self.sets)]
        self.b = [rng.standard_normal((n, k), dtype=cp.float32).astype(cp.float16) for _ in range(self.sets)]
        self.d = [cp.empty((m, n), dtype=cp.float16) for _ in range(self.sets)]
        self.ref = cp.empty((m, n), dtype=cp.float16)
        self.cublas = cublas
        self.cublas(self.a[0], self.b[0], self.ref)
        rows = sorted({*(int(r) for r in np.linspace(0, m - 1, 16).astype(int)), m - 1})
        self.rows = cp.asarray(rows)
        self.ref64 = self.a[0][self.rows].astype(cp.float64) @ self.b[0].astype(cp.float64).T
        self.flops = 2.0 * m * n * k
        self.maps: dict = {}

    def args(self, cfg: Config, split: int, j: int, ws, counters):
        key = (cfg.bn, cfg.cluster, j)
        if key not in self.maps:
            self.maps[key] = (
                encode(self.a[j].data.ptr, self.m, self.k, 64, 128),
                encode(self.b[j].data.ptr, self.n, self.k, 64, cfg.bn // cfg.cluster),
                encode(self.d[j].data.ptr, self.m, self.n, 64, 64),
            )
        ma, mb, md = self.maps[key]
        return (
            ma,
            mb,
            md,
            np.int32(self.m),
            np.int32(self.n),
            np.int32(self.k),
            np.int32(split),
            ws,
            counters,
        )


def launcher(p: Problem, cfg: Config, split: int, sms: int):
    tiles_n = math.ceil(p.n / cfg.bn)
    ctm = math.ceil(math.ceil(p.m / 128) / cfg.cluster)
    units = ctm * tiles_n * split
    slots = sms // cfg.cluster
    grid = (min(units, slots) * cfg.cluster,)
    cta_tiles = ctm * cfg.cluster * tiles_n
    if split > 1:
        ws = cp.empty(cta_tiles * split * 128 * cfg.bn, dtype=cp.float32)
        counters = cp.zeros(cta_tiles * 2, dtype=cp.uint32)
    else:
        ws = cp.empty(1, dtype=cp.float32)
        counters = cp.zeros(1, dtype=cp.uint32)

    def run(j: int) -> None:
        cfg.fn(grid, (384,), p.args(cfg, split, j, ws, counters), shared_mem=231424)

    run.keep = (ws, counters)  # type: ignore[attr-defined]
    return run


def check(p: Problem, j: int = 0) -> tuple[bool, str]:
    got = p.d[j]
    nan = int(cp.isnan(got).sum())
    g32, r32 = got.astype(cp.float32), p.ref.astype(cp.float32)
    scale = math.sqrt(p.k)  # N(0,1) inputs: results are of size sqrt(K)
    rel = float(cp.max(cp.abs(g32 - r32) / cp.maximum(cp.abs(r32), scale)))
    g64 = got[p.rows].astype(cp.float64)
    rel64 = float(cp.max(cp.abs(g64 - p.ref64) / cp.maximum(cp.abs(p.ref64), scale)))
    ok = nan == 0 and rel <= 1e-2 and rel64 <= 1e-2
    msg = f"nan={nan} rel_vs_cublas={rel:.1e} rel_f64={rel64:.1e}"
    if not ok:
        bad = cp.argwhere(~(cp.abs(g32 - r32) / cp.maximum(cp.abs(r32), scale) <= 1e-2))
        if bad.shape[0]:
            mm, nn = (int(x) for x in bad[0])
            msg += f" first wrong D[{mm}][{nn}] got {float(g32[mm, nn])} cuBLAS {float(r32[mm, nn])}"
    return ok, msg


def graph_of(fn, sets: int, batch: int, stream):
    with stream:
        stream.begin_capture()
        for i in range(batch):
            fn(i % sets)
        return stream.end_capture()


def time_pair(p: Problem, run_k, stream, batch: int) -> tuple[float, float, str]:
    """Median ms per launch of kernel and cuBLAS, graph batches interleaved."""

    def cub(j: int) -> None:
        p.cublas(p.a[j], p.b[j], p.d[j])

    mode = "graph"
    try:
        gk = graph_of(run_k, p.sets, batch, stream)
        gc = graph_of(cub, p.sets, batch, stream)
        launch_k, launch_c = (lambda: gk.launch(stream)), (lambda: gc.launch(stream))
    except Exception as e:  # fall back to direct launches, and say so
        mode = f"direct ({type(e).__name__}: {str(e)[:60]})"
        try:
            stream.end_capture()
        except Exception:
            pass

        def launch_k():
            with stream:
                for i in range(batch):
                    run_k(i % p.sets)

        def launch_c():
            with stream:
                for i in range(batch):
                    cub(i % p.sets)

    ev = [cp.cuda.Event() for _ in range(3)]
    for _ in range(3):
        launch_k()
        launch_c()
    tk, tc = [], []
    for _ in range(REPS):
        ev[0].record(stream)
        launch_k()
        ev[1].record(stream)
        launch_c()
        ev[2].record(stream)
        ev[2].synchronize()
        tk.append(cp.cuda.get_elapsed_time(ev[0], ev[1]) / batch)
        tc.append(cp.cuda.get_elapsed_time(ev[1], ev[2]) / batch)
    return statistics.median(tk), statistics.median(tc), mode


def main() -> int:
    src = Path(sys.argv[1]).read_text()
    quick = "--quick" in sys.argv
    top = next((int(a[6:]) for a in sys.argv if a.startswith("--top=")), 1)
    only = [tuple(int(x) for x in a.split(",")) for a in sys.argv[2:] if a.count(",") == 2]
    dev = cp.cuda.Device()
    sms = int(dev.attributes["MultiProcessorCount"])
    print(f"SMs {sms}, CuPy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}", flush=True)
    configs = {}
    for bn, cl in chooser86.CONFIGS:
        cfg = Config(src, bn, cl)
        configs[(bn, cl)] = cfg
        print(f"compiled {cfg.name()} with NVRTC in {cfg.compile_s:.1f}s", flush=True)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        return run_all(configs, stream, sms, quick, only, top)


def run_all(configs, stream, sms: int, quick: bool, only, top: int) -> int:
    cublas = Cublas(stream)
    print(cublas.note, flush=True)
    shapes = only or [*chooser86.TABLE, *RAGGED]
    summary = []
    failed = False
    for si, (m, n, k) in enumerate(shapes):
        p = Problem(m, n, k, 1000 + si, cublas)
        pick = chooser86.choose(m, n, k, sms)
        ranked = chooser86.candidates(m, n, k, sms)
        if quick:
            todo = ranked[:top]
        else:
            todo = [c for c in ranked if c.split in SPLITS]
            if pick not in todo:
                todo.insert(0, pick)
        # batch so that one graph runs >= ~200 us
        t_est = pick.est_us
        batch = max(1, min(64, int(200 / max(t_est, 1.0))))
        results = []
        for c in todo:
            cfg = configs[(c.bn, c.cluster)]
            run_k = launcher(p, cfg, c.split, sms)
            p.d[0].fill(cp.nan)
            run_k(0)
            run_k(0)  # twice: the split-K counters must be back at zero
            stream.synchronize()
            ok, msg = check(p)
            if not ok:
                failed = True
                print(f"{m}x{n}x{k} {cfg.name()} split {c.split}: WRONG {msg}", flush=True)
                continue
            tk, tc, mode = time_pair(p, run_k, stream, batch)
            results.append((c, tk, tc))
            tag = "PICK" if c == pick else "    "
            print(
                f"{tag} {m:6d}x{n:6d}x{k:6d} {cfg.name()} split {c.split}: {msg} | kernel {tk * 1e3:9.1f} us "
                f"{p.flops / tk / 1e9:6.1f} TF | cuBLAS {tc * 1e3:9.1f} us {p.flops / tc / 1e9:6.1f} TF | "
                f"ratio {tc / tk:5.3f} | model {c.est_us:8.1f} us | {mode} x{batch}",
                flush=True,
            )
        picked = [r for r in results if r[0] == pick]
        best = max(results, key=lambda r: r[2] / r[1]) if results else None
        cub_all = statistics.median([r[2] for r in results]) if results else float("nan")
        if picked:
            c, tk, tc = picked[0]
            line = (
                f"{m:6d} x {n:6d} x {k:6d} | pick {c.config} split {c.split} | kernel {p.flops / tk / 1e9:6.1f} "
                f"TF | cuBLAS {p.flops / cub_all / 1e9:6.1f} TF | ratio {tc / tk:5.3f}"
            )
            if best is not None and best[0] != pick:
                line += f" | best measured {best[0].config} split {best[0].split} {best[2] / best[1]:5.3f}"
        else:
            line = f"{m:6d} x {n:6d} x {k:6d} | pick {pick.config} split {pick.split} | NOT MEASURED (wrong result)"
        summary.append((m, n, k, line, picked[0][2] / picked[0][1] if picked else 0.0))
        del p
        cp.get_default_memory_pool().free_all_blocks()
    print(f"\nSUMMARY (ratio = cuBLAS time / kernel time, same batches; median of {REPS} graph batches):")
    for *_, line, _r in summary:
        print(line)
    table = [r for (m, n, k, _l, r) in summary if (m, n, k) in chooser86.TABLE]
    if table and all(r > 0 for r in table):
        gm = math.exp(sum(math.log(r) for r in table) / len(table))
        print(f"geometric mean over the {len(table)} table shapes: {gm:.3f}; min {min(table):.3f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
