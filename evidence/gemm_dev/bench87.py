"""Dev check, timing and accuracy of kernels/gemm8_fp8.cu on the GPU, against cuBLASLt FP8.

Usage (on the H200, from the staged folder, stage87.sh): python3 bench87.py gemm8_fp8.cu [--quick]

- quantiser: course.hopper.fp8's e4m3 rounding compared bit for bit with ml_dtypes (when the
  image has it) on random values, the saturation and the subnormals included;
- check: every build, N(0, 1) inputs quantised per tensor (amax -> scale, saturation at 448),
  D compared with float64 of the dequantised inputs on sample rows (the first wrong element
  named) and with cuBLASLt;
- time: at 4096 and 8192, every build (and the promoting build at several intervals P), cuBLASLt
  FP8 through nvmath's low-level bindings on the same CuPy buffers (fast accumulation off, as
  cuBLASLt's default, and on), and torch._scaled_mm where PyTorch is present; all interleaved
  batch by batch, inputs rotated over two sets (more than L2), median of REPS batches;
- accuracy: relative error (Frobenius norm of D - R over that of R, R the float64 product of
  the dequantised inputs) against K = 256 .. 16384 at M = N = 1024, for N(0, 1) and U(0, 1)
  inputs, never promoting, promoting every P K-tiles of 128, and cuBLASLt both ways.

Prints lines as it goes and writes every number to $OUT/bench87.json. Dev numbers for choosing
and checking, not the course's benchmark.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

import cupy as cp
import numpy as np
from cuda.bindings import driver

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the staged course package (course.hopper.fp8, course.bench.lt_fp8)
from course.bench.lt_fp8 import LtFp8, device_scales  # noqa: E402
from course.hopper import fp8  # noqa: E402

REPS = 20
SMEM = 231424
MAP_DTYPE = np.dtype([("o", "<u8", (16,))], align=True)
OUT = Path(os.environ.get("OUT", "/tmp"))
RESULT: dict = {"lines": []}


def say(msg: str) -> None:
    print(msg, flush=True)
    RESULT["lines"].append(msg)


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


def encode(ptr: int, rows: int, cols: int, elem: int, box_cols: int, box_rows: int) -> np.void:
    u64, u32 = driver.cuuint64_t, driver.cuuint32_t
    dt = driver.CUtensorMapDataType
    err, m = driver.cuTensorMapEncodeTiled(
        dt.CU_TENSOR_MAP_DATA_TYPE_UINT8 if elem == 1 else dt.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        2,
        ptr,
        [u64(cols), u64(rows)],
        [u64(cols * elem)],
        [u32(box_cols), u32(box_rows)],
        [u32(1), u32(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    assert err == driver.CUresult.CUDA_SUCCESS, err
    words = np.array([int(w) for w in m.opaque], dtype="<u8")
    return np.array([(words,)], dtype=MAP_DTYPE)[0]


class Build:
    def __init__(self, src: str, bn: int, cluster: int, promote: int):
        self.bn, self.cluster, self.promote = bn, cluster, promote
        t0 = time.perf_counter()
        opts = (
            "-std=c++17",
            "-arch=sm_90a",
            f"-DGEMM_BN={bn}",
            f"-DGEMM_CLUSTER={cluster}",
            f"-DGEMM_PROMOTE={promote}",
            *include_dirs(),
        )
        self.fn = cp.RawModule(code=src, options=opts).get_function("gemm8Fp8")
        self.fn.max_dynamic_shared_size_bytes = SMEM
        self.compile_s = time.perf_counter() - t0

    def name(self) -> str:
        return f"128x{self.bn} c{self.cluster}" + (" promote-build" if self.promote else "")


class Operands:
    """``sets`` quantised copies of A (M x K) and B (N x K), D buffers, and the float64 reference
    of the dequantised inputs on sample rows (set 0)."""

    def __init__(self, m: int, n: int, k: int, sets: int, seed: int, dist: str = "normal", rows: int = 64):
        self.m, self.n, self.k, self.sets = m, n, k, sets
        rng = cp.random.default_rng(seed)
        self.qa, self.qb = [], []
        for _ in range(sets):
            if dist == "normal":
                a = rng.standard_normal((m, k), dtype=cp.float32)
                b = rng.standard_normal((n, k), dtype=cp.float32)
            else:
                a = rng.random((m, k), dtype=cp.float32)
                b = rng.random((n, k), dtype=cp.float32)
            self.qa.append(fp8.quantize(a, cp))
            self.qb.append(fp8.quantize(b, cp))
            del a, b
        self.d = [cp.empty((m, n), dtype=cp.float16) for _ in range(sets)]
        self.scale = [float(np.float32(self.qa[j].scale) * np.float32(self.qb[j].scale)) for j in range(sets)]
        r = sorted({*(int(x) for x in np.linspace(0, m - 1, min(rows, m)).astype(int)), m - 1})
        self.rows = cp.asarray(r)
        da = fp8.decode(self.qa[0].bits[self.rows], cp) * self.qa[0].scale
        db = fp8.decode(self.qb[0].bits, cp) * self.qb[0].scale
        self.ref = da @ db.T  # float64 (M_rows x N)
        del da, db
        self.maps: dict = {}

    def args(self, b: Build, j: int, every: int) -> tuple:
        key = (b.bn, b.cluster, j)
        if key not in self.maps:
            self.maps[key] = (
                encode(self.qa[j].bits.data.ptr, self.m, self.k, 1, 128, 128),
                encode(self.qb[j].bits.data.ptr, self.n, self.k, 1, 128, b.bn // b.cluster),
                encode(self.d[j].data.ptr, self.m, self.n, 2, 64, 64),
            )
        ma, mb, md = self.maps[key]
        return (
            ma,
            mb,
            md,
            np.int32(self.m),
            np.int32(self.n),
            np.int32(self.k),
            np.float32(self.scale[j]),
            np.int32(every),
        )


def launcher(ops: Operands, b: Build, every: int, sms: int):
    units = math.ceil(math.ceil(ops.m / 128) / b.cluster) * math.ceil(ops.n / b.bn)
    grid = (min(units, sms // b.cluster) * b.cluster,)

    def run(j: int) -> None:
        b.fn(grid, (384,), ops.args(b, j, every), shared_mem=SMEM)

    return run


def nvmath_torch_launcher(ops: Operands):
    """cuBLASLt through nvmath's high-level Matmul on torch float8 tensors (a cross-check of the
    low-level path; its result is copied into D only when ``run.copy`` is set, for the check)."""
    import nvmath
    import torch
    from nvmath.linalg.advanced import Matmul, MatmulQuantizationScales

    plans = []
    for j in range(ops.sets):
        a = torch.from_dlpack(ops.qa[j].bits).view(torch.float8_e4m3fn)
        b = torch.from_dlpack(ops.qb[j].bits).view(torch.float8_e4m3fn)
        mm = Matmul(
            a,
            b.T,
            quantization_scales=MatmulQuantizationScales(a=ops.qa[j].scale, b=ops.qb[j].scale),
            options={"result_type": nvmath.CudaDataType.CUDA_R_16F},
        )
        mm.plan()
        plans.append(mm)
    stream = torch.cuda.ExternalStream(cp.cuda.get_current_stream().ptr)
    td = [torch.from_dlpack(d) for d in ops.d]

    def run(j: int) -> None:
        out = plans[j].execute(stream=stream)
        if run.copy:  # type: ignore[attr-defined]
            with torch.cuda.stream(stream):
                td[j].copy_(out)

    run.copy = True  # type: ignore[attr-defined]
    run.keep = plans  # type: ignore[attr-defined]
    return run


def lt_launcher(ops: Operands, plan: LtFp8):
    scales = [device_scales(ops.qa[j].scale, ops.qb[j].scale) for j in range(ops.sets)]

    def run(j: int) -> None:
        plan(ops.qa[j].bits, ops.qb[j].bits, ops.d[j], scales[j])

    return run


def torch_launcher(ops: Operands):
    import torch

    ta = [torch.from_dlpack(q.bits).view(torch.float8_e4m3fn) for q in ops.qa]
    tb = [torch.from_dlpack(q.bits).view(torch.float8_e4m3fn) for q in ops.qb]
    sa = [torch.tensor(q.scale, dtype=torch.float32, device="cuda") for q in ops.qa]
    sb = [torch.tensor(q.scale, dtype=torch.float32, device="cuda") for q in ops.qb]
    td = [torch.from_dlpack(d) for d in ops.d]
    stream = torch.cuda.ExternalStream(cp.cuda.get_current_stream().ptr)

    def run(j: int) -> None:
        with torch.cuda.stream(stream):
            try:
                torch._scaled_mm(
                    ta[j], tb[j].t(), scale_a=sa[j], scale_b=sb[j], out_dtype=torch.float16, out=td[j]
                )
            except TypeError:  # no out= in this version: copy (the copy is timed too; said in the log)
                td[j].copy_(
                    torch._scaled_mm(ta[j], tb[j].t(), scale_a=sa[j], scale_b=sb[j], out_dtype=torch.float16)
                )

    return run


def errors(ops: Operands, j: int = 0) -> dict:
    """D (set j = 0) against float64 of the dequantised inputs on the sample rows."""
    got = ops.d[j][ops.rows].astype(cp.float64)
    ref = ops.ref
    nan = int(cp.isnan(ops.d[j]).sum())
    diff = got - ref
    rms = float(cp.sqrt(cp.mean(ref * ref)))
    rel = cp.abs(diff) / cp.maximum(cp.abs(ref), rms)
    out = {
        "nan": nan,
        "normwise": float(cp.linalg.norm(diff) / cp.linalg.norm(ref)),
        "max_rel_floor_rms": float(rel.max()),
        "fp16_floor": float(
            cp.linalg.norm(ref.astype(cp.float16).astype(cp.float64) - ref) / cp.linalg.norm(ref)
        ),
    }
    bad = cp.argwhere(~(rel <= 5e-2))  # the course's BENCH_TOLERANCE
    if bad.shape[0]:
        r, c = (int(x) for x in bad[0])
        row = int(ops.rows[r])
        out["first_wrong"] = f"D[{row}][{c}] got {float(got[r, c])} ref {float(ref[r, c])}"
    return out


def time_all(ops: Operands, runs: dict, batch: int) -> dict:
    ev = {name: (cp.cuda.Event(), cp.cuda.Event()) for name in runs}
    for _ in range(2):  # warm-up
        for fn in runs.values():
            for i in range(batch):
                fn(i % ops.sets)
    cp.cuda.get_current_stream().synchronize()
    samples: dict = {name: [] for name in runs}
    for _ in range(REPS):
        for name, fn in runs.items():
            e0, e1 = ev[name]
            e0.record()
            for i in range(batch):
                fn(i % ops.sets)
            e1.record()
        cp.cuda.get_current_stream().synchronize()
        for name in runs:
            e0, e1 = ev[name]
            samples[name].append(cp.cuda.get_elapsed_time(e0, e1) / batch)
    return samples


def quantiser_check() -> None:
    try:
        import ml_dtypes
    except ImportError:
        say("quantiser: ml_dtypes not importable here; not compared")
        return
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(1 << 20) * np.exp2(rng.integers(-14, 12, 1 << 20))).astype(np.float32)
    x[:4] = [500.0, -1e6, 2.0**-10, -(2.0**-10) * 1.5]
    mine = fp8.e4m3_bits(x)
    theirs = np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    same = int((mine == theirs).sum())
    say(f"quantiser: course.hopper.fp8 vs ml_dtypes {ml_dtypes.__version__}: {same} of {x.size} bytes equal")
    gpu = cp.asnumpy(fp8.e4m3_bits(cp.asarray(x), cp))
    say(f"quantiser: the same on the GPU (CuPy): {int((gpu == mine).sum())} of {x.size} equal")
    RESULT["quantiser"] = {"equal": same, "total": int(x.size)}


def speed(builds: dict, sms: int, sizes: tuple[int, ...], have_torch: bool) -> None:
    for n in sizes:
        ops = Operands(n, n, n, 2, 100 + n)
        runs: dict = {}
        for b in builds.values():
            for every in (0, 1, 2, 4) if b.promote else (0,):
                runs[f"gemm8 {b.name()} P={every}"] = launcher(ops, b, every, sms)
        plans = [LtFp8(n, n, n), LtFp8(n, n, n, fast_accum=True)]
        for p in plans:
            runs[p.name] = lt_launcher(ops, p)
        if have_torch:
            for name, make in (
                ("torch._scaled_mm", torch_launcher),
                ("nvmath Matmul (torch fp8)", nvmath_torch_launcher),
            ):
                try:
                    runs[name] = make(ops)
                except Exception as e:
                    say(f"{name} unavailable: {type(e).__name__}: {e}")
        checked: dict = {}
        for name, fn in list(runs.items()):
            ops.d[0].fill(cp.nan)
            try:
                fn(0)
                cp.cuda.get_current_stream().synchronize()
            except Exception as e:
                say(f"N={n} {name}: FAILED {type(e).__name__}: {e}")
                runs.pop(name)
                continue
            if hasattr(fn, "copy"):
                fn.copy = False  # timed without the copy
            err = errors(ops)
            checked[name] = err
            ok = err["nan"] == 0 and "first_wrong" not in err
            say(f"N={n} check {name}: {'OK' if ok else 'WRONG'} {json.dumps(err)}")
            if not ok:
                runs.pop(name)
        flops = 2.0 * n**3
        batch = max(4, int(5.0 / (flops / 1.2e15 * 1e3)))  # about 5 ms a batch
        samples = time_all(ops, runs, batch)
        lt = statistics.median(samples["cuBLASLt FP8"]) if "cuBLASLt FP8" in samples else None
        rows = {}
        for name, ms in samples.items():
            med = statistics.median(ms)
            tf = flops / (med * 1e-3) / 1e12
            ratios = [ref / mine for mine, ref in zip(ms, samples.get("cuBLASLt FP8", ms), strict=True)]
            rows[name] = {
                "median_ms": med,
                "tflops": tf,
                "vs_lt": (lt / med) if lt else None,
                "vs_lt_min": min(ratios),
                "vs_lt_max": max(ratios),
                "samples_ms": ms,
                "check": checked.get(name),
            }
            say(
                f"N={n} time {name:40s} {med * 1e3:9.1f} us {tf:7.1f} TFLOP/s  "
                f"vs cuBLASLt {rows[name]['vs_lt'] or float('nan'):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
            )
        RESULT.setdefault("speed", {})[str(n)] = {"batch": batch, "reps": REPS, "rows": rows}
        for p in plans:
            p.close()
        del ops, runs
        cp.get_default_memory_pool().free_all_blocks()


def accuracy(builds: dict, sms: int, ks: tuple[int, ...]) -> None:
    base = builds[(256, 2, 0)]
    prom = builds[(128, 2, 1)]
    m = n = 1024
    for dist in ("normal", "uniform"):
        for k in ks:
            ops = Operands(m, n, k, 1, 5000 + k, dist, rows=1024)
            runs = {
                "P=0 (128x256)": launcher(ops, base, 0, sms),
                "promote-build P=0": launcher(ops, prom, 0, sms),
                "P=1": launcher(ops, prom, 1, sms),
                "P=4": launcher(ops, prom, 4, sms),
                "P=16": launcher(ops, prom, 16, sms),
            }
            plans = [LtFp8(m, n, k), LtFp8(m, n, k, fast_accum=True)]
            for p in plans:
                runs[p.name] = lt_launcher(ops, p)
            row = {}
            for name, fn in runs.items():
                ops.d[0].fill(cp.nan)
                try:
                    fn(0)
                    cp.cuda.get_current_stream().synchronize()
                except Exception as e:
                    say(f"accuracy K={k} {name}: FAILED {type(e).__name__}: {e}")
                    continue
                row[name] = errors(ops)
            for p in plans:
                p.close()
            RESULT.setdefault("accuracy", {}).setdefault(dist, {})[str(k)] = row
            say(
                f"accuracy {dist:7s} K={k:6d}: "
                + ", ".join(f"{name} {e['normwise']:.2e}" for name, e in row.items())
                + f"; fp16 rounding alone {row['P=1']['fp16_floor']:.2e}"
            )
            del ops
            cp.get_default_memory_pool().free_all_blocks()


def main() -> int:
    src = Path(sys.argv[1]).read_text()
    quick = "--quick" in sys.argv
    skip_accuracy = "--no-accuracy" in sys.argv
    dev = cp.cuda.Device()
    sms = int(dev.attributes["MultiProcessorCount"])
    props = cp.cuda.runtime.getDeviceProperties(0)
    say(
        f"{str(props['name'], 'utf-8')} SMs {sms}, CuPy {cp.__version__}, CUDA runtime "
        f"{cp.cuda.runtime.runtimeGetVersion()}, driver {cp.cuda.runtime.driverGetVersion()}"
    )
    try:
        import nvmath

        say(f"nvmath-python {nvmath.__version__}")
    except Exception as e:
        say(f"nvmath-python: {e}")
    have_torch = False
    try:
        import torch

        have_torch = True
        say(f"torch {torch.__version__}")
    except ImportError:
        say("torch: not installed")
    status = 0
    for step in (quantiser_check,):
        try:
            step()
        except Exception:
            say(traceback.format_exc())
    builds = {}
    for bn, cl, pr in ((256, 2, 0), (256, 1, 0), (128, 2, 0), (128, 2, 1)):
        b = Build(src, bn, cl, pr)
        builds[(bn, cl, pr)] = b
        say(f"compiled {b.name()} with NVRTC in {b.compile_s:.1f}s")
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        ks = (256, 1024, 4096, 16384) if quick else (256, 512, 1024, 2048, 4096, 8192, 16384)
        steps: list = [("speed", speed, (builds, sms, (4096,) if quick else (4096, 8192), have_torch))]
        if not skip_accuracy:
            steps.append(("accuracy", accuracy, (builds, sms, ks)))
        for name, fn, args in steps:
            t0 = time.perf_counter()
            try:
                fn(*args)
            except Exception:
                status = 1
                say(f"{name} FAILED:\n{traceback.format_exc()}")
            say(f"{name}: {time.perf_counter() - t0:.1f}s")
            (OUT / "bench87.json").write_text(json.dumps(RESULT, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
