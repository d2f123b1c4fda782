"""CPU check of attn88_forward.cu's consumer logic (no GPU): the register-level code, transcribed.

Each consumer thread's registers are modelled as the PTX ISA lays them out (the accumulator
fragment of wgmma .m64nNk16: thread lane of warp w holds, per 8-column block j, s[4j], s[4j+1] at
row 16w + lane/4, columns 8j + 2(lane%4) + {0,1}, and s[4j+2], s[4j+3] eight rows below), and the
kernel's steps are transcribed line for line: the mask (ragged and diagonal tiles only), the online
softmax with the quad's two shuffles, the rescale of O, P packed to FP16 in pairs, the second
product with P placed by the *A* fragment's layout (rows lane/4 + 8 ((v/2) % 2), columns
2(lane%4) + v%2 + 8 (v/4) of slice k; cute's ALayout_64x16), the epilogue's quad sum, divide and
LSE. What it cannot check is what only the hardware does: the TMA, the swizzle, the descriptors
and the barriers; the wgmma products themselves are numpy's (FP16 inputs, float32 results).

Used by test_consumer_model.py; also runs alone: PYTHONPATH=. python3 tests/lessons/day88/consumer_model.py
"""

from __future__ import annotations

import sys

import numpy as np

from course.lessons import get_lesson
from course.lessons._attention import lcg_qkv, reference

LESSON = get_lesson("day88")
THREADS = np.arange(128)
WARP, LANE = THREADS // 32, THREADS % 32


def _c_layout(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) within the m64 x n tile of accumulator register i of each thread: [128, n/2]."""
    i = np.arange(n // 2)
    j, e = i // 4, i % 4
    row = 16 * WARP[:, None] + LANE[:, None] // 4 + 8 * (e[None, :] // 2)
    col = 8 * j[None, :] + 2 * (LANE[:, None] % 4) + e[None, :] % 2
    return row, col


def _a_layout(k: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) within the 64 x 16k.. tile of A value v (0..7) of slice k of each thread: [128, 8]."""
    v = np.arange(8)
    row = 16 * WARP[:, None] + LANE[:, None] // 4 + 8 * ((v[None, :] // 2) % 2)
    col = 16 * k + 2 * (LANE[:, None] % 4) + v[None, :] % 2 + 8 * (v[None, :] // 4)
    return row, col


def _quad(x: np.ndarray, op) -> np.ndarray:
    """__shfl_xor_sync by 1 then by 2 over the thread axis (lanes of one warp), combined with op."""
    x = op(x, x[THREADS ^ 1])
    return op(x, x[THREADS ^ 2])


def simulate(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """O (FP16) and LSE (float32) of one head (S x D each) as the kernel's consumers compute them."""
    s_len, d = q.shape
    c = LESSON.constants({"ATTN_HEAD_DIM": d})
    bm, bn, scale = int(c["kBM"]), int(c["kBN"]), np.float32(1.4426950408889634 / np.sqrt(d))
    o_out = np.full((s_len, d), np.nan, dtype=np.float16)
    lse_out = np.full(s_len, np.nan, dtype=np.float32)
    s_row, s_col = _c_layout(bn)
    o_row, o_col = _c_layout(d)
    tiles = -(-s_len // bm)

    def rows_of(x: np.ndarray, start: int, n: int) -> np.ndarray:  # the TMA box: zeros past S
        out = np.zeros((n, d), dtype=np.float16)
        part = x[start : start + n]
        out[: len(part)] = part
        return out

    for q_tile in range(tiles):
        kv_end = min(s_len, (q_tile + 1) * bm) if causal else s_len
        kv_tiles = -(-kv_end // bn)
        for cons in range(2):
            q_rows = rows_of(q, q_tile * bm + cons * 64, 64)
            row0 = q_tile * bm + cons * 64 + 16 * WARP + LANE // 4  # each thread's first row
            o_acc = np.zeros((128, d // 2), dtype=np.float32)
            row_max = np.full((128, 2), -np.inf, dtype=np.float32)
            row_sum = np.zeros((128, 2), dtype=np.float32)
            for kt in range(kv_tiles):
                k_rows, v_rows = rows_of(k, kt * bn, bn), rows_of(v, kt * bn, bn)
                s_tile = (q_rows.astype(np.float64) @ k_rows.astype(np.float64).T).astype(np.float32)
                s_acc = s_tile[s_row, s_col]  # qkTile: the accumulator, by its layout
                # maskTile, on the tiles the kernel masks
                col0 = kt * bn + 2 * (LANE % 4)
                ragged = (kt + 1) * bn > s_len
                diagonal = causal and (kt + 1) * bn - 1 > q_tile * bm + cons * 64
                if ragged or diagonal:
                    i = np.arange(bn // 2)
                    col = col0[:, None] + 8 * (i[None, :] // 4) + (i[None, :] % 2)
                    row = row0[:, None] + 8 * ((i[None, :] % 4) // 2)
                    masked = (col >= s_len) | (causal & (col > row))
                    s_acc = np.where(masked, np.float32(-np.inf), s_acc)
                # softmaxTile
                alpha = np.zeros((128, 2), dtype=np.float32)
                for r in range(2):
                    cols = np.concatenate(
                        [np.arange(4 * j + 2 * r, 4 * j + 2 * r + 2) for j in range(bn // 8)]
                    )
                    mx = np.maximum(row_max[:, r], s_acc[:, cols].max(axis=1))
                    mx = _quad(mx, np.maximum)
                    shift = np.where(mx == -np.inf, np.float32(0), mx * scale).astype(np.float32)
                    with np.errstate(invalid="ignore"):
                        alpha[:, r] = np.exp2(row_max[:, r] * scale - shift)
                    row_max[:, r] = mx
                    p = np.exp2(s_acc[:, cols] * scale - shift[:, None]).astype(np.float32)
                    s_acc[:, cols] = p
                    row_sum[:, r] = row_sum[:, r] * alpha[:, r] + p.sum(axis=1, dtype=np.float32)
                # rescaleO: registers 4j, 4j+1 are row 0, 4j+2, 4j+3 row 1
                o_acc *= alpha[:, (np.arange(d // 2) % 4) // 2]
                # pFragment: slice k is the accumulator's floats 8k..8k+7, rounded to FP16
                p_frag = s_acc.astype(np.float16).reshape(128, bn // 16, 8)
                # pvTile: P rebuilt from the A fragment's own layout, then O += P V
                p_tile = np.full((64, bn), np.nan, dtype=np.float32)
                for kk in range(bn // 16):
                    a_row, a_col = _a_layout(kk)
                    p_tile[a_row, a_col] = p_frag[:, kk, :]
                assert not np.isnan(p_tile).any(), "the A fragments must cover P exactly"
                update = (p_tile.astype(np.float64) @ v_rows.astype(np.float64)).astype(np.float32)
                o_acc += update[o_row, o_col]
            # epilogue
            for r in range(2):
                total = _quad(row_sum[:, r], np.add)
                rows = row0 + 8 * r
                keep = rows < s_len
                regs = np.concatenate([np.arange(4 * j + 2 * r, 4 * j + 2 * r + 2) for j in range(d // 8)])
                values = (o_acc[:, regs] * (np.float32(1) / total)[:, None]).astype(np.float16)
                cols = o_col[:, regs]
                o_out[rows[keep, None], cols[keep]] = values[keep]
                lse = (np.log2(total) + row_max[:, r] * scale) * np.float32(0.6931471805599453)
                lse_out[rows[keep]] = lse[keep]
    return o_out, lse_out


CASES = [
    (64, 1, False),
    (64, 129, True),
    (64, 300, False),
    (64, 300, True),
    (128, 200, True),
    (256, 200, True),
]


def check(d: int, s: int, causal: bool, seed_heads: int = 1) -> tuple[bool, str]:
    c = LESSON.constants({"ATTN_HEAD_DIM": d})
    q, k, v = lcg_qkv((1, seed_heads, s, d))
    want_o, want_lse = reference(q, k, v, causal)
    got_o, got_lse = simulate(q[0, 0], k[0, 0], v[0, 0], causal)
    rel = np.abs(got_o.astype(np.float64) - want_o[0, 0]) / np.maximum(np.abs(want_o[0, 0]), 1.0)
    rel_lse = np.abs(got_lse - want_lse[0, 0]) / np.maximum(np.abs(want_lse[0, 0]), 1.0)
    ok = bool((rel <= float(c["kRelTolerance"])).all() and (rel_lse <= float(c["kLseTolerance"])).all())
    return ok, (
        f"D={d} S={s} {'causal' if causal else 'non-causal'}: {'PASS' if ok else 'FAIL'}, "
        f"max rel error O {np.nanmax(rel):.3g}, LSE {np.nanmax(rel_lse):.3g}"
    )


if __name__ == "__main__":
    results = [check(*case) for case in CASES]
    for _, line in results:
        print(line)
    sys.exit(0 if all(ok for ok, _ in results) else 1)
