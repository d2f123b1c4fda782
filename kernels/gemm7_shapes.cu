// SPDX-License-Identifier: MIT
//
// GEMM ladder, step 7: every shape and size. D = A B^T for any M, N, K
// (N and K multiples of 8), ragged edges by the TMA hardware, tile shape
// and a split of K chosen per problem so that every SM has work.
//
// Step 6 (gemm6_epilogue.cu) runs one problem well: square, a multiple of
// 256, at least 4096. Three things change here.
//
// 1. Ragged edges by the hardware. M, N and K are kernel arguments, the
//    tensor maps describe the real M x K, N x K and M x N matrices, and
//    the tile counts round up. A TMA load whose box reaches past the
//    tensor's bounds fills the missing elements with zeros
//    (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE; PTX ISA "Tensors: Tiled mode:
//    Out of Boundary Access") and still counts the whole box's bytes on
//    the mbarrier, so the ring's expect-tx arithmetic is unchanged. Zero
//    rows of A or B give zero products: the elements of D inside the
//    bounds are exact, and those outside are garbage-free zeros that the
//    TMA store never writes, because a store clips at the tensor's bounds.
//    A K that is not a multiple of 64 zero-fills the tail of the last
//    K-tile in both operands: 0 * 0 adds nothing. No thread branches on an
//    edge. The one rule left is the TMA's: a global row stride must be a
//    multiple of 16 bytes, so K (rows of A and B) and N (rows of D) must
//    be multiples of 8 halves; the host refuses anything else.
//
// 2. Tile shapes as compile-time configurations. -DGEMM_BN=256 (default),
//    128 or 64 sets the tile width (the tile is 128 x GEMM_BN; each of the
//    two consumer warpgroups owns 64 rows and issues m64nBNk16 wgmmas),
//    and -DGEMM_CLUSTER=2 (default) or 1 sets the cluster along M that
//    shares B by multicast (step 5). The ring is as deep as shared memory
//    allows: 4 stages of 48 KiB at BN 256, 6 of 32 KiB at BN 128, 8 of
//    24 KiB at BN 64. A smaller tile makes more tiles (more SMs busy at
//    N = 1024, with no split of K to pay for) at the cost of more
//    shared-memory traffic per FLOP. -DGEMM_BM=64 makes the tile 64 x BN
//    with one consumer warpgroup (256 threads): for decode shapes (M <=
//    64), where a 128-row tile spends half its wgmma work on zero rows.
//    There -DGEMM_A_ROWS=8, 16 or 32 loads only that many rows of A a
//    K-tile, for M up to that many (kTxBytes says why; issue 39, session 24).
//    Issue 39's widths (first run on an H100, 2026-12-06; the chooser picks
//    192, 160 and 144 at cluster 2, unsplit, where their waves fill better):
//    -DGEMM_BN=192, 160, 144 or 96 (128-row tiles, cluster 1 or
//    2), so that a middle-sized shape's tiles come to about whole waves of
//    the SMs (cuBLAS runs 128 x 144 at 1536^3 on an H100: 132 tiles, one
//    an SM; evidence/gemm_dev/notes_cublas_kernels.md). Their
//    wgmmas are m64nBNk16 (region wide39-wgmma); D goes out one box per
//    consumer per pass, 64 columns at BN 192, 48 at 96 and 144, 32 at 160
//    (region wide39-epilogue), so the ring takes what shared memory has
//    left: 5, 5, 6 and 7 stages. -DGEMM_BN=200 (cluster 1 only: half of
//    200 rows of B is no whole 8-row swizzle atom) is cuBLAS's width at
//    4104 x 776 x 1240 (evidence/gemm_dev/notes_ncu_gap.md): 776 columns
//    in 4 tiles (3% padding) where 256 pads a quarter; 40-column D boxes,
//    5 stages.
//
// 3. Split-K with an in-kernel reduction. The runtime argument splitK
//    cuts each tile's K-tiles into splitK contiguous ranges; a work unit
//    is (cluster tile, split), and the persistent CTAs walk units as they
//    walked tiles. With splitK > 1 each consumer warpgroup writes its FP32
//    partial (64 x BN) to a workspace and counts itself in: a warpgroup
//    barrier, then one thread's release fence and atomic add on a
//    per-(tile, warpgroup) counter (CUTLASS's semaphore pattern, not a
//    fence in every thread). The one that
//    arrives last adds the others' partials to its registers, resets the
//    counter to 0 for the next launch, and runs step 6's epilogue (shared
//    memory, TMA store) on the sum. Nobody waits for anybody, so no order
//    of units can deadlock. This is the last-arriver reduction of the CUDA
//    sample threadFenceReduction (a fence, an atomic ticket, the last
//    block sums); CUTLASS's sm90 split-K / Stream-K fixup instead has a
//    split wait for its turn on a barrier in the workspace (cutlass/
//    barrier.h, wait_eq), with a ReductionMode of Deterministic (its
//    default) or Nondeterministic (include/cutlass/gemm/kernel/
//    tile_scheduler_params.h). Here the FP32 sums' order depends on which
//    split arrives last, so D's last bits can differ from launch to launch;
//    -DGEMM_DETERMINISTIC=1 makes the last arriver add every partial, its
//    own read back too, in split order: the same bits every launch, for
//    one more partial read per tile. With splitK = 1 the kernel is step 6 on rounded-up tile
//    counts. Which BN, cluster and split a problem gets is the host's
//    choice (a model of tiles, waves and SM count); this file's main()
//    takes them as arguments.
//
// 4. Stream-K, a build of its own (-DGEMM_STREAMK=1; Osama et al.,
//    "Stream-K", PPoPP 2023, and CUTLASS's sm90 Stream-K scheduler): with
//    a partial last wave, the last two waves' worth of tiles are cut into
//    K-iterations shared evenly by the persistent clusters (each one
//    contiguous range, which may span two or three tiles), the other tiles
//    go data-parallel in whole waves, so no wave is partial. A tile that
//    several clusters share is finished by the same reduceSplits as split-K
//    (each contribution to the workspace, the last arriver sums them; in K
//    order with -DGEMM_DETERMINISTIC=1). See "schedule"; splitK must be 1.
//
// What does not change: the warp-specialized ring, setmaxnreg, the
// multicast, scale-d, the epilogue through shared memory and TMA store.
//
// The problem (the ladder's, generalised):
//   A  M x K, row-major, FP16 (K contiguous)
//   B  N x K, row-major, FP16 (K contiguous; cuBLAS's TN case)
//   D  M x N, row-major, FP16, D[m][n] = sum_k A[m][k] * B[n][k],
//      accumulated in FP32 and rounded to FP16 once at the end.
//
// Launch contract (kClusterSize = kClusterM x kClusterN CTAs a cluster: 1 or 2):
//   kernel  gemm7Shapes(tmA, tmB, tmD, M, N, K, splitK, workspace,
//           counters), compiled with __cluster_dims__(kClusterSize, 1, 1)
//           (none in the small build: a plain launch)
//   grid    (min(SMs x kCtasPerSm rounded down to a multiple of
//           kClusterSize, units * kClusterSize), 1, 1), units =
//           ceil(ceil(M/kBM)/kClusterM) * ceil(ceil(N/kBN)/kClusterN) *
//           splitK; kCtasPerSm is 1, or 2 in the small build
//           (-DGEMM_SMALL=1)
//   block   kThreadsPerBlock = 384 (256 with GEMM_BM=64); dynamic shared
//           memory kSmemBytes
//   tmA     2D FP16 map over A: dims {K, M}, row stride K*2 bytes, box
//           {kBK, kBoxARows} = {64, 128} (kBM / kClusterN rows: with a
//           cluster along N each CTA loads one slice), 128B swizzle, OOB
//           fill NONE (zeros)
//   tmB     the same over B: dims {K, N}, box {64, kBoxBRows} (kBN /
//           kClusterM rows: each CTA of the cluster loads one slice)
//   tmD     2D FP16 map over D: dims {N, M}, row stride N*2, box
//           {kBoxDCols, kBoxDRows} = {64, 64}, 128B swizzle
//   splitK  1 .. ceil(K/64)
//   workspace  splitK > 1: FP32, tilesMPadded * tilesN * splitK * kBM *
//           kBN floats (tilesMPadded = ceil(ceil(M/kBM)/kClusterM) *
//           kClusterM, tilesN = ceil(N/kBN): a cluster along N's padding
//           CTA stores nothing); may be null when splitK == 1
//   counters   splitK > 1: tilesMPadded * tilesN * kConsumers unsigned
//           ints, zero before the first launch (the kernel leaves them
//           zero); may be null when splitK == 1
//   Stream-K build: splitK 1; grid = SMs rounded down to a multiple of
//           kClusterSize (every slot, whatever the units); when its
//           schedule on that grid shares a tile (skTiles > 0), workspace
//           skTiles * kClusterSize * skPeers * kBM * kBN floats
//           (skSlotFloats) and counters as above (makeProblem gives skTiles
//           and skPeers; the host calls it too). 48 bytes of static shared
//           memory on top of kSmemBytes.
//
// Technique credit: github.com/pranjalssh/fast.cu (the ladder's source,
// see step 6); split-K and Stream-K fixup: CUTLASS
// (include/cutlass/gemm/kernel/sm90_tile_scheduler_stream_k.hpp) and
// Osama et al., "Stream-K", PPoPP 2023. This file is the course's own code.
//
// Needs compute capability 9.0 exactly (wgmma is sm_90a-only).
//
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o gemm7_shapes gemm7_shapes.cu
//        (add -DGEMM_BN=128 or 64 and/or -DGEMM_CLUSTER=1 for the other configurations,
//        -DGEMM_BN=200 (with -DGEMM_CLUSTER=1), 192, 160, 144 or 96 for issue 39's widths (128-row tiles),
//        -DGEMM_CLUSTER=1 -DGEMM_CLUSTER_N=2 for a cluster along N sharing A (any 128-row width),
//        -DGEMM_DETERMINISTIC=1 for split-K sums in split order,
//        -DGEMM_STREAMK=1 for the Stream-K schedule;
//        -DGEMM_SMALL=1 -DGEMM_BM=64 -DGEMM_CLUSTER=1 -DGEMM_BN=64 or 128 for small problems)
// Run:   ./gemm7_shapes            (a list of ragged shapes, each with splits 1 and 3;
//                                   Stream-K: each on all SMs, 7 and 3 clusters)
//        ./gemm7_shapes M N K SPLIT [CLUSTERS] (one shape; CLUSTERS caps the grid)

#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#else
// Under NVRTC (the course compiles this same file at run time) there is
// no cuda.h: declare the 128-byte, 64-byte aligned opaque tensor map the
// way cuda.h does, as Day 76 (tma_tile.cu) explains. Fixed-width integers
// come from libcu++.
#include <cuda/std/cstdint>
#include <cuda_fp16.h>
using cuda::std::uint32_t;
using cuda::std::uint64_t;
using cuda::std::uint8_t;
using cuda::std::uintptr_t;
struct alignas(64) CUtensorMap_st {
    unsigned long long opaque[16];
};
typedef struct CUtensorMap_st CUtensorMap;
#endif

#ifndef __CUDACC_RTC__
// The one error macro, verbatim from the other lesson files.
#define CUDA_CHECK(call)                                                 \
    do {                                                                 \
        cudaError_t err_ = (call);                                       \
        if (err_ != cudaSuccess) {                                       \
            std::fprintf(stderr, "CUDA error %s:%d: %s: %s\n", __FILE__, \
                         __LINE__, #call, cudaGetErrorString(err_));     \
            std::exit(EXIT_FAILURE);                                     \
        }                                                                \
    } while (0)
#endif  // __CUDACC_RTC__

// snippet: constants
// The configuration: tile height and width and cluster, one compiled kernel each.
#ifndef GEMM_BN
#define GEMM_BN 256
#endif
// -DGEMM_BM=64: a 64-row tile with one consumer warpgroup (256 threads), for
// decode shapes (M <= 64), where a 128-row tile spends half its wgmma work on
// zero rows. Default 128: two consumer warpgroups of 64 rows each.
#ifndef GEMM_BM
#define GEMM_BM 128
#endif
#ifndef GEMM_CLUSTER
#define GEMM_CLUSTER 2
#endif
constexpr int kBM = GEMM_BM;              // rows of D one CTA owns: 128 or 64
constexpr int kBN = GEMM_BN;              // columns of D one CTA owns: 256, 128 or 64
constexpr int kBK = 64;                   // K depth of one tile: 64 halves = 128 bytes, one swizzle row
constexpr int kWgmmaM = 64;               // rows of one wgmma.mma_async
constexpr int kWgmmaN = kBN;              // columns of one wgmma.mma_async (m64n256k16, n128 or n64)
constexpr int kWgmmaK = 16;               // K depth of one wgmma.mma_async
constexpr int kConsumers = kBM / 64;      // consumer warpgroups (64 rows each): arrivals per empty-barrier phase
constexpr int kThreadsPerBlock = 128 * (1 + kConsumers);  // warpgroup 0 produces, the others consume: 384 or 256
// -DGEMM_CLUSTER_N=2 (with GEMM_CLUSTER=1; issue 39): the cluster's two CTAs sit side by side along
// N instead and share A, each loading half of the A tile's rows and multicasting it to both, each
// loading its own B tile whole (cuBLAS's clusters at 4104 x 776 x 1240, where 33 tile rows leave no
// room for a cluster along M; evidence/gemm_dev/notes_ncu_gap.md). Default 1: A is not shared.
#ifndef GEMM_CLUSTER_N
#define GEMM_CLUSTER_N 1
#endif
#ifndef GEMM_A_ROWS
// rows of A a TMA box in the 64-row build for M <= 32 (decode), 8, 16 or 32; 0: the tile's rows (kTxBytes)
#define GEMM_A_ROWS 0
#endif
constexpr int kBoxARows = GEMM_A_ROWS ? GEMM_A_ROWS : kBM / GEMM_CLUSTER_N;  // TMA box for A: kBK x kBoxARows elements (a slice a CTA)
constexpr int kClusterM = GEMM_CLUSTER;   // CTAs per cluster, stacked along M, sharing B
constexpr int kClusterN = GEMM_CLUSTER_N;  // CTAs per cluster along N, sharing A
constexpr int kBoxBRows = kBN / kClusterM;  // TMA box for B: one slice per CTA of the cluster
constexpr int kAccRegs = kWgmmaM * kWgmmaN / 128;  // floats per thread per m64nBN accumulator
// -DGEMM_DETERMINISTIC=1: split-K's last arriver adds every partial, its own
// included (read back from the workspace), in split order 0, 1, ..., so D is
// the same bits whichever split arrives last (see reduceSplits). Default 0:
// it adds the others' partials to its own registers, and the order of the
// FP32 sums depends on which split arrived last.
#ifndef GEMM_DETERMINISTIC
#define GEMM_DETERMINISTIC 0
#endif
constexpr int kDeterministic = GEMM_DETERMINISTIC;  // 1: split-K sums in split order
// -DGEMM_STREAMK=1: the Stream-K schedule (see "schedule" below) instead of
// split-K: the persistent clusters share the K-iterations of the last waves'
// tiles evenly; the kernel's splitK argument must be 1. Default 0.
#ifndef GEMM_STREAMK
#define GEMM_STREAMK 0
#endif
constexpr int kStreamK = GEMM_STREAMK;    // 1: data-parallel + Stream-K hybrid schedule
constexpr int kSkMinIters = 8;            // Stream-K: fewest K-iterations one unit gets (CUTLASS's min_iters_per_sk_unit_)
// -DGEMM_SMALL=1: the build for small problems (issue 39), with GEMM_BM=64,
// GEMM_CLUSTER=1 and GEMM_BN 64 or 128. Its fixed costs per CTA are fewer:
// a ring of 72 KiB (4 stages at BN 64, 3 at BN 128) instead of 192 KiB, so
// two CTAs fit on one SM (kCtasPerSm; the host's persistent grid is two per
// SM, and one CTA's fill and store overlap the other's K loop); no cluster
// launch (no __cluster_dims__: with no multicast there is nothing to share)
// and so the CTA's own barrier after the mbarrier init instead of the
// cluster's, and none at the exit (no peer can still write into this CTA's
// shared memory). CUTLASS does the same for a cluster of one: its sm90
// kernels __syncthreads() after the pipeline init where size(ClusterShape)
// is 1 and wait for nothing at the end, and GemmUniversalAdapter::run
// launches a static 1x1x1 kernel without a cluster attribute (include/
// cutlass/gemm/device/gemm_universal_adapter.h), its .shared::cluster
// barrier arrivals then addressing the CTA itself. Default 0: every other
// build is unchanged.
#ifndef GEMM_PDL_LATE
// development: 1 triggers the dependent launch after the last load (setup's comment)
#define GEMM_PDL_LATE 0
#endif
#ifndef GEMM_SMALL
#define GEMM_SMALL 0
#endif
// A cluster of one is launched as a plain grid (session 18; the small build did so first): no
// __cluster_dims__, and the CTA's own barrier where a cluster barrier would be, as CUTLASS launches a
// 1x1x1 cluster shape (gemm_universal_adapter.h, "Launching static 1x1x1 kernel"). Day 87's 128 x 64
// build ran 1.17-1.21x faster so on an H100 at 512^3-1024^3 (evidence/gemm_dev/notes_launch40.md).
// -DGEMM_NO_CLUSTER=0 keeps the cluster launch at cluster 1 (the comparison).
#ifndef GEMM_NO_CLUSTER
#define GEMM_NO_CLUSTER (GEMM_CLUSTER == 1 && GEMM_CLUSTER_N == 1)
#endif
#ifndef __CUDACC_RTC__
// The host's names for it (the course's host reads them from this file too).
// The device code writes GEMM_SMALL out instead: NVRTC keeps every
// namespace-scope constexpr as a symbol in the cubin, and two more symbols
// would change every other build's cubin.
constexpr int kSmall = GEMM_SMALL;        // 1: the small-problem build
constexpr int kCtasPerSm = 1 + GEMM_SMALL;  // CTAs the persistent grid puts on one SM: 1, or 2 small
constexpr int kDependentLaunch = 1;       // 1: waits on griddepcontrol (see setup): the host may launch it early
static_assert(kDependentLaunch == 1, "setup's griddepcontrol.wait comes before every global access");
#endif
// setmaxnreg needs a register cap at entry below the consumers' ceiling: 168
// with 384 threads; with 256 (GEMM_BM=64) the cap is 255, so that build
// leaves every warpgroup at what ptxas gives it.
#ifndef GEMM_SETMAXNREG
#define GEMM_SETMAXNREG (GEMM_BM == 128)
#endif
constexpr int kProducerRegs = 40;         // producer warpgroup's ceiling after setmaxnreg.dec
constexpr int kConsumerRegs = 232;        // each consumer warpgroup's ceiling after setmaxnreg.inc
constexpr int kSmemAlign = 1024;          // 128B-swizzle atoms are 8 rows x 128 B = 1024 B
// TMA store box for D: 64 columns = 128 B, one swizzle row. At a development width that 64 does not
// divide (issue 39), a narrower box inside the same 128-byte swizzle: 48 columns at BN 96 and 144,
// 32 at 160 (48 - 160 % 48), 40 at 200 (80 bytes: the TMA wants a box row of a multiple of 16 bytes);
// the development widths stage one box per consumer per pass.
constexpr int kBoxDCols = kBN % 64 ? 48 - kBN % 48 : 64;
constexpr int kBoxDRows = 64;             // TMA store box for D: one consumer's 64 rows
constexpr int kPasses = 256 % kBN ? kBN / kBoxDCols : (kBN + 127) / 128;  // epilogue passes per tile: 2 at BN 256, else 1 (development widths: a pass a box)
constexpr int kStagingBoxes = kBN / (kBoxDCols * kPasses);  // D boxes each consumer stages per pass: 2, or 1 at BN 64
constexpr int kStagingSlots = 256 % kBN ? 1 : 2;  // staging boxes shared memory holds per consumer: 2 (1 at a development width)
constexpr int kPersistent = 1;            // grid = SMs x kCtasPerSm (at most); each CTA walks units
constexpr int kGroupM = 8;                // cluster-tile rows per group of the tile order
constexpr int kMinMultiple = 8;           // N and K: 8 halves = 16 bytes, the TMA stride rule
static_assert(kPersistent == 1, "the host launches at most kCtasPerSm CTAs per SM and the kernel walks units");
static_assert(kMinMultiple * 2 == 16, "a TMA global stride is a multiple of 16 bytes: 8 halves");

constexpr int kTileBytesA = kBM * kBK * 2;                      // 16 KiB
constexpr int kTileBytesB = kBN * kBK * 2;                      // 32 or 16 KiB
constexpr int kStageBytes = kTileBytesA + kTileBytesB;          // bytes the TMA delivers per K-tile
// Decode shapes (issue 39, session 24): -DGEMM_A_ROWS=8, 16 or 32 in the 64-row cluster-1 build, for
// M <= that many rows. The A box is that many rows, not 64, so the TMA zero-fills no rows past M
// every K-tile (at M = 1, 63 of 64); the rest of each stage's 64-row A tile, which the m64 wgmma
// reads, is zeroed once at setup and never written again. On an H100 this ran 1.04-1.07x the 64-row
// box at M <= 8 (evidence/gemm_dev/notes_arows39.md). cuBLAS's decode kernels load 8 to 64 rows of
// the activation a stage (evidence/gemm_dev/notes_cublas_kernels.md). The expect-tx count is the
// bytes the boxes deliver, so it shrinks with the box.
constexpr int kTxBytes = GEMM_A_ROWS ? kBoxARows * kBK * 2 + kTileBytesB : kStageBytes;  // bytes a stage's loads deliver
// The ring is as deep as shared memory allows: 192 KiB of stages (a stage is
// 16 KiB of A plus kBN * 128 B of B), beside 32 KiB of D staging and the
// barriers: 4 stages at BN 256, 6 at BN 128, 8 at BN 64. A development width
// (256 % kBN != 0) gets what is left of 227 KiB beside one staging box a
// consumer and 2 KiB: 5 stages at BN 200, 192 and 160, 6 at 144, 7 at 96.
// A staging box row is one whole 128-byte swizzle line (kStagingCols columns) even where the box is
// narrower: the TMA reads a 48- or 32-column box's rows 128 bytes apart in shared memory (the H100
// run of 2026-12-06, session 16: staged 96 or 64 bytes apart, the store read past the box).
constexpr int kStagingCols = 64;
constexpr int kRingBytes = 256 % kBN ? 227 * 1024 - 2048 - kConsumers * kStagingSlots * kBoxDRows * kStagingCols * 2
                                     : 196608 - GEMM_SMALL * 122880;  // 192 KiB, or 72 KiB in the small build
constexpr int kStages = kRingBytes / kStageBytes;               // ring of shared-memory stages
// Dynamic shared memory the launch requests: the ring, the D staging, one
// 1024-byte block for the barriers (SharedStorage is 1024-aligned), and the
// alignment slack. 231424 in every 128-row build of BN 256, 128 or 64.
constexpr int kSmemBytes = kStages * kStageBytes + kConsumers * kStagingSlots * kBoxDRows * kStagingCols * 2 + 1024 + kSmemAlign;
constexpr int kClusterSize = kClusterM * kClusterN;

static_assert(kBN == 256 || kBN == 128 || kBN == 64 ||
                  ((kBN == 200 || kBN == 192 || kBN == 160 || kBN == 144 || kBN == 96) && kBM == 128 && !GEMM_SMALL),
              "GEMM_BN is 256, 128 or 64; or 200, 192, 160, 144 or 96, issue 39's development widths (128-row "
              "tiles, not the small build)");
static_assert(kBM == 128 || kBM == 64, "GEMM_BM is 128 or 64");
static_assert(kClusterM == 1 || kClusterM == 2, "GEMM_CLUSTER is 1 or 2");
static_assert(kClusterN == 1 || (kClusterN == 2 && kClusterM == 1 && !GEMM_SMALL && !kStreamK),
              "GEMM_CLUSTER_N is 1, or 2 with GEMM_CLUSTER=1 (a cluster along M or along N, not both; not "
              "the small build; not Stream-K, whose walk then spills)");
static_assert(kDeterministic == 0 || kDeterministic == 1, "GEMM_DETERMINISTIC is 0 or 1");
static_assert(kStreamK == 0 || kStreamK == 1, "GEMM_STREAMK is 0 or 1");
static_assert(GEMM_NO_CLUSTER == 0 || (GEMM_NO_CLUSTER == 1 && kClusterSize == 1),
              "GEMM_NO_CLUSTER=1 (no cluster launch) needs GEMM_CLUSTER=1");
static_assert(GEMM_SMALL == 0 || (GEMM_SMALL == 1 && kBM == 64 && kClusterM == 1 && kBN <= 128 && !kStreamK),
              "GEMM_SMALL=1 is a 64-row tile, cluster 1, BN 64 or 128, split-K schedule");
static_assert(kBK * 2 == 128, "one tile row must be exactly one 128-byte swizzle span");
static_assert(kBM == kWgmmaM * kConsumers, "each consumer covers 64 rows with one m64nBN slice");
static_assert((kBoxARows * kClusterN == kBM ||
               (GEMM_A_ROWS && kBM == 64 && kClusterSize == 1 && !kStreamK && kBoxARows < kBM)) &&
                  kBoxARows % 8 == 0 && kBoxBRows <= 256,
              "TMA boxes are at most 256 rows; the cluster's CTAs split the A tile evenly, in whole 8-row "
              "swizzle atoms");
static_assert(kThreadsPerBlock == 128 * (1 + kConsumers),
              "one producer warpgroup plus the consumer warpgroups");
static_assert(kStages >= 2, "a pipeline needs at least two stages");
static_assert(kBoxDCols * 2 <= 128 && kBoxDCols % 8 == 0 && kBoxDRows == kWgmmaM && kPasses >= 1 &&
                  kStagingBoxes >= 1 && kStagingBoxes <= kStagingSlots &&
                  kPasses * kStagingBoxes * kBoxDCols == kBN,
              "each consumer stores its 64-row slice as kBN / kBoxDCols boxes of 64 rows, each row at most "
              "one 128-byte swizzle span (64 columns; 48, 40 or 32 at a development width)");
static_assert(kBoxBRows * kClusterM == kBN && kBoxBRows % 8 == 0,
              "the cluster's CTAs split the B tile evenly, in whole 8-row swizzle atoms (1024 B)");
static_assert(128 * (kProducerRegs + kConsumers * kConsumerRegs) <= 65536,
              "the three warpgroups' ceilings must fit the 64K-register file");
// end snippet

// snippet: smem-layout
struct alignas(1024) SharedStorage {
    __half a[kStages][kBM * kBK];  // A tiles: kBM rows of 128 B each, swizzled
    __half b[kStages][kBN * kBK];  // B tiles: kBN rows of 128 B each, swizzled
    __half dOut[kConsumers][kStagingSlots][kBoxDRows * kStagingCols];  // D staging, 8 KiB a box
    uint64_t full[kStages];        // mbarrier: "the TMA bytes of this stage have landed"
    uint64_t empty[kStages];       // mbarrier: "the wgmmas of every CTA reading this stage are done"
    unsigned arrived[kConsumers];  // split-K: the ticket each consumer's atomicAdd returned
};
static_assert(kSmemBytes == sizeof(SharedStorage) + kSmemAlign,
              "kSmemBytes must be the storage plus the alignment slack");
static_assert(kSmemBytes <= 227 * 1024, "Hopper's per-block shared memory ceiling");
// The small build's two CTAs on one SM: 228 KiB per SM, 1 KiB of it reserved per CTA
// (CUDA C++ Programming Guide, "Shared Memory" for compute capability 9.0).
static_assert((1 + GEMM_SMALL) * (kSmemBytes + 1024) <= 228 * 1024, "kCtasPerSm CTAs' shared memory on one SM");
// end snippet

// snippet: descriptor
// A wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format",
// https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor):
// bits 13..0 start address >> 4, 29..16 leading byte offset >> 4, 45..32
// stride byte offset >> 4, 63..62 swizzle mode (1 = 128B).
// For a K-major operand in the 128B swizzle mode the TMA wrote, one "atom"
// is 8 rows x 128 bytes (8 rows x 64 halves): the stride byte offset is
// the step from one 8-row group to the next, 1024 B. The leading byte
// offset would step along K to the next atom, but a k16 slice (32 B) never
// leaves the 128-byte row, so the field is unused; 1 is the customary
// filler. Day 78's unswizzled descriptor had LBO 128 and SBO 1024 for
// core matrices of 8 x 16 B; here the hardware finds the 16-byte chunks by
// undoing the XOR swizzle (chunk ^= row % 8) itself.
// The next k16 slice starts 32 bytes further along the row: descriptor + 2.
// That works inside a swizzled row only because the tile base is
// 1024-aligned, so the hardware's XOR sees the same row bits the TMA used.
__device__ __forceinline__ uint64_t swizzledDesc(const void* smemPtr) {
    const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smemPtr));
    return uint64_t((addr & 0x3FFFFu) >> 4)        // start address
           | (uint64_t(1) << 16)                   // leading byte offset: unused here
           | (uint64_t(1024 >> 4) << 32)           // stride byte offset: 8 rows x 128 B
           | (uint64_t(1) << 62);                  // swizzle mode: 128B
}
// end snippet

// snippet: mbarrier
// The mbarrier, in raw PTX (PTX ISA "Parallel Synchronization and
// Communication Instructions: mbarrier", https://docs.nvidia.com/cuda/
// parallel-thread-execution/index.html
// #parallel-synchronization-and-communication-instructions-mbarrier).
// A phase completes when (a) the expected number of arrivals arrived and
// (b) the transaction count, raised by expect-tx and lowered by the bytes
// the TMA engine writes, is back at zero. Then the phase flips and waiters
// on its parity are released.
__device__ __forceinline__ uint32_t smemAddr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarInit(uint64_t* bar, uint32_t arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(bar)),
                 "r"(arrivals)
                 : "memory");
}

// One arrival that also announces `bytes` of incoming TMA traffic.
__device__ __forceinline__ void mbarArriveExpectTx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     smemAddr(bar)),
                 "r"(bytes)
                 : "memory");
}

// A plain arrival (release semantics at CTA scope by default): orders
// this thread's earlier work before the arrival that others wait for.
__device__ __forceinline__ void mbarArrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(bar)) : "memory");
}

// An arrival on the barrier at the same offset in CTA `ctaRank` of this
// cluster: mapa turns our shared::cta address into that CTA's
// shared::cluster address (PTX ISA "mapa", https://docs.nvidia.com/cuda/
// parallel-thread-execution/index.html
// #data-movement-and-conversion-instructions-mapa).
// Default semantics (release, CTA scope), as CUTLASS's ClusterBarrier
// uses. What the arrival must order is the wgmmas' shared-memory reads
// before the peer's next TMA write, and those reads have *completed*
// (wgmma.wait_group) before the arrival is issued: no memory fence is
// needed for that. Written .release.cluster, ptxas puts MEMBAR.ALL.GPU
// in front of every arrival (seen in this file's SASS, nvdisasm 13.5),
// and on the H200 that version ran at about 0.7x the speed of step 4
// (measured on the H200 on 2026-11-30 while this step was written).
__device__ __forceinline__ void mbarArriveCluster(uint64_t* bar, uint32_t ctaRank) {
    asm volatile(
        "{\n\t.reg .b32 remote;\n\t"
        "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}" ::"r"(smemAddr(bar)),
        "r"(ctaRank)
        : "memory");
}

// Spin until the phase with this parity has completed ("try_wait.parity",
// https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #parallel-synchronization-and-communication-instructions-mbarrier-test-wait-mbarrier-try-wait).
// try_wait may itself sleep for a while in hardware before reporting
// false, so the loop is not a hot spin.
__device__ __forceinline__ void mbarWait(uint64_t* bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n\t.reg .pred p;\n\t"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(smemAddr(bar)), "r"(parity)
            : "memory");
    } while (!done);
}

// Every thread of every CTA in the cluster arrives, then waits for all
// (PTX ISA "barrier.cluster", https://docs.nvidia.com/cuda/
// parallel-thread-execution/index.html
// #parallel-synchronization-and-communication-instructions-barrier-cluster).
// Release/acquire: shared-memory writes before it are visible to the
// whole cluster after it. It also does __syncthreads()'s job.
__device__ __forceinline__ void clusterSync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n\t"
        "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ uint32_t clusterCtaRank() {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}
// end snippet

// snippet: tma-load
// One 2D tile copy, global -> shared, completing on an mbarrier by bytes
// (PTX ISA "cp.async.bulk.tensor", https://docs.nvidia.com/cuda/
// parallel-thread-execution/index.html
// #data-movement-and-conversion-instructions-cp-async-bulk-tensor).
// Coordinates are elements, innermost (K) first. The map is read through
// its generic address: a __grid_constant__ parameter lives in the
// constant bank and has one.
__device__ __forceinline__ void tmaLoad2d(void* dst, const CUtensorMap* map,
                                          uint64_t* bar, int k, int row) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile"
        ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            smemAddr(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(k), "r"(row), "r"(smemAddr(bar))
        : "memory");
}

// The other direction: one box of D, shared -> global, tracked by the
// issuing thread's bulk async-groups instead of an mbarrier.
__device__ __forceinline__ void tmaStore2d(const CUtensorMap* map, const void* src, int col,
                                           int row) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
        " [%0, {%1, %2}], [%3];" ::"l"(reinterpret_cast<uint64_t>(map)),
        "r"(col), "r"(row), "r"(smemAddr(src))
        : "memory");
}

// The same copy, multicast: the engine writes the box at dst's offset in
// the shared memory of every CTA whose bit is set in ctaMask, and
// signals the barrier at bar's offset in each of them.
__device__ __forceinline__ void tmaLoad2dMulticast(void* dst, const CUtensorMap* map,
                                                   uint64_t* bar, int k, int row,
                                                   uint16_t ctaMask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile"
        ".mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smemAddr(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(k), "r"(row), "r"(smemAddr(bar)),
        "h"(ctaMask)
        : "memory");
}
// end snippet

// A cluster along N (-DGEMM_CLUSTER_N=2): this CTA's slice of the A tile, kBoxARows rows, multicast
// into the same rows of both CTAs' stage, whose full barrier counts the bytes as its own.
__device__ __forceinline__ void loadSliceA(SharedStorage& s, int stage, const CUtensorMap* tmA, int kt,
                                           int mBlock, uint32_t rank) {
    tmaLoad2dMulticast(&s.a[stage][rank * kBoxARows * kBK], tmA, &s.full[stage], kt * kBK,
                       mBlock * kBM + static_cast<int>(rank) * kBoxARows,
                       static_cast<uint16_t>((1u << kClusterSize) - 1));
}

// Decode builds (-DGEMM_A_ROWS, kTxBytes): the TMA writes only the first kBoxARows rows of each
// stage's A tile, and the m64 wgmma reads all 64, so rows kBoxARows..63 of every stage are zeroed
// once, here, before the barriers' init; an M past the box traps (the host refuses it first). The
// wgmma reads shared memory through the async proxy: these generic-proxy stores are fenced for it.
__device__ __forceinline__ void zeroPastShortABox(SharedStorage& s, int t, int M) {
    if constexpr (GEMM_A_ROWS != 0) {
        if (M > kBoxARows) asm volatile("trap;");
        // 16-byte chunks a stage (1 where GEMM_A_ROWS is 0: this branch still compiles there, and % 0 warns)
        constexpr int kChunks = GEMM_A_ROWS ? (kBM - kBoxARows) * kBK / 8 : 1;
        for (int i = t; i < kStages * kChunks; i += kThreadsPerBlock) {
            reinterpret_cast<uint4*>(&s.a[i / kChunks][kBoxARows * kBK])[i % kChunks] = make_uint4(0, 0, 0, 0);
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
}

// snippet: wgmma
__device__ __forceinline__ void wgmmaFence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmmaCommit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmmaWait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// One m64n256k16 wgmma, A and B both from shared memory through
// descriptors. scaleD = 0 computes D = A*B, 1 computes D += A*B; it is a
// predicate, so it may be a run-time value. The immediates after it:
// scale-a = scale-b = 1 (no negation), trans-a = trans-b = 0 (both
// operands K-major, which is how A and B sit in memory here).
__device__ __forceinline__ void wgmmaM64N256K16(float (&acc)[128], uint64_t descA,
                                                uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %130, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127},\n\t"
        "%128, %129, p, 1, 1, 0, 0;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
          "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
          "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
          "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]),
          "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]),
          "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]),
          "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]),
          "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]),
          "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]), "+f"(acc[65]),
          "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]),
          "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]),
          "+f"(acc[78]), "+f"(acc[79]), "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]),
          "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]),
          "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95]),
          "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]), "+f"(acc[100]), "+f"(acc[101]),
          "+f"(acc[102]), "+f"(acc[103]), "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]),
          "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]), "+f"(acc[112]), "+f"(acc[113]),
          "+f"(acc[114]), "+f"(acc[115]), "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]),
          "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]), "+f"(acc[124]), "+f"(acc[125]),
          "+f"(acc[126]), "+f"(acc[127])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// The same for m64n128k16: 64 accumulators per thread (the 128x128
// configurations). Operand numbering as above: 64 outputs, then descA,
// descB and scale-d. (m64n64k16, for the 128x64 tiles, is below it.)
__device__ __forceinline__ void wgmmaM64N128K16(float (&acc)[64], uint64_t descA,
                                                uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %66, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63},\n\t"
        "%64, %65, p, 1, 1, 0, 0;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
          "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
          "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
          "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]),
          "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]),
          "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]),
          "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]),
          "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]),
          "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// m64n64k16: 32 accumulators per thread (the 128x64 configurations).
__device__ __forceinline__ void wgmmaM64N64K16(float (&acc)[32], uint64_t descA, uint64_t descB,
                                               int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},\n\t"
        "%32, %33, p, 1, 1, 0, 0;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
          "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
          "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
          "+f"(acc[30]), "+f"(acc[31])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// end snippet

// region wide39-wgmma (issue 39's widths: no page shows this region)
// m64nNk16 for N = 96, 144, 160, 192 and 200 (PTX ISA, wgmma.mma_async: N is any multiple of 8
// up to 256 for .f16 inputs): N / 2 accumulators a thread, one overload of wgmmaWide per
// accumulator count. The operand lists are spelled by the preprocessor eight at a time:
// WIDE_R<i> names operands %8i .. %8i+7 in the asm string, WIDE_ACC8(i) binds acc[8i] ..
// acc[8i + 7] to them; then descA, descB and scale-d, numbered on, as above.
#define WIDE_R0 "%0,%1,%2,%3,%4,%5,%6,%7"
#define WIDE_R1 "%8,%9,%10,%11,%12,%13,%14,%15"
#define WIDE_R2 "%16,%17,%18,%19,%20,%21,%22,%23"
#define WIDE_R3 "%24,%25,%26,%27,%28,%29,%30,%31"
#define WIDE_R4 "%32,%33,%34,%35,%36,%37,%38,%39"
#define WIDE_R5 "%40,%41,%42,%43,%44,%45,%46,%47"
#define WIDE_R6 "%48,%49,%50,%51,%52,%53,%54,%55"
#define WIDE_R7 "%56,%57,%58,%59,%60,%61,%62,%63"
#define WIDE_R8 "%64,%65,%66,%67,%68,%69,%70,%71"
#define WIDE_R9 "%72,%73,%74,%75,%76,%77,%78,%79"
#define WIDE_R10 "%80,%81,%82,%83,%84,%85,%86,%87"
#define WIDE_R11 "%88,%89,%90,%91,%92,%93,%94,%95"
#define WIDE_R12H "%96,%97,%98,%99"  // four: m64n200k16 has 100 accumulators
#define WIDE_ACC8(i)                                                                            \
    "+f"(acc[8 * i]), "+f"(acc[8 * i + 1]), "+f"(acc[8 * i + 2]), "+f"(acc[8 * i + 3]),        \
        "+f"(acc[8 * i + 4]), "+f"(acc[8 * i + 5]), "+f"(acc[8 * i + 6]), "+f"(acc[8 * i + 7])
#define WIDE_REGS48 WIDE_R0 "," WIDE_R1 "," WIDE_R2 "," WIDE_R3 "," WIDE_R4 "," WIDE_R5
#define WIDE_REGS72 WIDE_REGS48 "," WIDE_R6 "," WIDE_R7 "," WIDE_R8
#define WIDE_REGS80 WIDE_REGS72 "," WIDE_R9
#define WIDE_REGS96 WIDE_REGS80 "," WIDE_R10 "," WIDE_R11
#define WIDE_REGS100 WIDE_REGS96 "," WIDE_R12H
#define WIDE_ACC48 WIDE_ACC8(0), WIDE_ACC8(1), WIDE_ACC8(2), WIDE_ACC8(3), WIDE_ACC8(4), WIDE_ACC8(5)
#define WIDE_ACC72 WIDE_ACC48, WIDE_ACC8(6), WIDE_ACC8(7), WIDE_ACC8(8)
#define WIDE_ACC80 WIDE_ACC72, WIDE_ACC8(9)
#define WIDE_ACC96 WIDE_ACC80, WIDE_ACC8(10), WIDE_ACC8(11)
#define WIDE_ACC100 WIDE_ACC96, "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99])
// wgmmaWide for m64n<N>k16: DESC names descA and descB's operands, SCALE scale-d's.
#define WIDE_WGMMA(N, DESC, SCALE, REGS, ...)                                                   \
    __device__ __forceinline__ void wgmmaWide(float(&acc)[N / 2], uint64_t descA,              \
                                              uint64_t descB, int scaleD) {                    \
        asm volatile("{\n\t.reg .pred p;\n\t"                                                   \
                     "setp.ne.b32 p, " SCALE ", 0;\n\t"                                         \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16\n\t"               \
                     "{" REGS "},\n\t" DESC ", p, 1, 1, 0, 0;\n\t}"                             \
                     : __VA_ARGS__                                                              \
                     : "l"(descA), "l"(descB), "r"(scaleD));                                    \
    }
WIDE_WGMMA(96, "%48, %49", "%50", WIDE_REGS48, WIDE_ACC48)
WIDE_WGMMA(144, "%72, %73", "%74", WIDE_REGS72, WIDE_ACC72)
WIDE_WGMMA(160, "%80, %81", "%82", WIDE_REGS80, WIDE_ACC80)
WIDE_WGMMA(192, "%96, %97", "%98", WIDE_REGS96, WIDE_ACC96)
WIDE_WGMMA(200, "%100, %101", "%102", WIDE_REGS100, WIDE_ACC100)
#undef WIDE_WGMMA
#undef WIDE_ACC100
#undef WIDE_ACC96
#undef WIDE_ACC80
#undef WIDE_ACC72
#undef WIDE_ACC48
#undef WIDE_REGS100
#undef WIDE_REGS96
#undef WIDE_REGS80
#undef WIDE_REGS72
#undef WIDE_REGS48
#undef WIDE_ACC8
#undef WIDE_R0
#undef WIDE_R1
#undef WIDE_R2
#undef WIDE_R3
#undef WIDE_R4
#undef WIDE_R5
#undef WIDE_R6
#undef WIDE_R7
#undef WIDE_R8
#undef WIDE_R9
#undef WIDE_R10
#undef WIDE_R11
#undef WIDE_R12H
// end of region wide39-wgmma

// Cluster-tile columns over tilesN tile columns: tilesN itself but with a cluster along N.
__host__ __device__ __forceinline__ int clusterColumns(int tilesN) {
    if constexpr (kClusterN > 1) {
        return (tilesN + kClusterN - 1) / kClusterN;
    } else {
        return tilesN;
    }
}

// snippet: schedule
// The problem's tile counts, worked out once per CTA from M, N, K, the
// split and the grid; everything the producer and the consumers must agree
// on. (Also compiled for the host: main() sizes the Stream-K workspace
// from the same numbers.)
struct Problem {
    int tilesN;         // tile columns of D: ceil(N / kBN) (a cluster along N: ceil(tilesN / 2) cluster-tile columns)
    int clusterTilesM;  // cluster-tile rows: ceil(ceil(M / kBM) / kClusterM)
    int kTiles;         // K-tiles: ceil(K / kBK), the last one zero-filled past K
    int splitK;         // K ranges per tile
    int units;          // work units the clusters walk: tiles * splitK, or Stream-K's below
    int tiles;          // cluster tiles: clusterTilesM * tilesN
    // Stream-K (GEMM_STREAMK=1); all 0 in the split-K builds or when no tile is shared.
    int skTiles;        // the first skTiles tiles (in tile order) are shared out as K-iterations
    int skUnits;        // units 0 .. skUnits-1 are Stream-K units (one per cluster)
    int skPer;          // K-iterations per Stream-K unit; the first skBig units do one more
    int skBig;
    int skPeers;        // most units that can share one tile: the workspace's partials per tile
};

__host__ __device__ __forceinline__ Problem makeProblem(int M, int N, int K, int splitK,
                                                        int slots) {
    Problem p;
    p.tilesN = (N + kBN - 1) / kBN;
    p.clusterTilesM = ((M + kBM - 1) / kBM + kClusterM - 1) / kClusterM;
    p.kTiles = (K + kBK - 1) / kBK;
    p.splitK = splitK;
    p.tiles = p.clusterTilesM * clusterColumns(p.tilesN);
    p.units = p.tiles * splitK;
    p.skTiles = p.skUnits = p.skPer = p.skBig = p.skPeers = 0;
    if constexpr (kStreamK) {
        // CUTLASS's data-parallel + Stream-K hybrid (PersistentTileSchedulerSm90StreamKParams,
        // include/cutlass/gemm/kernel/tile_scheduler_params.h: get_num_sk_tiles,
        // get_num_sk_units): with a partial last wave, the last two waves' worth of tiles (the
        // partial one and one full one, if any) are Stream-K tiles, and the rest whole waves of
        // data-parallel tiles; the Stream-K tiles' K-iterations go to as many units as have at
        // least kSkMinIters each, at most one per cluster. Whole waves: no Stream-K at all.
        const int fullWaves = p.tiles / slots;
        if (p.tiles % slots != 0) {
            const int dpTiles = (fullWaves > 0 ? fullWaves - 1 : 0) * slots;
            const long long skIters = static_cast<long long>(p.tiles - dpTiles) * p.kTiles;
            const long long fit = skIters / kSkMinIters;
            const int skUnits = fit < slots ? static_cast<int>(fit) : slots;
            if (skUnits > 0) {
                p.skTiles = p.tiles - dpTiles;
                p.skUnits = skUnits;
                p.skPer = static_cast<int>(skIters / skUnits);
                p.skBig = static_cast<int>(skIters % skUnits);
                // A tile's kTiles iterations meet at most ceil(kTiles / skPer) + 1 units.
                p.skPeers = (p.kTiles + p.skPer - 1) / p.skPer + 1;
            }
        }
        p.units = p.skUnits + (p.tiles - p.skTiles);
    }
    return p;
}
// The Stream-K build keeps its Problem in static shared memory beside the dynamic (see setup).
static_assert(!kStreamK || kSmemBytes + sizeof(Problem) <= 227 * 1024,
              "Hopper's per-block shared memory ceiling, static and dynamic together");

// Cluster tile -> (cluster-tile row, cluster-tile column) in grouped order, as step
// 6: kGroupM cluster-tile rows form a group, walked down a column, then one
// column right.
__device__ __forceinline__ void tileCoords(const Problem& p, int tile, int& mBlock, int& nBlock) {
    const int group = tile / (kGroupM * clusterColumns(p.tilesN));
    const int firstM = group * kGroupM;
    const int rows = p.clusterTilesM - firstM < kGroupM ? p.clusterTilesM - firstM : kGroupM;
    const int inGroup = tile - group * (kGroupM * clusterColumns(p.tilesN));
    mBlock = firstM + inGroup % rows;  // in cluster-tile rows
    nBlock = inGroup / rows;
}

// Work unit u -> cluster tile and its range [kBegin, kEnd) of K-tiles. The
// splits of one tile are consecutive units, so they run at the same time on
// neighbouring clusters and the last one's reduction finds the others'
// partials hot in L2.
__device__ __forceinline__ void unitCoords(const Problem& p, int unit, int& mBlock, int& nBlock,
                                           int& split, int& kBegin, int& kEnd) {
    const int tile = unit / p.splitK;
    split = unit - tile * p.splitK;
    tileCoords(p, tile, mBlock, nBlock);
    // Balanced ranges: sizes differ by at most one K-tile.
    kBegin = static_cast<int>((static_cast<long long>(split) * p.kTiles) / p.splitK);
    kEnd = static_cast<int>((static_cast<long long>(split + 1) * p.kTiles) / p.splitK);
}
// end snippet

// snippet: streamk
// Stream-K numbers every K-iteration of the Stream-K tiles once: iteration
// tile * kTiles + kt. Unit u < skUnits owns [skBegin(u), skBegin(u + 1)),
// skPer + 1 iterations for the first skBig units, skPer for the rest
// (CUTLASS's big units); skOwner is the inverse.
__device__ __forceinline__ int skBegin(const Problem& p, int u) {
    return u * p.skPer + (u < p.skBig ? u : p.skBig);
}
__device__ __forceinline__ int skOwner(const Problem& p, int iter) {
    const int bigIters = p.skBig * (p.skPer + 1);
    return iter < bigIters ? iter / (p.skPer + 1) : p.skBig + (iter - bigIters) / p.skPer;
}

// Stream-K's workspace: one slot per (Stream-K CTA tile, warpgroup), each
// skPeers partials of 64 x kBN floats; contribution seg goes seg partials
// in (reduceSplits' `mine`, called with this slot as its base). The floats
// from the workspace's start to a slot; skSlotFloats(p, p.skTiles, 0, 0)
// is the whole workspace.
__host__ __device__ __forceinline__ size_t skSlotFloats(const Problem& p, int tile, int rank,
                                                        int cons) {
    return ((static_cast<size_t>(tile) * kClusterSize + rank) * kConsumers + cons) *
           static_cast<size_t>(p.skPeers) * (kWgmmaM * kBN);
}

// One piece of work: a tile and a range of its K-tiles, and which of the
// tile's contributions it is. Split-K: contribution `split` of splitK.
// Stream-K: the units that share a tile are consecutive, first .. first +
// segs - 1, each with one contiguous range, so contribution seg = unit -
// first, in K order; segs == 1 is a whole tile (stored, no fixup).
struct Work {
    int tile, mBlock, nBlock, kBegin, kEnd, seg, segs;  // tile: Stream-K only
};

// The Stream-K build's walk of one cluster (the split-K builds walk units
// with unitCoords, one piece of work each): units firstUnit, + unitStep,
// ...; a Stream-K unit is one piece per tile its range touches, a
// data-parallel unit (u >= skUnits: tile u - skUnits + skTiles, after the
// Stream-K tiles, as CUTLASS's assign_work numbers them) one whole tile.
// The producer and the consumers walk the same pieces.
struct Walk {
    int unit, step;     // the next unit, the clusters in the grid
    int cur;            // Stream-K: the unit being walked
    int iter, iterEnd;  // Stream-K: what is left of it, in iterations
};

__device__ __forceinline__ bool nextWork(const Problem& p, Walk& w, Work& out) {
    if (w.iter >= w.iterEnd) {  // the next unit
        if (w.unit >= p.units) return false;
        w.cur = w.unit;
        if (w.unit < p.skUnits) {
            w.iter = skBegin(p, w.unit);
            w.iterEnd = skBegin(p, w.unit + 1);
        } else {
            w.iter = (w.unit - p.skUnits + p.skTiles) * p.kTiles;
            w.iterEnd = w.iter + p.kTiles;
        }
        w.unit += w.step;
    }
    const int tile = w.iter / p.kTiles;
    const int tileBegin = tile * p.kTiles;
    const int tileEnd = tileBegin + p.kTiles;
    out.tile = tile;
    tileCoords(p, tile, out.mBlock, out.nBlock);
    out.kBegin = w.iter - tileBegin;
    out.kEnd = (w.iterEnd < tileEnd ? w.iterEnd : tileEnd) - tileBegin;
    out.seg = 0;
    out.segs = 1;
    if (tile < p.skTiles) {
        const int first = skOwner(p, tileBegin);
        out.seg = w.cur - first;
        out.segs = skOwner(p, tileEnd - 1) - first + 1;
    }
    w.iter = tileBegin + out.kEnd;
    return true;
}
// end snippet


// Two floats rounded to one __half2 and stored as 4 bytes at a 32-bit
// shared-memory address.
__device__ __forceinline__ void stShared32(uint32_t addr, float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr),
                 "r"(*reinterpret_cast<const uint32_t*>(&h))
                 : "memory");
}

// A barrier for one warpgroup only (bar.sync with a thread count): the
// two consumers stage and store independently. ID 0 is __syncthreads().
__device__ __forceinline__ void warpgroupBarrier(int id) {
    asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}

// ---- Timeline stamps: the same block in every instrumented kernel ----
// Built with -DCOURSE_TIMELINE, one thread per warpgroup (COURSE_TL_INIT
// elects it) stamps (event, stage, %globaltimer, clock64) at each COURSE_TL
// line into fixed slots of a buffer the host points courseTimeline at:
// every event of CTAs 0..kTlCtas-1, and the start and end of every CTA's
// warpgroups. Each slot has one writer, so no atomics; a null
// courseTimeline records nothing. Built without it, each line is ((void)0)
// and the cubin is the same, byte for byte (the course's tests compare
// them). The host reads the buffer back and puts both clocks on one time
// axis; the page's timeline section says how, and when it trusts clock64.
#ifdef COURSE_TIMELINE
enum : unsigned {   // each event begins an activity that lasts to the next
    TL_START = 1,   // kernel start: setup
    TL_END,         // kernel end
    TL_WAIT_EMPTY,  // producer waits for a free stage (empty barrier)
    TL_LOAD,        // producer issues a stage's loads (or copies it)
    TL_WAIT_FULL,   // consumer waits for a stage's data (full barrier)
    TL_MMA,         // consumer issues wgmma
    TL_MMA_WAIT,    // consumer commits and waits for wgmma (wait_group)
    TL_RELEASE,     // consumer has released a stage (empty arrival)
    TL_SYNC,        // a barrier wait (__syncthreads, a cluster barrier)
    TL_EPI          // epilogue: accumulators out to D
};
constexpr unsigned kTlCtas = 4;        // CTAs recorded event by event
constexpr unsigned kTlWarpgroups = 4;  // slots per CTA: warpgroups 0..3
constexpr unsigned kTlCap = 8192;      // events kept per slot, a power of 2
// Buffer, in 8-byte words: the slots' events, then 8 words of layout and
// one word per slot (who recorded it), then [start, end] of every CTA's
// warpgroups.
constexpr unsigned kTlHead = 2 * kTlCap * kTlCtas * kTlWarpgroups;
constexpr unsigned kTlSpan = kTlHead + 8 + kTlCtas * kTlWarpgroups;
static_assert((kTlCap & (kTlCap - 1)) == 0, "kTlCap: a power of 2");
__device__ unsigned long long* courseTimeline;  // set by the host, else null

struct CourseTl {
    unsigned next = ~0u;  // word of this warpgroup's next event; ~0u: none
    unsigned slot = ~0u;  // cta * kTlWarpgroups + wg; ~0u: not elected
    __device__ __forceinline__ CourseTl(int wg, bool elected) {
        unsigned long long* buf = courseTimeline;
        if (!elected || buf == nullptr) return;  // this thread records nothing
        const unsigned cta =
            blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        slot = cta * kTlWarpgroups + unsigned(wg);
        if (slot == 0) {  // the layout, for the host to check
            buf[kTlHead] = 0x4C54455352554F43ull;  // "COURSETL"
            buf[kTlHead + 1] = 1;                  // layout version
            buf[kTlHead + 2] = kTlCtas;
            buf[kTlHead + 3] = kTlWarpgroups;
            buf[kTlHead + 4] = kTlCap;
            buf[kTlHead + 5] = gridDim.x * gridDim.y * gridDim.z;
        }
        if (cta < kTlCtas) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            buf[kTlHead + 8 + slot] = 1ull << 32 | sm << 8 | unsigned(wg);
            next = 2 * kTlCap * slot;
        }
        stamp(TL_START, 0);
    }
    __device__ __forceinline__ void stamp(unsigned kind, unsigned stage) {
        if (kind == TL_START || kind == TL_END) {  // every CTA: [start, end]
            if (slot == ~0u) return;
            unsigned long long t;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
            courseTimeline[kTlSpan + 2ull * slot + (kind == TL_END)] = t;
        }
        // No branch from here on (a branch between a wgmma and its
        // wait_group makes ptxas inject warpgroup.arrive, info C7519),
        // and only the store is predicated (a predicated definition keeps
        // its register live around the K loop). An event is two words:
        // %globaltimer ns, then clock64's low 32 bits | stage:8 | kind:8.
        asm volatile(
            "{\n\t.reg .pred p;\n\t.reg .b64 t, c, w, a;\n\t"
            "setp.ne.u32 p, %0, -1;\n\t"
            "mov.u64 t, %%globaltimer;\n\t"
            "mov.u64 c, %%clock64;\n\t"
            "mad.wide.u32 a, %0, 8, %2;\n\t"
            "cvt.u64.u32 w, %1;\n\t"
            "bfi.b64 w, c, w, 32, 32;\n\t"
            "@p st.global.v2.u64 [a], {t, w};\n\t}"
            ::"r"(next), "r"((stage & 0xFFu) << 8 | (kind & 0xFFu)),
            "l"(courseTimeline));
        // A full slot keeps its last place for the latest event (the end).
        const unsigned after = next + 2;
        next = (next != ~0u) & ((after & (2 * kTlCap - 1)) != 0) ? after : next;
    }
};
#define COURSE_TL_INIT(wg, elected) CourseTl courseTl_(wg, elected)
#define COURSE_TL(kind, stage) courseTl_.stamp(kind, stage)
#else
#define COURSE_TL_INIT(wg, elected) ((void)0)
#define COURSE_TL(kind, stage) ((void)0)
#endif
// ---- end of the timeline block ----

// One k16 step of this configuration's wgmma: m64n256k16, m64n128k16 or m64n64k16 (or a
// development width's, region wide39-wgmma).
template <int R>
__device__ __forceinline__ void wgmmaStep(float (&acc)[R], uint64_t descA, uint64_t descB,
                                          int scaleD) {
    if constexpr (R == 128) {
        wgmmaM64N256K16(acc, descA, descB, scaleD);
    } else if constexpr (R == 64) {
        wgmmaM64N128K16(acc, descA, descB, scaleD);
    } else if constexpr (R == 32) {
        wgmmaM64N64K16(acc, descA, descB, scaleD);
    } else {
        wgmmaWide(acc, descA, descB, scaleD);
    }
}

#if GEMM_BN % 64 == 0  // the other widths' storeTile: region wide39-epilogue below
// snippet: epilogue
// Step 6's epilogue, for kPasses passes of two 64x64 boxes: registers ->
// 128B-swizzled staging boxes -> TMA store. The store clips at D's
// bounds, so a tile on the ragged edge needs nothing special.
__device__ __forceinline__ void storeTile(float (&acc)[kAccRegs], SharedStorage& s, int cons,
                                          int wt, const CUtensorMap* tmD, int col0, int row0) {
    const int warp = wt / 32;
    const int lane = wt % 32;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        // The previous store may still be reading the staging boxes.
        if (wt == 0) {
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
        warpgroupBarrier(1 + cons);
        // Register pair r holds columns 8 * (r / 4) + 2 * (lane % 4) + {0, 1}
        // of row 16 * warp + lane / 4 (+ 8 for r % 4 >= 2): chunk
        // j = (r / 4) % 8 of box (r / 4) / 8, at swizzled position j ^ (row % 8).
        const uint32_t rowAddr =
            smemAddr(s.dOut[cons][0]) + (16 * warp + lane / 4) * 128 + (lane % 4) * 4;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const uint32_t chunkAddr = rowAddr + ((j ^ (lane / 4)) * 16);
#pragma unroll
            for (int sb = 0; sb < kStagingBoxes; ++sb) {
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int box = pass * kStagingBoxes + sb;
                    const int r = (box * 8 + j) * 4 + half * 2;
                    stShared32(chunkAddr + (sb * kBoxDRows * kBoxDCols + half * 8 * kBoxDCols) * 2,
                               acc[r], acc[r + 1]);
                }
            }
        }
        // Generic-proxy writes, async-proxy reader: fence, then barrier.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        warpgroupBarrier(1 + cons);
        if (wt == 0) {
#pragma unroll
            for (int sb = 0; sb < kStagingBoxes; ++sb) {
                const int box = pass * kStagingBoxes + sb;
                tmaStore2d(tmD, s.dOut[cons][sb], col0 + box * kBoxDCols, row0);
            }
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
}
// end snippet
#else
// region wide39-epilogue (issue 39's widths 96, 144, 160, 200: no page shows this region).
// storeTile with D boxes narrower than 64 columns: kBoxDCols 48, 40 or 32, 96, 80 or 64 bytes
// a row, inside the 128-byte swizzle span (cuTensorMapEncodeTiled: with a swizzle, the box's
// inner dimension is at most the swizzle size; the host's map is the same 128B one). The TMA
// reads each box row from its own 128-byte line of shared memory, the narrower box using the
// first 96, 80 or 64 bytes of it, swizzled as step 6's: chunk j of row r at chunk j ^ (r % 8), from a
// 1024-byte boundary (PTX ISA, "Tensor Swizzling Modes": the pattern is tabled in 128-byte lines).
// A first reading packed the rows 96 or 64 bytes apart; on the H100 (2026-12-06, session 16) that
// store read past the box: memcheck's out-of-range shared address at BN 160, launches differing
// at 96 and 144. One box per consumer per pass.
__device__ __forceinline__ void storeTile(float (&acc)[kAccRegs], SharedStorage& s, int cons,
                                          int wt, const CUtensorMap* tmD, int col0, int row0) {
    constexpr int kChunks = kBoxDCols / 8;  // 16-byte chunks in a box row: 6, 5 or 4
    constexpr int kPitch = kStagingCols * 2;  // bytes from one box row to the next: one 128-byte line
    static_assert(kStagingBoxes == 1 && kPasses * kBoxDCols == kBN && kPitch == 128,
                  "one box a pass, each on a 1024-byte boundary");
    const int warp = wt / 32;
    const int lane = wt % 32;
    const uint32_t box = smemAddr(s.dOut[cons][0]);
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
        // The previous store may still be reading the staging box.
        if (wt == 0) {
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
        warpgroupBarrier(1 + cons);
        // Register pair r = 4 g + 2 half holds columns 8 g + 2 (lane % 4) + {0, 1} of row
        // 16 warp + lane / 4 + 8 half: 8-column group g = pass * kChunks + j is chunk j of this
        // pass's box.
#pragma unroll
        for (int j = 0; j < kChunks; ++j) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const uint32_t at = (16 * warp + lane / 4 + 8 * half) * kPitch + j * 16;  // unswizzled
                const int r = (pass * kChunks + j) * 4 + half * 2;
                stShared32(box + (at ^ ((at >> 3) & 0x70u)) + (lane % 4) * 4, acc[r], acc[r + 1]);
            }
        }
        // Generic-proxy writes, async-proxy reader: fence, then barrier.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        warpgroupBarrier(1 + cons);
        if (wt == 0) {
            tmaStore2d(tmD, s.dOut[cons][0], col0 + pass * kBoxDCols, row0);
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
}
// end of region wide39-epilogue
#endif

// snippet: split-k
// Split-K, the reduction in the kernel: this consumer's FP32 partial goes
// to its workspace slot (one slot per (tile, warpgroup, split)); then the
// warpgroup counts itself in, the way CUTLASS's split-K semaphore does
// (include/cutlass/barrier.h): a warpgroup barrier (every thread's stores
// are issued before it), then ONE thread's release fence and atomic add
// on the (tile, warpgroup) counter. A __threadfence() in every thread
// (fence.sc.gpu, 128 of them per warpgroup) did the same job at a cost
// the timeline showed. Returns true for the warpgroup that arrived last:
// its thread 0 fences again (acquire: the others' partials), the barrier
// passes that on, and it adds every other partial to acc and must store
// the tile. The layout keeps four registers together: registers 4q..4q+3
// of thread wt are float4 number q * 128 + wt, so each 16-byte store and
// load of the warpgroup covers 2 KiB contiguous. .cg (L2, not L1):
// another SM wrote them.
__device__ __forceinline__ bool reduceSplits(float (&acc)[kAccRegs], SharedStorage& s, int cons,
                                             int wt, float* workspace, unsigned* counters,
                                             size_t slot, int split, int splitK) {
    constexpr int kPartial = kWgmmaM * kBN;  // floats per (tile, warpgroup, split)
    float* base = workspace + slot * static_cast<size_t>(splitK) * kPartial;
    float* mine = base + static_cast<size_t>(split) * kPartial;
    static_assert(kAccRegs % 4 == 0, "registers go out four at a time");
#pragma unroll
    for (int q = 0; q < kAccRegs / 4; ++q) {
        __stcg(reinterpret_cast<float4*>(mine) + q * 128 + wt,
               make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
    }
    warpgroupBarrier(1 + cons);
    if (wt == 0) {
        unsigned ticket;
        // The warpgroup's partial (every thread's stores, ordered before this
        // thread by the barrier) is visible GPU-wide before the count.
        asm volatile("fence.acq_rel.gpu;" ::: "memory");  // release: the partial, then the count
        asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;"
                     : "=r"(ticket)
                     : "l"(&counters[slot])
                     : "memory");
        if (ticket == static_cast<unsigned>(splitK - 1)) {
            asm volatile("fence.acq_rel.gpu;" ::: "memory");  // acquire: every other partial
            counters[slot] = 0;  // ready for the next launch
        }
        s.arrived[cons] = ticket;
    }
    warpgroupBarrier(1 + cons);
    const unsigned ticket = *static_cast<volatile unsigned*>(&s.arrived[cons]);
    if (ticket != static_cast<unsigned>(splitK - 1)) {
        return false;  // another split will finish this tile
    }
    if constexpr (kDeterministic) {
        // The same sum whoever is last: partial 0, then + partial 1, + partial 2, ...
        // Its own partial is read back too (this thread's own __stcg stores, in
        // program order), so acc's registers play no part in the order.
        for (int o = 0; o < splitK; ++o) {
            const float4* src = reinterpret_cast<const float4*>(base + static_cast<size_t>(o) * kPartial);
#pragma unroll
            for (int q = 0; q < kAccRegs / 4; ++q) {
                const float4 v = __ldcg(src + q * 128 + wt);
                acc[4 * q] = (o == 0 ? 0.0f : acc[4 * q]) + v.x;
                acc[4 * q + 1] = (o == 0 ? 0.0f : acc[4 * q + 1]) + v.y;
                acc[4 * q + 2] = (o == 0 ? 0.0f : acc[4 * q + 2]) + v.z;
                acc[4 * q + 3] = (o == 0 ? 0.0f : acc[4 * q + 3]) + v.w;
            }
        }
    } else {
        // Default: the others' partials onto this split's registers, in split
        // order but starting from whichever split arrived last, so the order of
        // the FP32 sums (and so D's last bits) can change from launch to launch.
        for (int o = 0; o < splitK; ++o) {
            if (o == split) continue;
            const float4* src = reinterpret_cast<const float4*>(base + static_cast<size_t>(o) * kPartial);
#pragma unroll
            for (int q = 0; q < kAccRegs / 4; ++q) {
                const float4 v = __ldcg(src + q * 128 + wt);
                acc[4 * q] += v.x;
                acc[4 * q + 1] += v.y;
                acc[4 * q + 2] += v.z;
                acc[4 * q + 3] += v.w;
            }
        }
    }
    return true;
}
// end snippet

// D = A * B^T for any M x N x K (N, K multiples of 8). Launch contract:
// see the header. extern "C" keeps the name unmangled for CuPy.
extern "C" __global__ void __launch_bounds__(kThreadsPerBlock, 1 + GEMM_SMALL)  // kCtasPerSm
#if !GEMM_NO_CLUSTER
    __cluster_dims__(kClusterSize, 1, 1)  // the grid is one-dimensional: a cluster is consecutive CTAs
#endif
    gemm7Shapes(const __grid_constant__ CUtensorMap tmA,
                const __grid_constant__ CUtensorMap tmB,
                const __grid_constant__ CUtensorMap tmD, int M, int N, int K, int splitK,
                float* workspace, unsigned* counters) {
    // snippet: setup
    extern __shared__ uint8_t smemRaw[];
    SharedStorage& s = *reinterpret_cast<SharedStorage*>(
        (reinterpret_cast<uintptr_t>(smemRaw) + kSmemAlign - 1) &
        ~uintptr_t(kSmemAlign - 1));

    const int t = static_cast<int>(threadIdx.x);
    const int wg = t / 128;                           // 0 produces, 1 and 2 consume
    const int wt = t % 128;                           // thread within its warpgroup
    COURSE_TL_INIT(wg, wt == 0);
    const uint32_t rank = kClusterSize > 1 ? clusterCtaRank() : 0u;
    const int firstUnit = static_cast<int>(blockIdx.x) / kClusterSize;  // cluster id
    const int unitStep = static_cast<int>(gridDim.x) / kClusterSize;    // clusters in the grid
#if GEMM_STREAMK
    // Stream-K's walk reads more of the problem than fits beside a 128 x 256
    // accumulator in registers (ptxas spilled): it lives in shared memory, and
    // each piece of work reads what it needs again.
    __shared__ Problem sharedProblem;
    if (t == 0) sharedProblem = makeProblem(M, N, K, splitK, unitStep);
    const Problem& p = sharedProblem;  // written before the clusterSync below
#else
    const Problem p = makeProblem(M, N, K, splitK, unitStep);
#endif

    zeroPastShortABox(s, t, M);  // decode builds (-DGEMM_A_ROWS) only: see kTxBytes
    if (t == 0) {
        for (int i = 0; i < kStages; ++i) {
            mbarInit(&s.full[i], 1);
            mbarInit(&s.empty[i], kConsumers * kClusterSize);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
#if GEMM_NO_CLUSTER
    __syncthreads();  // no cluster launch: the CTA's own barrier publishes the init
#else
    clusterSync();
#endif
    // Programmatic dependent launch (issue 39). Launched with the programmatic stream
    // serialization attribute, this grid may start while the kernel before it in the stream is
    // still running, and everything above (shared memory, barriers, the cluster handshake) then
    // overlaps that kernel's tail. Nothing above touches global memory. griddepcontrol.wait holds
    // each thread until the grids this one depends on have completed and their writes are
    // visible; launched without the attribute, there are none to wait for. launch_dependents lets
    // the next GEMM start its own setup once every CTA of this one has passed here (PTX ISA,
    // "griddepcontrol"; CUTLASS's sm90 kernels: launch_dependent_grids, wait_on_dependent_grids).
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (!GEMM_PDL_LATE) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    // end snippet

    if (wg == 0) {
        // snippet: producer
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
#endif
        if (wt == 0) {
            int stage = 0;
            uint32_t phase = 0;
#if GEMM_STREAMK
            Walk walk{firstUnit, unitStep, 0, 0, 0};
            Work w;
            while (nextWork(p, walk, w)) {
#else
            for (int unit = firstUnit; unit < p.units; unit += unitStep) {
                Work w;
                unitCoords(p, unit, w.mBlock, w.nBlock, w.seg, w.kBegin, w.kEnd);
#endif
                const int mBlock = w.mBlock * kClusterM + static_cast<int>(kClusterM > 1 ? rank : 0);
                const int nBlock = w.nBlock * kClusterN + static_cast<int>(kClusterN > 1 ? rank : 0);
                for (int kt = w.kBegin; kt < w.kEnd; ++kt) {
                    COURSE_TL(TL_WAIT_EMPTY, stage);
                    mbarWait(&s.empty[stage], phase ^ 1);
                    COURSE_TL(TL_LOAD, stage);
                    // Whole boxes' bytes, also where a box reaches past
                    // M, N or K: the engine counts the zero fill too.
                    mbarArriveExpectTx(&s.full[stage], kTxBytes);
                    if constexpr (kClusterN > 1) loadSliceA(s, stage, &tmA, kt, mBlock, rank);
                    else tmaLoad2d(s.a[stage], &tmA, &s.full[stage], kt * kBK, mBlock * kBM);
                    if constexpr (kClusterM > 1) {
                        tmaLoad2dMulticast(&s.b[stage][rank * kBoxBRows * kBK], &tmB,
                                           &s.full[stage], kt * kBK,
                                           nBlock * kBN + static_cast<int>(rank) * kBoxBRows,
                                           static_cast<uint16_t>((1u << kClusterSize) - 1));
                    } else {
                        tmaLoad2d(s.b[stage], &tmB, &s.full[stage], kt * kBK, nBlock * kBN);
                    }
                    if (++stage == kStages) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
        }
        // end snippet
#if GEMM_PDL_LATE
        // Development (issue 39, session 24): the trigger after this CTA's last load is issued, not at
        // setup, as CUTLASS's sm90 kernels place launch_dependent_grids late (after the mainloop).
        // One thread's first invocation is the CTA's (PTX ISA, "griddepcontrol").
        if (wt == 0) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    } else {
        // snippet: consumer
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
#endif
        const int cons = wg - 1;          // which 64-row half of the tile
        float acc[kAccRegs];              // never zeroed: each unit's first wgmma has scale-d = 0
        int stage = 0;
        uint32_t phase = 0;
        int prevStage = 0;
#if GEMM_STREAMK
        Walk walk{firstUnit, unitStep, 0, 0, 0};
        Work w;
        while (nextWork(p, walk, w)) {
#else
        for (int unit = firstUnit; unit < p.units; unit += unitStep) {
            Work w;
            unitCoords(p, unit, w.mBlock, w.nBlock, w.seg, w.kBegin, w.kEnd);
            w.segs = p.splitK;
#endif
            const int mBlock = w.mBlock * kClusterM + static_cast<int>(kClusterM > 1 ? rank : 0);
            const int nBlock = w.nBlock * kClusterN + static_cast<int>(kClusterN > 1 ? rank : 0);
            const int kBegin = w.kBegin;
            for (int kt = kBegin; kt < w.kEnd; ++kt) {
                COURSE_TL(TL_WAIT_FULL, stage);
                mbarWait(&s.full[stage], phase);
                COURSE_TL(TL_MMA, stage);
                wgmmaFence();
#pragma unroll
                for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {
                    wgmmaStep(acc, swizzledDesc(&s.a[stage][cons * kWgmmaM * kBK + ks * kWgmmaK]),
                              swizzledDesc(&s.b[stage][ks * kWgmmaK]),
                              (kt > kBegin || ks > 0) ? 1 : 0);
                }
                COURSE_TL(TL_MMA_WAIT, stage);
                wgmmaCommit();
                wgmmaWait<1>();
                if (kt > kBegin && wt < kClusterSize) {
                    mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                    COURSE_TL(TL_RELEASE, prevStage);
                }
                prevStage = stage;
                if (++stage == kStages) {
                    stage = 0;
                    phase ^= 1;
                }
            }
            COURSE_TL(TL_MMA_WAIT, prevStage);
            wgmmaWait<0>();
            if (wt < kClusterSize) {
                mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                COURSE_TL(TL_RELEASE, prevStage);
            }
            // end snippet
            if constexpr (kClusterN > 1) {
                // A cluster along N over an odd number of tile columns: the second CTA of the last
                // pair has no tile (its B rows were all zero fill; it ran only to load its slice of
                // A for its peer). It stores nothing, and split, it counts in nowhere (its counter
                // index would be the next tile row's first). N, not p.tilesN: a kernel parameter
                // needs no register (with p.tilesN, NVRTC's 128 x 256 build spilled 28 bytes).
                if (nBlock * kBN >= N) continue;
            }
            // snippet: fixup
            COURSE_TL(TL_EPI, 0);
            if (w.segs > 1) {
                const size_t ctaTile = static_cast<size_t>(mBlock) * p.tilesN + nBlock;
                const size_t counter = ctaTile * kConsumers + cons;
                bool last;
                if constexpr (kStreamK) {
                    // The same reduction, on this tile's own slot of the workspace (see
                    // skSlotFloats) and its own counter (split-K's, by address), slot 0.
                    last = reduceSplits(acc, s, cons, wt,
                                        workspace + skSlotFloats(p, w.tile, rank, cons),
                                        counters + counter, 0, w.seg, w.segs);
                } else {
                    last = reduceSplits(acc, s, cons, wt, workspace, counters, counter, w.seg,
                                        w.segs);
                }
                if (!last) {
                    continue;
                }
            }
            storeTile(acc, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows);
            // end snippet
        }
        if (wt == 0) {
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
    }
    COURSE_TL(TL_SYNC, 0);
#if !GEMM_NO_CLUSTER
    clusterSync();  // no CTA exits while a peer may still multicast into it or arrive on its barriers
#endif
    COURSE_TL(TL_END, 0);
}
#ifndef __CUDACC_RTC__
// snippet: tensor-maps
// cuTensorMapEncodeTiled through the runtime's driver entry point query,
// as in Day 76: no -lcuda at build time.
static PFN_cuTensorMapEncodeTiled_v12000 getEncodeTiled() {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult qr = cudaDriverEntryPointSymbolNotFound;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                cudaEnableDefault, &qr));
    if (qr != cudaDriverEntryPointSuccess || fn == nullptr) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled not found in this driver\n");
        std::exit(EXIT_FAILURE);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

// A row-major FP16 matrix of rows x cols (cols contiguous), read or
// written in boxes of boxCols x boxRows with 128B swizzle. Out-of-bounds
// loads fill zeros (FLOAT_OOB_FILL_NONE); stores clip at rows x cols.
static CUtensorMap encode2d(PFN_cuTensorMapEncodeTiled_v12000 encode, const __half* base,
                            int rows, int cols, int boxCols, int boxRows) {
    CUtensorMap map{};
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * sizeof(__half)};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(boxCols), static_cast<cuuint32_t>(boxRows)};
    const cuuint32_t elemStrides[2] = {1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                              const_cast<__half*>(base), dims, strides, box, elemStrides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d x %d, box %d x %d): CUresult %d\n",
                     rows, cols, boxRows, boxCols, static_cast<int>(r));
        std::exit(EXIT_FAILURE);
    }
    return map;
}
// end snippet

// snippet: check
// Inputs from {-8..8}/8 are exact in FP16 and every partial sum is a
// multiple of 1/64, so FP32 accumulation is exact for these K (split or
// not, in any order): the only rounding is D's conversion to FP16, at most
// 2^-11 relative (2^-12 absolute below 1). 2e-3 is four times that.
constexpr double kRelTolerance = 2e-3;

// The float64 reference, every element of D (computed once per shape).
static std::vector<double> reference(const std::vector<__half>& a, const std::vector<__half>& b,
                                     int M, int N, int K) {
    std::vector<double> bf(static_cast<size_t>(N) * K), ar(K);
    for (size_t i = 0; i < bf.size(); ++i) bf[i] = __half2float(b[i]);
    std::vector<double> ref(static_cast<size_t>(M) * N);
    for (int m = 0; m < M; ++m) {
        for (int k = 0; k < K; ++k) ar[k] = __half2float(a[static_cast<size_t>(m) * K + k]);
        for (int n = 0; n < N; ++n) {
            const double* br = &bf[static_cast<size_t>(n) * K];
            double part[4] = {0.0, 0.0, 0.0, 0.0};  // K is a multiple of 8
            for (int k = 0; k < K; k += 4) {
                for (int j = 0; j < 4; ++j) part[j] += ar[k + j] * br[k + j];
            }
            ref[static_cast<size_t>(m) * N + n] = (part[0] + part[1]) + (part[2] + part[3]);
        }
    }
    return ref;
}

// Every element of D against the reference, the ragged edges included;
// the first wrong one is named, with whether it lies in the last
// (partial) tile row or column. Also checks the guard past D's end: the
// TMA store must not write outside the tensor.
static bool checkD(const std::vector<double>& ref, const std::vector<__half>& dOut, int M, int N,
                   int K, int split, size_t guard, const char* label) {
    double worst = 0.0;
    for (int m = 0; m < M; ++m) {
        for (int n = 0; n < N; ++n) {
            const double want = ref[static_cast<size_t>(m) * N + n];
            const double got = __half2float(dOut[static_cast<size_t>(m) * N + n]);
            const double rel = std::fabs(got - want) / std::max(std::fabs(want), 1.0);
            if (!(rel <= kRelTolerance)) {  // NaN (never written) fails too
                const bool edgeM = m >= M / kBM * kBM, edgeN = n >= N / kBN * kBN;
                std::fprintf(stderr,
                             "FAIL %s %dx%dx%d split %d at D[%d][%d]%s%s: got %g, ref %g, "
                             "rel error %g > %g\n",
                             label, M, N, K, split, m, n, edgeM ? " (ragged M edge)" : "",
                             edgeN ? " (ragged N edge)" : "", got, want, rel, kRelTolerance);
                return false;
            }
            worst = std::max(worst, rel);
        }
    }
    const size_t elems = static_cast<size_t>(M) * N;
    for (size_t i = elems; i < elems + guard; ++i) {
        const uint16_t bits = *reinterpret_cast<const uint16_t*>(&dOut[i]);
        if (bits != 0x7BFFu) {
            std::fprintf(stderr, "FAIL %s %dx%dx%d split %d: the guard after D was written at "
                         "element %zu past the end\n", label, M, N, K, split, i - elems);
            return false;
        }
    }
    std::printf("%s %dx%dx%d split %d: PASS, every element, max rel error %g (tolerance %g)\n",
                label, M, N, K, split, worst, kRelTolerance);
    return true;
}
// end snippet

// One shape: LCG inputs, the reference once; for each split, a
// NaN-poisoned D with a guard, two launches (the second must match the
// first bit for bit: exact inputs make every summation order exact, and
// it exercises the counters' reset), check.
static bool runShape(PFN_cuTensorMapEncodeTiled_v12000 encode, const cudaDeviceProp& prop, int M,
                     int N, int K, const std::vector<int>& splits, int slotsCap = 0) {
    // snippet: refuse
    if (M < 1 || N < kMinMultiple || K < kMinMultiple || N % kMinMultiple || K % kMinMultiple) {
        std::fprintf(stderr,
                     "refused %dx%dx%d: N and K must be positive multiples of %d (a TMA "
                     "tensor's row stride must be a multiple of 16 bytes), M at least 1\n",
                     M, N, K, kMinMultiple);
        return false;
    }
    // end snippet
    const int tilesN = (N + kBN - 1) / kBN;
    const int clusterTilesM = ((M + kBM - 1) / kBM + kClusterM - 1) / kClusterM;
    const int kTiles = (K + kBK - 1) / kBK;
    const size_t elemsA = static_cast<size_t>(M) * K, elemsB = static_cast<size_t>(N) * K;
    const size_t elemsD = static_cast<size_t>(M) * N, guard = 4096;
    std::vector<__half> hA(elemsA), hB(elemsB), hD(elemsD + guard), hFirst(elemsD + guard);
    uint32_t state = 20261201u + static_cast<uint32_t>(M * 7 + N * 13 + K * 31);
    for (size_t i = 0; i < elemsA + elemsB; ++i) {
        state = state * 1664525u + 1013904223u;
        const float v = static_cast<float>(static_cast<int>(state >> 24) % 17 - 8) / 8.0f;
        (i < elemsA ? hA[i] : hB[i - elemsA]) = __float2half(v);
    }
    const std::vector<double> ref = reference(hA, hB, M, N, K);
    __half *dA = nullptr, *dB = nullptr, *dD = nullptr;
    CUDA_CHECK(cudaMalloc(&dA, elemsA * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dB, elemsB * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dD, (elemsD + guard) * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(dA, hA.data(), elemsA * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB.data(), elemsB * sizeof(__half), cudaMemcpyHostToDevice));
    const CUtensorMap tmA = encode2d(encode, dA, M, K, kBK, kBoxARows);
    const CUtensorMap tmB = encode2d(encode, dB, N, K, kBK, kBoxBRows);
    const CUtensorMap tmD = encode2d(encode, dD, M, N, kBoxDCols, kBoxDRows);
    const size_t ctaTiles = static_cast<size_t>(clusterTilesM) * kClusterM * tilesN;
    bool ok = true;
    for (int wanted : splits) {
        const int splitK = wanted < kTiles ? wanted : kTiles;
        if (splitK < 1 || (kStreamK && splitK != 1)) {
            std::fprintf(stderr, "refused split %d: 1 .. %d for K = %d%s\n", wanted, kTiles, K,
                         kStreamK ? " (the Stream-K build takes split 1 only)" : "");
            ok = false;
            continue;
        }
        // Clusters of the persistent grid: one per kClusterSize SMs, or fewer (slotsCap), to
        // run the Stream-K schedule's other cases on one GPU. Never more: nobody waits for a
        // CTA that is not resident, but the grid stays one wave.
        int slots = prop.multiProcessorCount * kCtasPerSm / kClusterSize;
        if (slotsCap > 0 && slotsCap < slots) slots = slotsCap;
        const Problem hp = makeProblem(M, N, K, splitK, slots);
        float* ws = nullptr;
        unsigned* counters = nullptr;
        size_t wsFloats = 0;
        if (splitK > 1) {
            wsFloats = ctaTiles * splitK * kBM * kBN;
        } else if (kStreamK && hp.skTiles > 0) {
            wsFloats = skSlotFloats(hp, hp.skTiles, 0, 0);  // every (Stream-K CTA tile, warpgroup) slot
        }
        if (wsFloats > 0) {
            CUDA_CHECK(cudaMalloc(&ws, wsFloats * sizeof(float)));
            CUDA_CHECK(cudaMalloc(&counters, ctaTiles * kConsumers * sizeof(unsigned)));
            CUDA_CHECK(cudaMemset(counters, 0, ctaTiles * kConsumers * sizeof(unsigned)));
        }
        // Split-K: no more clusters than units. Stream-K: the schedule is the grid's (CUTLASS
        // launches a full wave too), so every slot.
        const int units = hp.units;
        const dim3 grid((kStreamK || units >= slots ? slots : units) * kClusterSize);
        if (kStreamK) {
            std::printf("stream-k %dx%dx%d on %d clusters: %d Stream-K tiles over %d units of "
                        "%d-%d K-iterations, %d data-parallel tiles, at most %d units a tile\n",
                        M, N, K, slots, hp.skTiles, hp.skUnits, hp.skPer,
                        hp.skPer + (hp.skBig > 0), hp.tiles - hp.skTiles, hp.skPeers);
        }
        for (int launch = 0; launch < 2; ++launch) {
            // Poison: 0xFFFF is an FP16 NaN; the guard holds 0x7BFF (65504).
            CUDA_CHECK(cudaMemset(dD, 0xFF, elemsD * sizeof(__half)));
            std::vector<uint16_t> g(guard, 0x7BFFu);
            CUDA_CHECK(cudaMemcpy(dD + elemsD, g.data(), guard * sizeof(uint16_t),
                                  cudaMemcpyHostToDevice));
            gemm7Shapes<<<grid, kThreadsPerBlock, kSmemBytes>>>(tmA, tmB, tmD, M, N, K, splitK,
                                                                ws, counters);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemcpy((launch == 0 ? hFirst : hD).data(), dD,
                                  (elemsD + guard) * sizeof(__half), cudaMemcpyDeviceToHost));
        }
        bool same = true;
        for (size_t i = 0; i < elemsD + guard && same; ++i) {
            if (*reinterpret_cast<const uint16_t*>(&hD[i]) !=
                *reinterpret_cast<const uint16_t*>(&hFirst[i])) {
                std::fprintf(stderr, "FAIL gemm7 %dx%dx%d split %d: launch 2 differs from launch 1 "
                             "at element %zu\n", M, N, K, splitK, i);
                same = false;
            }
        }
        ok = same && checkD(ref, hFirst, M, N, K, splitK, guard, "gemm7") && ok;
        if (ws) CUDA_CHECK(cudaFree(ws));
        if (counters) CUDA_CHECK(cudaFree(counters));
    }
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dD));
    return ok;
}

int main(int argc, char** argv) {
    // snippet: gate
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9 || prop.minor != 0) {
        std::fprintf(stderr,
                     "%s is CC %d.%d. This program needs CC 9.0 (Hopper): "
                     "wgmma is sm_90a-only and no Blackwell card has it.\n",
                     prop.name, prop.major, prop.minor);
        return EXIT_FAILURE;
    }
    // end snippet
    CUDA_CHECK(cudaFuncSetAttribute(gemm7Shapes, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSmemBytes));
    const PFN_cuTensorMapEncodeTiled_v12000 encode = getEncodeTiled();
    std::printf("configuration: tile %dx%d, cluster %d%s, %d stages, %d SMs\n", kBM, kBN, kClusterSize,
                kClusterN > 1 ? " along N" : "", kStages, prop.multiProcessorCount);
    if (kSmall) {  // the grid counts on two CTAs an SM: say whether the driver agrees
        int resident = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, gemm7Shapes,
                                                                 kThreadsPerBlock, kSmemBytes));
        std::printf("small build: %d CTAs resident an SM (occupancy API), the grid assumes %d\n",
                    resident, kCtasPerSm);
        if (resident < kCtasPerSm) return EXIT_FAILURE;
    }
    if (argc == 5 || argc == 6) {
        return runShape(encode, prop, std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]),
                        {std::atoi(argv[4])}, argc == 6 ? std::atoi(argv[5]) : 0)
                   ? EXIT_SUCCESS
                   : EXIT_FAILURE;
    }
    if (argc != 1) {
        std::fprintf(stderr, "usage: %s [M N K SPLIT [CLUSTERS]]\n", argv[0]);
        return EXIT_FAILURE;
    }
    // Not tile multiples in M, N or K (the last one has more tiles than
    // SMs and is ragged in N only), each with and without a split of K.
    const int shapes[][3] = {{200, 136, 72},   {1000, 1032, 520}, {130, 392, 1096},
                             {2056, 264, 200}, {72, 8, 8},        {1, 8, 1000},
                             {2304, 2504, 256}};
    bool ok = true;
    for (const auto& sh : shapes) {
        if (GEMM_A_ROWS && sh[0] > kBoxARows) {  // a short A box: its own M (rows of A past it never load)
            ok = runShape(encode, prop, kBoxARows - 1, sh[1], sh[2], {1, 3}) && ok;
            continue;
        }
        if (kStreamK) {  // the whole GPU, then grids of 7 and 3 clusters: hybrid schedules
            for (int cap : {0, 7, 3}) ok = runShape(encode, prop, sh[0], sh[1], sh[2], {1}, cap) && ok;
        } else {
            ok = runShape(encode, prop, sh[0], sh[1], sh[2], {1, 3}) && ok;
        }
    }
    std::printf(ok ? "ALL PASS\n" : "SOME FAILED\n");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif  // __CUDACC_RTC__
