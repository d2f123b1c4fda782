"""Day 88's attention, as numpy: what the kernel computes, block by block, written to be read.

The kernel computes O = softmax(Q K^T / sqrt(d)) V one query tile at a time
(a consumer warpgroup's 64 rows, or a CTA's tile), walking the key blocks
in order and never holding a whole row of scores. This module is that walk
in float64, small enough to read beside the kernel:

- ``attention_reference``: the definition, O and the log-sum-exp per row,
  computed all at once (the check the host holds every head to);
- ``online_softmax``: one query tile's walk over the key blocks with a
  running max ``m``, a running sum ``l`` and the rescale factor
  ``exp(m_old - m_new)`` applied to O and ``l`` whenever the max grows;
  ``exp2`` with ``log2(e) / sqrt(d)`` folded into one scale, as the kernel
  does; it returns the reference's O and the per-block trace a picture
  draws;
- ``key_blocks``: which key blocks a query tile visits and which it must
  mask (causal: none above the diagonal, only the diagonal one masked;
  the ragged last block, whose missing keys the TMA fills with zeros);
- ``flash_attention``: every query tile's walk, the whole kernel's result;
- ``causal_tiles``, ``triangle_fraction``, ``attention_flops``,
  ``stage_bytes``: what the work and the memory come to.

References: Milakov and Gimelshein, "Online normalizer calculation for
softmax" (arXiv 1805.02867); FlashAttention-2 (arXiv 2307.08691), Algorithm 1
(the un-rescaled O, divided by l once at the end; only the log-sum-exp kept
for the backward pass) and section 3.1 (causal masking: blocks wholly above
the diagonal skipped, only the diagonal block masked); FlashAttention-3
(arXiv 2407.08608); its source, hopper/softmax.h (``scale_apply_exp2``:
exp2 of ``s * scale_log2 - m * scale_log2``, one FFMA per score; the
log-sum-exp ``m * scale + log(l)`` in ``finalize``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...hopper.wgmma import ModelError

__all__ = [
    "LOG2E",
    "Attention",
    "KeyBlock",
    "Online",
    "Step",
    "Tiled",
    "TileCount",
    "attention_flops",
    "attention_reference",
    "causal_tiles",
    "flash_attention",
    "key_blocks",
    "naive_softmax",
    "online_softmax",
    "stage_bytes",
    "triangle_fraction",
]

LOG2E = math.log2(math.e)  # exp(x) = exp2(x * log2(e)): the kernel's exp2f with the factor folded in


def _check_positive(name: str, value: int) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ModelError(f"{name} must be a positive int (got {value!r})")


def _as_matrix(name: str, x: np.ndarray, rank: int | None = 2) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if rank is not None and a.ndim != rank:
        raise ModelError(f"{name} must be a {rank}-D array (got shape {a.shape})")
    if rank is None and a.ndim < 2:
        raise ModelError(f"{name} must be at least 2-D (..., S, D) (got shape {a.shape})")
    return a


def _scale_for(d: int, scale: float | None) -> float:
    return 1.0 / math.sqrt(d) if scale is None else float(scale)


# ---------------------------------------------------------------------------
# 1. The definition
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Attention:
    """O (..., S_q, D) and the log-sum-exp (..., S_q): log sum_j exp(scale * s_ij) over the keys a
    row sees, natural log; what a backward pass needs to rebuild P without storing it."""

    o: np.ndarray
    lse: np.ndarray


def attention_reference(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False, scale: float | None = None
) -> Attention:
    """softmax(Q K^T * scale) V in float64, all scores at once; scale defaults to 1 / sqrt(D).

    ``q``, ``k``, ``v`` are (..., S, D) with any leading (batch, head) dimensions. Causal: query i
    sees keys 0..i (self-attention, so S_q must equal S_k). The row max is subtracted before exp, so
    no score overflows (``naive_softmax`` is the version that does not)."""
    q, k, v = _as_matrix("q", q, None), _as_matrix("k", k, None), _as_matrix("v", v, None)
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ModelError(
            f"q {q.shape}, k {k.shape}, v {v.shape}: need q (.., Sq, D), k (.., Sk, D), v (.., Sk, Dv)"
        )
    scale = _scale_for(q.shape[-1], scale)
    s = scale * (q @ np.swapaxes(k, -1, -2))
    if causal:
        if q.shape[-2] != k.shape[-2]:
            raise ModelError(
                f"causal attention here is self-attention: S_q {q.shape[-2]} != S_k {k.shape[-2]}"
            )
        n = q.shape[-2]
        s = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    ell = p.sum(axis=-1, keepdims=True)
    return Attention(o=(p @ v) / ell, lse=(m + np.log(ell))[..., 0])


def naive_softmax(scores: np.ndarray) -> np.ndarray:
    """exp(s) / sum exp(s) per row, without subtracting the max: exp overflows past s = 709.78
    (float64), and the row becomes inf / inf = NaN. What the running max exists to prevent."""
    e = np.exp(np.asarray(scores, dtype=np.float64))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------
# 2. Which key blocks a query tile visits
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyBlock:
    """Key block ``index``: keys ``start``..``stop - 1``. ``masked``: the causal diagonal crosses
    it (some key in it lies after some row of the tile), so scores past the diagonal are set to
    -inf. ``ragged``: the last block holds fewer than ``block`` keys; the kernel's TMA fills the
    missing rows of K and V with zeros, so their scores (0, not -inf) must be masked too."""

    index: int
    start: int
    stop: int
    masked: bool
    ragged: bool


def key_blocks(
    keys: int, block: int, *, causal: bool = False, row0: int = 0, rows: int = 1
) -> tuple[KeyBlock, ...]:
    """The key blocks the query tile of rows ``row0``..``row0 + rows - 1`` visits, in order.

    Non-causal: all ceil(keys / block). Causal: a block whose first key lies after the tile's
    last row is skipped (every score in it would be masked), and a block whose last key lies
    after the tile's first row is masked (the diagonal crosses it)."""
    _check_positive("keys", keys)
    _check_positive("block", block)
    _check_positive("rows", rows)
    if not isinstance(row0, (int, np.integer)) or row0 < 0:
        raise ModelError(f"row0 must be an int >= 0 (got {row0!r})")
    count = -(-keys // block)
    if causal:
        count = min(count, (row0 + rows - 1) // block + 1)
    out = []
    for b in range(count):
        start, stop = b * block, min((b + 1) * block, keys)
        out.append(KeyBlock(b, start, stop, causal and stop - 1 > row0, stop - start < block))
    return tuple(out)


# ---------------------------------------------------------------------------
# 3. One query tile's walk: the online softmax
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """What one key block did to each row: the running max before and after (raw scores, as the
    kernel keeps them), the factor O and l were multiplied by, and l after the block (``ell``:
    the papers' l, spelled out)."""

    block: KeyBlock
    m_old: np.ndarray
    m_new: np.ndarray
    rescale: np.ndarray
    ell: np.ndarray


@dataclass(frozen=True)
class Online:
    """A query tile's O and log-sum-exp, and its walk (``steps``, one per visited key block)."""

    o: np.ndarray
    lse: np.ndarray
    steps: tuple[Step, ...]

    @property
    def m(self) -> np.ndarray:
        """(blocks, rows): the running max after each block."""
        return np.stack([s.m_new for s in self.steps])

    @property
    def ell(self) -> np.ndarray:
        """(blocks, rows): the running sum (the papers' l) after each block."""
        return np.stack([s.ell for s in self.steps])

    @property
    def rescale(self) -> np.ndarray:
        """(blocks, rows): exp(scale * (m_old - m_new)) at each block; 1 where the max held, and 1
        at the first block, where there is nothing yet to rescale (FlashAttention-3's ``Is_first``;
        a kernel that computes exp2(-inf - m) = 0 there multiplies O = 0 and l = 0 alike)."""
        return np.stack([s.rescale for s in self.steps])


def online_softmax(
    scores: np.ndarray,
    block: int,
    v: np.ndarray,
    *,
    scale: float | None = None,
    causal: bool = False,
    row0: int = 0,
    p_dtype: type[np.floating] = np.float64,
) -> Online:
    """softmax(scores * scale) @ v for one query tile, one key block at a time.

    ``scores`` is the raw S = Q K^T of the tile's rows (rows, keys), as the first wgmma leaves it;
    ``v`` is (keys, D); ``scale`` defaults to 1 / sqrt(D). For each visited block (``key_blocks``)::

        m_new   = max(m_old, max_j s_j)                       (raw scores; -inf before the first)
        rescale = exp2((m_old - m_new) * scale * log2(e))     (= exp(scale * (m_old - m_new)) <= 1)
        p_j     = exp2(s_j * scale * log2(e) - m_new * scale * log2(e))   (one FFMA and one exp2)
        l       = l * rescale + sum_j p_j
        O       = O * rescale + P V_block                     (the second wgmma, P from registers)

    and at the end O / l and lse = m * scale + log(l). ``row0`` is the tile's first row (its place
    on the causal diagonal). ``p_dtype``: the type P is rounded to before P V (the kernel's FP16
    or BF16 A operand; float64 here by default); l sums the unrounded p, as FlashAttention-3's
    ``online_softmax`` does.
    """
    s = _as_matrix("scores", scores)
    v = _as_matrix("v", v)
    rows, keys = s.shape
    if v.shape[0] != keys:
        raise ModelError(f"v has {v.shape[0]} rows but scores have {keys} keys")
    scale_log2 = _scale_for(v.shape[1], scale) * LOG2E
    m = np.full(rows, -np.inf)
    ell = np.zeros(rows)
    o = np.zeros((rows, v.shape[1]))
    steps = []
    for blk in key_blocks(keys, block, causal=causal, row0=row0, rows=rows):
        sb = s[:, blk.start : blk.stop].copy()
        if blk.masked:
            after = np.arange(blk.start, blk.stop)[None, :] > (row0 + np.arange(rows))[:, None]
            sb[after] = -np.inf
        m_new = np.maximum(m, sb.max(axis=1))
        # A row that has seen only masked scores keeps m = -inf; exp2(-inf - -inf) would be NaN.
        m_safe = np.where(m_new == -np.inf, 0.0, m_new)
        rescale = np.where(m == -np.inf, 1.0, np.exp2((m - m_safe) * scale_log2))
        p = np.exp2(sb * scale_log2 - (m_safe * scale_log2)[:, None])
        ell = ell * rescale + p.sum(axis=1)
        o = o * rescale[:, None] + p.astype(p_dtype).astype(np.float64) @ v[blk.start : blk.stop]
        steps.append(Step(blk, m, m_new, rescale, ell))
        m = m_new
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(ell[:, None] > 0, o / ell[:, None], 0.0)
        lse = np.where(ell > 0, m * (scale_log2 / LOG2E) + np.log(ell), -np.inf)
    return Online(o=out, lse=lse, steps=tuple(steps))


# ---------------------------------------------------------------------------
# 4. The whole kernel: every query tile's walk
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Tiled:
    """O and lse of every row, and each query tile's visited key blocks (``visits[t]``)."""

    o: np.ndarray
    lse: np.ndarray
    visits: tuple[tuple[KeyBlock, ...], ...]


def flash_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    block_q: int,
    block_k: int,
    causal: bool = False,
    scale: float | None = None,
) -> Tiled:
    """One head: ceil(S_q / block_q) query tiles, each walking the key blocks (``online_softmax``)."""
    q, k, v = _as_matrix("q", q), _as_matrix("k", k), _as_matrix("v", v)
    _check_positive("block_q", block_q)
    if causal and q.shape[0] != k.shape[0]:
        raise ModelError(f"causal attention here is self-attention: S_q {q.shape[0]} != S_k {k.shape[0]}")
    scale = _scale_for(q.shape[1], scale)
    o, lse, visits = np.zeros((q.shape[0], v.shape[1])), np.zeros(q.shape[0]), []
    for row0 in range(0, q.shape[0], block_q):
        rows = slice(row0, min(row0 + block_q, q.shape[0]))
        tile = online_softmax(q[rows] @ k.T, block_k, v, scale=scale, causal=causal, row0=row0)
        o[rows], lse[rows] = tile.o, tile.lse
        visits.append(tuple(step.block for step in tile.steps))
    return Tiled(o=o, lse=lse, visits=tuple(visits))


# ---------------------------------------------------------------------------
# 5. What it costs
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TileCount:
    """Of the (query tile, key block) pairs of one head: how many a kernel visits, how many of
    those it masks, and all there are."""

    visited: int
    masked: int
    total: int

    @property
    def fraction(self) -> Fraction:
        return Fraction(self.visited, self.total)


def causal_tiles(seq: int, block_q: int, block_k: int | None = None, causal: bool = True) -> TileCount:
    """Count the tiles by ``key_blocks``, the walk ``online_softmax`` takes (not by a formula)."""
    block_k = block_q if block_k is None else block_k
    _check_positive("seq", seq)
    _check_positive("block_q", block_q)
    visited = masked = 0
    for row0 in range(0, seq, block_q):
        blocks = key_blocks(seq, block_k, causal=causal, row0=row0, rows=min(block_q, seq - row0))
        visited += len(blocks)
        masked += sum(b.masked for b in blocks)
    return TileCount(visited, masked, (-(-seq // block_q)) * (-(-seq // block_k)))


def triangle_fraction(n: int) -> Fraction:
    """(n (n + 1) / 2) / n^2: the share of an n x n grid of square tiles on or below the diagonal."""
    _check_positive("n", n)
    return Fraction(n * (n + 1) // 2, n * n)


def attention_flops(batch: int, heads: int, seq: int, d: int, causal: bool = False) -> int:
    """4 B H S^2 D: two GEMMs (Q K^T and P V) of 2 S^2 D each per head; halved for causal, the
    convention of the FlashAttention papers' TFLOP/s (and of this course's speed tables)."""
    for name, value in (("batch", batch), ("heads", heads), ("seq", seq), ("d", d)):
        _check_positive(name, value)
    flops = 4 * batch * heads * seq * seq * d
    return flops // 2 if causal else flops


def stage_bytes(block_k: int, d: int, elem_bytes: int = 2) -> int:
    """Shared memory of one stage of the K/V ring: a K tile and a V tile, block_k x d each."""
    for name, value in (("block_k", block_k), ("d", d), ("elem_bytes", elem_bytes)):
        _check_positive(name, value)
    return 2 * block_k * d * elem_bytes
