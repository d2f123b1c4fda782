"""Issue 40: the overlapped-promotion build (-DGEMM_PROMOTE_OVERLAP=1), the 128 x 128 promoting build whose
consumers keep two chain accumulators and promote each chain beside the next one's first K-tile
(kernels/gemm8_fp8.cu, regions "overlap-order" and "overlap"; evidence/gemm_dev/notes_pover40.md).

Run on an H100 in session 16 (exact, and 0.93-0.96x the 128 x 128 promoting build: not adopted).
The CPU tests compile it (NVRTC), read its constants, check what the file refuses, that the chooser never picks it and that the bench times it only when asked; the GPU tests (skipped
without one) check it on ragged shapes against float64 and bit for bit against the 128 x 128 promoting
build at the same promote_every.
"""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernel.compile import CompileError, compile_lesson, compile_offline
from course.kernel.host import run_lesson
from course.kernel.ptxas import parse
from course.lessons import get_lesson
from course.lessons._fp8 import build_for, check_every, grid_for
from course.lessons.day87 import bench, chooser

LESSON = get_lesson("day87")
OVERLAP = chooser.DEV_BUILDS["overlap"]
REDUCED = LESSON.kernel_path.parents[1] / "evidence" / "gemm_dev" / "pover40"


def test_the_build_is_the_promoting_128x128_build_with_the_overlap_flag():
    assert OVERLAP == {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_OVERLAP": 1} == chooser.OVERLAP_BUILD


@pytest.mark.parametrize("cluster", [2, 1])
def test_it_compiles_without_spills_or_wgmma_serialization(cluster):
    flags = {**OVERLAP, "GEMM_CLUSTER": cluster}
    result = compile_offline(LESSON, defines=flags, ptxas_verbose=True)
    assert result.cubin[:4] == b"\x7fELF"
    report = parse(result.log, LESSON.kernel_name)
    assert not report.spills and not report.serialized_wgmma and not report.injected_waits, result.log
    assert report.spill_stores == 0 and report.spill_loads == 0, result.log
    assert not any("C75" in w for w in report.warnings), result.log
    # ptxas gives the kernel the launch bound's ceiling (384 threads: 168); setmaxnreg then moves 40 / 232
    assert report.registers == 168


def _events(ptx: str) -> list[str]:
    """The PTX's wgmma commits and waits, and each run of FP32 adds as "add N", in order."""
    out: list[str] = []
    adds = 0
    for line in ptx.splitlines():
        if "add.f32" in line:
            adds += 1
            continue
        if adds:
            out.append(f"add {adds}")
            adds = 0
        names = {
            "wgmma.commit_group": "commit_group",
            "wgmma.wait_group.sync.aligned 1": "wait_group 1",
            "wgmma.wait_group.sync.aligned 0": "wait_group 0",
        }
        out += [name for op, name in names.items() if op in line]
    return out


def test_the_promotions_lie_beside_the_next_chains_first_k_tile():
    # The overlap itself, in the NVRTC PTX: two runs of 64 FADDs (a pair's owed acc1 chain, and acc0's
    # chain) right after a wait_group 1, before any later commit or wait_group 0; the other two (the
    # tile's last chain, in acc0 or acc1) after the drain. Without fenceOperand(total) NVVM sinks the
    # first two to the pair's wait_group 0.
    ptx = compile_offline(LESSON, defines=OVERLAP).ptx
    events = _events(ptx if isinstance(ptx, str) else ptx.decode())
    runs = [i for i, e in enumerate(events) if e == "add 64"]
    assert len(runs) == 4, events
    beside = [i for i in runs if events[i - 1] == "wait_group 1"]
    assert len(beside) == 2, events
    assert all(
        events[i - 1] != "wait_group 1" and "wait_group 0" in events[:i] for i in runs if i not in beside
    )


def test_its_constants_are_the_promoting_builds_which_the_host_reads():
    c, prom = LESSON.constants(OVERLAP), LESSON.constants(chooser.PROMOTE_BUILD)
    keys = (
        "kBM",
        "kBN",
        "kClusterM",
        "kPromote",
        "kBlockScales",
        "kThreadsPerBlock",
        "kSmemBytes",
        "kStages",
    )
    assert {k: c[k] for k in keys} == {k: prom[k] for k in keys}
    assert (c["kBM"], c["kBN"], c["kPromote"], c["kStages"], c["kAccRegs"]) == (128, 128, 1, 6, 64)
    # setmaxnreg 40 / 232 (the promoting build's): two chains and the total, 3 x 64 floats, plus the
    # addresses fit 232 (ptxas: 0 spills above; the SASS's highest register is R221, notes_pover40.md)
    assert (c["kProducerRegs"], c["kConsumerRegs"]) == (40, 232)
    assert 3 * c["kAccRegs"] + 32 <= c["kConsumerRegs"]
    assert 128 * (c["kProducerRegs"] + 2 * c["kConsumerRegs"]) <= 384 * 168
    # the host launches it as the promoting build: same Build, grid and intervals
    build = build_for(LESSON, OVERLAP)
    assert build == build_for(LESSON, chooser.PROMOTE_BUILD)
    assert (build.bm, build.bn, build.cluster, build.promote, build.block) == (128, 128, 2, 1, 0)
    for m, n in ((200, 136), (2304, 2504), (8192, 8192)):
        assert grid_for(m, n, build, 132) == grid_for(m, n, build_for(LESSON, chooser.PROMOTE_BUILD), 132)
    assert [check_every(p, build) for p in (0, 1, 3)] == [0, 1, 3]


@pytest.mark.parametrize(
    "flags",
    [
        {"GEMM_PROMOTE_OVERLAP": 1},  # the 128 x 256 default: no promotion
        {"GEMM_BN": 128, "GEMM_PROMOTE_OVERLAP": 1},  # not promoting
        {"GEMM_BN": 192, "GEMM_PROMOTE": 1, "GEMM_PROMOTE_OVERLAP": 1},  # 3 x 96 do not fit 240
        {**chooser.PROMOTE_BUILD, "GEMM_BM": 192, "GEMM_PROMOTE_OVERLAP": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_BLOCK_SCALES": 1, "GEMM_PROMOTE_OVERLAP": 1},
        {**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_PINGPONG": 1, "GEMM_PROMOTE_OVERLAP": 1},
    ],
    ids=["default", "bn128", "bn192", "bm192", "block", "pingpong"],
)
def test_other_combinations_are_refused_by_the_file_itself(flags):
    with pytest.raises(CompileError, match="the overlapped-promotion build"):
        compile_offline(LESSON, defines=flags)


def test_a_flag_other_than_0_or_1_is_refused():
    with pytest.raises(CompileError, match="GEMM_PROMOTE_OVERLAP is 0 or 1"):
        compile_offline(LESSON, defines={**chooser.PROMOTE_BUILD, "GEMM_PROMOTE_OVERLAP": 2})


def test_ptxas_serializes_a_group_read_across_a_loop_back_edge_but_not_within_an_iteration():
    # Why the build runs its chains in pairs (region "overlap-order"): the reduced kernels.
    reports = {
        name: parse(
            compile_offline(LESSON, source=(REDUCED / f"{name}.cu").read_text(), ptxas_verbose=True).log, "k"
        )
        for name in ("cross_iteration", "straight_line", "same_iteration")
    }
    cross = reports.pop("cross_iteration")
    assert cross.serialized_wgmma and any("C7514" in w for w in cross.warnings)
    for name, report in reports.items():
        assert not report.serialized_wgmma and not report.injected_waits and not report.spills, name
        assert not any("C75" in w for w in report.warnings), (name, report.warnings)


def test_the_chooser_never_picks_it():
    assert OVERLAP not in chooser.PROMOTE_TILES.values()
    for n in (256, 512, 1024, 2048, 4096, 8192, 16384):
        for sms in (66, 114, 132):
            assert chooser.choose(n, n, sms) != OVERLAP
            assert "GEMM_PROMOTE_OVERLAP" not in chooser.promoting(n, n, sms)


def test_the_bench_switch_takes_its_name(monkeypatch):
    monkeypatch.delenv(bench.PINGPONG_ENV, raising=False)
    assert "overlap" not in bench.dev_builds()
    monkeypatch.setenv(bench.PINGPONG_ENV, "overlap")
    assert bench.dev_builds() == ("overlap",)
    monkeypatch.setenv(bench.PINGPONG_ENV, "128x192, overlap")
    assert bench.dev_builds() == ("128x192", "overlap")
    monkeypatch.setenv(bench.PINGPONG_ENV, "overlapped")
    with pytest.raises(CourseError, match=r"names no build 'overlapped'.*overlap"):
        bench.dev_builds()
    assert bench.DEV_INTERVALS["overlap"] == (1,)
    assert bench.dev_title("overlap", 1, 4096) == "overlap promoting build, every 128 (P=1) at N=4096"


def _consumer_order(k_tiles: int, every: int, cons: int) -> tuple[list[list[int]], list[tuple[str, int]]]:
    """The overlap region's consumer loop for one tile, transcribed (a model, not the kernel): the
    chains promoted, in order (each its K-tiles), and the events; asserting the wgmma rules as it goes:
    an accumulator is read only after a wait has retired its last group, a stage is released once and
    only after its K-tile's group is retired."""
    pending: list[tuple[str, int]] = []  # committed, not yet retired groups: (accumulator, K-tile)
    chain: dict[str, list[int]] = {"acc0": [], "acc1": []}
    promoted: list[list[int]] = []
    events: list[tuple[str, int]] = []
    held: int | None = None

    def wait(n: int) -> None:
        del pending[: max(0, len(pending) - n)]

    def k_tile(acc: str, restart: bool, kt: int) -> None:
        nonlocal held
        assert not (restart and chain[acc]), f"{acc} restarts before its chain was promoted"
        chain[acc] = [kt] if restart else [*chain[acc], kt]
        pending.append((acc, kt))
        wait(1)
        if held is not None:
            assert all(k != held for _, k in pending)
            events.append(("release", held))
        held = kt

    def drain() -> None:
        nonlocal held
        wait(0)
        assert held is not None
        events.append(("drain", 0))
        events.append(("release", held))
        held = None

    def promote(acc: str) -> None:
        assert all(a != acc for a, _ in pending), f"{acc} read while its group is in flight"
        promoted.append(chain[acc])
        chain[acc] = []
        events.append(("promote in flight" if pending else "promote", len(promoted) - 1))

    chain_len = every if every > 0 else k_tiles
    owed = False
    k0 = 0
    if cons == 1 and chain_len < k_tiles:  # consumer 1's chain 0 alone, in acc1
        for j in range(chain_len):
            k_tile("acc1", j == 0, j)
        drain()
        owed, k0 = True, chain_len
    while k0 < k_tiles:
        len0 = min(chain_len, k_tiles - k0)
        k1 = k0 + len0
        k_tile("acc0", True, k0)
        if owed:
            promote("acc1")
            owed = False
        for j in range(1, len0):
            k_tile("acc0", False, k0 + j)
        if k1 < k_tiles:
            len1 = min(chain_len, k_tiles - k1)
            k_tile("acc1", True, k1)
            promote("acc0")
            for j in range(1, len1):
                k_tile("acc1", False, k1 + j)
            drain()
            owed, k0 = True, k1 + len1
        else:
            drain()
            promote("acc0")
            k0 = k1
    if owed:
        promote("acc1")
    return promoted, events


@pytest.mark.parametrize("every", [0, 1, 2, 3, 5, 12])
@pytest.mark.parametrize("cons", [0, 1])
def test_the_consumer_order_promotes_the_promoting_builds_chains_in_order(every, cons):
    for k_tiles in range(1, 26):
        promoted, events = _consumer_order(k_tiles, every, cons)
        size = every if every > 0 else k_tiles
        # the 128 x 128 promoting build's chains (restart every P K-tiles, the last one shorter), in order
        assert promoted == [list(range(k, min(k + size, k_tiles))) for k in range(0, k_tiles, size)]
        assert sorted(k for e, k in events if e == "release") == list(range(k_tiles))
        # the overlap: every chain but the last is promoted while a group of the consumer is in flight
        # (the next chain's first K-tile); the last at a drain, as the promoting build does every chain
        assert [c for e, c in events if e == "promote in flight"] == list(range(len(promoted) - 1))
        assert [c for e, c in events if e == "promote"] == [len(promoted) - 1]
        # one wait_group 0 a pair of chains (consumer 1: its chain 0 alone first)
        chains = len(promoted)
        pairs = (chains + 1) // 2 if cons == 0 or chains == 1 else 1 + chains // 2
        assert events.count(("drain", 0)) == pairs


class _Samples:
    def __init__(self, ms: float):
        self.per_call_ms = [ms] * 20

    def timing(self):
        return type("T", (), {"median_ms": self.per_call_ms[0]})()


class _FakeWork:
    def __init__(self, defines):
        self.build = build_for(LESSON, defines)
        self.launched: list[int] = []

    def launch_every(self, j, every):
        self.launched.append(every)


class _FakeHost:
    def __init__(self):
        self.works: dict[tuple, _FakeWork] = {}

    def workload(self, compiled, n, sets, purpose):
        defines = dict(compiled[2])
        work = self.works[compiled[2]] = _FakeWork(defines)
        return work


class _FakeTimer:
    def __init__(self):
        self.batches: list[tuple[str, ...]] = []

    def samples_together(self, rotations):
        self.batches.append(tuple(rotations))
        for calls in rotations.values():
            calls[0]()
        return {name: _Samples(0.9 if name.startswith("overlap") else 1.0) for name in rotations}


class _FakeContext:
    l2_bytes = 50 * 2**20

    def __init__(self):
        self.timer = _FakeTimer()
        self.compiled: list[dict] = []
        self.verified: list[tuple[str, ...]] = []
        lt = type("Peer", (), {"name": bench.LT, "call": staticmethod(lambda work, j: None)})()
        self.peers = (lt,)
        self.lesson = LESSON

    def compile(self, n, source=None, defines=None):
        self.compiled.append(dict(defines or {}))
        return ("build", n, tuple(sorted((defines or {}).items())))

    def verify(self, n, work, calls):
        self.verified.append(tuple(calls))
        for call, _ in calls.values():
            call(0)

    def rate(self, n, ms):
        return 2 * n**3 / (ms * 1e-3) / 1e12

    def progress(self, line):
        pass


def test_the_bench_times_it_at_p1_beside_the_promoting_build_and_cublaslt(monkeypatch):
    # bench._dev with stand-ins for the GPU: the build is compiled, checked and timed in one batch
    # with the 128 x 128 promoting build at P = 1 and cuBLASLt's default.
    host = _FakeHost()
    monkeypatch.setattr(bench, "HOST", host)
    monkeypatch.setattr(bench, "rotation_buffers", lambda nbytes, l2: 2)
    monkeypatch.setattr(bench, "sm_count", lambda: 132)
    monkeypatch.setattr("course.bench.engine.release", lambda: None)
    ctx = _FakeContext()
    reasons = bench._dev(ctx, 4096, ("overlap",))
    assert OVERLAP in ctx.compiled and chooser.PROMOTE_BUILD in ctx.compiled
    title = bench.dev_title("overlap", 1, 4096)
    assert ctx.timer.batches == [("promoting build, every 128 (P=1)", bench.LT, title)]
    assert host.works[tuple(sorted(OVERLAP.items()))].launched == [1, 1]  # checked, then timed at P = 1
    mine = next(r for r in reasons if r.title == title)
    assert (
        mine.value == pytest.approx(1 / 0.9) and mine.unit == "x"
    )  # the promoting build's time over its own
    assert {r.title for r in reasons} == {title, f"{title}: rate", f"{title} against {bench.LT}"}


# On a Hopper GPU. The C++ program's ragged shapes and two with more units than clusters and more K-tiles
# than the 6-stage ring, at P = 0 (one chain: consumer 0 and 1 alone), 1 (pairs of one K-tile) and 3
# (pairs of three, a short last chain).
GPU_SHAPES = [
    (200, 136, 144),
    (1000, 1032, 528),
    (130, 392, 1104),
    (2056, 264, 208),
    (72, 8, 16),
    (1, 8, 1008),
]
GPU_SHAPES += [(2304, 2504, 768), (1400, 2504, 400)]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
def test_it_is_exact_on_ragged_shapes(gpu_for, cluster):
    gpu_for("day87")
    compiled = compile_lesson(LESSON, defines={**OVERLAP, "GEMM_CLUSTER": cluster})
    for shape in GPU_SHAPES:
        for every in (0, 1, 3):
            result = run_lesson(
                LESSON, compiled=compiled, progress=lambda line: None, shape=shape, promote_every=every
            )
            assert result.passed, (cluster, shape, every, result.lines)
            assert result.check.total == shape[0] * shape[1]


@pytest.mark.gpu
@pytest.mark.hopper
@pytest.mark.parametrize("cluster", [2, 1])
def test_its_d_is_the_promoting_builds_bit_for_bit(gpu_for, cluster):
    # The same sums in the same order (region "overlap-order"): total starts at 0 and receives chains 0,
    # 1, 2, ... each the same wgmmas over the same K-tiles from scale-d = 0. Normal inputs quantised per
    # tensor, where the FP8 chains' limited accumulation does change D, on ragged shapes.
    gpu_for("day87")
    import cupy as cp

    from course.lessons.day87.host import HOST

    flags = {"GEMM_CLUSTER": cluster}
    mine_c = compile_lesson(LESSON, defines={**OVERLAP, **flags})
    prom_c = compile_lesson(LESSON, defines={**chooser.PROMOTE_BUILD, **flags})
    for shape in [(1000, 1032, 528), (2304, 2504, 768), (1400, 2504, 4000), (130, 392, 1104)]:
        mine = HOST.workload(mine_c, 1024, 1, "bench", shape=shape)
        prom = HOST.workload(prom_c, 1024, 1, "bench", shape=shape)
        for every in (0, 1, 3):
            for work in (mine, prom):
                work.poison(0)
                work.launch_every(0, every)
            cp.cuda.runtime.deviceSynchronize()
            assert mine.check(mine.out(0)).passed, (shape, every)
            same = cp.asarray(mine.out(0)).view(cp.uint16) == cp.asarray(prom.out(0)).view(cp.uint16)
            assert bool(same.all()), (cluster, shape, every, int((~same).sum()))
