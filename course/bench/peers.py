"""The library peers a kernel is timed beside, in the same process.

- ``Cublas``: D = A B through ``cublasGemmEx`` (the call CuPy's own matmul
  makes), FP16 inputs, FP32 accumulation, FP32 or FP16 output, B stored
  K x N (row-major) or N x K (K contiguous: the layout wgmma reads
  without a transpose).
- ``CublasLt``: the same product through cuBLASLt, called through
  nvmath-python's ``nvmath.linalg.advanced.Matmul`` (NVIDIA's Python math
  library): planned once per problem with cuBLASLt's heuristic, and
  optionally autotuned (every algorithm the plan returned timed, the
  fastest first). What a user who wants the fastest library call would
  pick. nvmath-python is optional: ``cublaslt_problem`` says why it cannot
  run here, and a peer that cannot run is reported, not timed.
- ``device_copy``: ``cudaMemcpyAsync`` device to device, the yardstick of
  anything that reads once and writes once.
"""

from __future__ import annotations

from typing import Any, Literal

from ..errors import EnvironmentProblem


class Cublas:
    """D = A B (row-major, FP16 in, FP32 accumulate) through cublasGemmEx.

    cuBLAS is column-major: a row-major M x N matrix is its N x M transpose,
    so D = A B is computed as D^T = B^T A^T, passing B first. With B stored
    N x K (``b_layout="nk"``) its column-major view is already B^T's
    transpose, so the first operand takes CUBLAS_OP_T: cuBLAS's "TN" case.
    These are the arguments CuPy's own matmul passes
    (cupy/_core/_routines_linalg.pyx, tensordot_core_v11) with the output
    type and the layout made explicit.
    """

    def __init__(self, out: Literal["float32", "float16"] = "float32", b_layout: Literal["kn", "nk"] = "kn"):
        # heavy: cupy, when a GPU path runs; heavy: numpy, when the arrays are made
        import cupy as cp
        import numpy as np

        try:
            cublas = cp.cuda.cublas  # CuPy loads cupy_backends.cuda.libs.cublas on first access
        except (ImportError, AttributeError) as e:
            raise EnvironmentProblem(
                f"cuBLAS could not be loaded through CuPy ({e}); the peer needs it"
            ) from None
        self.cublas = cublas
        self.stream = cp.cuda.get_current_stream
        self.handle = cp.cuda.device.get_cublas_handle()
        self.one = np.array(1.0, dtype=np.float32)  # host scalars (pointer mode host), kept alive here
        self.zero = np.array(0.0, dtype=np.float32)
        rt = cp.cuda.runtime
        self.f16 = rt.CUDA_R_16F
        self.out_type = rt.CUDA_R_32F if out == "float32" else rt.CUDA_R_16F
        self.b_layout = b_layout
        self.name = cublas_name(out, b_layout)

    def __call__(self, a: Any, b: Any, d: Any) -> None:
        c = self.cublas
        m, k = a.shape
        n = d.shape[1]
        op_b, ld_b = (c.CUBLAS_OP_N, n) if self.b_layout == "kn" else (c.CUBLAS_OP_T, k)
        args = (
            self.handle,
            op_b,
            c.CUBLAS_OP_N,
            n,
            m,
            k,
            self.one.ctypes.data,
            b.data.ptr,
            self.f16,
            ld_b,
            a.data.ptr,
            self.f16,
            k,
            self.zero.ctypes.data,
            d.data.ptr,
            self.out_type,
            n,
            c.CUBLAS_COMPUTE_32F,
            c.CUBLAS_GEMM_DEFAULT_TENSOR_OP,
        )
        try:
            c.gemmEx(*args)  # CuPy's wrapper puts the handle on CuPy's current stream first
        except NotImplementedError:
            # CuPy refuses any cuBLAS call while the stream captures a CUDA graph (its setStream
            # raises "calling cuBLAS API during stream capture is currently unsupported");
            # cuBLAS itself can be captured (cuBLAS guide, "CUDA Graphs Support"), so the timer's
            # capture (``course.bench.timing``) calls the same library directly.
            _captured_gemm_ex(self.stream().ptr, args)


_CUBLAS: Any = None


def _captured_gemm_ex(stream: int, args: tuple[Any, ...]) -> None:
    """cublasSetStream_v2 and cublasGemmEx called through ctypes in the libcublas CuPy loaded (the
    same library, so CuPy's handle is valid there), for a stream that is capturing."""
    global _CUBLAS
    # heavy: ctypes, only when a capture needs it
    import ctypes

    if _CUBLAS is None:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "/libcublas.so" in line}
        if len(paths) != 1:
            raise EnvironmentProblem(f"cannot tell which libcublas CuPy loaded (mapped: {sorted(paths)})")
        lib = ctypes.CDLL(paths.pop())
        p, i = ctypes.c_void_p, ctypes.c_int
        lib.cublasSetStream_v2.argtypes = [p, p]
        lib.cublasGemmEx.argtypes = [p, i, i, i, i, i, p, p, i, i, p, i, i, p, p, i, i, i, i]
        _CUBLAS = lib
    status = _CUBLAS.cublasSetStream_v2(args[0], stream) or _CUBLAS.cublasGemmEx(*args)
    if status:
        raise RuntimeError(f"cublasGemmEx in a stream capture: cuBLAS status {status}")


def cublas_name(out: str = "float32", b_layout: str = "kn") -> str:
    """How tables and recordings name ``Cublas(out, b_layout)``."""
    return "cuBLAS gemmEx" + (
        "" if out == "float32" and b_layout == "kn" else f" ({b_layout.upper()}, {out} out)"
    )


def cublaslt_name(autotune: bool) -> str:
    """How tables and recordings name the cuBLASLt peer with one plan or the other."""
    return f"cuBLASLt {'autotuned' if autotune else 'heuristic'} (nvmath-python)"


class CublasLt:
    """D = A B^T (row-major, FP16 in, FP32 accumulate, FP16 out) through cuBLASLt, via nvmath-python.

    B is stored N x K, so the product is ``a @ b.T``: nvmath reads the transposed view's strides
    and hands cuBLASLt the matching layout (its "TN" case, as ``Cublas(b_layout="nk")``). D is
    operand C of an in-place product (``MatmulOptions.inplace``, beta 0): the result is written
    into the caller's buffer, as the other peers write theirs. One plan per problem: the first
    call plans (``Matmul.plan``: cuBLASLt's heuristic, its algorithms best first) and, with
    ``autotune``, times every algorithm of the plan (``Matmul.autotune``) and puts the fastest
    first; each later call of the same problem only points the plan at that call's buffers
    (``reset_operands_unchecked``, no checks: the problem is the same) and executes it on
    CuPy's current stream. The compute type is nvmath's default for FP16 operands,
    ``COMPUTE_32F`` (``nvmath.linalg._internal.typemaps``): FP32 accumulation, as gemmEx's.
    """

    def __init__(self, autotune: bool = False):
        try:
            # heavy: nvmath, only where the peer is timed (an optional package)
            from nvmath.linalg.advanced import Matmul
        except ImportError as e:
            raise EnvironmentProblem(
                f"nvmath-python is not installed ({e}); pip install nvmath-python"
            ) from None
        self.matmul = Matmul
        self.autotune = autotune
        self.name = cublaslt_name(autotune)
        self.plan: Any = None
        self.problem: tuple[Any, ...] | None = None

    def __call__(self, a: Any, b: Any, d: Any) -> None:
        problem = (a.shape, b.shape, d.shape, a.strides, b.strides, d.strides, a.dtype, d.dtype)
        if problem != self.problem:
            self.release()
            plan = self.matmul(a, b.T, c=d, beta=0.0, options={"inplace": True})
            plan.plan()
            if self.autotune:
                plan.autotune(iterations=10)
            self.plan, self.problem = plan, problem
        else:
            self.plan.reset_operands_unchecked(a=a, b=b.T, c=d)
        self.plan.execute()

    def release(self) -> None:
        """Free the plan (its cuBLASLt handle, workspace and references to the last buffers)."""
        if self.plan is not None:
            self.plan.free()
        self.plan, self.problem = None, None


def cublaslt_problem() -> str:
    """Why cuBLASLt through nvmath-python cannot run here ('' when it can): nvmath-python missing,
    or a 64 x 64 FP16 product that it cannot plan or run (cuBLASLt not found, a driver too old)."""
    try:
        peer = CublasLt()
    except EnvironmentProblem as e:
        return str(e)
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    try:
        a = cp.ones((64, 64), dtype=cp.float16)
        d = cp.empty((64, 64), dtype=cp.float16)
        peer(a, a, d)
        cp.cuda.get_current_stream().synchronize()
        if float(d[0, 0]) != 64.0:
            return f"nvmath-python's cuBLASLt product of two 64 x 64 matrices of ones gave {float(d[0, 0])}, not 64"
    except Exception as e:  # any failure to load or run cuBLASLt: the reason, said once
        return f"nvmath-python could not run cuBLASLt here ({type(e).__name__}: {e})"
    finally:
        peer.release()
    return ""


def device_copy(dst: Any, src: Any) -> None:
    """``cudaMemcpyAsync`` device to device of ``src``'s bytes, on the current stream."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    rt = cp.cuda.runtime
    rt.memcpyAsync(
        dst.data.ptr, src.data.ptr, src.nbytes, rt.memcpyDeviceToDevice, cp.cuda.get_current_stream().ptr
    )
