"""Day 88's numpy model: the online walk is the definition, block by block, and its trace says why.

Imports ``course.lessons.day88.softmax`` directly: the model needs no lesson registration, kernel
or GPU.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from course.hopper.wgmma import ModelError
from course.lessons.day88 import softmax as sm

TOL = 1e-12


def qkv(seq: int, d: int = 64, seed: int = 0, dv: int | None = None):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((seq, d)),
        rng.standard_normal((seq, d)),
        rng.standard_normal((seq, dv or d)),
    )


def test_the_reference_is_softmax_times_v_written_out():
    q, k, v = qkv(37, 16, seed=1)
    s = q @ k.T / 4.0
    p = np.exp(s) / np.exp(s).sum(axis=1, keepdims=True)  # small scores: the naive form is exact enough
    ref = sm.attention_reference(q, k, v)
    assert np.allclose(ref.o, p @ v, rtol=0, atol=TOL)
    assert np.allclose(ref.lse, np.log(np.exp(s).sum(axis=1)), rtol=0, atol=TOL)


def test_the_causal_reference_lets_row_i_see_keys_0_to_i_only():
    q, k, v = qkv(20, 8, seed=2)
    ref = sm.attention_reference(q, k, v, causal=True)
    assert np.allclose(ref.o[0], v[0], rtol=0, atol=TOL)  # row 0 sees key 0 alone
    for i in (5, 19):
        sub = sm.attention_reference(q[i : i + 1], k[: i + 1], v[: i + 1])
        assert np.allclose(ref.o[i], sub.o[0], rtol=0, atol=TOL)
        assert np.isclose(ref.lse[i], sub.lse[0], rtol=0, atol=TOL)


def test_the_reference_takes_batch_and_head_dimensions():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 2, 4, 33, 16))
    ref = sm.attention_reference(q, k, v, causal=True)
    assert ref.o.shape == (2, 4, 33, 16) and ref.lse.shape == (2, 4, 33)
    one = sm.attention_reference(q[1, 2], k[1, 2], v[1, 2], causal=True)
    assert np.array_equal(ref.o[1, 2], one.o) and np.array_equal(ref.lse[1, 2], one.lse)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize(
    "seq", [1, 64, 200, 257, 1000]
)  # ragged: 200, 257, 1000 are no multiple of any block
@pytest.mark.parametrize(("block_q", "block_k"), [(64, 64), (128, 128), (64, 176), (128, 48), (7, 13)])
def test_the_tiled_walk_is_the_reference(seq, block_q, block_k, causal):
    q, k, v = qkv(seq, 64, seed=seq + block_k)
    ref = sm.attention_reference(q, k, v, causal=causal)
    got = sm.flash_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal)
    assert np.abs(got.o - ref.o).max() <= TOL
    assert np.abs(got.lse - ref.lse).max() <= TOL


@pytest.mark.parametrize("block", [1, 16, 64, 100, 128, 500, 4096])
def test_one_tiles_walk_is_the_reference_for_any_block_size(block):
    q, k, v = qkv(500, 128, seed=block, dv=96)  # V's width need not be Q's
    ref = sm.attention_reference(q, k, v)
    walk = sm.online_softmax(q @ k.T, block, v, scale=1 / math.sqrt(128))
    assert np.abs(walk.o - ref.o).max() <= TOL and np.abs(walk.lse - ref.lse).max() <= TOL
    assert len(walk.steps) == -(-500 // block)


def test_exp2_with_the_folded_scale_is_exp():
    # p = exp2(s * scale * log2(e) - m * scale * log2(e)) is exp(scale * (s - m)): the kernel's FFMA form.
    s = np.linspace(-40, 40, 101)
    scale = 1 / math.sqrt(128)
    assert np.allclose(
        np.exp2(s * scale * sm.LOG2E - 3.0 * scale * sm.LOG2E), np.exp(scale * (s - 3.0)), rtol=1e-14
    )


# --- the trace ---------------------------------------------------------------------------------------
def test_the_running_max_only_grows_and_ends_at_the_row_max():
    q, k, v = qkv(640, 64, seed=5)
    s = q @ k.T
    walk = sm.online_softmax(s, 128, v)
    assert (np.diff(walk.m, axis=0) >= 0).all()
    assert np.array_equal(walk.m[-1], s.max(axis=1))
    for b, step in enumerate(walk.steps):  # after block b: the max over keys 0..(b+1)*128 - 1
        assert np.array_equal(step.m_new, s[:, : (b + 1) * 128].max(axis=1))


def test_the_rescale_is_exp_of_the_max_step_and_one_where_the_max_held():
    q, k, v = qkv(640, 64, seed=6)
    scale = 1 / 8
    walk = sm.online_softmax(q @ k.T, 64, v)
    assert (walk.rescale[0] == 1).all()  # nothing to rescale before the first block
    for step in walk.steps[1:]:
        expected = np.exp(scale * (step.m_old - step.m_new))
        assert np.allclose(step.rescale, expected, rtol=1e-14, atol=0)
        held = step.m_new == step.m_old
        assert (step.rescale[held] == 1).all() and (step.rescale[~held] < 1).all()
        assert (step.rescale > 0).all()
    assert (walk.rescale < 1).any()  # on random keys the max does grow after block 0


def test_the_running_sum_follows_its_recurrence_and_lies_between_1_and_the_keys_seen():
    q, k, v = qkv(512, 64, seed=7)
    s = q @ k.T
    scale = 1 / 8
    walk = sm.online_softmax(s, 128, v)
    previous = np.zeros(len(s))
    for b, step in enumerate(walk.steps):
        seen = s[:, : (b + 1) * 128]
        # l is the sum over every key seen, taken against the current max: the rescale kept it so.
        assert np.allclose(step.ell, np.exp(scale * (seen - step.m_new[:, None])).sum(axis=1), rtol=1e-13)
        block = s[:, b * 128 : (b + 1) * 128]
        fresh = np.exp(scale * (block - step.m_new[:, None])).sum(axis=1)
        assert np.allclose(step.ell, previous * step.rescale + fresh, rtol=1e-13)
        assert (step.ell >= 1).all() and (step.ell <= (b + 1) * 128).all()  # the max's own term is 1
        previous = step.ell


def test_huge_logits_overflow_the_naive_softmax_but_not_the_online_one():
    q, k, v = qkv(300, 64, seed=8)
    s = (q @ k.T) * 1e3  # scores up to ~1e5: exp overflows float64 past 709.78
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        naive = sm.naive_softmax(s / 8.0)
    assert np.isnan(naive).any()
    with np.errstate(
        over="raise", invalid="raise"
    ):  # no overflow, no 0 * inf, no inf - inf (underflow is fine)
        walk = sm.online_softmax(s, 64, v)
    assert np.isfinite(walk.o).all() and np.isfinite(walk.lse).all()
    ref = sm.attention_reference(s / 8.0, np.eye(300), v, scale=1.0)  # the stable definition
    assert np.abs(walk.o - ref.o).max() <= TOL
    assert np.allclose(walk.lse, ref.lse, rtol=1e-15, atol=0)


# --- causal: skip above the diagonal, mask the diagonal ---------------------------------------------
def test_causal_visits_stop_at_the_diagonal_and_mask_only_the_diagonal_block():
    blocks = sm.key_blocks(1024, 128, causal=True, row0=384, rows=128)
    assert [b.index for b in blocks] == [0, 1, 2, 3]
    assert [b.masked for b in blocks] == [False, False, False, True]
    full = sm.key_blocks(1024, 128, row0=384, rows=128)
    assert len(full) == 8 and not any(b.masked for b in full)


def test_a_masked_block_matters_and_a_skipped_one_would_not():
    q, k, v = qkv(256, 64, seed=9)
    s = q @ k.T
    ref = sm.attention_reference(q, k, v, causal=True)
    walk = sm.online_softmax(s[128:], 128, v, causal=True, row0=128)
    assert np.abs(walk.o - ref.o[128:]).max() <= TOL
    # Without the diagonal block's mask, row 128 would see keys 129..255.
    unmasked = sm.attention_reference(q[128:], k, v)
    assert np.abs(unmasked.o - ref.o[128:]).max() > 0.1


@pytest.mark.parametrize(("seq", "tile"), [(4096, 128), (8192, 128), (4096, 64), (16384, 128)])
def test_causal_visits_the_triangle_of_square_tiles(seq, tile):
    n = seq // tile
    count = sm.causal_tiles(seq, tile)
    assert count.visited == n * (n + 1) // 2 and count.total == n * n and count.masked == n
    assert count.fraction == sm.triangle_fraction(n) == Fraction(n + 1, 2 * n)
    assert sm.causal_tiles(seq, tile, causal=False).fraction == 1


def test_the_tile_count_is_the_walk_the_tiled_model_takes():
    q, k, v = qkv(1000, 16, seed=10)
    tiled = sm.flash_attention(q, k, v, block_q=128, block_k=128, causal=True)
    count = sm.causal_tiles(1000, 128)
    assert count.visited == sum(len(v) for v in tiled.visits) == 36  # 8 tiles of rows, the last ragged
    assert count.masked == sum(b.masked for visit in tiled.visits for b in visit) == 8


def test_the_share_causal_visits_approaches_one_half():
    assert sm.triangle_fraction(1) == 1 and sm.triangle_fraction(2) == Fraction(3, 4)
    assert sm.triangle_fraction(32) == Fraction(528, 1024)
    assert abs(sm.triangle_fraction(1000) - Fraction(1, 2)) < Fraction(1, 1000)


# --- the ragged last block: what the TMA fills --------------------------------------------------------
def test_the_ragged_block_must_be_masked_because_the_tma_fills_zeros():
    q, k, v = qkv(200, 64, seed=11)
    ref = sm.attention_reference(q, k, v)
    assert [b.ragged for b in sm.key_blocks(200, 128)] == [False, True]
    # What the kernel's shared memory holds: K and V padded to 256 rows with zeros.
    kp, vp = np.zeros((256, 64)), np.zeros((256, 64))
    kp[:200], vp[:200] = k, v
    # Unmasked, the 56 zero rows score 0, not -inf: each gets weight exp(-m) and dilutes O.
    padded = sm.online_softmax(q @ kp.T, 128, vp)
    assert np.abs(padded.o - ref.o).max() > 1e-3
    # Masked to the 200 real keys (the walk over the real ones), it is the reference again.
    real = sm.online_softmax((q @ kp.T)[:, :200], 128, vp[:200])
    assert np.abs(real.o - ref.o).max() <= TOL


# --- P rounded to FP16 before P V ------------------------------------------------------------------------
def test_p_in_fp16_costs_at_most_its_rounding():
    q, k, v = qkv(1024, 128, seed=12)
    ref = sm.attention_reference(q, k, v)
    walk = sm.online_softmax(q @ k.T, 128, v, p_dtype=np.float16)
    err = np.abs(walk.o - ref.o).max()
    # Each p in [0, 1] rounds by at most 2^-11 relative (2^-25 absolute below 2^-14); l >= 1 sums the
    # unrounded p, so |O - ref| <= max|v| * (2^-11 + keys * 2^-25).
    assert 0 < err <= np.abs(v).max() * (2.0**-11 + 1024 * 2.0**-25)
    assert np.array_equal(walk.lse, sm.online_softmax(q @ k.T, 128, v).lse)  # l never saw the rounding


# --- counts -------------------------------------------------------------------------------------------
def test_flops_and_stage_bytes():
    assert sm.attention_flops(1, 1, 2, 3) == 4 * 2 * 2 * 3
    assert sm.attention_flops(2, 16, 8192, 128) == 4 * 2 * 16 * 8192**2 * 128
    assert sm.attention_flops(2, 16, 8192, 128, causal=True) * 2 == sm.attention_flops(2, 16, 8192, 128)
    assert sm.stage_bytes(128, 128) == 2 * 128 * 128 * 2 == 65536


# --- bad input ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sm.key_blocks(0, 128), r"keys must be a positive int \(got 0\)"),
        (lambda: sm.key_blocks(100, 0), r"block must be a positive int \(got 0\)"),
        (lambda: sm.key_blocks(100, 64, row0=-1), r"row0 must be an int >= 0 \(got -1\)"),
        (
            lambda: sm.online_softmax(np.zeros((2, 5)), 4, np.zeros((6, 3))),
            r"v has 6 rows but scores have 5 keys",
        ),
        (lambda: sm.online_softmax(np.zeros(5), 4, np.zeros((5, 3))), r"scores must be a 2-D array"),
        (
            lambda: sm.attention_reference(np.zeros((4, 8)), np.zeros((5, 8)), np.zeros((5, 8)), causal=True),
            r"S_q 4 != S_k 5",
        ),
        (lambda: sm.attention_flops(1, 16, 0, 128), r"seq must be a positive int"),
    ],
)
def test_bad_input_says_what_and_where(call, message):
    with pytest.raises(ModelError, match=message):
        call()
