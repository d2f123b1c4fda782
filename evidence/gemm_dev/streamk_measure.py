"""Day 86's Stream-K build (-DGEMM_STREAMK=1, issue 39) on a GPU: correctness on the issue's shape
table, then Stream-K against the chooser's current pick and cuBLAS, launched one by one and in CUDA
graphs, with the course's one timer (``Timer.samples_together(graphs=True)``), as k86_measure.py.

Per shape, the builds are:
- ``pick``: what ``chooser.choose`` picks today (split-K builds only);
- ``sk-model``: the Stream-K build the model prefers (``choose(..., streamk=True)`` restricted to
  Stream-K candidates), where its schedule shares any tile on this GPU;
- ``sk-pick-tile``: the Stream-K build of the pick's own tile and cluster, if it differs from
  ``sk-model`` and shares a tile;
- ``sk-det``: ``sk-model`` with -DGEMM_DETERMINISTIC=1 (the fixup summing in K order).
Every build is checked against float64 on the same N(0, 1) inputs first, its output poisoned (NaN);
a deterministic build is also launched twice and compared bit for bit. Then all of them and cuBLAS
gemmEx are timed interleaved. The model's estimate for each build is printed beside its time, so the
note can say where the model is wrong. Prints one line per shape and mode; writes JSON to argv[1].
``SHAPES=quick`` runs six shapes only.

``MEASURE=small39`` (evidence/gemm_dev/small39_gpu.sh, branch small39) measures the 64-row and
small builds instead, on the issue's small squares and decode rows (``SMALL39_SHAPES``):
- ``pick``: today's pick, the 128-row builds only (``choose(..., rows64=False)``);
- ``rows64``: the default chooser's pick without the small builds (``small=False``) where it
  differs (a 64-row tile at M <= 64), and
  ``rows64-64xBN``: the model's best split of each other 64-row width, cluster 1 (the model prices
  several of them at the same memory floor; which one the GPU prefers is what it cannot say; the
  H100 measured 64x128 split 2 and 64x256 split 4 at M = 8 and 64 on 2026-12-05:
  evidence/logs/2026-12-05-h100-s10-k86-call2.log);
- ``small``: the small build (-DGEMM_SMALL=1) the model prefers (the cheaper of its widths'
  ``best_for``, on every shape, whether or not ``chooser.small_competes``), ``small-alt``: the
  other width's, and ``small-as-64row``: ``small``'s tile
  and split in the plain 64-row build (so the tile's gain and the small build's own are apart);
each checked against float64 first as above, then every new build is checked on ragged shapes
through the course host (``ragged_checks``), split 1 and 3.

``MEASURE=sweep39`` (evidence/gemm_dev/sweep39_gpu.sh) times every build the chooser can pick,
BM 128 and 64 x BN 256, 128, 64 x cluster 2 and 1, the small builds (BM 64, cluster 1, BN 128 and
64), each at split 1, 2 and 4 (where K has that many K-tiles), on ``SWEEP39_SHAPES``: ``pick`` is
the default chooser's pick (under its own name too, timed once), the rest are named
``<BM>x<BN>c<cluster>[small]s<split>``. Every build is checked against float64 first (one
reference per shape: every build's workload draws the same inputs, compared), then all of them and
cuBLAS gemmEx are timed interleaved, one by one and in CUDA graphs. Shapes stop when the next would
pass ``SWEEP_BUDGET_S`` (default 215 s from the start); the JSON is written after every shape.

2500^3 is in the issue's table but the kernel refuses it (N and K must be multiples of 8, the TMA's
16-byte stride rule); 2504^3 stands in for it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from functools import partial

from course.bench.arith import paired_ratios, rotation_buffers
from course.bench.peers import Cublas
from course.bench.timing import GRAPHS, Timer, in_graphs
from course.kernel.compile import compile_lesson
from course.kernel.host import host_of
from course.lessons import get_lesson
from course.lessons._ladder import sm_count
from course.lessons.day86 import chooser

T0 = time.monotonic()

LESSON = get_lesson("day86")
SHAPES = [
    *((s, s, s) for s in (256, 512, 768, 1024, 1536, 2048, 2560, 4096, 8192)),
    *((m, 8192, 8192) for m in (1, 2, 4, 32, 64, 128)),
    *((m, 4096, 14336) for m in (1, 2, 4, 32, 64, 128)),
    (1200, 1200, 1200),
    (2504, 2504, 2504),
    (640, 6144, 2048),
    (1000, 3000, 704),
    (4104, 776, 1240),
]
QUICK = [
    (2560, 2560, 2560),
    (8192, 8192, 8192),
    (1, 8192, 8192),
    (1200, 1200, 1200),
    (1000, 3000, 704),
    (4104, 776, 1240),
]


def builds_for(shape: tuple[int, int, int], sms: int) -> dict[str, tuple[chooser.Choice, dict[str, int]]]:
    pick = chooser.choose(*shape, sms)
    out = {"pick": (pick, chooser.defines(pick))}
    sk = [c for c in chooser.candidates(*shape, sms, streamk=True) if c.streamk]
    if sk:
        out["sk-model"] = (sk[0], chooser.defines(sk[0]))
        same = [c for c in sk if (c.bn, c.cluster) == (pick.bn, pick.cluster)]
        if same and (same[0].bn, same[0].cluster) != (sk[0].bn, sk[0].cluster):
            out["sk-pick-tile"] = (same[0], chooser.defines(same[0]))
        det = chooser.estimate_streamk(*shape, sms, sk[0].bn, sk[0].cluster, deterministic=True)
        assert det is not None
        out["sk-det"] = (det, chooser.defines(det))
    return out


SMALL39_SHAPES = [
    *((s, s, s) for s in (256, 512, 768, 1024)),
    *((m, 8192, 8192) for m in (1, 2, 4, 32, 64, 128)),
    *((m, 4096, 14336) for m in (1, 2, 4, 32, 64, 128)),
]
SMALL39_QUICK = [(512, 512, 512), (1024, 1024, 1024), (1, 8192, 8192), (32, 4096, 14336)]
RAGGED = [(200, 136, 72), (1000, 1032, 520), (130, 392, 1096), (8, 4104, 1000), (64, 264, 2056), (1, 8, 1000)]


def small39_builds(shape: tuple[int, int, int], sms: int) -> dict[str, tuple[chooser.Choice, dict[str, int]]]:
    pick = chooser.choose(*shape, sms, rows64=False)
    out = {"pick": (pick, chooser.defines(pick))}
    now = chooser.choose(*shape, sms, small=False)  # the default before the small build joined it
    if now != pick:
        out["rows64"] = (now, chooser.defines(now))
        for bn in (256, 128, 64):  # the model's best split of every other 64-row width, cluster 1
            if (bn, 1) != (now.bn, now.cluster):
                other = chooser.best_for(*shape, sms, bn, 1, bm=64)
                out[f"rows64-64x{bn}"] = (other, chooser.defines(other))
    # every small build's cheapest split, cheapest first (``candidates`` prices them only where
    # ``chooser.small_competes`` since the refit; this times them on every shape, as it first did)
    small = sorted(
        (chooser.best_for(*shape, sms, bn, 1, bm=64, small=True) for bn in chooser.SMALL_BNS),
        key=lambda c: c.est_us,
    )
    out["small"] = (small[0], chooser.defines(small[0]))
    alt = [c for c in small if c.bn != small[0].bn]
    out["small-alt"] = (alt[0], chooser.defines(alt[0]))
    # the same 64-row tile and split without the small build's changes (one CTA an SM, a cluster
    # launch, the 192 KiB ring): what the tile alone buys, and what the small build adds to it
    plain = chooser.estimate(*shape, sms, small[0].bn, 1, small[0].split, bm=64)
    same = [
        c
        for c, _ in out.values()
        if (c.bm, c.bn, c.cluster, c.split, c.small) == (64, small[0].bn, 1, small[0].split, False)
    ]
    if plain is not None and not same:
        out["small-as-64row"] = (plain, chooser.defines(plain))
    return out


SWEEP39_SHAPES = [
    *((s, s, s) for s in (256, 512, 768, 1024, 1536, 1200)),
    *((m, 8192, 8192) for m in (1, 32, 128)),
    # last, as the budget allows: where the refit's picks (64x64 c1 unsplit) were not timed
    *((m, 4096, 14336) for m in (1, 32)),
]
SWEEP39_QUICK = [(512, 512, 512), (128, 8192, 8192)]


def sweep39_name(c: chooser.Choice) -> str:
    return f"{c.bm}x{c.bn}c{c.cluster}{'small' if c.small else ''}s{c.split}"


def sweep39_builds(shape: tuple[int, int, int], sms: int) -> dict[str, tuple[chooser.Choice, dict[str, int]]]:
    """The default pick as ``pick``, then every other build the chooser can pick at split 1, 2, 4."""
    pick = chooser.choose(*shape, sms)
    out = {"pick": (pick, chooser.defines(pick))}
    kinds = [(bm, bn, cluster, False) for bm in (128, 64) for bn, cluster in chooser.CONFIGS]
    kinds += [(64, bn, 1, True) for bn in chooser.SMALL_BNS]
    for bm, bn, cluster, small in kinds:
        for split in (1, 2, 4):
            c = chooser.estimate(*shape, sms, bn, cluster, split, bm=bm, small=small)
            if c is not None and sweep39_name(c) != sweep39_name(pick):
                out[sweep39_name(c)] = (c, chooser.defines(c))
    return out


def ragged_checks(host, sms: int) -> list[str]:
    """Every build small39 adds, on ragged shapes through the course host, split 1 and 3 (every
    element against float64, the output poisoned first)."""
    flags = [
        {"GEMM_SMALL": 1, "GEMM_BM": 64, "GEMM_CLUSTER": 1, "GEMM_BN": bn, "GEMM_DETERMINISTIC": det}
        for bn in chooser.SMALL_BNS
        for det in (0, 1)
    ]
    flags += [
        chooser.defines(chooser.choose(*s, sms))
        for s in SMALL39_SHAPES
        if chooser.choose(*s, sms) != chooser.choose(*s, sms, rows64=False)
    ]
    lines = []
    for f in [dict(t) for t in sorted({tuple(sorted(f.items())) for f in flags})]:
        compiled = compile_lesson(LESSON, defines=f)
        for shape in RAGGED:
            for split in sorted({1, min(3, -(-shape[2] // 64))}):
                w = host.workload(compiled, max(shape), 1, "bench", shape=shape, split=split)
                w.poison(0)
                w.launch(0)
                check = w.check(w.out(0))
                assert check.passed, (f, shape, split, check)
                lines.append(f"ragged {f} {shape} split {split}: PASS ({check.max_error:.3g})")
                print(lines[-1], flush=True)
    return lines


def main() -> None:
    import cupy as cp

    host = host_of(LESSON)
    sms = sm_count()
    timer = Timer(20)
    gemm = Cublas(out="float16", b_layout="nk")
    l2 = int(cp.cuda.Device().attributes["L2CacheSize"])
    out: list = []
    small39 = os.environ.get("MEASURE") == "small39"
    sweep39 = os.environ.get("MEASURE") == "sweep39"
    quick = os.environ.get("SHAPES") == "quick"
    budget = float(os.environ.get("SWEEP_BUDGET_S", "215"))
    if small39:
        out.append({"ragged": ragged_checks(host, sms)})
        shapes = SMALL39_QUICK if quick else SMALL39_SHAPES
    elif sweep39:
        shapes = SWEEP39_QUICK if quick else SWEEP39_SHAPES
        if os.environ.get("SWEEP_SHAPES"):  # session 17: "1x8192x8192 4x8192x8192 ...", in that order
            shapes = [tuple(int(x) for x in s.split("x")) for s in os.environ["SWEEP_SHAPES"].split()]
    else:
        shapes = QUICK if quick else SHAPES
    last = 0.0
    for shape in shapes:
        began = time.monotonic()
        if sweep39 and began - T0 + last > budget:
            print(
                f"{shape}: not measured, the next shape would pass SWEEP_BUDGET_S = {budget:.0f} s",
                flush=True,
            )
            out.append(
                {
                    "shape": shape,
                    "not measured": f"budget: {began - T0:.0f} s spent, the last shape took {last:.0f} s",
                }
            )
            continue
        m, n, k = shape
        sets = rotation_buffers((m * k + n * k + m * n) * 2, l2)
        if small39:
            builds = small39_builds(shape, sms)
        elif sweep39:
            builds = sweep39_builds(shape, sms)
        else:
            builds = builds_for(shape, sms)
        works = {}
        ref = None  # sweep39: one float64 reference per shape (every workload draws the same inputs)
        for name, (choice, flags) in builds.items():
            w = host.workload(
                compile_lesson(LESSON, defines=flags),
                max(shape),
                sets,
                "bench",
                shape=shape,
                split=choice.split,
            )
            w.poison(0)
            w.launch(0)
            if sweep39 and ref is not None:
                assert bool(cp.array_equal(w.a[0], ref.a[0])) and bool(cp.array_equal(w.b[0], ref.b[0]))
                check = w.check(w.out(0), ref.want())
            else:
                check = w.check(w.out(0))
                ref = w
            assert check.passed, (shape, name, flags, check)
            if flags.get("GEMM_DETERMINISTIC"):
                first = w.out(0).copy()
                w.poison(0)
                w.launch(0)
                assert bool((w.out(0).view(cp.uint16) == first.view(cp.uint16)).all()), (
                    shape,
                    name,
                    "bits differ",
                )
            works[name] = w
            print(
                f"{m}x{n}x{k} {name}: {choice.describe()} {flags}: PASS ({check.max_error:.3g})", flush=True
            )
        w0 = works["pick"]
        rot = {name: [partial(w.launch, j) for j in range(w.sets)] for name, w in works.items()}
        rot["cuBLAS"] = [partial(lambda w, j: gemm(w.a[j], w.b[j], w.d[j]), w0, j) for j in range(w0.sets)]
        s = timer.samples_together(rot, graphs=True)
        row: dict = {
            "shape": shape,
            "sms": sms,
            "builds": {
                x: {"flags": f, "describe": c.describe(), "model_us": c.est_us}
                for x, (c, f) in builds.items()
            },
            "checked": "every build against float64, output poisoned first; deterministic builds twice, bit for bit",
        }
        if sweep39:
            row["pick is"] = sweep39_name(builds["pick"][0])
        for mode in ("", GRAPHS):
            key = in_graphs if mode else (lambda x: x)
            us = {x: s[key(x)].timing().median_ms * 1e3 for x in rot if key(x) in s}
            vs = {
                f"{x} rate over {base}": paired_ratios(s[key(x)].per_call_ms, s[key(base)].per_call_ms)
                for base in ("pick", "cuBLAS")
                for x in builds
                if x != base and key(x) in s and key(base) in s
            }
            row["graphs" if mode else "one by one"] = {"us": us, "rate_over (x faster than base above 1)": vs}
            print(
                f"{m}x{n}x{k}{mode}: "
                + "; ".join(f"{x} {t:.2f} us" for x, t in us.items())
                + "".join(
                    f"; {x} {r:.3f} ({lo:.3f}-{hi:.3f})"
                    for x, (r, lo, hi) in vs.items()
                    if not sweep39  # 84 ratios a mode: in the JSON only
                ),
                flush=True,
            )
        row["seconds"] = round(time.monotonic() - began, 1)
        last = row["seconds"]
        if sweep39:  # the builds fastest first in graphs, beside the model's estimate
            g = row["graphs"]["us"]
            ranked = sorted((x for x in builds if x in g), key=g.__getitem__)
            print(
                f"{m}x{n}x{k} fastest in graphs (model us): "
                + "; ".join(f"{x} {g[x]:.2f} ({builds[x][0].est_us:.1f})" for x in ranked[:8])
                + f"; cuBLAS {g.get('cuBLAS', 0):.2f}"
                + f" [{last:.0f} s]",
                flush=True,
            )
        out.append(row)
        with open(sys.argv[1], "w") as f:  # after every shape: a run cut short keeps what it measured
            json.dump({"rows": out} if sweep39 else out, f, indent=1)
        del works, rot
        cp.get_default_memory_pool().free_all_blocks()
    print("graph capture failures:", timer.graph_failures or "none")
    with open(sys.argv[1], "w") as f:
        json.dump(
            {"rows": out, "graph capture failures": timer.graph_failures or None}
            if small39 or sweep39
            else out,
            f,
            indent=1,
        )


if __name__ == "__main__":
    main()
