"""CPU check of gemm7_shapes.cu's work schedule (no GPU): unitCoords, transcribed.

For many (M, N, K), every configuration and split: the persistent CTAs'
units cover every CTA tile exactly once per split, and each tile's splits
partition [0, ceil(K/64)) into non-empty ranges. Run: python3 sim86.py
"""

import math


def cover(M, N, K, bn, cl, split, sms=132, G=8):
    tilesN = math.ceil(N / bn)
    ctm = math.ceil(math.ceil(M / 128) / cl)
    kT = math.ceil(K / 64)
    units = ctm * tilesN * split
    slots = sms // cl
    grid = min(units, slots)
    seen = {}
    for c in range(grid):
        for u in range(c, units, grid):
            tile = u // split
            s = u - tile * split
            group = tile // (G * tilesN)
            firstM = group * G
            rows = min(ctm - firstM, G)
            ing = tile - group * G * tilesN
            mB = firstM + ing % rows
            nB = ing // rows
            kb = s * kT // split
            ke = (s + 1) * kT // split
            assert ke > kb, (M, N, K, split)
            assert 0 <= mB < ctm and 0 <= nB < tilesN
            for r in range(cl):
                seen.setdefault((mB * cl + r, nB), []).append((kb, ke))
    assert len(seen) == ctm * cl * tilesN
    for key, rs in seen.items():
        rs.sort()
        assert (
            rs[0][0] == 0 and rs[-1][1] == kT and all(a[1] == b[0] for a, b in zip(rs, rs[1:], strict=False))
        ), (key, rs)


n = 0
for M in (1, 72, 128, 130, 200, 1000, 2056, 4096, 16384):
    for N in (8, 136, 264, 1032, 4096, 28672):
        for K in (8, 72, 520, 1096, 8192):
            for bn, cl in ((256, 2), (256, 1), (128, 2), (128, 1)):
                for split in range(1, 9):
                    if split <= math.ceil(K / 64):
                        cover(M, N, K, bn, cl, split)
                        n += 1
print("schedule covers every tile and K range exactly:", n, "cases")
