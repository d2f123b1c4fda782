"""The attention benchmark (Days 88, 89): a kernel against PyTorch's ``scaled_dot_product_attention``.

The size N is the sequence length S; batch 1, 16 heads, D = 128 (the default build), FP16, random
normal Q, K and V (``course.lessons._attention``). The rows are non-causal; ``finish`` times the
causal case at every size, kernel and peers interleaved, and reports each ratio with its spread.

Peers, named by backend (``torch.nn.attention.sdpa_kernel(SDPBackend.X)``): cuDNN's attention
(FlashAttention-3 class on Hopper), the flash backend (FlashAttention-2) and the memory-efficient
one. PyTorch is no dependency of the course, only its ``attention-peers`` extra (pyproject.toml),
imported inside the peers: where it is missing, or a backend cannot run this shape on this GPU,
that peer comes back unavailable with the reason and the run goes on. A peer writes a new O; the
call copies it into the workload's O (one B x H x S x D FP16 copy, inside its time: 32 MiB at
S = 8192, about 1% of the attention itself on an H100 by bandwidth, an estimate not measured), so
every peer is checked against the same float64 reference as the kernel.

Each lesson's ``bench.py`` is one call of ``attention_spec``: its lesson, its peers (Day 89 adds
the step before it, Day 88's kernel, to the SDPA backends) and the sentences that name them. Each
is a step of the attention climb (``ATTENTION_CLIMB``, drawn by ``course.bench.climb``): its
non-causal rates against S, the cuDNN and flash backends as the peer lines; a later attention
lesson whose ``bench.py`` calls ``attention_spec`` joins it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ..bench import engine
from ..bench.arith import paired_ratios, rate, rotation_buffers
from ..bench.result import Reason
from ..bench.spec import KERNEL, BenchSpec, Climb, Context, Extras, Peer
from ._attention import BENCH_B, BENCH_H

if TYPE_CHECKING:
    from . import Lesson

HEAD_DIM = 128  # the default build's kHeadDim (the bench compiles the file with no -D)
SIZES = (4096, 8192, 16384)
PAGE_SIZES = (4096, 8192)
BACKENDS = (
    ("CUDNN_ATTENTION", "PyTorch SDPA, cuDNN backend"),
    ("FLASH_ATTENTION", "PyTorch SDPA, flash backend (FlashAttention-2)"),
    ("EFFICIENT_ATTENTION", "PyTorch SDPA, memory-efficient backend"),
)


# The attention lessons' climb (``course.bench.climb``; Day 85's page shows it after the GEMM ladder's):
# each step's non-causal rate against S, set against the cuDNN backend (the table's peer) and the
# flash backend; the memory-efficient backend and a step's own predecessor are on its page.
ATTENTION_CLIMB = Climb(
    name="attention",
    title="The attention climb",
    size_name="S",
    size_label=f"S, the sequence length (B = {BENCH_B}, H = {BENCH_H}, D = {HEAD_DIM}; non-causal)",
    peer="cuDNN",
    peers=(BACKENDS[0][1], BACKENDS[1][1]),
    note=(
        f"Non-causal, FP16, D = {HEAD_DIM}; cuDNN is PyTorch SDPA's cuDNN backend timed in the same run "
        "on the same inputs, its batches interleaved with the step's (the causal case is on each step's page)."
    ),
)


def attention_flops(n: int, causal: bool = False) -> float:
    """4 B H S^2 D: two matrix products of 2 S^2 D each per head; half of it when causal."""
    full = 4.0 * BENCH_B * BENCH_H * n * n * HEAD_DIM
    return full / 2 if causal else full


def set_bytes(n: int) -> int:
    """Q, K, V and O (FP16) and LSE (float32) of one buffer set."""
    elems = BENCH_B * BENCH_H * n * HEAD_DIM
    return 4 * elems * 2 + BENCH_B * BENCH_H * n * 4


def _torch_problem() -> str:
    """Why PyTorch's SDPA cannot be timed here ('' when it can)."""
    try:
        # heavy: torch, only for the benchmark's peers
        import torch
        from torch.nn.attention import sdpa_kernel  # noqa: F401
    except ImportError as e:
        return (
            f"PyTorch is not installed ({e}); `pip install torch` (the course's attention-peers "
            "extra) to time its SDPA backends"
        )
    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA device"
    return ""


def _views(work: Any, j: int) -> tuple[Any, Any, Any, Any]:
    """Torch tensors over the workload's set j (no copies: CUDA array interface), made once."""
    # heavy: torch, only for the benchmark's peers
    import torch

    cache = work.__dict__.setdefault("_torch_views", {})
    if j not in cache:
        i = j % work.q.shape[0]
        cache[j] = tuple(
            torch.as_tensor(x, device="cuda") for x in (work.q[i], work.k[i], work.v[i], work.o[j])
        )
    views: tuple[Any, Any, Any, Any] = cache[j]
    return views


def _backend_problem(backend: str) -> str:
    """Run the backend once on a small causal problem; '' when it ran, else its error in one line."""
    # heavy: torch, only for the benchmark's peers
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(1, 2, 256, HEAD_DIM, device="cuda", dtype=torch.float16)
    try:
        with sdpa_kernel(getattr(SDPBackend, backend)):
            torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        torch.cuda.synchronize()
    except (RuntimeError, AttributeError) as e:
        return (
            f"SDPBackend.{backend} cannot run here: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        )
    return ""


def sdpa_peers() -> tuple[Peer, ...]:
    problem = _torch_problem()
    peers = []
    for backend, name in BACKENDS:
        why = problem or _backend_problem(backend)

        def call(work: Any, j: int, backend: str = backend) -> None:
            # heavy: cupy and torch, only for the benchmark's peers
            import cupy as cp
            import torch
            from torch.nn.attention import SDPBackend, sdpa_kernel

            q, k, v, o = _views(work, j)
            stream = (
                torch.cuda.ExternalStream(cp.cuda.get_current_stream().ptr)
                if cp.cuda.get_current_stream().ptr
                else None
            )
            with torch.cuda.stream(stream), sdpa_kernel(getattr(SDPBackend, backend)):
                o.copy_(torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=work.causal))

        peers.append(Peer(name, call, unavailable=why))
    return tuple(peers)


def _causal_title(name: str, n: int) -> str:
    return f"Causal at S={n} against {name}"


def finish(ctx: Context) -> Extras:
    """The causal case at every size: kernel and each available peer checked, then timed in the
    same interleaved batches; one reason per peer with the ratio's spread, and the kernel's rate.
    Any attention lesson's (``ctx.lesson``: Day 89 times Day 88's kernel as one of its peers)."""
    reasons: list[Reason] = []
    peers = [p for p in ctx.peers if not p.unavailable]
    for n in ctx.sizes:
        compiled = ctx.compile(n)
        sets = rotation_buffers(set_bytes(n), ctx.l2_bytes)  # as many sets as the rows rotate over
        work = ctx.lesson.module("host").HOST.workload(compiled, n, sets, "bench", causal=True)
        calls: dict[str, tuple[Any, Any]] = {KERNEL: (work.launch, None)}
        for p in peers:
            calls[p.name] = (partial(p.call, work), None)
        ctx.verify(n, work, calls)
        samples = ctx.timer.samples_together(
            {key: [partial(call, j) for j in range(work.sets)] for key, (call, _) in calls.items()}
        )
        mine = samples[KERNEL].per_call_ms
        causal_rate = rate("TFLOP/s", attention_flops(n, causal=True), samples[KERNEL].timing().median_ms)
        reasons.append(
            Reason(
                f"Causal at S={n}",
                causal_rate,
                "TFLOP/s",
                "measured",
                f"the kernel on causal attention, B={BENCH_B}, H={BENCH_H}, D={HEAD_DIM}, counting "
                "2 B H S^2 D FLOPs (half the non-causal count), checked against float64 first",
            )
        )
        for p in peers:
            r, lo, hi = paired_ratios(mine, samples[p.name].per_call_ms)
            reasons.append(
                Reason(
                    _causal_title(p.name, n),
                    r,
                    "x",
                    "measured",
                    f"the kernel's rate over {p.name}'s on the same causal inputs, timed in interleaved "
                    f"batches: {r:.2f}x ({lo:.2f}x to {hi:.2f}x over {len(mine)} repeats)",
                    lo,
                    hi,
                )
            )
        ctx.progress(f"{ctx.lesson.id} S={n} causal: {causal_rate:,.0f} TFLOP/s")
        del work, calls
        engine.release()
    return Extras(reasons=tuple(reasons))


SDPA_NOTE = (
    "torch.nn.functional.scaled_dot_product_attention under torch.nn.attention.sdpa_kernel("
    "SDPBackend.CUDNN_ATTENTION | FLASH_ATTENTION | EFFICIENT_ATTENTION), on the same buffers; each "
    "call includes one copy of its O into the shared output"
)


def attention_spec(
    lesson: Lesson, *, peers: Callable[[], tuple[Peer, ...]], peer_note: str, anchor: str
) -> BenchSpec:
    """One attention lesson's benchmark: the sizes, work, buffers, causal pass above,
    with the lesson's own peers, the sentence that names them and its published anchor."""
    return BenchSpec(
        sizes=SIZES,
        page_sizes=PAGE_SIZES,
        max_size=16384,
        unit="TFLOP/s",
        work=attention_flops,
        set_bytes=set_bytes,
        kernel_label=f"{lesson.kernel_name} (FP16, D = {HEAD_DIM}, B = {BENCH_B}, H = {BENCH_H})",
        peers=peers,
        finish=finish,
        # No findings: the table holds every non-causal number and "What the numbers say" every causal
        # one; each number is shown once (issue 38, as Days 85-87).
        notes=(
            f"size N is the sequence length S; B = {BENCH_B}, H = {BENCH_H}, D = {HEAD_DIM}, FP16 Q, K, "
            "V drawn from N(0, 1); rates count 4 B H S^2 D FLOPs (2 B H S^2 D causal)",
            "O checked against a float64 softmax per head on the GPU before timing (kRelTolerance, "
            "floor 1); the kernel's LSE is checked by the lesson run and the GPU tests",
            f"peers: {peer_note}",
            f"published anchor, not measured here: {anchor}",
        ),
        # The benchmark times whole 128-row tiles; ragged S (any S runs) is the lesson run's and the
        # GPU tests' (each attention lesson's tests/lessons/<day>/test_gpu.py).
        size_step=128,
        size_label=f"S, the sequence length (B = {BENCH_B}, H = {BENCH_H}, D = {HEAD_DIM})",
        # A step of attention's climb against cuDNN, not the GEMM ladder's against cuBLAS.
        climb=ATTENTION_CLIMB,
    )
