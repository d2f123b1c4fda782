"""The Stream-K schedule (-DGEMM_STREAMK=1), on the CPU: its transcription (course.lessons._streamk)
covers every (tile, K-iteration) exactly once, its fixup finishes every tile once whatever order
the clusters run in, and nobody waits on another cluster."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from course.errors import CourseError
from course.lessons import _streamk as sk
from course.lessons import get_lesson
from course.lessons._ladder import ragged_problem

LESSON = get_lesson("day86")
KERNEL = Path(__file__).resolve().parents[3] / "kernels" / "gemm7_shapes.cu"

# (tiles, k_tiles, slots): every wave case (no full wave, one, several; whole waves), K-tile counts
# below, at and above the minimum, and slot counts of an H100 (132 SMs: 132 or 66 clusters), an
# H200 MIG slice, and odd small grids.
CASES = [
    (tiles, k_tiles, slots)
    for slots in (1, 3, 7, 16, 66, 132)
    for tiles in sorted({1, 2, slots - 1, slots, slots + 1, 2 * slots - 1, 2 * slots + 3, 5 * slots + 2, 37})
    for k_tiles in (1, 2, 7, 8, 9, 31, 64, 225)
    if tiles >= 1
]


def _all_pieces(s: sk.StreamK) -> list[sk.Piece]:
    return [pc for c in range(s.slots) for pc in s.walk(c)]


def test_the_minimum_is_the_kernels():
    assert LESSON.constants({"GEMM_STREAMK": 1})["kSkMinIters"] == sk.MIN_ITERS == 8


@pytest.mark.parametrize(("tiles", "k_tiles", "slots"), CASES)
def test_every_k_iteration_of_every_tile_is_computed_exactly_once(tiles, k_tiles, slots):
    s = sk.schedule(tiles, k_tiles, slots)
    seen: dict[tuple[int, int], int] = {}
    walkers: dict[int, int] = {}
    for c in range(slots):
        for pc in s.walk(c):
            assert 0 <= pc.k_begin < pc.k_end <= k_tiles, pc  # never an empty piece (the ring's arrivals)
            assert walkers.setdefault(pc.unit, c) == c  # a unit belongs to one cluster
            for kt in range(pc.k_begin, pc.k_end):
                seen[(pc.tile, kt)] = seen.get((pc.tile, kt), 0) + 1
    assert seen == {(t, kt): 1 for t in range(tiles) for kt in range(k_tiles)}
    assert sorted(walkers) == list(range(s.units))


@pytest.mark.parametrize(("tiles", "k_tiles", "slots"), CASES)
def test_the_hybrid_is_cutlass_rule_and_leaves_no_partial_wave(tiles, k_tiles, slots):
    s = sk.schedule(tiles, k_tiles, slots)
    assert s.sk_units <= slots
    if tiles % slots == 0:
        assert (s.sk_tiles, s.units) == (0, tiles)  # whole waves: data-parallel
        return
    if s.sk_tiles == 0:  # too few iterations for even one unit of MIN_ITERS
        assert (tiles - (tiles // slots - 1 if tiles >= slots else 0) * slots) * k_tiles < sk.MIN_ITERS
        return
    # the partial wave plus one full wave (if any) are Stream-K tiles; the rest whole waves
    assert s.dp_tiles % slots == 0
    assert s.sk_tiles == tiles % slots + (slots if tiles >= slots else 0)
    lengths = [s.begin(u + 1) - s.begin(u) for u in range(s.sk_units)]
    assert min(lengths) >= sk.MIN_ITERS and max(lengths) - min(lengths) <= 1
    assert sum(lengths) == s.sk_tiles * k_tiles
    if s.sk_units == slots:  # every cluster the same work, to one K-iteration: no partial wave
        load = [sum(pc.k_end - pc.k_begin for pc in s.walk(c)) for c in range(slots)]
        assert max(load) - min(load) <= 1


@pytest.mark.parametrize(("tiles", "k_tiles", "slots"), CASES)
def test_contributions_are_numbered_in_k_order_and_fit_the_workspace(tiles, k_tiles, slots):
    s = sk.schedule(tiles, k_tiles, slots)
    by_tile: dict[int, list[sk.Piece]] = {}
    for pc in _all_pieces(s):
        by_tile.setdefault(pc.tile, []).append(pc)
    shared = 0
    for t, pieces in by_tile.items():
        pieces.sort(key=lambda pc: pc.k_begin)
        segs = {pc.segs for pc in pieces}
        assert segs == {len(pieces)}  # every contribution knows how many there are
        assert [pc.seg for pc in pieces] == list(range(len(pieces)))  # seg = place in K order
        assert [pc.unit for pc in pieces] == list(range(pieces[0].unit, pieces[0].unit + len(pieces)))
        if len(pieces) > 1:
            shared += 1
            assert t < s.sk_tiles and len(pieces) <= s.sk_peers  # the workspace has room
    assert shared == s.shared_tiles()
    for u in range(s.sk_units):  # at most two shared pieces a unit: its range's head and tail
        assert sum(1 for pc in s.pieces(u) if pc.segs > 1) <= 2


def _run_fixup(s: sk.StreamK, order: list[int], deterministic: bool) -> dict[int, tuple[int, ...]]:
    """The kernel's last-arriver fixup, run with the clusters' pieces interleaved in ``order``.

    A contribution is the tuple of the K-iterations it summed; the reduction concatenates them in the
    order the kernel adds them. Returns what each tile's store wrote (and checks it is written once
    and every counter is back at zero)."""
    queues = {c: list(s.walk(c)) for c in range(s.slots)}
    workspace: dict[tuple[int, int], tuple[int, ...]] = {}
    counters: dict[int, int] = {}
    stored: dict[int, tuple[int, ...]] = {}
    for c in order:
        pc = queues[c].pop(0)
        acc = tuple(range(pc.k_begin, pc.k_end))
        if pc.segs > 1:
            workspace[(pc.tile, pc.seg)] = acc  # reduceSplits: mine = base + seg * kPartial
            ticket = counters.get(pc.tile, 0)
            counters[pc.tile] = ticket + 1
            if ticket != pc.segs - 1:
                continue  # another unit finishes this tile; nobody waits
            counters[pc.tile] = 0
            if deterministic:  # every partial, in seg order
                acc = tuple(x for o in range(pc.segs) for x in workspace[(pc.tile, o)])
            else:  # the others' onto its own registers
                acc = acc + tuple(x for o in range(pc.segs) if o != pc.seg for x in workspace[(pc.tile, o)])
        assert pc.tile not in stored
        stored[pc.tile] = acc
    assert not any(queues.values()) and not any(counters.values())
    return stored


@pytest.mark.parametrize(
    ("tiles", "k_tiles", "slots"),
    [(7, 9, 3), (20, 9, 66), (33, 64, 16), (140, 31, 66), (32, 128, 132), (5, 225, 7)],
)
def test_the_fixup_finishes_every_tile_once_in_any_order_of_the_clusters(tiles, k_tiles, slots):
    s = sk.schedule(tiles, k_tiles, slots)
    assert s.shared_tiles() > 0  # these cases exercise the fixup
    rng = random.Random(tiles * 1000 + k_tiles)
    tickets = [c for c in range(slots) for _ in s.walk(c)]
    orders = [sorted(tickets), sorted(tickets, reverse=True)] + [
        rng.sample(tickets, len(tickets)) for _ in range(20)
    ]
    det = set()
    for order in orders:  # serial (one cluster at a time, either way round) and interleaved
        for deterministic in (False, True):
            out = _run_fixup(s, order, deterministic)
            assert sorted(out) == list(range(tiles))
            assert all(sorted(v) == list(range(k_tiles)) for v in out.values())
            if deterministic:
                det.add(tuple(sorted(out.items())))
    # split order: the same sums, in the same order, whoever arrives last
    assert len(det) == 1 and all(v == tuple(range(k_tiles)) for _, v in next(iter(det)))


def test_no_cluster_waits_for_another_so_the_grid_needs_no_co_residency():
    """The wait graph. The kernel's only waits are mbarrier waits on its own shared memory (the
    ring's full and empty barriers, whose arrivals come from the cluster's own CTAs) and the cluster
    barriers; the fixup adds none (an atomic ticket, no spin). So the graph between clusters has no
    edge at all, and the serial orders above (one cluster at a time, as if one SM ran the whole
    grid) finish. Checked on the kernel's text: every wait names shared memory of this CTA."""
    src = KERNEL.read_text()
    body = src[src.index("gemm7Shapes(const __grid_constant__") :]
    waits = re.findall(r"\b(mbarWait|clusterSync|wait_eq|ld\.acquire|while \(atomic|spin)\b", body)
    assert set(waits) <= {"mbarWait", "clusterSync"}, waits
    for line in body.splitlines():
        if "mbarWait(" in line:
            assert re.search(r"mbarWait\(&s\.(full|empty)\[stage\]", line), line
    fix = src[src.index("__device__ __forceinline__ bool reduceSplits") : src.index("// D = A * B^T for any")]
    assert "atom.relaxed.gpu.global.add.u32" in fix and "try_wait" not in fix and "while" not in fix


def test_the_grid_is_one_wave_at_most_and_the_buffers_fit_the_schedule():
    c = LESSON.constants({"GEMM_STREAMK": 1, "GEMM_BN": 128, "GEMM_CLUSTER": 2})
    for shape in ((1000, 1032, 520), (1, 8192, 8192), (4104, 776, 1240), (640, 6144, 2048)):
        p = ragged_problem(c, shape, 1)
        for sms in (132, 114, 78, 8):
            assert p.grid(sms) <= sms and p.grid(sms) % 2 == 0
            s = p.stream_k(sms)
            floats, counters = p.buffers(sms)
            if s.sk_tiles:
                # the kernel's largest index: slot (tile, rank, consumer), seg < sk_peers, a 64 x BN partial
                last = ((s.sk_tiles - 1) * 2 + 1) * 2 + 1
                assert (last * s.sk_peers + s.sk_peers) * 64 * 128 == floats
                assert counters == p.cta_tiles * 2
            else:
                assert (floats, counters) == (0, 0)
    with pytest.raises(CourseError, match="split 1 only"):
        ragged_problem(c, (1000, 1032, 520), 3)


@pytest.mark.parametrize(
    ("tiles", "k_tiles", "slots"), [(7, 9, 3), (140, 31, 66), (32, 128, 132), (5, 225, 7)]
)
def test_no_two_contributions_share_workspace(tiles, k_tiles, slots):
    s = sk.schedule(tiles, k_tiles, slots)
    partial = 64 * 256
    spans = sorted(
        (s.slot_floats(pc.tile, rank, cons, 2, 2, 256) + pc.seg * partial, pc.tile, pc.seg, rank, cons)
        for pc in _all_pieces(s)
        if pc.segs > 1
        for rank in (0, 1)
        for cons in (0, 1)
    )
    assert spans
    for a, b in zip(spans, spans[1:], strict=False):
        assert b[0] >= a[0] + partial  # disjoint
    assert spans[-1][0] + partial <= s.workspace_floats(128, 256, 2)


def test_bad_arguments_are_named():
    with pytest.raises(CourseError, match="slots must be a positive integer"):
        sk.schedule(4, 8, 0)
    with pytest.raises(CourseError, match="k_tiles"):
        sk.schedule(4, True, 3)


HARNESS = r"""
#include <cstddef>
#include <cstdio>
#define __host__
#define __device__
#define __forceinline__ inline
constexpr int kBM = 128, kBN = 128, kBK = 64, kClusterM = 2, kGroupM = 8;
constexpr int kStreamK = 1, kSkMinIters = %(min_iters)d, kSmemBytes = 0;
constexpr int kClusterSize = kClusterM, kConsumers = 2, kWgmmaM = 64;
inline int clusterColumns(int tilesN) { return tilesN; }  // the kernel's, above the snippet, at kClusterN 1
%(schedule)s
int main() {
    int tiles, kTiles, slots;
    while (std::scanf("%%d %%d %%d", &tiles, &kTiles, &slots) == 3) {
        // a problem of exactly `tiles` cluster tiles in one column of tiles, kTiles K-tiles
        Problem p = makeProblem(kBM * kClusterM * tiles, kBN, kBK * kTiles, 1, slots);
        std::printf("P %%d %%d %%d %%d %%d %%d %%d %%zu\n", p.tiles, p.skTiles, p.skUnits, p.skPer,
                    p.skBig, p.skPeers, p.units, skSlotFloats(p, p.skTiles, 0, 0));
        for (int c = 0; c < slots; ++c) {
            Walk walk{c, slots, 0, 0, 0};
            Work w;
            while (nextWork(p, walk, w)) {
                // where the kernel puts this contribution of CTA rank 1's warpgroup 1 (-1: no fixup)
                long long at = w.segs > 1 ? (long long)(skSlotFloats(p, w.tile, 1, 1) + w.seg * kWgmmaM * kBN) : -1;
                std::printf("W %%d %%d %%d %%d %%d %%d %%d %%lld\n", c, walk.cur, w.tile, w.kBegin, w.kEnd,
                            w.seg, w.segs, at);
            }
        }
    }
    return 0;
}
"""


def test_the_kernels_own_schedule_code_walks_what_the_transcription_walks(tmp_path):
    """The kernel's "schedule" and "streamk" snippets themselves, compiled for the host (g++; it is plain C++ once the
    CUDA qualifiers are defined away), walks the same pieces as the Python transcription."""
    import shutil
    import subprocess

    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler (g++ or clang++) on this machine")
    src = KERNEL.read_text()
    regions = []
    for name in ("schedule", "streamk"):  # the schedule's tile counts, then Stream-K's walk
        start = src.index(f"// snippet: {name}\n")
        regions.append(src[start : src.index("// end snippet\n", start)])
    schedule = "\n".join(regions)
    (tmp_path / "walk.cpp").write_text(HARNESS % {"schedule": schedule, "min_iters": sk.MIN_ITERS})
    subprocess.run(
        [cxx, "-std=c++17", "-O1", "-o", str(tmp_path / "walk"), str(tmp_path / "walk.cpp")], check=True
    )
    cases = [c for c in CASES if c[2] <= 66][::3]
    got = subprocess.run(
        [str(tmp_path / "walk")],
        input="".join(f"{t} {k} {s}\n" for t, k, s in cases),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    want = []
    for t, k, slots in cases:
        s = sk.schedule(t, k, slots)
        floats = s.workspace_floats(128, 128, 2)
        want.append(
            f"P {s.tiles} {s.sk_tiles} {s.sk_units} {s.sk_per} {s.sk_big} {s.sk_peers} {s.units} {floats}"
        )
        for c in range(slots):
            for pc in s.walk(c):
                at = s.slot_floats(pc.tile, 1, 1, 2, 2, 128) + pc.seg * 64 * 128 if pc.segs > 1 else -1
                assert at + 64 * 128 <= floats or at == -1
                want.append(f"W {c} {pc.unit} {pc.tile} {pc.k_begin} {pc.k_end} {pc.seg} {pc.segs} {at}")
    assert len(got) == len(want) > len(cases)
    assert got == want
