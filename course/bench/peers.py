"""The library peers a kernel is timed beside, in the same process.

- ``Cublas``: D = A B through ``cublasGemmEx`` (the call CuPy's own matmul
  makes), FP16 inputs, FP32 accumulation, FP32 or FP16 output, B stored
  K x N (row-major) or N x K (K contiguous: the layout wgmma reads
  without a transpose).
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
        self.handle = cp.cuda.device.get_cublas_handle()
        self.one = np.array(1.0, dtype=np.float32)  # host scalars (pointer mode host), kept alive here
        self.zero = np.array(0.0, dtype=np.float32)
        rt = cp.cuda.runtime
        self.f16 = rt.CUDA_R_16F
        self.out_type = rt.CUDA_R_32F if out == "float32" else rt.CUDA_R_16F
        self.b_layout = b_layout
        self.name = "cuBLAS gemmEx" + (
            "" if out == "float32" and b_layout == "kn" else f" ({b_layout.upper()}, {out} out)"
        )

    def __call__(self, a: Any, b: Any, d: Any) -> None:
        c = self.cublas
        m, k = a.shape
        n = d.shape[1]
        op_b, ld_b = (c.CUBLAS_OP_N, n) if self.b_layout == "kn" else (c.CUBLAS_OP_T, k)
        c.gemmEx(
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


def device_copy(dst: Any, src: Any) -> None:
    """``cudaMemcpyAsync`` device to device of ``src``'s bytes, on the current stream."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    rt = cp.cuda.runtime
    rt.memcpyAsync(
        dst.data.ptr, src.data.ptr, src.nbytes, rt.memcpyDeviceToDevice, cp.cuda.get_current_stream().ptr
    )
