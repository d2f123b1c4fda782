"""The attention benchmark (Days 88-90): a kernel against PyTorch's ``scaled_dot_product_attention``.

The size N is the sequence length S; batch 1, 16 heads, D = 128 (the default build), FP16, random
normal Q, K and V (``course.lessons._attention``). The rows are non-causal; ``finish`` times the
causal case at every size, then head dimensions 64 and 256 (their builds, non-causal, at S = 8192)
and the BF16 build (-DATTN_BF16=1, D = 128, non-causal and causal, at S = 8192; the backends on
torch.bfloat16 views of the same bits) against the SDPA backends, kernel and peers interleaved, and
reports each ratio with its spread.

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
OTHER_HEAD_DIMS = (64, 256)  # timed by ``finish`` at one size, non-causal (-DATTN_HEAD_DIM builds)
HEAD_DIM_SIZE = 8192  # that size (or the largest asked for, when 8192 is not): the anchors' S
BF16_CAUSAL = (False, True)  # the BF16 build (-DATTN_BF16=1), D = 128, at that size: timed by ``finish``
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


def attention_flops(n: int, causal: bool = False, head_dim: int = HEAD_DIM) -> float:
    """4 B H S^2 D: two matrix products of 2 S^2 D each per head; half of it when causal."""
    full = 4.0 * BENCH_B * BENCH_H * n * n * head_dim
    return full / 2 if causal else full


def set_bytes(n: int, head_dim: int = HEAD_DIM) -> int:
    """Q, K, V and O (FP16, or BF16: 2 bytes either way) and LSE (float32) of one buffer set."""
    elems = BENCH_B * BENCH_H * n * head_dim
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
    """Torch tensors over the workload's set j (no copies: CUDA array interface), made once; a BF16
    workload's uint16 bits viewed as torch.bfloat16, the same values the kernel reads."""
    # heavy: torch, only for the benchmark's peers
    import torch

    cache = work.__dict__.setdefault("_torch_views", {})
    if j not in cache:
        i = j % work.q.shape[0]
        bf16 = getattr(work, "bf16", False)
        cache[j] = tuple(
            torch.as_tensor(x, device="cuda").view(torch.bfloat16)
            if bf16
            else torch.as_tensor(x, device="cuda")
            for x in (work.q[i], work.k[i], work.v[i], work.o[j])
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


def step_before_peer(lesson_id: str, name: str) -> Peer:
    """The step before a page's kernel as its peer: ``lesson_id``'s default build, launched on the
    workload's buffers (the attention kernels share the launch contract: arguments, grid, block and
    shared memory). A build that fails here makes the peer unavailable, with the reason."""
    # heavy: cupy, only for the benchmark (the peer is made on the GPU)
    from ..errors import CourseError
    from ..kernel.compile import compile_lesson
    from . import get_lesson

    day = get_lesson(lesson_id)
    try:
        compiled = compile_lesson(day)
    except CourseError as e:
        return Peer(name, lambda work, j: None, unavailable=f"Day {day.day}'s kernel did not build here: {e}")

    def call(work: Any, j: int) -> None:
        work.launch(j, compiled)

    return Peer(name, call)


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


def head_dim_title(d: int, n: int, name: str | None = None) -> str:
    """The reasons of ``finish``'s other head dimensions: the rate, then one ratio per peer."""
    return f"D={d} at S={n}" + (f" against {name}" if name else "")


def bf16_title(causal: bool, n: int, name: str | None = None) -> str:
    """The reasons of ``finish``'s BF16 rows (D = 128), labelled BF16: the rate, then one ratio per peer."""
    return f"BF16 D={HEAD_DIM} {'causal ' if causal else ''}at S={n}" + (f" against {name}" if name else "")


SDPA_NAMES = frozenset(name for _, name in BACKENDS)


def _case(
    ctx: Context,
    n: int,
    peers: list[Peer],
    *,
    causal: bool,
    head_dim: int,
    title: str,
    detail: str,
    ratio_title: Callable[[str], str],
    bf16: bool = False,
) -> list[Reason]:
    """One shape timed: the kernel (the build for ``head_dim``, BF16 when ``bf16``) and each peer
    checked against float64, then timed in the same interleaved batches; the kernel's rate and each
    ratio with its spread. A peer that raises on this shape (a backend without this head dimension)
    is named in the progress line and left out."""
    flags = {} if head_dim == HEAD_DIM else {"ATTN_HEAD_DIM": head_dim}
    if bf16:
        flags["ATTN_BF16"] = 1
    compiled = ctx.compile(n, defines=flags or None)
    sets = rotation_buffers(set_bytes(n, head_dim), ctx.l2_bytes)  # as many sets as the rows rotate over
    work = ctx.lesson.module("host").HOST.workload(compiled, n, sets, "bench", causal=causal)
    ctx.verify(n, work, {KERNEL: (work.launch, None)})
    calls: dict[str, Any] = {KERNEL: work.launch}
    for p in peers:
        call = partial(p.call, work)
        try:
            ctx.verify(n, work, {p.name: (call, None)})
        except RuntimeError as e:  # PyTorch's error for a shape its backend lacks
            ctx.progress(
                f"{p.name} left out at {title}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            )
            continue
        calls[p.name] = call
    samples = ctx.timer.samples_together(
        {key: [partial(call, j) for j in range(work.sets)] for key, call in calls.items()}
    )
    mine = samples[KERNEL].per_call_ms
    kernel_rate = rate("TFLOP/s", attention_flops(n, causal, head_dim), samples[KERNEL].timing().median_ms)
    reasons = [Reason(title, kernel_rate, "TFLOP/s", "measured", detail)]
    for name in calls:
        if name == KERNEL:
            continue
        r, lo, hi = paired_ratios(mine, samples[name].per_call_ms)
        reasons.append(
            Reason(
                ratio_title(name),
                r,
                "x",
                "measured",
                f"the kernel's rate over {name}'s on the same {'causal ' if causal else ''}"
                f"{'BF16 ' if bf16 else ''}inputs"
                f"{'' if head_dim == HEAD_DIM else f' at D = {head_dim}'}, timed in interleaved "
                f"batches: {r:.2f}x ({lo:.2f}x to {hi:.2f}x over {len(mine)} repeats)",
                lo,
                hi,
            )
        )
    ctx.progress(f"{ctx.lesson.id} {title}: {kernel_rate:,.0f} TFLOP/s")
    del work, calls, samples
    engine.release()
    return reasons


def finish(ctx: Context) -> Extras:
    """The causal case at every size, then the other head dimensions (64 and 256, non-causal) and
    the BF16 build (D = 128, non-causal and causal) at one size against the SDPA backends (on
    torch.bfloat16 views of the same bits for BF16): kernel and each available peer checked, then
    timed in the same interleaved batches; one reason per peer with the ratio's spread, and the
    kernel's rate. Any attention lesson's (``ctx.lesson``: Day 89 times Day 88's kernel as one of
    its peers, in the FP16 D = 128 rows only: an FP16 D = 128 build cannot run another head
    dimension's buffers, nor read BF16 ones)."""
    reasons: list[Reason] = []
    peers = [p for p in ctx.peers if not p.unavailable]
    for n in ctx.sizes:
        reasons += _case(
            ctx,
            n,
            peers,
            causal=True,
            head_dim=HEAD_DIM,
            title=f"Causal at S={n}",
            detail=f"the kernel on causal attention, B={BENCH_B}, H={BENCH_H}, D={HEAD_DIM}, counting "
            "2 B H S^2 D FLOPs (half the non-causal count), checked against float64 first",
            ratio_title=partial(_causal_title, n=n),
        )
    n = HEAD_DIM_SIZE if HEAD_DIM_SIZE in ctx.sizes else max(ctx.sizes)
    sdpa = [p for p in peers if p.name in SDPA_NAMES]
    for d in OTHER_HEAD_DIMS:
        reasons += _case(
            ctx,
            n,
            sdpa,
            causal=False,
            head_dim=d,
            title=head_dim_title(d, n),
            detail=f"the kernel built with -DATTN_HEAD_DIM={d}, non-causal, B={BENCH_B}, H={BENCH_H}, "
            f"S={n}, counting 4 B H S^2 D FLOPs, checked against float64 first",
            ratio_title=partial(head_dim_title, d, n),
        )
    for causal in BF16_CAUSAL:
        reasons += _case(
            ctx,
            n,
            sdpa,
            causal=causal,
            head_dim=HEAD_DIM,
            title=bf16_title(causal, n),
            detail=f"the kernel built with -DATTN_BF16=1 (BF16 Q, K, V, P and O), {'causal' if causal else 'non-causal'}, "
            f"B={BENCH_B}, H={BENCH_H}, D={HEAD_DIM}, S={n}, counting {2 if causal else 4} B H S^2 D FLOPs, "
            "checked against float64 first (the BF16 tolerance)",
            ratio_title=partial(bf16_title, causal, n),
            bf16=True,
        )
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
            "the BF16 rows: the -DATTN_BF16=1 build on the same N(0, 1) draw rounded to BF16, the SDPA "
            "backends on torch.bfloat16 views of the same buffers",
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
