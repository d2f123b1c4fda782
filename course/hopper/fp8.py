"""e4m3, the 8-bit float Hopper's FP8 wgmma reads, and quantisation to it, per tensor or per block.

An e4m3 number is one byte: a sign bit, 4 exponent bits (bias 7) and 3 mantissa bits
(the OCP "OFP8 Formats for Deep Learning" specification, v1.0, 2023, its E4M3; NVIDIA's
``__nv_fp8_e4m3`` in ``cuda_fp8.h``; PTX ISA "Alternate Floating-Point Data Formats").

- normal, exponent field E = 1..15: (1 + m/8) * 2^(E - 7);
- subnormal, E = 0: m/8 * 2^-6, so the smallest positive value is 2^-9;
- no infinities: S.1111.111 is NaN, and S.1111.110 = 1.75 * 2^8 = 448 is the largest finite value.

Only 3 mantissa bits: neighbouring values differ by 1/16 to 1/8 relative. So a matrix is put
into e4m3 with a scale: ``s = amax / 448``, ``q = round(x / s)`` saturated at +-448, and the
product ``(sA qA)(sB qB)^T = sA sB (qA qB^T)`` is computed on the quantised values, the scales
applied once at the end. The largest element lands on 448, the rest keep about 3 significant
bits down to 2^-6 * s, and anything below 2^-10 * s rounds to zero.

One scale per tensor lets its largest element decide every other element's step. Block scales
(DeepSeek-V3, arXiv 2412.19437, section 3.3.2) give each 1 x 128 piece of a row of A and each
128 x 128 block of B its own amax / 448 (:func:`quantize_blocks`); the kernel then applies them
per K-block, at promotion, instead of once at the end.

Every function here takes an array module (``numpy`` or ``cupy``) so that the same code runs on
the host and on the GPU; the bits are a ``uint8`` array (CuPy has no 8-bit float type).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import CourseError

E4M3_MAX = 448.0  # S.1111.110: the largest finite e4m3 (kE4m3Max in the kernel)
E4M3_MIN_NORMAL = 2.0**-6  # S.0001.000
E4M3_MIN_SUBNORMAL = 2.0**-9  # S.0000.001
E4M3_BIAS = 7
E4M3_MANTISSA_BITS = 3
E4M3_NAN_BITS = 0x7F  # S.1111.111 (0xFF with the sign set)


def e4m3_table() -> np.ndarray:
    """The value of each of the 256 bytes, as float64 (index = the byte), NaN at 0x7F and 0xFF."""
    b = np.arange(256)
    sign = np.where(b >= 128, -1.0, 1.0)
    e = (b >> 3) & 0xF
    m = (b & 7).astype(np.float64)
    value = np.where(e == 0, m / 8 * 2.0**-6, (1 + m / 8) * np.exp2(e - E4M3_BIAS))
    value = sign * value
    value[(e == 15) & ((b & 7) == 7)] = np.nan
    return value


def round_to_e4m3(x: Any, xp: ModuleType = np) -> Any:
    """``x`` rounded to the nearest e4m3 value (ties to even), saturated at +-448, as float32.

    The spacing of e4m3 values near ``|x|`` is ``2^(e - 3)`` for ``2^e <= |x| < 2^(e+1)``
    (3 mantissa bits), and ``2^-9`` below ``2^-6`` (the subnormals): divide by the spacing,
    round to an integer (``rint``: ties to even), multiply back. Dividing by a power of two is
    exact, so the one rounding is ``rint``'s."""
    a = xp.minimum(xp.abs(xp.asarray(x, dtype=xp.float32)), xp.float32(E4M3_MAX))
    _, exp = xp.frexp(xp.maximum(a, xp.float32(E4M3_MIN_NORMAL)))  # a = f * 2^exp, f in [0.5, 1)
    step = xp.ldexp(xp.ones_like(a), exp - 1 - E4M3_MANTISSA_BITS)
    q = xp.rint(a / step) * step
    return xp.copysign(q, xp.asarray(x, dtype=xp.float32))


def e4m3_bits(x: Any, xp: ModuleType = np) -> Any:
    """The e4m3 bytes of ``x`` (rounded to nearest even, saturated at +-448), as ``uint8``."""
    q = round_to_e4m3(x, xp)
    a = xp.abs(q)
    _, exp = xp.frexp(xp.maximum(a, xp.float32(E4M3_MIN_NORMAL)))
    normal = a >= E4M3_MIN_NORMAL
    field = xp.where(normal, exp - 1 + E4M3_BIAS, 0)  # the exponent field
    unit = xp.ldexp(xp.ones_like(a), xp.where(normal, exp - 1, -6) - E4M3_MANTISSA_BITS)
    mant = xp.rint(a / unit) - xp.where(normal, 8, 0)  # 0..7
    sign = xp.signbit(q).astype(xp.uint8) << 7
    return (sign | (field.astype(xp.uint8) << 3) | mant.astype(xp.uint8)).astype(xp.uint8)


def decode(bits: Any, xp: ModuleType = np) -> Any:
    """The float64 values of e4m3 ``bits`` (a ``uint8`` array)."""
    return xp.asarray(e4m3_table())[bits]


@dataclass(frozen=True)
class Quantized:
    """One matrix in e4m3 with its per-tensor scale: ``x ~= scale * decode(bits)``."""

    bits: Any  # uint8, the matrix's shape
    scale: float  # float32-exact: sA * sB is what the kernel multiplies D by
    amax: float  # max |x| before quantisation
    saturated: int  # elements that were above 448 * scale (none when the scale is amax / 448)


def scale_for(amax: float, target: float = E4M3_MAX) -> float:
    """The per-tensor scale that puts ``amax`` on ``target`` (448: e4m3's largest), as a float32
    value; 1.0 for an all-zero matrix."""
    if not np.isfinite(amax) or amax < 0:
        raise CourseError(f"amax must be a finite number >= 0 (got {amax!r})")
    return float(np.float32(amax / target)) if amax > 0 else 1.0


def quantize(x: Any, xp: ModuleType = np, scale: float | None = None) -> Quantized:
    """Per-tensor e4m3 quantisation of ``x``: ``scale = amax / 448`` unless one is given, then
    ``bits = e4m3(x / scale)``, saturating at +-448 (a given scale smaller than ``amax / 448``
    clips the largest elements: ``saturated`` counts them)."""
    x = xp.asarray(x, dtype=xp.float32)
    _check_finite(x, xp)
    amax = float(xp.abs(x).max())
    s = scale_for(amax) if scale is None else float(np.float32(scale))
    if s <= 0:
        raise CourseError(f"the scale must be positive (got {scale!r})")
    y = x / xp.float32(s)
    saturated = int((xp.abs(y) > E4M3_MAX).sum())
    return Quantized(e4m3_bits(y, xp), s, amax, saturated)


SCALE_BLOCK = 128  # elements of K (and rows of B) one block scale covers (kScaleBlock in the kernel)


@dataclass(frozen=True)
class BlockQuantized:
    """One matrix in e4m3 with one scale per ``block`` (rows x columns) of it:
    ``x[i, j] ~= scales[i // block[0], j // block[1]] * decode(bits[i, j])``. Blocks at the right and
    bottom edges are cut short where the matrix ends."""

    bits: Any  # uint8, the matrix's shape
    scales: Any  # float32, [ceil(rows / block[0]), ceil(cols / block[1])]
    block: tuple[int, int]  # (1, 128): A's rows per K-block; (128, 128): B's blocks
    saturated: int  # elements that saturation changed: |x / scale| >= 464, which rounds above 448 unsaturated

    def expanded_scales(self, xp: ModuleType = np) -> Any:
        """Each element's scale, the matrix's shape (float64)."""
        return _expand(xp.asarray(self.scales, dtype=xp.float64), self.block, self.bits.shape, xp)

    def dequantized(self, xp: ModuleType = np) -> Any:
        """The matrix the kernel is given, in float64: each e4m3 value times its block's scale."""
        return decode(xp.asarray(self.bits), xp) * self.expanded_scales(xp)


def _expand(scales: Any, block: tuple[int, int], shape: tuple[int, int], xp: ModuleType) -> Any:
    """One scale per element: each block's scale repeated over its block, cut to ``shape``."""
    return xp.repeat(xp.repeat(scales, block[0], axis=0), block[1], axis=1)[: shape[0], : shape[1]]


def _check_finite(x: Any, xp: ModuleType) -> None:
    if x.size == 0:
        raise CourseError("cannot quantise an empty matrix")
    finite = xp.isfinite(x)
    if not bool(finite.all()):
        first = int(xp.flatnonzero(~finite.ravel())[0])
        raise CourseError(
            f"the matrix has a NaN or an infinity at flat index {first}: e4m3 has no infinity and a scale "
            "cannot be chosen; clean the input first"
        )


def block_amax(x: Any, block: tuple[int, int], xp: ModuleType = np) -> Any:
    """max |x| over each ``block`` of a 2-D ``x``, [ceil(rows / block[0]), ceil(cols / block[1])]; the
    edge blocks are padded with zeros, which change no maximum of absolute values."""
    rows, cols = x.shape
    br, bc = block
    nr, nc = -(-rows // br), -(-cols // bc)
    padded = xp.zeros((nr * br, nc * bc), dtype=xp.float32)
    padded[:rows, :cols] = xp.abs(x)
    return padded.reshape(nr, br, nc, bc).max(axis=(1, 3))


def quantize_blocks(x: Any, block: tuple[int, int], xp: ModuleType = np) -> BlockQuantized:
    """Block-scaled e4m3 quantisation of a 2-D ``x`` (DeepSeek-V3's fine-grained scaling: ``block`` =
    (1, 128) for activations, (128, 128) for weights): each block's scale is its amax / 448 as a float32
    value (1.0 for an all-zero block, whose elements are all e4m3 zero whatever the scale), then
    ``bits = e4m3(x / scale)``, rounded to nearest even and saturated at +-448."""
    if len(block) != 2 or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in block):
        raise CourseError(f"block must be two positive integers (rows, columns) (got {block!r})")
    x = xp.asarray(x, dtype=xp.float32)
    if x.ndim != 2:
        raise CourseError(f"block quantisation takes a matrix (got {x.ndim} dimensions, shape {x.shape})")
    _check_finite(x, xp)
    amax = block_amax(x, block, xp)
    scales = xp.where(amax > 0, amax / xp.float32(E4M3_MAX), xp.float32(1.0)).astype(xp.float32)
    y = x / _expand(scales, block, x.shape, xp)
    # A block's largest element lands on 448 only up to the float32 rounding of its scale (a hair
    # above it rounds to 448 all the same); saturation changes an element from 464 up, the midpoint
    # to 480, where e4m3's next step would be.
    saturated = int((xp.abs(y) >= E4M3_MAX + 16).sum())
    return BlockQuantized(e4m3_bits(y, xp), scales, (int(block[0]), int(block[1])), saturated)
