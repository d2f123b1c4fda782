"""The host side of attention (Days 88-90): B x H x S x D FP16 (or BF16) tensors through 4-D tensor maps.

Each attention kernel (``kernels/attn88_forward.cu``, ``kernels/attn89_pingpong.cu``: the same
launch contract, the same check) computes O = softmax(Q K^T / sqrt(D)) V and the
log-sum-exp of every row, causal or not, for any S. Its launch contract is declared as
``constexpr`` lines read from the source (never copied): ``kHeadDim`` (the build,
``-DATTN_HEAD_DIM``), ``kBM`` (query rows per CTA), ``kBN`` (key rows per tile), ``kChunk`` (the
box width: one 128-byte swizzle row), ``kThreadsPerBlock``, ``kSmemBytes``, ``kRelTolerance`` (O)
and ``kLseTolerance``, and ``kBf16`` (the element type: ``-DATTN_BF16=1`` builds BF16; ``dtype``).

BF16 has no CuPy dtype (cupy/cupy#7527, open): a BF16 tensor is held as its bits, ``uint16``
(``to_bf16_bits`` rounds float32 to nearest even, as ``__float2bfloat16`` does; ``bf16_values``
widens the bits back, exactly), and read as values wherever it is checked.

Here, once: the shape checks (a shape the kernel cannot run is refused before anything is
allocated, naming what is wrong), the C++ program's inputs drawn exactly (``lcg_qkv``), the
float64 reference per head (``reference``), the workload (tensor maps, NaN-poisoned O and LSE,
the launch) and the host (``page.run(shape=(B, H, S, D), causal=...)``, its PASS and FAIL lines,
named as the C++ program names its kernel: ``label_of``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import CourseError
from ..hopper.tensormap import TileMap, encode
from ..kernel.host import Case, Check, LaunchConfig, LessonHost, Mismatch, Workload, check_relative
from ..kernel.lcg import lcg_values

if TYPE_CHECKING:
    from ..kernel.compile import Compiled
    from ..lesson import Lesson

Shape4 = tuple[int, int, int, int]  # (B, H, S, D)
HEAD_DIMS = (64, 128, 256)  # the builds: -DATTN_HEAD_DIM
DTYPES = ("float16", "bfloat16")  # the element types: the default build and -DATTN_BF16=1
LCG_SEED = 20261205  # main()'s runShape: state = LCG_SEED + 7 B + 13 H + 31 S
MAX_GRID_YZ = 65535  # H is gridDim.y and B gridDim.z
RUN_S = 1000  # the lesson run's S: 7.8 query tiles of 128, a ragged last key tile
RUN_B, RUN_H = 2, 3
BENCH_B, BENCH_H = 1, 16  # the benchmark's batch and heads; its size N is S
SAMPLE_ROWS = 64  # above 256 rows a head, the check compares 64 rows of each head and its last
_LABEL = re.compile(r'std::printf\(\s*"(\w+) B=%d H=%d S=%d D=%d')


def label_of(lesson: Lesson) -> str:
    """The name the C++ program prints at the head of its PASS line ("attn88", "attn89")."""
    found = _LABEL.findall(lesson.kernel_path.read_text(encoding="utf-8"))
    if len(found) != 1:
        raise CourseError(
            f'the kernel must print its PASS line once as std::printf("<label> B=%d H=%d S=%d D=%d ...") '
            f"(found {len(found)})",
            path=lesson.kernel_path,
        )
    return str(found[0])


def dtype_of(value: Any) -> str:
    """``value`` as one of ``DTYPES``, else CourseError naming the choices."""
    if not isinstance(value, str) or value not in DTYPES:
        raise CourseError(
            f"dtype must be one of {', '.join(repr(d) for d in DTYPES)} (got {value!r}); "
            "'bfloat16' is the build with -DATTN_BF16=1"
        )
    return value


def build_dtype(compiled: Compiled | None, lesson: Lesson) -> str:
    """The element type a build of the attention kernel computes in (its ``kBf16``)."""
    defines = dict(compiled.options.defines) if compiled is not None else None
    return DTYPES[int(lesson.constants(defines).get("kBf16", 0))]


def dtype_defines(defines: dict[str, Any] | None, dtype: str) -> dict[str, Any]:
    """``defines`` with the -D that builds ``dtype`` (``ATTN_BF16``; none for the default, FP16)."""
    out = {k: v for k, v in (defines or {}).items() if k != "ATTN_BF16"}
    if dtype_of(dtype) == "bfloat16":
        out["ATTN_BF16"] = 1
    return out


def to_bf16_bits(x: Any, xp: Any = np) -> Any:
    """float32 (or anything that casts to it) to BF16 bits (uint16), rounded to nearest, ties to
    even, as ``__float2bfloat16`` rounds; NaN stays a NaN. ``xp``: numpy, or CuPy on the GPU."""
    u = xp.asarray(x, dtype=xp.float32).view(xp.uint32)
    rounded = (u + xp.uint32(0x7FFF) + ((u >> 16) & xp.uint32(1))) >> 16
    bits = xp.where(xp.isnan(u.view(xp.float32)), xp.uint32(0x7FC0), rounded)
    return bits.astype(xp.uint16)


def bf16_values(bits: Any, xp: Any = np) -> Any:
    """BF16 bits (uint16) as float32, exactly (BF16 is float32's top half); any other array as it is."""
    if bits.dtype != xp.uint16:
        return bits
    return (bits.astype(xp.uint32) << 16).view(xp.float32)


def attention_shape(value: Any, head_dim: int) -> Shape4:
    """``value`` as (B, H, S, D) after the checks the kernel needs, else CourseError naming the problem."""
    try:
        dims = tuple(value)
    except TypeError:
        raise CourseError(f"shape must be four integers (B, H, S, D) (got {value!r})") from None
    if len(dims) != 4 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in dims):
        raise CourseError(f"shape must be four integers (B, H, S, D) (got {value!r})")
    b, h, s, d = (int(v) for v in dims)
    for name, v in (("B", b), ("H", h), ("S", s), ("D", d)):
        if v < 1:
            raise CourseError(f"{name} must be a positive integer (got {v} in shape {b} x {h} x {s} x {d})")
    if d not in HEAD_DIMS:
        raise CourseError(
            f"D = {d} is not supported: the kernel builds for head dimensions {', '.join(map(str, HEAD_DIMS))} "
            f"(-DATTN_HEAD_DIM); pad D with zero columns of Q and K (and drop V's extra columns of O)"
        )
    if d != head_dim:
        raise CourseError(
            f"D = {d} needs the build with -DATTN_HEAD_DIM={d}; this one is built for D = {head_dim}"
        )
    for name, v in (("B", b), ("H", h)):
        if v > MAX_GRID_YZ:
            raise CourseError(
                f"{name} = {v} is more than the grid allows ({MAX_GRID_YZ}: {name} is a grid dimension)"
            )
    if b * h * s * d >= 2**31:
        raise CourseError(
            f"{b} x {h} x {s} x {d} has {b * h * s * d} elements; the kernel's int32 sequence arithmetic "
            "holds fewer than 2^31: split the batch"
        )
    return b, h, s, d


def lcg_qkv(shape: Shape4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V (float16, B x H x S x D) exactly as the C++ program's runShape draws them."""
    b, h, s, d = shape
    n = b * h * s * d
    values = lcg_values(3 * n, (LCG_SEED + 7 * b + 13 * h + 31 * s) % 2**32)
    q, k, v = (values[i * n : (i + 1) * n].reshape(shape) for i in range(3))
    return q, k, v


def reference(
    q: Any, k: Any, v: Any, causal: bool, rows: Sequence[int] | None = None, xp: Any = np
) -> tuple[Any, Any]:
    """O (float64, B x H x R x D) and LSE (float64, B x H x R) for query rows ``rows`` (all: None).

    Per head in float64: scores s = q k^T / sqrt(D), keys after the query masked when causal,
    then the softmax through its maximum, exp(s - max) / sum, and LSE = max + ln(sum): the stable
    form of ln(sum_j exp(s_j)). ``xp`` is numpy, or CuPy for device arrays."""
    b, h, s, d = q.shape
    index = xp.arange(s) if rows is None else xp.asarray(list(rows))
    out = xp.empty((b, h, len(index), d), dtype=xp.float64)
    lse = xp.empty((b, h, len(index)), dtype=xp.float64)
    keys = xp.arange(s)
    for i in range(b):
        for j in range(h):
            scores = q[i, j][index].astype(xp.float64) @ k[i, j].astype(xp.float64).T / math.sqrt(d)
            if causal:
                scores = xp.where(keys[None, :] > index[:, None], -xp.inf, scores)
            top = scores.max(axis=1, keepdims=True)
            p = xp.exp(scores - top)
            total = p.sum(axis=1, keepdims=True)
            out[i, j] = (p @ v[i, j].astype(xp.float64)) / total
            lse[i, j] = (top + xp.log(total))[:, 0]
    return out, lse


def check_rows(s: int) -> list[int]:
    """The rows of each head the check compares: all up to 256, else 64 spread over every tile and
    warp position (the C++ program's choice) and the last, on the ragged edge."""
    if s <= 256:
        return list(range(s))
    step = s // SAMPLE_ROWS
    return [i * step + (i * 37) % step for i in range(SAMPLE_ROWS)] + [s - 1]


def _unwritten(got: np.ndarray, tolerance: float) -> Check | None:
    """A check that fails on the first NaN left from the poison (``got``: rows x width), or None
    when every element was written."""
    bad = np.flatnonzero(np.isnan(got))
    if not bad.size:
        return None
    i, width = int(bad[0]), got.shape[1]
    never = Mismatch(i, i // width, i % width, float("nan"), float("nan"))
    return Check("relative", int(bad.size), int(got.size), None, tolerance, never)


def _remap(check: Check, rows: list[int], s: int, total: int, width: int) -> Check:
    """A check over the sampled rows of every head, its first mismatch renumbered to the row of the
    whole (B*H*S) x width array, its total the whole array's."""
    first = check.mismatch
    if first is not None:
        head, k = divmod(first.row, len(rows))
        row = head * s + rows[k]
        first = Mismatch(row * width + first.col, row, first.col, first.got, first.want, first.error)
    return Check(check.kind, check.failures, total, check.max_error, check.tolerance, first, check.floor)


class AttentionWorkload(Workload):
    """``sets`` copies of Q, K, V (B x H x S x D, FP16), O (FP16) and LSE (float32), with their maps;
    BF16 (held as uint16 bits) when the build is ``-DATTN_BF16=1``."""

    def __init__(
        self, lesson: Lesson, compiled: Compiled | None, shape: Shape4, causal: bool, sets: int, purpose: str
    ):
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        c = lesson.constants(dict(compiled.options.defines) if compiled is not None else None)
        self.constants = c
        self.shape = attention_shape(shape, int(c["kHeadDim"]))
        if not isinstance(causal, bool):
            raise CourseError(f"causal must be True or False (got {causal!r})")
        self.causal = causal
        self.bf16 = bool(c.get("kBf16", 0))
        self.dtype = DTYPES[int(self.bf16)]
        elem = cp.uint16 if self.bf16 else cp.float16  # BF16 as its bits: CuPy has no bfloat16
        b, h, s, d = self.shape
        tile_m, tile_n, chunk = int(c["kBM"]), int(c["kBN"]), int(c["kChunk"])
        config = LaunchConfig((-(-s // tile_m), h, b), (int(c["kThreadsPerBlock"]),), int(c["kSmemBytes"]))
        super().__init__(compiled, s, sets, config)  # type: ignore[arg-type]
        if purpose == "lesson":
            q, k, v = lcg_qkv(self.shape)  # k/8, |k| <= 8: exact in FP16 and in BF16
            if self.bf16:
                q, k, v = (to_bf16_bits(x) for x in (q, k, v))
            self.q, self.k, self.v = (cp.asarray(x)[None] for x in (q, k, v))
        else:
            rng = cp.random.default_rng(9000 + s)
            normal = [rng.standard_normal((sets, *self.shape), dtype=cp.float32) for _ in range(3)]
            self.q, self.k, self.v = (
                to_bf16_bits(x, cp) if self.bf16 else x.astype(cp.float16) for x in normal
            )
        self.o = cp.empty((sets, *self.shape), dtype=elem)
        self.lse = cp.empty((sets, b, h, s), dtype=cp.float32)
        self.tolerance = float(c["kRelTolerance"])
        self.lse_tolerance = float(c["kLseTolerance"])
        planes = ((h, s * d * 2), (b, h * s * d * 2))

        def maps(x: Any, rows: int) -> list[Any]:
            tile = TileMap(d, s, chunk, rows, elem_bytes=2, swizzle="128B", planes=planes, bfloat16=self.bf16)
            return [encode(tile, int(x[j].data.ptr)) for j in range(x.shape[0])]

        self.maps_q, self.maps_k, self.maps_v = (
            maps(self.q, tile_m),
            maps(self.k, tile_n),
            maps(self.v, tile_n),
        )
        self._want: tuple[Any, Any] | None = None
        self.last_checks: tuple[Check, Check] | None = None  # the lesson run's (O, LSE) checks
        self.failed = ""  # which of the two failed the lesson run: "O", "LSE" or ""

    def args(self, j: int) -> tuple[Any, ...]:
        i = j % len(self.maps_q)
        b, h, s, d = self.shape
        return (
            self.maps_q[i],
            self.maps_k[i],
            self.maps_v[i],
            self.o[j],
            self.lse[j],
            np.int32(s),
            np.int32(h),
            np.int32(self.causal),
        )

    def out(self, j: int) -> Any:
        return self.o[j]

    def poison(self, j: int) -> None:
        """O and LSE both NaN, so an element the kernel never writes fails the check (BF16's O:
        the bits 0xFFFF, a NaN in BF16 as in FP16)."""
        if self.bf16:
            self.o[j].set(np.full(self.o[j].shape, 0xFFFF, dtype=np.uint16))
        else:
            super().poison(j)
        self.lse[j].set(np.full(self.lse[j].shape, np.nan, dtype=np.float32))

    def want(self) -> Any:
        """O in float64 on the GPU, per head (LSE with it: ``want_lse``)."""
        if self._want is None:
            # heavy: cupy, when a GPU path runs
            import cupy as cp

            q, k, v = (bf16_values(x[0], cp) for x in (self.q, self.k, self.v))
            self._want = reference(q, k, v, self.causal, xp=cp)
        return self._want[0]

    def want_lse(self) -> Any:
        self.want()
        assert self._want is not None
        return self._want[1]

    def check(self, got: Any, want: Any | None = None) -> Check:
        """O against ``want`` (default the float64 reference); the benchmarks' check of the kernel
        and of each peer (a peer writes no LSE; the lesson run and the GPU tests check the kernel's)."""
        return check_relative(self._values(got), self.want() if want is None else want, self.tolerance)

    @staticmethod
    def _values(got: Any) -> Any:
        """A BF16 O's bits as values (float32), where they are (host or GPU); FP16 as it is."""
        if isinstance(got, np.ndarray):
            return bf16_values(got)
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        return bf16_values(got, cp)

    def host_checks(self) -> tuple[Check, Check]:
        """The lesson run's checks of set 0, on the host, as the C++ program checks: every element of O
        and LSE for the NaN poison, then ``check_rows`` of every head against float64."""
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        got_o, got_lse = cp.asnumpy(self.o[0]), cp.asnumpy(self.lse[0])
        return self.checks_against(got_o, got_lse)

    def checks_against(self, got_o: np.ndarray, got_lse: np.ndarray) -> tuple[Check, Check]:
        """``host_checks`` on arrays already on the host (the CPU tests feed it by hand; BF16's O
        as its uint16 bits or as values)."""
        d = self.shape[3]
        got_o = bf16_values(got_o)
        never_o = _unwritten(got_o.reshape(-1, d), self.tolerance)
        never_lse = _unwritten(got_lse.reshape(-1, 1), self.lse_tolerance)
        q, k, v = (self._host(x) for x in (self.q, self.k, self.v))
        rows = check_rows(self.shape[2])
        ref_o, ref_lse = reference(q, k, v, self.causal, rows)
        o_check = never_o or _remap(
            check_relative(got_o[:, :, rows].reshape(-1, d), ref_o.reshape(-1, d), self.tolerance),
            rows,
            self.shape[2],
            got_o.size,
            d,
        )
        lse_check = never_lse or _remap(
            check_relative(got_lse[:, :, rows].reshape(-1, 1), ref_lse.reshape(-1, 1), self.lse_tolerance),
            rows,
            self.shape[2],
            got_lse.size,
            1,
        )
        return o_check, lse_check

    @staticmethod
    def _host(x: Any) -> np.ndarray:
        if isinstance(x, np.ndarray):
            return bf16_values(x[0])
        # heavy: cupy, when a GPU path runs
        import cupy as cp

        return bf16_values(np.asarray(cp.asnumpy(x[0])))

    def host_check(self) -> Check:
        o_check, lse_check = self.host_checks()
        self.last_checks = (o_check, lse_check)
        self.failed = "" if o_check.passed and lse_check.passed else ("O" if not o_check.passed else "LSE")
        return o_check if not o_check.passed else lse_check


class AttentionHost(LessonHost):
    """``page.run(shape=(B, H, S, D), causal=True, dtype="bfloat16")``; D must be the build's
    (``-DATTN_HEAD_DIM``); a ``dtype`` other than the build's compiles the same file with
    ``-DATTN_BF16=1`` (or without it), the build's other -D kept."""

    run_options = ("shape", "causal", "dtype")
    cases = (
        Case(
            "causal",
            {"causal": True},
            True,
            "the same shape, causal: the key tiles above the diagonal are never loaded, the diagonal tile "
            "is masked; every checked row within the tolerance",
        ),
        Case(
            "one-row",
            {"shape": (2, 3, 1, 128)},
            True,
            "S = 1: one query and one key per head, 127 rows of every Q box and K box zero-filled by the "
            "TMA and masked; every row checked",
        ),
    )

    def __init__(self, lesson: Lesson):
        self.lesson = lesson
        self.last: tuple[Shape4, bool, str] | None = None
        self.last_work: AttentionWorkload | None = None

    def workload(
        self, compiled: Compiled, n: int, sets: int = 1, purpose: str = "lesson", **options: Any
    ) -> AttentionWorkload:
        c = self.lesson.constants(dict(compiled.options.defines) if compiled is not None else None)
        d = int(c["kHeadDim"])
        shape = options.get("shape")
        if shape is None:
            shape = (RUN_B, RUN_H, RUN_S, d) if purpose == "lesson" else (BENCH_B, BENCH_H, n, d)
        causal = options.get("causal", False)
        dtype = dtype_of(options.get("dtype", build_dtype(compiled, self.lesson)))
        if dtype != build_dtype(compiled, self.lesson):
            # heavy: the compiler, only when another element type is asked for
            from ..kernel.compile import compile_lesson

            defines = dict(compiled.options.defines) if compiled is not None else None
            compiled = compile_lesson(self.lesson, defines=dtype_defines(defines, dtype))
        work = AttentionWorkload(self.lesson, compiled, shape, causal, sets, purpose)
        self.last, self.last_work = (work.shape, work.causal, work.dtype), work
        return work

    def _label(self) -> str:
        name = label_of(self.lesson)
        if self.last is None:
            return name
        (b, h, s, d), causal, dtype = self.last
        kind = "causal" if causal else "non-causal"
        # the C++ program's line: " BF16" after D in that build only
        return f"{name} B={b} H={h} S={s} D={d}{' BF16' if dtype == 'bfloat16' else ''} {kind}"

    def pass_line(self, n: int, check: Check) -> str:
        checks = self.last_work.last_checks if self.last_work is not None else None
        if checks is None:
            return f"{self._label()}: PASS, max rel error {check.max_error:g} (tolerance {check.tolerance:g})"
        o, lse = checks
        return (
            f"{self._label()}: PASS, max rel error O {o.max_error:g} (tolerance {o.tolerance:g}), "
            f"LSE {lse.max_error:g} (tolerance {lse.tolerance:g})"
        )

    def fail_line(self, check: Check) -> str:
        m = check.mismatch
        if m is None:
            return "no mismatch"
        work = self.last_work
        _, h_, s, _ = work.shape if work is not None else (1, 1, 1, 1)
        is_lse = work is not None and work.failed == "LSE"
        name = "LSE" if is_lse else "O"
        head, row = divmod(m.row, s)
        b, h = divmod(head, h_)
        where = f"{name}[{b}][{h}][{row}]" + ("" if is_lse else f"[{m.col}]")
        if m.error is None:
            return (
                f"FAIL at {where}: never written (still the NaN the run filled {name} with); "
                f"{check.failures} of {check.total} elements unwritten"
            )
        return f"FAIL at {where}: gpu {m.got:f}, ref {m.want:f}, rel {m.error:g} > {check.tolerance:g}"
