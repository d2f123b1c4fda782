"""Tensor maps: the 128-byte descriptor a TMA copy reads, built on the host.

``cuTensorMapEncodeTiled`` (CUDA Driver API, "Tensor Map Object
Management") refuses a map that breaks its rules with a bare
CUDA_ERROR_INVALID_VALUE. The rules a rank-2 tile load can break are
checked here first, so a bad box is refused with the rule's name and what
was found. Every lesson that copies tiles with TMA encodes its maps here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from .._html import escape
from ..errors import TensorMapRuleError
from ..kernel._cuda import checked, driver

__all__ = [
    "DRIVER_DOC",
    "ENCODE_RULES",
    "TENSOR_MAP_DTYPE",
    "EncodeRule",
    "RulesTable",
    "TileMap",
    "encode",
    "rules_table",
]

# The CUDA Driver API's cuTensorMapEncodeTiled documentation ("Tensor Map
# Object Management") lists the requirements, and the CUDA C++ Programming
# Guide's TMA section tabulates the 16-byte alignment rules; these are the
# ones a tile load can break.
DRIVER_DOC = (
    "CUDA Driver API, Tensor Map Object Management (cuTensorMapEncodeTiled); "
    "CUDA C++ Programming Guide, TMA alignment requirements"
)


@dataclass(frozen=True)
class EncodeRule:
    id: str
    rule: str
    why: str
    source: str = DRIVER_DOC


ENCODE_RULES: tuple[EncodeRule, ...] = (
    EncodeRule(
        "box-dim-max",
        "every box dimension is between 1 and 256 elements",
        "one TMA request moves at most 256 elements along any dimension; a bigger tile takes several requests",
    ),
    EncodeRule(
        "box-inner-16B",
        "the innermost box row spans a multiple of 16 bytes (boxDim[0] x element size)",
        "the copy engine moves memory in 16-byte units, so each box row must be whole units",
    ),
    EncodeRule(
        "stride-16B",
        "each global stride is a multiple of 16 bytes (and below 2^40)",
        "every row of the box must start on a 16-byte boundary in global memory",
    ),
    EncodeRule(
        "address-16B",
        "the global base address is 16-byte aligned",
        "the same 16-byte unit: the first row must start on one too",
    ),
    EncodeRule(
        "global-dim",
        "every global dimension is between 1 and 2^32 elements",
        "the driver refuses empty or larger dimensions",
    ),
    EncodeRule(
        "swizzle-span",
        "with a swizzle, the innermost box row is at most the swizzle span (128 B for SWIZZLE_128B)",
        "the swizzle permutes 16-byte chunks within one span-sized row; a longer row has no pattern",
    ),
)
_RULES = {r.id: r for r in ENCODE_RULES}

Swizzle = Literal["none", "32B", "64B", "128B"]
_SWIZZLE_BYTES = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
# One data type per element size: the TMA copies bytes and never reads the values, so 8-bit
# floats (e4m3, e5m2) travel as UINT8 (Day 87's FP8 GEMM).
_DTYPES = {
    4: "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
    2: "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
    1: "CU_TENSOR_MAP_DATA_TYPE_UINT8",
}
BFLOAT16 = (
    "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"  # a 2-byte map's type when ``bfloat16`` (Days 88-90's BF16 build)
)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _broken(rule_id: str, found: str) -> TensorMapRuleError:
    rule = _RULES[rule_id]
    return TensorMapRuleError(rule_id, f"{rule.rule} (found {found}); {rule.why}")


@dataclass(frozen=True)
class TileMap:
    """A tiled tensor map over a row-major matrix (float32, float16 or 8-bit elements), rank 2, or
    rank 2 + len(planes) when the matrix is one of a stack: ``planes`` lists the outer dimensions,
    innermost first, as (count, stride in bytes), each boxed 1 wide (Day 88's B x H x S x D tensors
    are S x D matrices in planes ((H, S*D*2), (B, H*S*D*2)), so a box never crosses into the next
    head: its rows past S are zero-filled)."""

    width: int  # elements per row (the contiguous dimension, x)
    height: int  # rows (y)
    box_width: int  # tile width in elements
    box_height: int  # tile height in rows
    elem_bytes: int = 4  # 4: float32, 2: float16, 1: 8-bit (FP8 bits, moved as UINT8)
    swizzle: Swizzle = "none"
    stride: int = 0  # bytes from one row to the next; 0: width x element size (rows packed)
    planes: tuple[tuple[int, int], ...] = ()  # outer dimensions, innermost first: (count, stride bytes)
    bfloat16: bool = False  # 2-byte elements typed BFLOAT16, not FLOAT16 (the same bytes either way)

    @property
    def row_stride_bytes(self) -> int:
        return self.stride or self.width * self.elem_bytes

    @property
    def box_bytes(self) -> int:
        return self.box_width * self.box_height * self.elem_bytes

    def check(self, address: int = 0) -> None:
        """Raise TensorMapRuleError naming the first rule this map breaks."""
        if self.swizzle not in _SWIZZLE_BYTES:
            raise TensorMapRuleError(
                "swizzle", f"swizzle must be one of {', '.join(_SWIZZLE_BYTES)} (got {self.swizzle!r})"
            )
        for name in ("width", "height", "box_width", "box_height", "elem_bytes", "stride"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TensorMapRuleError(
                    "integer", f"{name} must be an int (got {type(value).__name__} {value!r})"
                )
        for name, value in (("box width", self.box_width), ("box height", self.box_height)):
            if not 1 <= value <= 256:
                raise _broken("box-dim-max", f"{name} {value}")
        inner = self.box_width * self.elem_bytes
        if inner % 16:
            raise _broken("box-inner-16B", f"{self.box_width} x {self.elem_bytes} B = {inner} B")
        for name, value in (("width", self.width), ("height", self.height)):
            if not 1 <= value <= 2**32:
                raise _broken("global-dim", f"{name} {value}")
        if self.row_stride_bytes % 16 or self.row_stride_bytes >= 2**40:
            raise _broken("stride-16B", f"{self.width} x {self.elem_bytes} B = {self.row_stride_bytes} B")
        if self.row_stride_bytes < self.width * self.elem_bytes:
            raise TensorMapRuleError(
                "stride-16B",
                f"the row stride ({self.row_stride_bytes} B) must cover a row ({self.width} x {self.elem_bytes} B)",
            )
        if len(self.planes) > 3:
            raise TensorMapRuleError(
                "rank", f"a tensor map has at most 5 dimensions: 2 + {len(self.planes)} planes"
            )
        for i, plane in enumerate(self.planes):
            if not (isinstance(plane, tuple) and len(plane) == 2 and all(_is_int(v) for v in plane)):
                raise TensorMapRuleError(
                    "integer", f"plane {i} must be two ints (count, stride bytes) (got {plane!r})"
                )
            count, stride = plane
            if not 1 <= count <= 2**32:
                raise _broken("global-dim", f"plane {i} count {count}")
            if stride % 16 or not 0 < stride < 2**40:
                raise _broken("stride-16B", f"plane {i} stride {stride} B")
        if address % 16:
            raise _broken("address-16B", f"address {address:#x}")
        span = _SWIZZLE_BYTES[self.swizzle]
        if span and inner > span:
            raise _broken("swizzle-span", f"{inner} B rows with SWIZZLE_{self.swizzle}")


# A kernel takes ``const __grid_constant__ CUtensorMap`` by value: 128
# opaque bytes, 64-byte aligned. CuPy passes a numpy structured scalar as
# those bytes (seen working on an H200).
TENSOR_MAP_DTYPE = np.dtype([("opaque", "<u8", (16,))], align=True)


def encode(tile_map: TileMap, address: int) -> np.void:
    """cuTensorMapEncodeTiled for ``tile_map`` at device ``address``, after the rule check.

    OOB fill NONE: elements of a box outside the tensor land in shared
    memory as zeros (the other choice, NAN_REQUEST_ZERO_FMA, fills a NaN).
    """
    tile_map.check(address)
    if tile_map.elem_bytes not in _DTYPES:
        raise TensorMapRuleError("dtype", f"element size must be 4, 2 or 1 bytes (got {tile_map.elem_bytes})")
    if tile_map.bfloat16 and tile_map.elem_bytes != 2:
        raise TensorMapRuleError("dtype", f"a bfloat16 map has 2-byte elements (got {tile_map.elem_bytes})")
    d = driver()
    u64, u32 = d.cuuint64_t, d.cuuint32_t
    swizzle = {
        "none": d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        "32B": d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
        "64B": d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
        "128B": d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
    }[tile_map.swizzle]
    outer = tile_map.planes
    tensor_map = checked(
        d.cuTensorMapEncodeTiled(
            getattr(d.CUtensorMapDataType, BFLOAT16 if tile_map.bfloat16 else _DTYPES[tile_map.elem_bytes]),
            2 + len(outer),
            address,
            [u64(tile_map.width), u64(tile_map.height), *(u64(count) for count, _ in outer)],
            [u64(tile_map.row_stride_bytes), *(u64(stride) for _, stride in outer)],
            [u32(tile_map.box_width), u32(tile_map.box_height), *(u32(1) for _ in outer)],
            [u32(1), u32(1), *(u32(1) for _ in outer)],
            d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
            d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        ),
        f"cuTensorMapEncodeTiled for {tile_map}",
    )
    words = np.array([int(w) for w in tensor_map.opaque], dtype="<u8")
    return np.array([(words,)], dtype=TENSOR_MAP_DTYPE)[0]


@dataclass(frozen=True)
class RulesTable:
    """The encode rules as a table for the page (HTML) or a terminal (text)."""

    rules: tuple[EncodeRule, ...] = ENCODE_RULES

    def _repr_html_(self) -> str:
        cell = "style='text-align:left;vertical-align:top;padding:2px 8px'"
        rows = "".join(
            f"<tr><td {cell}><code style='white-space:nowrap'>{escape(r.id)}</code></td>"
            f"<td {cell}>{escape(r.rule)}</td><td {cell}>{escape(r.why)}</td></tr>"
            for r in self.rules
        )
        return (
            f"<table><tr><th {cell}>rule</th><th {cell}>what must hold</th><th {cell}>why</th></tr>"
            f"{rows}</table><p><small>Source: {escape(DRIVER_DOC)}.</small></p>"
        )

    def __str__(self) -> str:
        return "\n".join(f"{r.id}: {r.rule} ({r.why})" for r in self.rules)


def rules_table() -> RulesTable:
    return RulesTable()
