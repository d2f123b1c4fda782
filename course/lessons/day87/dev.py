"""Day 87's development builds as its bench times them (``bench.PINGPONG_ENV``): the names it takes
(``chooser.DEV_BUILDS``' keys), the sizes and promotion intervals each is timed at, and the words its
reasons say. A dev measurement the page does not render; the builds are in ``chooser``.
"""

from __future__ import annotations

# The builds not yet measured, timed beside the promoting one only when named here: "1" (the ping-pong
# build) or a comma list of chooser.DEV_BUILDS' names.
PINGPONG_ENV = "COURSE_DAY87_PINGPONG"
DEV_SIZES = (2048, 4096, 8192)  # where they are timed (those of the run's sizes), but ...
SMALL_DEV = ("n64", "n64cl", "n64p", "n64pcl")  # ... these, timed at these only:
SMALL_DEV_SIZES = (512, 1024)
DEV_INTERVALS = {  # bench.DEV_INTERVALS adds the ping-pong build's: bench.INTERVALS
    "192x128": (1,),
    "128x192": (1,),
    "overlap": (1,),
    "stagger": (1,),
    "desc": (1,),
    "stagdesc": (1,),
    "early": (1,),
    "early192": (1,),
    "block": (1,),
    "earlyblock": (1,),
    "splitn": (1,),
    "splitn192": (1,),
    "turns": (1,),
    "turns192": (1,),
    "turns3": (1,),
    "turnsblock": (1,),
    "late": (1,),
    "lateturns": (1,),
    "late2": (1,),
    **{name: (1,) if name.startswith("n64p") else (0,) for name in SMALL_DEV},
}
DEV_LABELS = {
    "pingpong": "ping-pong",
    "192x128": "192x128",
    "128x192": "128x192",
    "overlap": "overlap",
    "stagger": "staggered",
    "desc": "descriptor-adds",
    "stagdesc": "staggered descriptor-adds",
    "early": "early-release",
    "early192": "early-release 128x192",
    "block": "block-scaled",
    "earlyblock": "early-release block-scaled",
    "splitn": "split-N",
    "splitn192": "split-N 128x192",
    "turns": "turns",
    "turns192": "turns 128x192",
    "turns3": "turns 192x128",
    "turnsblock": "turns block-scaled",
    "late": "late-scales block-scaled",
    "lateturns": "late-scales turns block-scaled",
    "late2": "late-scales pointers block-scaled",
    "n64": "128x64",
    "n64cl": "128x64 cluster launch",
    "n64p": "128x64 promoting",
    "n64pcl": "128x64 promoting, cluster launch",
}
DEV_WHAT = {
    "pingpong": "the 64x128 ping-pong build (GEMM_PROMOTE_PINGPONG=1)",
    "192x128": "the 192x128 build, three consumer warpgroups of 64x128 (GEMM_BM=192)",
    "128x192": "the 128x192 build, two consumers of 64x192 on m64n192k32 (GEMM_BN=192)",
    "overlap": "the 128x128 build promoting each chain beside the next (GEMM_PROMOTE_OVERLAP=1)",
    "stagger": "the 128x128 build whose second consumer promotes half a K-tile later (GEMM_PROMOTE_STAGGER=1)",
    "desc": "the 128x128 promoting build with descriptors advanced by adds (GEMM_DESC_ITER=1)",
    "stagdesc": "the staggered build with descriptors advanced by adds (GEMM_PROMOTE_STAGGER=1, GEMM_DESC_ITER=1)",
    "early": "the 128x128 promoting build giving each stage back before its promotion (GEMM_EARLY_RELEASE=1)",
    "early192": "the 128x192 promoting build giving each stage back before its promotion (GEMM_EARLY_RELEASE=1)",
    "block": "the block-scaled build (GEMM_BLOCK_SCALES=1), named here to time it in the same batch",
    "earlyblock": "the block-scaled build giving each stage back before its promotion (GEMM_EARLY_RELEASE=1)",
    "splitn": "the 128x128 promoting build whose chains are two 64-column halves, the left promoted under the right's wgmmas (GEMM_PROMOTE_SPLITN=1)",
    "splitn192": "the 128x192 promoting build whose chains are two 96-column halves, the left promoted under the right's wgmmas (GEMM_PROMOTE_SPLITN=1)",
    "turns": "the 128x128 promoting build whose consumers issue each K-tile's wgmmas in turns (GEMM_PROMOTE_TURNS=1)",
    "turns192": "the 128x192 promoting build whose consumers issue each K-tile's wgmmas in turns (GEMM_PROMOTE_TURNS=1)",
    "turns3": "the 192x128 promoting build (three consumers) issuing each K-tile's wgmmas in turns (GEMM_PROMOTE_TURNS=1)",
    "turnsblock": "the block-scaled build whose consumers issue each K-tile's wgmmas in turns (GEMM_PROMOTE_TURNS=1)",
    "late": "the block-scaled build loading each K-tile's scales after the promotion before it (GEMM_SCALES_LATE=1)",
    "lateturns": "the late-scales block-scaled build in turns (GEMM_SCALES_LATE=1, GEMM_PROMOTE_TURNS=1)",
    "late2": "the late-scales block-scaled build walking the scales by pointer adds (GEMM_SCALES_LATE=2)",
    "n64": "the 128x64 cluster-1 build (the pick where few tiles), named here to time it in the same batch",
    "n64cl": "the 128x64 build launched as a cluster of one (GEMM_NO_CLUSTER=0), as before session 18",
    "n64p": "the 128x64 cluster-1 promoting build, named here to time it in the same batch",
    "n64pcl": "the 128x64 promoting build launched as a cluster of one (GEMM_NO_CLUSTER=0)",
}
