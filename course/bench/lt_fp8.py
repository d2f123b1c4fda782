"""cuBLASLt's FP8 matmul as a peer, through nvmath-python's low-level bindings, on CuPy buffers.

D = scale_a * scale_b * (A B^T): A (M x K) and B (N x K) hold e4m3 bits in CuPy ``uint8``
arrays (CuPy has no 8-bit float type, and this path needs no PyTorch), D is M x N FP16, the
accumulation FP32, the two per-tensor scales float32 scalars in device memory.

cuBLASLt is column-major, so the row-major D (M x N) is computed as its N x M transpose,
D^T = B A^T: cuBLASLt's "A" is our B, read transposed (its stored K x N column-major view
is B's N x K rows), and its "B" is our A, not transposed. That is the "TN" layout, the only
one cuBLASLt's FP8 matmul takes on Hopper (cuBLAS documentation, "cublasLtMatmul":
FP8 requires A transposed and B not). ``CUBLASLT_MATMUL_DESC_A_SCALE_POINTER`` and
``..._B_SCALE_POINTER`` multiply the operands' values, which is the dequantisation.

``fast_accum``: ``CUBLASLT_MATMUL_DESC_FAST_ACCUM``. Off (cuBLASLt's default, and
``torch._scaled_mm``'s) the library keeps the accumulation precise; on, it trades that for
speed. The lesson times and measures both beside its own promotion.

``block_scales``: DeepSeek-V3's fine-grained scaling, as the lesson's block-scaled build takes it:
A scaled per 1 x 128 (one float32 per row and 128 of K), B per 128 x 128. cuBLAS 12.9 and later
do this on Hopper with ``CUBLASLT_MATMUL_DESC_{A,B}_SCALE_MODE`` set to
``CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F`` for its "A" (our B) and ``..._VEC128_32F`` for
its "B" (our A), a combination the documentation lists as supported (cuBLAS documentation,
"128-element 1D and 128x128 2D Block Scaling For FP8 Data Types" and "Scaling factors layouts":
the 1D scales M-major, L = ceil(K / 128) columns of M; the 2D scales K-major, a column of
ceil(K / 128) rounded up to a multiple of 4 per 128 rows). :func:`lt_block_scales` lays out the
quantiser's arrays so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import EnvironmentProblem

WORKSPACE_BYTES = 32 << 20  # cuBLASLt's workspace: enough for every FP8 algorithm the heuristic offers


def device_scales(scale_a: float, scale_b: float) -> tuple[Any, Any]:
    """The two per-tensor scales as float32 scalars on the device, each its own allocation (so each
    is aligned as cuBLASLt expects a scale pointer to be), made once per input set: a copy from
    pageable memory inside a timed loop would synchronise."""
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    return (
        cp.asarray(np.array([scale_a], dtype=np.float32)),
        cp.asarray(np.array([scale_b], dtype=np.float32)),
    )


def lt_block_scales(scales_a: Any, scales_b: Any) -> tuple[Any, Any]:
    """The block scales as cuBLASLt reads them, from the quantiser's orientation (``scales_a``: A's
    [M, L] per 1 x 128, ``scales_b``: B's [ceil(N / 128), L] per 128 x 128, L = ceil(K / 128); NumPy
    or CuPy, the result on the same side): A's as [L, M] (M contiguous, the 1D mode's M-major
    layout), B's as [ceil(N / 128), L4] with L4 = L rounded up to a multiple of 4 (each 128-row
    block's L scales contiguous, the 2D mode's K-major layout; the padding is never read as a scale
    of an element)."""
    xp = np if isinstance(scales_a, np.ndarray) else _cupy()
    a = xp.asarray(scales_a, dtype=xp.float32)
    b = xp.asarray(scales_b, dtype=xp.float32)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(
            f"block scales must be A's [M, L] and B's [ceil(N / 128), L] with the same L (got {a.shape} "
            f"and {b.shape})"
        )
    blocks, k_blocks = b.shape
    padded = xp.ones((blocks, -(-k_blocks // 4) * 4), dtype=xp.float32)
    padded[:, :k_blocks] = b
    return xp.ascontiguousarray(a.T), padded


def _cupy() -> Any:
    # heavy: cupy, when a GPU path runs
    import cupy as cp

    return cp


class LtFp8:
    """A cuBLASLt FP8 matmul plan for one shape: ``plan(a_bits, b_bits, d, device_scales(sa, sb))``."""

    def __init__(self, m: int, n: int, k: int, fast_accum: bool = False, block_scales: bool = False):
        if fast_accum and block_scales:
            raise ValueError("cuBLASLt's block-scaled FP8 matmul has no fast-accumulation mode: ask for one")
        if block_scales and (m % 4 or n % 4):
            raise ValueError(
                f"cuBLASLt's block scales need M and N multiples of 4 (got {m} x {n}; cuBLAS documentation, "
                "'Scaling factors layouts')"
            )
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        try:
            # heavy: nvmath-python, when the FP8 peer runs
            from nvmath import CudaDataType
            from nvmath.bindings import cublasLt as lt
            from nvmath.bindings.cublas import ComputeType
        except ImportError as e:
            raise EnvironmentProblem(
                f"nvmath-python is needed for the cuBLASLt FP8 peer ({e}); install nvmath-python"
            ) from None
        self.lt, self.shape, self.fast_accum, self.block_scales = lt, (m, n, k), fast_accum, block_scales
        self.name = "cuBLASLt FP8" + (
            " (fast accumulation)"
            if fast_accum
            else " (1x128 / 128x128 block scales)"
            if block_scales
            else ""
        )
        try:
            self.handle = lt.create()
        except Exception as e:  # the library is missing or the driver too old: say which
            raise EnvironmentProblem(f"cuBLASLt could not be started through nvmath-python: {e}") from None
        attr = lt.MatmulDescAttribute
        self.desc = lt.matmul_desc_create(int(ComputeType.COMPUTE_32F), int(CudaDataType.CUDA_R_32F))
        # Kept alive on self: cuBLASLt reads attribute buffers at set time, scales at run time.
        self._host: dict[str, np.ndarray] = {
            "transa": np.array(1, dtype=np.int32),  # CUBLAS_OP_T
            "transb": np.array(0, dtype=np.int32),  # CUBLAS_OP_N
            "fast": np.array(1 if fast_accum else 0, dtype=np.int8),
            "alpha": np.array(1.0, dtype=np.float32),
            "beta": np.array(0.0, dtype=np.float32),
            "workspace": np.array(WORKSPACE_BYTES, dtype=np.uint64),
        }
        h = self._host
        self._set(attr.TRANSA, h["transa"])
        self._set(attr.TRANSB, h["transb"])
        self._set(attr.FAST_ACCUM, h["fast"])
        if block_scales:  # its "A" is our B (128 x 128 blocks), its "B" our A (1 x 128)
            h["mode_a"] = np.array(int(lt.MatmulMatrixScale.BLK128x128_32F), dtype=np.int32)
            h["mode_b"] = np.array(int(lt.MatmulMatrixScale.VEC128_32F), dtype=np.int32)
            self._set(attr.A_SCALE_MODE, h["mode_a"])
            self._set(attr.B_SCALE_MODE, h["mode_b"])
        # The scale pointers are set before the heuristic is asked, so it picks among algorithms that
        # scale; each call then points them at its input set's scales (a descriptor change, no copy).
        self._scales_at: tuple[int, int] = (-1, -1)
        if block_scales:
            k_blocks = -(-k // 128)
            self._ones = lt_block_scales(
                cp.ones((m, k_blocks), dtype=cp.float32), cp.ones((-(-n // 128), k_blocks), dtype=cp.float32)
            )
        else:
            self._ones = device_scales(1.0, 1.0)
        self._point_at(self._ones)
        e4m3, f16 = int(CudaDataType.CUDA_R_8F_E4M3), int(CudaDataType.CUDA_R_16F)
        self.a_layout = lt.matrix_layout_create(e4m3, k, n, k)  # our B: K x N column-major, ld K
        self.b_layout = lt.matrix_layout_create(e4m3, k, m, k)  # our A: K x M column-major, ld K
        self.d_layout = lt.matrix_layout_create(f16, n, m, n)  # D^T: N x M column-major, ld N
        self.pref = lt.matmul_preference_create()
        lt.matmul_preference_set_attribute(
            self.pref,
            lt.MatmulPreferenceAttribute.MAX_WORKSPACE_BYTES,
            h["workspace"].ctypes.data,
            h["workspace"].nbytes,
        )
        self.heuristic = np.zeros(1, dtype=lt.matmul_heuristic_result_dtype)
        count = np.zeros(1, dtype=np.int32)
        lt.matmul_algo_get_heuristic(
            self.handle,
            self.desc,
            self.a_layout,
            self.b_layout,
            self.d_layout,
            self.d_layout,
            self.pref,
            1,
            self.heuristic.ctypes.data,
            count.ctypes.data,
        )
        if int(count[0]) < 1 or int(self.heuristic["state"][0]) != 0:
            raise EnvironmentProblem(
                f"cuBLASLt offers no FP8 algorithm{' with 1x128 / 128x128 block scales' if block_scales else ''} "
                f"for {m} x {n} x {k} on this GPU (it needs compute capability 8.9 or newer, and K, N multiples "
                f"of 16{'; block scales need cuBLAS 12.9 or newer and a Hopper GPU' if block_scales else ''})"
            )
        self.workspace = cp.empty(WORKSPACE_BYTES, dtype=cp.uint8)

    def _set(self, attribute: Any, value: np.ndarray) -> None:
        self.lt.matmul_desc_set_attribute(self.desc, int(attribute), value.ctypes.data, value.nbytes)

    def _point_at(self, scales: tuple[Any, Any]) -> None:
        """Point cuBLASLt's scale attributes at ``scales`` = (scale of our A, scale of our B) on the
        device; its "A" is our B. Set only when the arrays change."""
        ptrs = (int(scales[0].data.ptr), int(scales[1].data.ptr))
        if ptrs == self._scales_at:
            return
        attr = self.lt.MatmulDescAttribute
        self._host["pa"] = np.array(ptrs[1], dtype=np.uint64)  # cuBLASLt's A = our B
        self._host["pb"] = np.array(ptrs[0], dtype=np.uint64)  # cuBLASLt's B = our A
        self._set(attr.A_SCALE_POINTER, self._host["pa"])
        self._set(attr.B_SCALE_POINTER, self._host["pb"])
        self._scales_at = ptrs

    def __call__(self, a: Any, b: Any, d: Any, scales: Any) -> None:
        """D = scale_a scale_b (A B^T) on the current CuPy stream. ``a``, ``b``: uint8 e4m3 bits;
        ``scales``: (scale_a, scale_b) as float32 device scalars (``device_scales``), read by the GPU;
        with ``block_scales``, the two arrays :func:`lt_block_scales` returns."""
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        m, n, k = self.shape
        if a.shape != (m, k) or b.shape != (n, k) or d.shape != (m, n):
            raise ValueError(
                f"this plan is for A {m}x{k}, B {n}x{k}, D {m}x{n} (got {a.shape}, {b.shape}, {d.shape})"
            )
        self._point_at(scales)
        h = self._host
        self.lt.matmul(
            self.handle,
            self.desc,
            h["alpha"].ctypes.data,
            b.data.ptr,
            self.a_layout,
            a.data.ptr,
            self.b_layout,
            h["beta"].ctypes.data,
            d.data.ptr,
            self.d_layout,
            d.data.ptr,
            self.d_layout,
            self.heuristic.ctypes.data,  # the first field of the heuristic result is the algorithm
            self.workspace.data.ptr,
            WORKSPACE_BYTES,
            cp.cuda.get_current_stream().ptr,
        )

    def close(self) -> None:
        lt = self.lt
        for layout in (self.a_layout, self.b_layout, self.d_layout):
            lt.matrix_layout_destroy(layout)
        lt.matmul_preference_destroy(self.pref)
        lt.matmul_desc_destroy(self.desc)
        lt.destroy(self.handle)
