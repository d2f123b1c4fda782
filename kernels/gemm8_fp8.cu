// SPDX-License-Identifier: MIT
//
// GEMM ladder, step 8: FP8. D = scaleA * scaleB * (A B^T) with A and B in
// e4m3 (8 bits: 1 sign, 4 exponent, 3 mantissa bits), accumulated in FP32
// and rounded to FP16 once at the end, for any M x N x K (N a multiple of
// 8, K a multiple of 16).
//
// Step 7 (gemm7_shapes.cu) runs FP16 at cuBLAS speed on large shapes
// only: 0.99x and 1.02x of cuBLAS at 4096^3 and 8192^3, but 0.69x at
// 512^3 and 0.76x at 1024^3 (Day 86's recording on an H200,
// evidence/bench/day86.json). Hopper's tensor
// cores run e4m3 and e5m2 at twice the FP16 rate (the datasheet's dense
// peaks: about 1,979 against 989 TFLOP/s on H100/H200 SXM). Four things
// change here.
//
// 1. The instruction: wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3
//    (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
//    Instructions: wgmma.mma_async", https://docs.nvidia.com/cuda/
//    parallel-thread-execution/index.html
//    #asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async).
//    One instruction covers k = 32: 32 one-byte elements are 32 bytes, the
//    same bytes as FP16's k16, so the shared-memory tiles, the swizzle and
//    the descriptors are step 7's byte for byte: a K-tile of 128 elements
//    is one 128-byte swizzle row, four k32 wgmmas deep. There is no
//    transpose for 8-bit types: the instruction takes no trans-a / trans-b
//    immediates for .e4m3 / .e5m2 (the transpose is offered for .f16 and
//    .bf16 only), so both operands must be K-major in shared memory (PTX
//    ISA, wgmma.mma_async, "Matrix Data-types" and "Shared Memory Matrix
//    Layout"). A (M x K) and B (N x K), both K contiguous, is the
//    ladder's TN layout already; a row-major K x N B would need a
//    transpose first.
//
// 2. Scales. e4m3 spans only +-448 (its largest finite value) down to
//    2^-9, with 3 mantissa bits. The host quantises each matrix with one
//    scale, s = amax / 448, stores round(x / s) saturated to +-448, and
//    passes sA * sB to the kernel, which multiplies it into every element
//    in the epilogue, just before the FP16 rounding: one FMUL per element
//    of D, nothing in the K loop.
//
// 3. What the accumulator keeps. The FP32 accumulator of an FP8 wgmma
//    chain is not a full FP32 adder: DeepSeek-V3's report (arXiv
//    2412.19437, section 3.3.2, "Increasing Accumulation Precision") found
//    about 14 bits kept on H800, and moved partial sums into FP32
//    registers on the CUDA cores every 128 elements of K. This file does
//    the same, as a build option: -DGEMM_PROMOTE=1 gives each consumer a
//    second accumulator in registers (total), and the run-time argument
//    promoteEvery = P makes the wgmma chain restart (scale-d = 0) every P
//    K-tiles of 128, after its sum has been added into total with FP32
//    adds. P = 0 never promotes: the whole K runs in the wgmma
//    accumulator and total receives it once at the end. The second
//    accumulator costs registers: 64 + 64 per thread at a 128-wide tile;
//    a 256-wide tile (128 + 128 plus addresses) does not fit the 232 a
//    consumer gets, a 192-wide one (-DGEMM_BN=192, m64n192k32: 96 + 96)
//    fits the 240 of setmaxnreg 24 / 240. So a promoting build is
//    128 x 128 or 128 x 192, the host picking per size (Day 87's
//    chooser). -DGEMM_BM=192, three consumer warpgroups of 64 x 128 (512
//    threads, setmaxnreg 24 / 160, FlashAttention-3's layout for three
//    math warpgroups), builds too, but ran slower than 128 x 192.
//    (DeepGEMM, github.com/deepseek-ai/DeepGEMM, deep_gemm/include/
//    deep_gemm/fp8_gemm.cuh: the same two accumulators, promoted with the
//    block scales every 128 of K.)
//
// 4. Rows are bytes. A TMA row stride must be a multiple of 16 bytes:
//    K (rows of A and B, one byte an element) a multiple of 16, N (rows of
//    D, FP16) a multiple of 8. The tensor maps of A and B are UINT8 (the
//    TMA moves bytes; only wgmma reads them as e4m3); out-of-bounds boxes
//    fill with 0x00, which is e4m3 +0, so step 7's ragged edges carry over.
//
// A variant, block scales, as a build option (-DGEMM_BLOCK_SCALES=1, on
//    top of the promoting 128 x 128 build). One scale per tensor lets the
//    largest element set the step of every other: e4m3 spans 448 down to
//    2^-6 in normal numbers, so a row 2^15 smaller than the largest lands
//    in the subnormals (one to three significant bits), and one about
//    2^18.8 smaller rounds to zero: 448 x 2^-18 = 1.75 x 2^-10 still
//    rounds up to the smallest subnormal, 2^-9, and only below 2^-10,
//    half of it, does e4m3 round to zero (OCP OFP8 Formats v1.0:
//    subnormals m/8 x 2^-6). DeepSeek-V3's
//    recipe (arXiv 2412.19437, section 3.3.2, "Fine-Grained Quantization")
//    scales A per row per 128 elements of K (1 x 128) and B per 128 x 128
//    block, so each scale covers exactly one K-tile of one row of A and
//    one K-tile of the CTA's 128 columns of B. The scales then change
//    every K-tile, so they cannot wait for the epilogue: the chain is
//    promoted after every K-tile, total += partial * sA[row] * sB, with
//    FP32 FMAs on the CUDA cores, and the epilogue multiplies by 1.
//    The scales are float32 arrays in global memory, read with plain
//    loads issued a K-tile ahead of their use: sA is K-block-major, [ceil(K/128)][M]
//    (one K-block's row scales contiguous, the layout DeepGEMM's
//    transposed scales use), sB is [ceil(N/128)][ceil(K/128)].
//    (DeepGEMM, github.com/deepseek-ai/DeepGEMM, deep_gemm/include/
//    deep_gemm/fp8_gemm.cuh: its consumer adds each K-block's accumulator
//    times scale_a * scale_b into a second accumulator after the block's
//    wgmmas; it stages the scales in shared memory (A's by TMA with the
//    tiles), this file reads them from global memory.) Measured on the
//    H200 (2026-12-03, 4096 and 8192), this build ran at 0.82x and 0.78x
//    the per-tensor promoting build at P = 1: the scaled promotion is not
//    free here, and staging the scales as DeepGEMM does is the next step.
//    The cost is this build's, not block scales': DeepGEMM reports its
//    block-scaled FP8 GEMM at up to 1550 TFLOP/s on an H800 (its
//    README, news of 2025.04.18).
//
// What does not change: the warp-specialised ring, setmaxnreg, the
// cluster's multicast of B, the persistent grouped tile order, the
// epilogue through shared memory and a TMA store. Split-K (step 7's
// third idea) is left out to keep this step about FP8, not because FP8
// needs it less: whether a problem has tiles enough for the SMs does not
// depend on the type, so at the small squares cuBLASLt keeps a lead (the
// page's table). Its reduction would also have to sit after the promotion.
//
// The problem:
//   A  M x K, row-major, e4m3 bits (K contiguous)
//   B  N x K, row-major, e4m3 bits (K contiguous; cuBLAS's TN case)
//   D  M x N, row-major, FP16,
//      D[m][n] = scale * sum_k A[m][k] * B[n][k], scale = sA * sB.
//
// Launch contract:
//   kernel  gemm8Fp8(tmA, tmB, tmD, M, N, K, scale, promoteEvery),
//           compiled with __cluster_dims__(kClusterM, 1, 1)
//   grid    (min(SMs rounded down to a multiple of kClusterM,
//           units * kClusterM), 1, 1), units = ceil(ceil(M/kBM)/kClusterM)
//           * ceil(N/kBN)
//           (kBM = 64 in the ping-pong build: tmA's box is {128, 64};
//           192 in the 192-row build, kBN = 192 in the 192-column one)
//   block   kThreadsPerBlock = 384 (512 with GEMM_BM=192); dynamic shared
//           memory kSmemBytes
//   tmA     2D UINT8 map over A: dims {K, M}, row stride K bytes, box
//           {kBK, kBoxARows} = {128, kBM}, 128B swizzle, OOB fill NONE
//           (zeros)
//   tmB     the same over B: dims {K, N}, box {128, kBoxBRows} (kBN /
//           kClusterM rows: each CTA of the cluster loads one slice)
//   tmD     2D FP16 map over D: dims {N, M}, row stride N*2, box
//           {kBoxDCols, kBoxDRows} = {64, 64}, 128B swizzle
//   scale   float, sA * sB, multiplied into D in the epilogue
//   promoteEvery  0 (never) or P >= 1 K-tiles of kBK; must be 0 unless
//           built with -DGEMM_PROMOTE=1
//   scalesA, scalesB  only when built with -DGEMM_BLOCK_SCALES=1: float32
//           sA [ceil(K/128)][M] and sB [ceil(N/128)][ceil(K/128)]; the
//           build promotes after every K-tile whatever promoteEvery says
//           (pass 1), and scale should be 1
//
// Technique credit: the ladder's source github.com/pranjalssh/fast.cu;
// promotion: DeepSeek-V3 (arXiv 2412.19437) and DeepGEMM. This file is
// the course's own code.
//
// Needs compute capability 9.0 exactly (wgmma is sm_90a-only).
//
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o gemm8_fp8 gemm8_fp8.cu
//        (the promoting build: add -DGEMM_PROMOTE=1 -DGEMM_BN=128; -DGEMM_CLUSTER=1 for no cluster;
//        the block-scaled build: -DGEMM_PROMOTE=1 -DGEMM_BN=128 -DGEMM_BLOCK_SCALES=1;
//        the ping-pong promoting build: -DGEMM_PROMOTE=1 -DGEMM_BN=128 -DGEMM_PROMOTE_PINGPONG=1,
//        64 x 128 tiles, one consumer each, chains in turns: see the region "pingpong-order" below;
//        the 192-row promoting build: -DGEMM_PROMOTE=1 -DGEMM_BN=128 -DGEMM_BM=192 (three consumers);
//        the 192-column promoting build: -DGEMM_PROMOTE=1 -DGEMM_BN=192 (m64n192k32);
//        both checked on an H100: evidence/gemm_dev/notes_fp8wide.md;
//        the staggered-promotion build: -DGEMM_PROMOTE=1 -DGEMM_BN=128 -DGEMM_PROMOTE_STAGGER=1 (region
//        stagger-consumer: consumer 1 promotes half a K-tile after consumer 0; every K-tile, whatever P);
//        the overlapped-promotion build: -DGEMM_PROMOTE=1 -DGEMM_BN=128 -DGEMM_PROMOTE_OVERLAP=1,
//        two chain accumulators a consumer, each chain promoted beside the next one: region
//        "overlap" below; exact on an H100, and slower: evidence/gemm_dev/notes_pover40.md;
//        the split-N promoting build: -DGEMM_PROMOTE=1 -DGEMM_BN=128 (or 192) -DGEMM_PROMOTE_SPLITN=1,
//        each chain as two half-width ones, the left promoted under the right: region "splitn-consumer";
//        exact on an H100, and no faster: evidence/gemm_dev/notes_splitn40.md;
//        the turns builds: add -DGEMM_PROMOTE_TURNS=1 to a promoting build (regions "turns-constants",
//        "turns-order"); the late block scales: add -DGEMM_SCALES_LATE=1 or 2 to the block-scaled build
//        (region "scales-late"); exact on an H100, turns slower, late scales 1.02-1.04x; the pointer walk of
//        -DGEMM_SCALES_LATE=2, 1.08-1.12x, is the snippet's own since session 21, the same cubin:
//        evidence/gemm_dev/notes_turns40.md)
// Run:   ./gemm8_fp8                      (a list of ragged shapes, each with the build's intervals)
//        ./gemm8_fp8 M N K PROMOTE_EVERY  (one shape)

#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
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
// The configuration: tile width, cluster and promotion, one compiled kernel each.
#ifndef GEMM_BN
#define GEMM_BN 256
#endif
#ifndef GEMM_CLUSTER
#define GEMM_CLUSTER 2
#endif
#ifndef GEMM_PROMOTE
#define GEMM_PROMOTE 0
#endif
#ifndef GEMM_BLOCK_SCALES
#define GEMM_BLOCK_SCALES 0
#endif
#ifndef GEMM_PROMOTE_PINGPONG
#define GEMM_PROMOTE_PINGPONG 0
#endif
#ifndef GEMM_BM
#define GEMM_BM 128
#endif
typedef uint8_t fp8_t;                    // one e4m3 element, as the TMA moves it: a byte
constexpr int kPingpong = GEMM_PROMOTE_PINGPONG;  // 1: each consumer owns a whole 64-row tile, in turns
constexpr int kBM = GEMM_BM / (1 + kPingpong);  // rows of D in one unit of work: 128, 192, or 64 ping-pong
constexpr int kBN = GEMM_BN;              // columns of D one CTA owns: 256, 192, 128 or 64
constexpr int kBK = 128;                  // K depth of one tile: 128 e4m3 = 128 bytes, one swizzle row
constexpr int kWgmmaM = 64;               // rows of one wgmma.mma_async
constexpr int kWgmmaN = kBN;              // columns of one wgmma.mma_async (m64n256k32, n192, n128 or n64)
constexpr int kWgmmaK = 32;               // K depth of one FP8 wgmma.mma_async: 32 bytes, as FP16's k16
constexpr int kThreadsPerBlock = 128 * (1 + GEMM_BM / 64);  // warpgroup 0 produces, the others consume: 384 or 512
constexpr int kConsumers = GEMM_BM / kWgmmaM;  // consumer warpgroups: 2, or 3 in the 192-row build
constexpr int kStageReaders = kConsumers - kPingpong;  // consumers reading one stage: 2, or 1 ping-pong
constexpr int kBoxARows = kBM;            // TMA box for A: kBK x kBoxARows bytes
constexpr int kClusterM = GEMM_CLUSTER;   // CTAs per cluster, stacked along M, sharing B
constexpr int kClusterN = 1;              // CTAs per cluster along N (A is not shared)
constexpr int kBoxBRows = kBN / kClusterM;  // TMA box for B: one slice per CTA of the cluster
constexpr int kAccRegs = kWgmmaM * kWgmmaN / 128;  // floats per thread per m64nBN accumulator
constexpr int kPromote = GEMM_PROMOTE;    // 1: a second FP32 accumulator the wgmma sums are added into
constexpr int kBlockScales = GEMM_BLOCK_SCALES;  // 1: 1x128 scales of A, 128x128 of B, applied at each promotion
constexpr int kScaleBlock = 128;          // elements of K (and rows of B) one block scale covers
#ifndef GEMM_PDL_LATE
// development: 1 triggers the dependent launch after the last load (gemm7_shapes.cu)
#define GEMM_PDL_LATE 0
#endif
#ifndef GEMM_SETMAXNREG
#define GEMM_SETMAXNREG 1
#endif
// (No new constexpr names here for the 192 builds: NVRTC emits every namespace-scope constant
// into the cubin, and the other builds' cubins are to stay what they were, byte for byte.)
// The producer warpgroup's ceiling after setmaxnreg.dec: 40, or 24 in the two 192 builds (the
// third consumer, or the 192 columns: kConsumers - 2 + kBN / 192 - kBN / 256 is 1 in those, else
// 0; an integer expression the course's constant reader evaluates, 1 at BN 192 of 64 to 256).
constexpr int kProducerRegs = 40 - 16 * (kConsumers - 2 + kBN / 192 - kBN / 256);
// setmaxnreg moves registers between the warpgroups of one CTA, inside the pool the CTA was
// launched with ("A pool of available registers is maintained per-CTA"; setmaxnreg.inc blocks
// until the pool has them: PTX ISA, "setmaxnreg"): kThreadsPerBlock threads at the launch bound's
// ceiling, 65536 / threads rounded down to 8 (168 at 384 threads, 128 at 512; ptxas reports it
// as the kernel's registers). Each consumer warpgroup's ceiling after setmaxnreg.inc is what the
// producer leaves of that pool, in multiples of 8: 232, 160 with three consumers, 240 at BN 192.
constexpr int kConsumerRegs =
    (65536 / kThreadsPerBlock / 8 * 8 * (1 + kConsumers) - kProducerRegs) / kConsumers / 8 * 8;
constexpr int kSmemAlign = 1024;          // 128B-swizzle atoms are 8 rows x 128 B = 1024 B
constexpr int kBoxDCols = 64;             // TMA store box for D: 64 columns = 128 B, one swizzle row
constexpr int kBoxDRows = 64;             // TMA store box for D: one consumer's 64 rows
constexpr int kStagingBoxes = 2 - (kConsumers - 2 + kBN % 128 / 64);  // D boxes each consumer stages per pass: 2, or 1 in the 192 builds and at BN 64
constexpr int kPasses = kBN / (kBoxDCols * kStagingBoxes);  // epilogue passes per tile: 2 or 1 (2 or 3 in the 192 builds)
// Dynamic shared memory the launch requests: the ring (below), the D staging boxes, 1 KiB of
// barriers and 1 KiB of alignment slack: 192 + 32 + 2 KiB, 200 + 24 + 2 in the 192-row build,
// 200 + 16 + 2 at BN 192, 192 + 16 + 2 at BN 64 (SharedStorage's static_assert checks it).
constexpr int kSmemBytes = 231424 - 8192 * (kBN % 128 / 64 + 64 / kBN);  // 64 / kBN: 1 at BN 64 only
constexpr int kPersistent = 1;            // grid = number of SMs (at most); each CTA walks units
#ifndef __CUDACC_RTC__
constexpr int kDependentLaunch = 1;       // 1: waits on griddepcontrol (see setup): the host may launch it early
static_assert(kDependentLaunch == 1, "setup's griddepcontrol.wait comes before every global access");
#endif
constexpr int kGroupM = 8;                // cluster-tile rows per group of the tile order
constexpr int kMinMultipleK = 16;         // K: 16 e4m3 = 16 bytes, the TMA stride rule for A and B
constexpr int kMinMultipleN = 8;          // N: 8 halves = 16 bytes, the TMA stride rule for D
constexpr float kE4m3Max = 448.0f;        // largest finite e4m3 (S.1111.110 = 1.75 * 2^8)
static_assert(kPersistent == 1, "the host launches at most one CTA per SM and the kernel walks units");
static_assert(kE4m3Max == 1.75f * 256.0f, "e4m3's largest finite value: 1.75 * 2^8 (the host saturates to it)");
static_assert(kMinMultipleK * sizeof(fp8_t) == 16 && kMinMultipleN * 2 == 16,
              "a TMA global stride is a multiple of 16 bytes");

constexpr int kTileBytesA = kBM * kBK;                          // 16 KiB (8 KiB ping-pong, 24 KiB 192 rows)
constexpr int kTileBytesB = kBN * kBK;                          // 32, 24 or 16 KiB
constexpr int kStageBytes = kTileBytesA + kTileBytesB;          // bytes the TMA delivers per K-tile
// The ring is as deep as shared memory allows: 192 KiB of stages (a stage is
// 16 KiB of A plus kBN * 128 B of B), beside 32 KiB of D staging and the
// barriers: 4 stages at BN 256, 6 at BN 128 (8 in the ping-pong build,
// whose stage holds 64 rows of A). The two 192 builds (40 KiB a stage)
// stage one D box per consumer per pass instead of two, which leaves room
// for 200 KiB: 5 stages. Each stage holds twice the K of step 7's, in the
// same bytes.
constexpr int kRingBytes = 196608 + 8192 * (2 - kStagingBoxes);
constexpr int kStages = kRingBytes / kStageBytes;               // ring of shared-memory stages
constexpr int kClusterSize = kClusterM * kClusterN;

static_assert(kBN == 256 || kBN == 192 || kBN == 128 || kBN == 64, "GEMM_BN is 256, 192, 128 or 64");
static_assert(GEMM_BM == 128 || GEMM_BM == 192,
              "GEMM_BM is 128 (two consumer warpgroups) or 192 (three: the 192-row promoting build)");
static_assert(kClusterM == 1 || kClusterM == 2, "GEMM_CLUSTER is 1 or 2");
static_assert(kPromote == 0 || kPromote == 1, "GEMM_PROMOTE is 0 or 1");
static_assert(kPromote == 0 || kBN <= 192,
              "a promoting build keeps two accumulators per thread: 2 x 64 fit a consumer's 232 "
              "registers at BN 128 (2 x 96 its 240 at BN 192), 2 x 128 at BN 256 do not");
static_assert(GEMM_BM == 128 || (kPromote == 1 && kBN == 128 && kBlockScales == 0 && kPingpong == 0),
              "the 192-row build (GEMM_BM=192: three consumer warpgroups of 64 x 128) is a promoting "
              "build: it needs GEMM_PROMOTE=1 and GEMM_BN=128, without GEMM_BLOCK_SCALES or "
              "GEMM_PROMOTE_PINGPONG");
static_assert(kBN != 192 || (kPromote == 1 && GEMM_BM == 128 && kBlockScales == 0 && kPingpong == 0),
              "the 192-column build (GEMM_BN=192: two consumers of 64 x 192, m64n192k32) is a promoting "
              "build: it needs GEMM_PROMOTE=1 and GEMM_BM=128, without GEMM_BLOCK_SCALES or "
              "GEMM_PROMOTE_PINGPONG");
static_assert(kBlockScales == 0 || kBlockScales == 1, "GEMM_BLOCK_SCALES is 0 or 1");
static_assert(kPingpong == 0 || (kPingpong == 1 && kPromote == 1 && kBN == 128 && kBlockScales == 0),
              "the ping-pong build is a promoting build: GEMM_PROMOTE_PINGPONG=1 needs GEMM_PROMOTE=1 "
              "and GEMM_BN=128 (three 64-register accumulators per thread), without GEMM_BLOCK_SCALES");
static_assert(kBlockScales == 0 || (kPromote == 1 && kBN == kScaleBlock && kBK == kScaleBlock),
              "block scales are applied at promotion, one K-tile at a time, and one 128x128 scale of B "
              "must cover the CTA's columns: build with GEMM_PROMOTE=1 and GEMM_BN=128");
static_assert(kBK * sizeof(fp8_t) == 128, "one tile row must be exactly one 128-byte swizzle span");
static_assert(kBM == kWgmmaM * kStageReaders,
              "each consumer covers 64 rows with one m64nBN slice: half a tile, or (ping-pong) a whole one");
static_assert(kBoxARows == kBM && kBoxBRows <= 256, "TMA boxes are at most 256 rows");
static_assert(kThreadsPerBlock == 128 * (1 + kConsumers),
              "one producer warpgroup plus the consumer warpgroups");
static_assert(kStages >= 2, "a pipeline needs at least two stages");
static_assert(kBoxDCols * 2 == 128 && kBoxDRows == kWgmmaM && kPasses >= 1 &&
                  kBN % (kBoxDCols * kStagingBoxes) == 0,
              "each consumer stores its 64-row slice as kBN / 64 boxes of 64x64");
static_assert(kBoxBRows * kClusterM == kBN, "the cluster's CTAs split the B tile evenly");
static_assert(128 * (kProducerRegs + kConsumers * kConsumerRegs) <= kThreadsPerBlock * (65536 / kThreadsPerBlock / 8 * 8),
              "the warpgroups' ceilings must fit the CTA's register pool (setmaxnreg.inc waits forever "
              "for registers the pool does not have)");
static_assert(kProducerRegs >= 24 && kConsumerRegs <= 256 && kConsumerRegs % 8 == 0,
              "setmaxnreg takes 24 to 256, a multiple of 8");
// end snippet

// region overlap-constants (the overlapped-promotion build, issue 40: measured slower on an H100, no page
// shows it). A macro and static_asserts only: a namespace-scope constexpr would change every
// build's NVRTC cubin (notes_fp8wide.md).
#ifndef GEMM_PROMOTE_OVERLAP
#define GEMM_PROMOTE_OVERLAP 0
#endif
static_assert(GEMM_PROMOTE_OVERLAP == 0 || GEMM_PROMOTE_OVERLAP == 1, "GEMM_PROMOTE_OVERLAP is 0 or 1");
static_assert(GEMM_PROMOTE_OVERLAP == 0 ||
                  (kPromote == 1 && kBN == 128 && GEMM_BM == 128 && kBlockScales == 0 && kPingpong == 0),
              "the overlapped-promotion build (GEMM_PROMOTE_OVERLAP=1) is the 128 x 128 promoting build with "
              "two chain accumulators a consumer: it needs GEMM_PROMOTE=1, GEMM_BN=128 and GEMM_BM=128 (three "
              "arrays of 64 floats a thread, two chains and the total; at BN 192 three of 96 and the addresses "
              "do not fit 240 registers), without GEMM_BLOCK_SCALES or GEMM_PROMOTE_PINGPONG");
static_assert(GEMM_PROMOTE_OVERLAP == 0 || 3 * kAccRegs + 32 <= kConsumerRegs,
              "two chain accumulators and the total (3 x 64 floats) and the addresses must fit the consumers' "
              "setmaxnreg ceiling");
// end of region overlap-constants

// region stagger-constants (the staggered-promotion build, issue 40, session 17: no page shows it). The
// second consumer's chains run half a K-tile behind the first's: 64, 128, ..., 128, 64 deep, so that
// one consumer promotes (waits for its chain, FADDs) while the other's wgmmas keep the tensor cores
// busy. Every chain is still at most kBK = 128 deep: the accuracy of promoting every 128.
// A macro and static_asserts only, as above.
#ifndef GEMM_PROMOTE_STAGGER
#define GEMM_PROMOTE_STAGGER 0
#endif
static_assert(GEMM_PROMOTE_STAGGER == 0 || GEMM_PROMOTE_STAGGER == 1, "GEMM_PROMOTE_STAGGER is 0 or 1");
static_assert(GEMM_PROMOTE_STAGGER == 0 ||
                  (kPromote == 1 && kBN == 128 && GEMM_BM == 128 && kBlockScales == 0 && kPingpong == 0 &&
                   GEMM_PROMOTE_OVERLAP == 0 && (kBK / kWgmmaK) % 2 == 0),
              "the staggered-promotion build (GEMM_PROMOTE_STAGGER=1) is the 128 x 128 promoting build whose "
              "second consumer promotes half a K-tile later: it needs GEMM_PROMOTE=1, GEMM_BN=128 and "
              "GEMM_BM=128, without GEMM_BLOCK_SCALES, GEMM_PROMOTE_PINGPONG or GEMM_PROMOTE_OVERLAP");
// end of region stagger-constants

// region desc-iter (issue 40, session 17: no page shows it). -DGEMM_DESC_ITER=1 builds each consumer's
// wgmma descriptors once, from stage 0's tiles, and adds the stage's and the k32 step's offsets
// (in 16-byte units, the descriptor's address field) instead of building both from a shared address
// per wgmma: CUTLASS's GMMA::DescriptorIterator (include/cute/atom/mma_traits_sm90_gmma.hpp) advances
// a descriptor the same way. Session 17's source-level profile counted about 65 address instructions
// a consumer warp per K-tile in the promoting build, 1.8x cuBLASLt's (evidence/gemm_dev/notes_ncu_src.md).
#ifndef GEMM_DESC_ITER
#define GEMM_DESC_ITER 0
#endif
static_assert(GEMM_DESC_ITER == 0 || GEMM_DESC_ITER == 1, "GEMM_DESC_ITER is 0 or 1");
static_assert(GEMM_DESC_ITER == 0 || (kPingpong == 0 && GEMM_PROMOTE_OVERLAP == 0),
              "the descriptor increments (GEMM_DESC_ITER=1) are in the cooperative consumers' loops: not "
              "with GEMM_PROMOTE_PINGPONG or GEMM_PROMOTE_OVERLAP");
// end of region desc-iter

// region early-release (issue 40, session 18: no page shows it). -DGEMM_EARLY_RELEASE=1: a promoting
// consumer gives a K-tile's stage back to the producer right after the wait_group 0 that precedes its
// promotion, before the FADDs, as DeepGEMM's math warpgroups do (warpgroup_wait<0>, then the empty
// barrier's arrive, then the scaled add: deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh).
// The snippet "consumer" releases it only after the next K-tile's full-barrier wait and wgmma issue,
// one promotion and one issue later than its wgmmas finished.
#ifndef GEMM_EARLY_RELEASE
#define GEMM_EARLY_RELEASE 0
#endif
static_assert(GEMM_EARLY_RELEASE == 0 || GEMM_EARLY_RELEASE == 1, "GEMM_EARLY_RELEASE is 0 or 1");
static_assert(GEMM_EARLY_RELEASE == 0 ||
                  (kPromote == 1 && kPingpong == 0 && GEMM_PROMOTE_OVERLAP == 0 && GEMM_PROMOTE_STAGGER == 0),
              "the early release (GEMM_EARLY_RELEASE=1) is a promoting build's: it needs GEMM_PROMOTE=1, "
              "without GEMM_PROMOTE_PINGPONG, GEMM_PROMOTE_OVERLAP or GEMM_PROMOTE_STAGGER");
// end of region early-release

// region turns-constants (issue 40, session 20: no page shows it). -DGEMM_PROMOTE_TURNS=1: a promoting
// build whose consumers issue each K-tile's wgmmas in turns (consumer 0, 1[, 2], 0, ...), ordered by
// named barriers, so that one consumer's group is queued on the tensor cores ahead of the other's
// instead of beside it. Session 18's ncu (evidence/gemm_dev/notes_ncu_pipe.md) found the tensor pipe 71%
// busy in the 128 x 128 promoting build against cuBLASLt's 86% with the same wgmmas: if both consumers'
// groups run side by side, both finish, and promote, at once, and the pipe runs dry; issued in turns,
// the first consumer's group finishes first and is promoted while the second's runs. Whether the
// tensor cores take the groups in that order is what the build measures. The order barriers are
// FlashAttention-3's warp-scheduler barriers (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:
// warp_scheduler_barrier_sync before a warpgroup's GEMM, warp_scheduler_barrier_arrive after it) and
// CUTLASS's ping-pong order barrier, here around each K-tile of one shared tile. Macros only.
#ifndef GEMM_PROMOTE_TURNS
#define GEMM_PROMOTE_TURNS 0
#endif
static_assert(GEMM_PROMOTE_TURNS == 0 || GEMM_PROMOTE_TURNS == 1, "GEMM_PROMOTE_TURNS is 0 or 1");
static_assert(GEMM_PROMOTE_TURNS == 0 ||
                  (kPromote == 1 && kPingpong == 0 && GEMM_PROMOTE_OVERLAP == 0 && GEMM_PROMOTE_STAGGER == 0),
              "the turns build (GEMM_PROMOTE_TURNS=1) is a cooperative promoting build: it needs GEMM_PROMOTE=1, "
              "without GEMM_PROMOTE_PINGPONG, GEMM_PROMOTE_OVERLAP or GEMM_PROMOTE_STAGGER");
// end of region turns-constants

// region scales-late (issue 40, session 20: no page shows it). -DGEMM_SCALES_LATE=1: the block-scaled
// build loading each K-tile's scales right after the promotion before it, into the registers that
// promotion just read, instead of one K-tile ahead into a second set copied over at the top of each
// K-tile. In the snippet's form ptxas places those copies (MOVs of the previous loads' registers)
// between the K-tile's wgmma issues, so a load not yet back stalls the wgmma issue (the SASS of
// nvcc 13.0: the MOVs between the first and third QGMMA of each K-tile). Macros only.
#ifndef GEMM_SCALES_LATE
#define GEMM_SCALES_LATE 0
#endif
// -DGEMM_SCALES_LATE=2 also walks the scales by pointers: A's two rows' and B's block pointer set once a
// unit (the row checks too) and advanced by M and by 1 each K-tile, instead of each K-tile's addresses
// computed from kt (in the SASS of nvcc 13.0, 193 instructions a K-tile of a consumer warp in the
// block-scaled build, 178 late, against 151 in the promoting build it is built on). Since session 21
// the snippets "block-scales" and "consumer" walk the scales this way: the block-scaled build's cubin
// is this build's, byte for byte (nvcc and NVRTC), and GEMM_SCALES_LATE=2 only names it again.
static_assert(GEMM_SCALES_LATE == 0 ||
                  ((GEMM_SCALES_LATE == 1 || GEMM_SCALES_LATE == 2) && kBlockScales == 1 && GEMM_PROMOTE_STAGGER == 0),
              "the late block scales (GEMM_SCALES_LATE=1 or 2) are the block-scaled build's: they need "
              "GEMM_BLOCK_SCALES=1, without GEMM_PROMOTE_STAGGER");
// end of region scales-late

// region splitn-constants (issue 40, session 19: no page shows it). -DGEMM_PROMOTE_SPLITN=1: the 128 x 128
// promoting build with each consumer's m64n128 chain issued as two m64n64 chains, the tile's left and right
// 64 columns of D (the same 64 accumulator registers, split 32 + 32), committed as two groups (at
// -DGEMM_BN=192, the 128 x 192 build's m64n192 chain as two m64n96 ones, 48 + 48). wait_group 1
// retires the left chain while the right one runs; the left half is promoted (32 FADDs) under the right
// chain's wgmmas; wait_group 0, the right half promoted. FlashAttention-3's intra-warpgroup overlap (the
// softmax of S under P V; kernels/attn90_overlap.cu) in the same form: only the older group's
// accumulators are read while the newer one runs, the form ptxas compiles without serializing
// (evidence/gemm_dev/fp8pp/c7514_one_read.cu). A chain restarts every K-tile (promoteEvery is 1 whatever
// the launch asks). The cost: A's 64 x 128 bytes are read from shared memory by both halves.
#ifndef GEMM_PROMOTE_SPLITN
#define GEMM_PROMOTE_SPLITN 0
#endif
static_assert(GEMM_PROMOTE_SPLITN == 0 || GEMM_PROMOTE_SPLITN == 1, "GEMM_PROMOTE_SPLITN is 0 or 1");
static_assert(GEMM_PROMOTE_SPLITN == 0 ||
                  (kPromote == 1 && (kBN == 128 || kBN == 192) && kBM == 128 && kPingpong == 0 &&
                   GEMM_BLOCK_SCALES == 0 &&
                   GEMM_PROMOTE_OVERLAP == 0 && GEMM_PROMOTE_STAGGER == 0 && GEMM_DESC_ITER == 0 &&
                   GEMM_EARLY_RELEASE == 0 && GEMM_PROMOTE_TURNS == 0),
              "the split-N promoting build (GEMM_PROMOTE_SPLITN=1) is the 128 x 128 or 128 x 192 promoting build: "
              "it needs GEMM_PROMOTE=1, GEMM_BN=128 or 192 and GEMM_BM=128, without GEMM_BLOCK_SCALES, "
              "GEMM_PROMOTE_PINGPONG, GEMM_PROMOTE_OVERLAP, GEMM_PROMOTE_STAGGER, GEMM_DESC_ITER or "
              "GEMM_EARLY_RELEASE");
// end of region splitn-constants

// region launch-costs (issues 39 and 40, session 18). A cluster of one is launched as a plain grid:
// no __cluster_dims__ (so no cluster launch) and clusterSync() is the CTA's barrier, as Day 86's small
// build does (kernels/gemm7_shapes.cu) and as CUTLASS launches a 1x1x1 cluster shape
// (include/cutlass/gemm/device/gemm_universal_adapter.h: "Launching static 1x1x1 kernel"); the
// .shared::cluster arrivals then address the CTA itself. On an H100 (session 18) the 128 x 64 build
// ran 1.17x and 1.21x faster so at 512^3 and 1024^3 (evidence/gemm_dev/notes_launch40.md).
// -DGEMM_NO_CLUSTER=0 keeps the cluster launch at cluster 1 (the comparison).
#ifndef GEMM_NO_CLUSTER
#define GEMM_NO_CLUSTER (GEMM_CLUSTER == 1)
#endif
static_assert(GEMM_NO_CLUSTER == 0 || (GEMM_NO_CLUSTER == 1 && kClusterSize == 1),
              "GEMM_NO_CLUSTER=1 (no cluster launch) needs GEMM_CLUSTER=1");
// end of region launch-costs

// snippet: smem-layout
struct alignas(1024) SharedStorage {
    fp8_t a[kStages][kBM * kBK];   // A tiles: kBM rows of 128 B each, swizzled
    fp8_t b[kStages][kBN * kBK];   // B tiles: kBN rows of 128 B each, swizzled
    __half dOut[kConsumers][kStagingBoxes][kBoxDRows * kBoxDCols];  // D staging, 8 KiB a box
    uint64_t full[kStages];        // mbarrier: "the TMA bytes of this stage have landed"
    uint64_t empty[kStages];       // mbarrier: "the wgmmas of every CTA reading this stage are done"
};
static_assert(kSmemBytes == sizeof(SharedStorage) + kSmemAlign,
              "kSmemBytes must be the storage plus the alignment slack");
static_assert(kSmemBytes <= 227 * 1024, "Hopper's per-block shared memory ceiling");
// end snippet

// snippet: descriptor
// A wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format",
// https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor):
// bits 13..0 start address >> 4, 29..16 leading byte offset >> 4, 45..32
// stride byte offset >> 4, 63..62 swizzle mode (1 = 128B).
// For a K-major operand in the 128B swizzle mode the TMA wrote, one "atom"
// is 8 rows x 128 bytes (8 rows x 128 e4m3): the stride byte offset is
// the step from one 8-row group to the next, 1024 B. The leading byte
// offset would step along K to the next atom, but a k32 slice (32 B) never
// leaves the 128-byte row, so the field is unused; 1 is the customary
// filler. The descriptor counts bytes, never elements: it is step 7's,
// unchanged, because an FP8 k32 slice is as many bytes as an FP16 k16
// one. The hardware finds the 16-byte chunks by undoing the XOR swizzle
// (chunk ^= row % 8) itself.
// The next k32 slice starts 32 bytes further along the row: descriptor + 2.
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
#if GEMM_NO_CLUSTER
    __syncthreads();  // launch-costs: no cluster launch, a cluster of one is the CTA
#else
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n\t"
        "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
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

// One m64n256k32 FP8 wgmma, A and B both e4m3 from shared memory through
// descriptors, FP32 accumulators. scaleD = 0 computes D = A*B, 1 computes
// D += A*B; it is a predicate, so it may be a run-time value (the
// promotion uses it to restart the chain). The two immediates after it
// are scale-a = scale-b = 1 (no negation). Unlike the FP16 form there are
// no trans-a / trans-b immediates: 8-bit operands are K-major only.
__device__ __forceinline__ void wgmmaM64N256K32E4M3(float (&acc)[128], uint64_t descA,
                                                    uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %130, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127},\n\t"
        "%128, %129, p, 1, 1;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]),
          "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]),
          "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]),
          "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]),
          "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]),
          "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]),
          "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]),
          "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]),
          "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]),
          "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]),
          "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]), "+f"(acc[65]), "+f"(acc[66]),
          "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]),
          "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]),
          "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]), "+f"(acc[80]), "+f"(acc[81]),
          "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]),
          "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]), "+f"(acc[90]), "+f"(acc[91]),
          "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95]), "+f"(acc[96]),
          "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]), "+f"(acc[100]), "+f"(acc[101]),
          "+f"(acc[102]), "+f"(acc[103]), "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]),
          "+f"(acc[107]), "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]),
          "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]), "+f"(acc[116]),
          "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]), "+f"(acc[120]), "+f"(acc[121]),
          "+f"(acc[122]), "+f"(acc[123]), "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]),
          "+f"(acc[127])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// The same for m64n128k32: 64 accumulators per thread (the 128x128
// configurations). Operand numbering as above: 64 outputs, then descA,
// descB and scale-d.
__device__ __forceinline__ void wgmmaM64N128K32E4M3(float (&acc)[64], uint64_t descA,
                                                    uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %66, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63},\n\t"
        "%64, %65, p, 1, 1;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]),
          "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]),
          "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]),
          "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]),
          "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]),
          "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]),
          "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]),
          "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]),
          "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]),
          "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]),
          "+f"(acc[62]), "+f"(acc[63])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// end snippet

// region wgmma-n192 (the 192-column promoting build, issue 40: no page shows it yet)
// The same for m64n192k32: 96 accumulators per thread (-DGEMM_BN=192, the
// 128 x 192 promoting build). PTX ISA, wgmma.mma_async: N for .e4m3 is any
// multiple of 8 up to 256. Operand numbering as above: 96 outputs, then
// descA, descB and scale-d.
__device__ __forceinline__ void wgmmaM64N192K32E4M3(float (&acc)[96], uint64_t descA,
                                                    uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %98, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95},\n\t"
        "%96, %97, p, 1, 1;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]),
          "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]),
          "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]),
          "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31]),
          "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]), "+f"(acc[36]),
          "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]),
          "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]),
          "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]), "+f"(acc[50]), "+f"(acc[51]),
          "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]), "+f"(acc[55]), "+f"(acc[56]),
          "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]), "+f"(acc[60]), "+f"(acc[61]),
          "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]), "+f"(acc[65]), "+f"(acc[66]),
          "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]), "+f"(acc[70]), "+f"(acc[71]),
          "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]), "+f"(acc[75]), "+f"(acc[76]),
          "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]), "+f"(acc[80]), "+f"(acc[81]),
          "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]), "+f"(acc[85]), "+f"(acc[86]),
          "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]), "+f"(acc[90]), "+f"(acc[91]),
          "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]), "+f"(acc[95])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// end of region wgmma-n192

// region wgmma-n64 (the 128 x 64 build, issue 40's small sizes: no page shows it; first run on an
// H100 in session 16). The same for m64n64k32: 32 accumulators per thread (-DGEMM_BN=64, twice the
// tiles of 128 x 128 where a problem has too few to fill the SMs). Operand numbering as above: 32
// outputs, then descA, descB and scale-d.
__device__ __forceinline__ void wgmmaM64N64K32E4M3(float (&acc)[32], uint64_t descA, uint64_t descB,
                                                   int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},\n\t"
        "%32, %33, p, 1, 1;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
          "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
          "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
          "+f"(acc[30]), "+f"(acc[31])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// end of region wgmma-n64

// region wgmma-n96 (the split-N 128 x 192 promoting build, issue 40, session 19: no page shows it). The
// same for m64n96k32: 48 accumulators per thread, one 96-column half of the m64n192 accumulator.
__device__ __forceinline__ void wgmmaM64N96K32E4M3(float (&acc)[48], uint64_t descA, uint64_t descB,
                                                   int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %50, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n96k32.f32.e4m3.e4m3\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47},\n\t"
        "%48, %49, p, 1, 1;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
          "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
          "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
          "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]), "+f"(acc[35]),
          "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]), "+f"(acc[40]), "+f"(acc[41]),
          "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]), "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47])
        : "l"(descA), "l"(descB), "r"(scaleD));
}
// end of region wgmma-n96

// snippet: schedule
// The problem's tile counts, worked out once per CTA from M, N and K:
// everything the producer and the consumers must agree on.
struct Problem {
    int tilesN;         // tile columns of D: ceil(N / kBN)
    int clusterTilesM;  // cluster-tile rows: ceil(ceil(M / kBM) / kClusterM)
    int kTiles;         // K-tiles: ceil(K / kBK), the last one zero-filled past K
    int units;          // clusterTilesM * tilesN
};

__device__ __forceinline__ Problem makeProblem(int M, int N, int K) {
    Problem p;
    p.tilesN = (N + kBN - 1) / kBN;
    p.clusterTilesM = ((M + kBM - 1) / kBM + kClusterM - 1) / kClusterM;
    p.kTiles = (K + kBK - 1) / kBK;
    p.units = p.clusterTilesM * p.tilesN;
    return p;
}

// Work unit u -> cluster tile, in step 6's grouped order: kGroupM
// cluster-tile rows form a group, walked down a column, then one column
// right, so the CTAs running at once share A rows and B columns in L2.
__device__ __forceinline__ void unitCoords(const Problem& p, int unit, int& mBlock, int& nBlock) {
    const int group = unit / (kGroupM * p.tilesN);
    const int firstM = group * kGroupM;
    const int rows = p.clusterTilesM - firstM < kGroupM ? p.clusterTilesM - firstM : kGroupM;
    const int inGroup = unit - group * (kGroupM * p.tilesN);
    mBlock = firstM + inGroup % rows;  // in cluster-tile rows
    nBlock = inGroup / rows;
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

// One k32 step of this configuration's wgmma: m64n256k32, m64n192k32, m64n128k32 or m64n64k32.
template <int R>
__device__ __forceinline__ void wgmmaStep(float (&acc)[R], uint64_t descA, uint64_t descB,
                                          int scaleD) {
    if constexpr (R == 128) {
        wgmmaM64N256K32E4M3(acc, descA, descB, scaleD);
    } else if constexpr (R == 96) {
        wgmmaM64N192K32E4M3(acc, descA, descB, scaleD);
    } else if constexpr (R == 32) {
        wgmmaM64N64K32E4M3(acc, descA, descB, scaleD);
    } else if constexpr (R == 48) {
        wgmmaM64N96K32E4M3(acc, descA, descB, scaleD);
    } else {
        wgmmaM64N128K32E4M3(acc, descA, descB, scaleD);
    }
}

// snippet: epilogue
// Step 6's epilogue, for kPasses passes of two 64x64 boxes: registers ->
// 128B-swizzled staging boxes -> TMA store. The store clips at D's
// bounds, so a tile on the ragged edge needs nothing special. New here:
// the per-tensor scales. Every element is multiplied by scale = sA * sB
// in FP32 just before its rounding to FP16, the one place the
// quantisation is undone: D = (sA * qA) (sB * qB)^T = sA sB (qA qB^T).
__device__ __forceinline__ void storeTile(const float (&acc)[kAccRegs], SharedStorage& s, int cons,
                                          int wt, const CUtensorMap* tmD, int col0, int row0,
                                          float scale) {
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
                               acc[r] * scale, acc[r + 1] * scale);
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


// snippet: promote
// The promotion: the wgmma chain's sum, added into FP32 registers with
// ordinary FADDs on the CUDA cores (full FP32: 24-bit significands,
// round to nearest). The caller has waited for the chain (wait_group 0),
// and restarts it afterwards with scale-d = 0.
__device__ __forceinline__ void promote(float (&total)[kAccRegs], const float (&acc)[kAccRegs]) {
#pragma unroll
    for (int r = 0; r < kAccRegs; ++r) {
        total[r] += acc[r];
    }
}
// end snippet

#if GEMM_BLOCK_SCALES
// snippet: block-scales
// This thread's block scales: its two rows' scales of A (rows row and
// row + 8 of D, the rows its accumulator registers hold; 0 past M, where D
// is clipped anyway) and the CTA's scale of B, walked K-block by K-block.
// The pointers and the row checks are set once a unit; then A's pointer
// steps M floats (the next K-block's row scales, contiguous) and B's one.
// Plain read-only loads, each K-tile's issued right after the promotion
// before it, so that their latency (an L2 hit is several hundred cycles,
// about a K-tile's four wgmmas) hides behind that K-tile's wgmmas.
struct BlockScales {
    float a0, a8, b;
};
struct ScaleWalk {
    const float* __restrict__ a;  // A's scales of this K-block, at the thread's first row
    const float* __restrict__ b;  // B's scale of (this CTA's column of 128, this K-block)
    bool in0, in8;                // rows row and row + 8 inside M
};
__device__ __forceinline__ ScaleWalk scaleWalk(const float* __restrict__ scalesA,
                                               const float* __restrict__ scalesB, int M, int kTiles,
                                               int row, int nBlock) {
    const bool in0 = row < M;
    return {scalesA + (in0 ? row : 0), scalesB + static_cast<size_t>(nBlock) * kTiles, in0, row + 8 < M};
}
__device__ __forceinline__ BlockScales loadScales(const ScaleWalk& w) {
    return {w.in0 ? __ldg(w.a) : 0.0f, w.in8 ? __ldg(w.a + 8) : 0.0f, __ldg(w.b)};
}

// The scaled promotion: total += partial * sA[row] * sB, one FFMA per
// register. Register r holds row 16 * warp + lane / 4 for r % 4 < 2 and
// the row 8 below for r % 4 >= 2 (the accumulator layout of the
// epilogue), so two products of scales serve all 64 registers.
__device__ __forceinline__ void promoteScaled(float (&total)[kAccRegs],
                                              const float (&acc)[kAccRegs], BlockScales s) {
    const float s0 = s.a0 * s.b, s8 = s.a8 * s.b;
#pragma unroll
    for (int r = 0; r < kAccRegs; ++r) {
        total[r] = fmaf(acc[r], (r % 4) < 2 ? s0 : s8, total[r]);
    }
}
// end snippet

// region block-scales-kt (issue 40: no page shows it). The loads as the block-scaled build made them
// before session 21, K-tile kt's addresses computed from kt and issued a K-tile ahead into a second set
// of registers: the development consumer (region stagger-consumer) keeps them for its builds.
__device__ __forceinline__ BlockScales loadBlockScales(const float* __restrict__ scalesA,
                                                       const float* __restrict__ scalesB, int M,
                                                       int kTiles, int row, int nBlock, int kt) {
    const float* sA = scalesA + static_cast<size_t>(kt) * M;  // K-block kt's row scales, contiguous
    BlockScales s;
    s.a0 = row < M ? __ldg(sA + row) : 0.0f;
    s.a8 = row + 8 < M ? __ldg(sA + row + 8) : 0.0f;
    s.b = __ldg(scalesB + static_cast<size_t>(nBlock) * kTiles + kt);
    return s;
}
// end of region block-scales-kt
#endif

#if GEMM_PROMOTE_PINGPONG
// region pingpong-order (the ping-pong build, issue 40: no page shows it yet)
// The ping-pong build's turns (-DGEMM_PROMOTE_PINGPONG=1). Each consumer
// warpgroup owns whole 64 x 128 tiles: the CTA's units in pairs, the
// first consumer 0's, the second consumer 1's. The two tiles' wgmma
// chains (promoteEvery K-tiles each; the whole K when it is 0) take turns
// on the tensor cores: consumer 0's chain 0, consumer 1's chain 0,
// consumer 0's chain 1, ... Two named barriers order the turns (PTX ISA
// "Parallel Synchronization and Communication Instructions: bar,
// barrier", https://docs.nvidia.com/cuda/parallel-thread-execution/
// index.html#parallel-synchronization-and-communication-instructions-bar):
// barrier kBarTurn + c is "consumer c may issue its next chain". It
// completes when 256 threads have arrived: consumer c's 128 in bar.sync
// (which waits) and the other consumer's 128 in bar.arrive (which does
// not). A consumer hands the turn over as soon as its chain's wgmmas are
// issued, then waits for its own chain (wait_group 0) and promotes it
// with FP32 FADDs while the other consumer's chain runs; its epilogue
// runs beside the other's last chain. A consumer waits only where the
// turn before its own was the other's, and hands over only where the
// turn after its own is the other's, so every barrier's arrivals and
// waits pair up and none is left half-arrived at exit
// (course/lessons/day87/pingpong.py models the order; tests/lessons/
// day87/test_pingpong.py checks it). IDs 1 and 2 are the epilogue's
// 128-thread barriers, 0 is __syncthreads().
//
// CUTLASS's KernelTmaWarpSpecializedPingpong (NVIDIA/cutlass, include/
// cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_pingpong.hpp) takes
// turns by whole tiles: math_wg_order_barrier.wait() before
// collective_mainloop.mma(), arrive() right after it, and again around
// the epilogue, whose shared memory its consumers share (each has its own
// staging boxes here, dOut[cons]). With promoteEvery = 0 this build is
// that schedule. With promotion, turns by whole tiles would leave the
// tensor cores idle during each promotion inside a tile, unless a
// consumer overlapped its own promotion with its own next chain (two
// chain accumulators, the older promoted after wait_group 1). ptxas 13.0
// does not allow that: with two accumulators each read after the other's
// wait_group 1, it serializes every wgmma ("info (C7514) ... non wgmma
// instructions reading accumulator registers of a wgmma between start and
// end of the pipeline stage"), a reduced kernel of a dozen lines included
// (evidence/gemm_dev/fp8pp/c7514_both_reads.cu), while one read alone passes. So the turns are by chains, and the
// other consumer's chain is what hides a promotion. DeepGEMM's sm90 FP8
// GEMM (deepseek-ai/DeepGEMM, deep_gemm/include/deep_gemm/impls/
// sm90_fp8_gemm_1d2d.cuh) is not a ping-pong: its math warpgroups split
// one BLOCK_M tile (math_wg_idx * WGMMA::M), wait with warpgroup_wait<0>
// and promote, overlapped only by the other warpgroup's wgmmas, as this
// file's default promoting build is.
constexpr int kBarTurn = 3;  // named barriers 3 and 4: consumer 0's turn, consumer 1's turn
constexpr int kTurnThreads = 256;  // both consumer warpgroups count toward one barrier

__device__ __forceinline__ void turnWait(int cons) {
    asm volatile("bar.sync %0, %1;" ::"r"(kBarTurn + cons), "n"(kTurnThreads) : "memory");
}
__device__ __forceinline__ void turnHandOver(int other) {
    asm volatile("bar.arrive %0, %1;" ::"r"(kBarTurn + other), "n"(kTurnThreads) : "memory");
}
// end of region pingpong-order
#endif

#if GEMM_PROMOTE_TURNS
// region turns-order (issue 40, session 20: no page shows it; region turns-constants says what it is).
// Barrier 8 + c is "consumer c may issue its next K-tile". It completes when 256 threads have arrived:
// consumer c's 128 in bar.sync (which waits) and its predecessor's 128 in bar.arrive (which does not).
// The last consumer arrives once at the start (in a CTA with a unit), for consumer 0's first turn, and not after its last
// turn, so each barrier's arrivals pair with its waits and none is left half-arrived at exit (every
// consumer takes the same number of turns: the tile's K-tiles, unit by unit). IDs 1 to 3 are the
// epilogue's 128-thread barriers, 0 is __syncthreads().
__device__ __forceinline__ void turnSync(int cons) {
    asm volatile("bar.sync %0, 256;" ::"r"(8 + cons) : "memory");
}
__device__ __forceinline__ void turnPass(int cons) {
    asm volatile("bar.arrive %0, 256;" ::"r"(8 + (cons + 1) % kConsumers) : "memory");
}
// end of region turns-order
#endif

#if GEMM_PROMOTE_OVERLAP
// region overlap-order (the overlapped-promotion build, issue 40: measured slower on an H100, no page shows it)
// -DGEMM_PROMOTE_OVERLAP=1: the 128 x 128 promoting build whose consumers promote a chain while their
// own next chain runs. Each consumer keeps two chain accumulators, acc0 and acc1 (64 floats a thread
// each), beside total (64): chain c (promoteEvery K-tiles; the whole K at 0) goes into acc[c % 2]
// (consumer 1: acc[(c + 1) % 2], below; read "the chain's accumulator" for acc[c % 2]).
// After the first K-tile of chain c + 1 is issued and committed, wgmma.wait_group 1 retires every
// group but that newest one, so chain c is complete while c + 1 runs: the thread then releases chain
// c's last stage and adds acc[c % 2] into total (64 FADDs), and the tensor cores have chain c + 1's
// wgmmas (and the other consumer's) meanwhile. The rules this keeps (PTX ISA, "wgmma.mma_async" and
// "wgmma.wait_group"): an accumulator register of a wgmma is not read or written until a
// wgmma.wait_group has retired the group holding that wgmma (acc[c % 2] is read after the
// wait_group 1 that follows the commit of chain c + 1's first K-tile, which retires chain c's last
// group; it is next written by chain c + 2's first wgmma, after that promotion); wgmma.fence comes
// before the first wgmma of every K-tile, so also between the promotion's reads of acc[c % 2] and
// the wgmma that restarts it (scale-d = 0); a stage goes back to the producer only after the wait
// that retired the wgmmas reading it. fenceOperand (CUTLASS's warpgroup_fence_operand, an empty asm
// that reads and writes each register) ties the FADDs after the wait: the wait names no register,
// and without it the compiler may move a read of an accumulator above it. The same fence on total
// right after a promotion keeps those FADDs where they are: without it NVVM sinks them past the
// chain to the wait_group 0 that ends the pair (seen in the PTX and the SASS), and nothing overlaps.
//
// What ptxas allows, and so the order here. ptxas 13.0 serializes every wgmma of a kernel in which
// a group committed in one iteration of a loop is still pending at its back-edge and its
// accumulators are read after a wgmma.wait_group 1 in the next iteration (info C7514;
// evidence/gemm_dev/pover40/ has the reduced kernels: the same reads in straight-line code, of a
// group committed in the same iteration, or of one retired by a wait_group 0 before the back-edge,
// compile clean). A loop of one K-tile an iteration, which the design above needs, is exactly that
// case (the ping-pong build's notes met it too). So one iteration of the loop below is a pair of
// chains, c into acc0 and c + 1 into acc1, and ends with wgmma.wait_group 0, so that nothing is
// pending at the back-edge. The promotions all still run beside a K-tile of this consumer: acc0's
// (chain c) after chain c + 1's first K-tile is committed, as above; acc1's (chain c + 1), retired by
// that wait_group 0, is owed to the next iteration and runs after chain c + 2's first K-tile is
// committed. Only the tile's last chain is promoted with nothing of this consumer in flight, as every
// chain is in the 128 x 128 promoting build. What the pairs cost instead is the wait_group 0: once a
// pair, this consumer's queue of wgmmas runs empty from the end of chain c + 1 to the issue of chain
// c + 2's first K-tile (no FADDs in between); consumer 1's first pair is chain 0 alone (in acc1), so
// the two consumers' drains fall on different chains and the other consumer's K-tile covers it. The
// sums are the 128 x 128 promoting build's, in its order: total starts at 0 and receives chains 0, 1,
// 2, ... one after another, each chain the same wgmmas over the same K-tiles starting with scale-d = 0,
// so D is the same bit for bit at the same promoteEvery.
//
// How the others promote. DeepGEMM (deepseek-ai/DeepGEMM, deep_gemm/include/deep_gemm/fp8_gemm.cuh,
// commit 07ef809d82d6 as stored): one accum per math warpgroup; each K-block is
// warpgroup_fence_operand, warpgroup_arrive, the wgmmas, commit, warpgroup_wait<0>, the empty-barrier
// arrival, then final_accum += scale * accum. CUTLASS (NVIDIA/cutlass, include/cutlass/gemm/
// collective/fp8_accumulation.hpp, GmmaFP8Accumulation, commit 03a62b4143f4 as stored): one temporary
// accumulator; promote_core() is warpgroup_wait<0>() then accum += accum_temp, every
// accum_promotion_interval MMAs; its sm90 FP8 mainloop, sm90_mma_tma_gmma_ss_warpspecialized_fp8.hpp
// (commit 03a26deb8d7e as stored), calls promote_if_needed after each K-tile's commit and
// warpgroup_wait<K_PIPE_MMAS>, before it releases the stage. Both wait for every wgmma of the warpgroup before they promote, so only the other math
// warpgroups' wgmmas overlap a promotion, as in this file's 128 x 128 promoting build. This build
// promotes each chain but a tile's last while its own next chain's first K-tile is in flight, at the
// cost of a second chain accumulator (64 registers a thread) and a wait_group 0 every two chains.
__device__ __forceinline__ void fenceOperand(float (&acc)[kAccRegs]) {
#pragma unroll
    for (int r = 0; r < kAccRegs; ++r) {
        asm volatile("" : "+f"(acc[r])::"memory");
    }
}
// end of region overlap-order
#endif

// D = scale * (A * B^T), A and B e4m3, for any M x N x K (N a multiple of
// 8, K of 16). Launch contract: see the header. extern "C" keeps the name
// unmangled for CuPy.
extern "C" __global__ void __launch_bounds__(kThreadsPerBlock, 1)
#if !GEMM_NO_CLUSTER
    __cluster_dims__(kClusterM, kClusterN, 1)
#endif
    gemm8Fp8(const __grid_constant__ CUtensorMap tmA,
             const __grid_constant__ CUtensorMap tmB,
             const __grid_constant__ CUtensorMap tmD, int M, int N, int K, float scale,
             int promoteEvery
#if GEMM_BLOCK_SCALES
             , const float* __restrict__ scalesA, const float* __restrict__ scalesB
#endif
             ) {
    // snippet: setup
    extern __shared__ uint8_t smemRaw[];
    SharedStorage& s = *reinterpret_cast<SharedStorage*>(
        (reinterpret_cast<uintptr_t>(smemRaw) + kSmemAlign - 1) &
        ~uintptr_t(kSmemAlign - 1));

    const int t = static_cast<int>(threadIdx.x);
    const int wg = t / 128;                           // 0 produces, 1 and 2 consume
    const int wt = t % 128;                           // thread within its warpgroup
    COURSE_TL_INIT(wg, wt == 0);
    const uint32_t rank = kClusterM > 1 ? clusterCtaRank() : 0u;
    const int firstUnit = static_cast<int>(blockIdx.x) / kClusterSize;  // cluster id
    const int unitStep = static_cast<int>(gridDim.x) / kClusterSize;    // clusters in the grid
    const Problem p = makeProblem(M, N, K);

    if (t == 0) {
        for (int i = 0; i < kStages; ++i) {
            mbarInit(&s.full[i], 1);
            mbarInit(&s.empty[i], kStageReaders * kClusterSize);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    clusterSync();
    // Programmatic dependent launch, as Day 86's kernel (gemm7_shapes.cu, setup): nothing above touches
    // global memory; wait for the grid before this one, then let the next one start its setup.
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (!GEMM_PDL_LATE) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    // end snippet

    if (wg == 0) {
#if GEMM_PROMOTE_PINGPONG
        // region pingpong-producer (the ping-pong build, issue 40: no page shows it yet)
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
#endif
        if (wt == 0) {
            int stage = 0;
            uint32_t phase = 0;
            // One K-tile of one tile into the next stage of the ring: the
            // body of the default loop below, written twice so that the
            // default builds' cubins stay byte for byte what they were (a
            // lambda shared by both changes the code ptxas emits).
            auto loadKTile = [&](int mBlock, int nBlock, int kt) {
                COURSE_TL(TL_WAIT_EMPTY, stage);
                mbarWait(&s.empty[stage], phase ^ 1);
                COURSE_TL(TL_LOAD, stage);
                // Whole boxes' bytes, also where a box reaches past
                // M, N or K: the engine counts the zero fill too.
                mbarArriveExpectTx(&s.full[stage], kStageBytes);
                tmaLoad2d(s.a[stage], &tmA, &s.full[stage], kt * kBK, mBlock * kBM);
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
            };
            // The ping-pong build's order (see the consumer): the CTA's
            // units in pairs, consumer 0's and consumer 1's, and within a
            // pair chain by chain, consumer 0's K-tiles of the chain, then
            // consumer 1's; a last unit without a partner alone.
            const int chainLen = promoteEvery > 0 ? promoteEvery : p.kTiles;
            for (int pairUnit = firstUnit; pairUnit < p.units; pairUnit += 2 * unitStep) {
                const bool partner = pairUnit + unitStep < p.units;
                int m0, n0, m1 = 0, n1 = 0;
                unitCoords(p, pairUnit, m0, n0);
                m0 = m0 * kClusterM + static_cast<int>(rank);
                if (partner) {
                    unitCoords(p, pairUnit + unitStep, m1, n1);
                    m1 = m1 * kClusterM + static_cast<int>(rank);
                }
                for (int k0 = 0; k0 < p.kTiles; k0 += chainLen) {
                    const int k1 = k0 + chainLen < p.kTiles ? k0 + chainLen : p.kTiles;
                    for (int kt = k0; kt < k1; ++kt) loadKTile(m0, n0, kt);
                    if (partner) {
                        for (int kt = k0; kt < k1; ++kt) loadKTile(m1, n1, kt);
                    }
                }
            }
        }
        // end of region pingpong-producer
#else
        // snippet: producer
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
#endif
        if (wt == 0) {
            int stage = 0;
            uint32_t phase = 0;
            for (int unit = firstUnit; unit < p.units; unit += unitStep) {
                int mBlock, nBlock;
                unitCoords(p, unit, mBlock, nBlock);
                mBlock = mBlock * kClusterM + static_cast<int>(rank);
                for (int kt = 0; kt < p.kTiles; ++kt) {
                    COURSE_TL(TL_WAIT_EMPTY, stage);
                    mbarWait(&s.empty[stage], phase ^ 1);
                    COURSE_TL(TL_LOAD, stage);
                    // Whole boxes' bytes, also where a box reaches past
                    // M, N or K: the engine counts the zero fill too.
                    mbarArriveExpectTx(&s.full[stage], kStageBytes);
                    tmaLoad2d(s.a[stage], &tmA, &s.full[stage], kt * kBK, mBlock * kBM);
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
#endif
#if GEMM_PDL_LATE
        // Development (issues 39, 40, session 24): the trigger after this CTA's last load is issued, not at
        // setup, as CUTLASS's sm90 kernels place launch_dependent_grids late (after the mainloop).
        // One thread's first invocation is the CTA's (PTX ISA, "griddepcontrol").
        if (wt == 0) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    } else {
#if GEMM_PROMOTE_PINGPONG
        // region pingpong (the ping-pong build, issue 40: no page shows it yet)
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
#endif
        // Ping-pong: each consumer owns whole 64 x 128 tiles. The CTA's
        // units go in pairs, consumer 0's and consumer 1's, and the two
        // tiles' chains take turns on the tensor cores: consumer 0's chain
        // 0, consumer 1's chain 0, consumer 0's chain 1, ... A consumer
        // hands the turn over as soon as its chain's wgmmas are issued,
        // then waits for its chain (wait_group 0) and promotes it with FP32
        // FADDs while the other consumer's chain runs; the tile's epilogue
        // runs beside the other's last chain, or its next pair's first. A
        // last unit without a partner runs alone, its chains back to back.
        // The ring holds the K-tiles in this turn order (the producer's
        // loop); `it` counts them, both consumers' (stage = it % kStages).
        const int cons = wg - 1;          // 0: the pair's first unit, 1: its second
        float acc[kAccRegs];              // the chain's; a chain starts with scale-d = 0
        float total[kAccRegs];            // FP32 registers each chain is promoted into
        const int chainLen = promoteEvery > 0 ? promoteEvery : p.kTiles;  // K-tiles per chain
        uint32_t it = 0;
        int prevStage = 0;
        for (int pairUnit = firstUnit; pairUnit < p.units; pairUnit += 2 * unitStep) {
            const int unit = pairUnit + cons * unitStep;
            if (unit >= p.units) break;   // consumer 1, and the last unit has no partner
            const bool partner = pairUnit + unitStep < p.units;
            const bool nextPair = pairUnit + 2 * unitStep < p.units;
            int mBlock, nBlock;
            unitCoords(p, unit, mBlock, nBlock);
            mBlock = mBlock * kClusterM + static_cast<int>(rank);
#pragma unroll
            for (int r = 0; r < kAccRegs; ++r) total[r] = 0.0f;
            for (int k0 = 0; k0 < p.kTiles; k0 += chainLen) {
                const int len = chainLen < p.kTiles - k0 ? chainLen : p.kTiles - k0;
                const bool lastChain = k0 + len >= p.kTiles;
                // Whose turn came before this chain's: consumer 1's always
                // follows consumer 0's same chain; consumer 0's follows
                // consumer 1's previous chain (or its previous pair's last)
                // when there is one.
                const bool waitTurn = cons == 1 || (k0 > 0 && partner) || (k0 == 0 && pairUnit != firstUnit);
                // Whose turn comes next: consumer 1's same chain, after
                // consumer 0's; consumer 0's next chain, or next pair's
                // first, after consumer 1's.
                const bool handOver = cons == 0 ? partner : (!lastChain || nextPair);
                if (cons == 1) it += static_cast<uint32_t>(len);  // consumer 0's K-tiles of this chain
                if (waitTurn) {
                    COURSE_TL(TL_SYNC, 0);
                    turnWait(cons);
                }
                for (int j = 0; j < len; ++j, ++it) {
                    const int stage = static_cast<int>(it % kStages);
                    COURSE_TL(TL_WAIT_FULL, stage);
                    mbarWait(&s.full[stage], (it / kStages) & 1u);
                    COURSE_TL(TL_MMA, stage);
                    wgmmaFence();
#pragma unroll
                    for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {
                        wgmmaStep(acc, swizzledDesc(&s.a[stage][ks * kWgmmaK]),
                                  swizzledDesc(&s.b[stage][ks * kWgmmaK]), (j > 0 || ks > 0) ? 1 : 0);
                    }
                    COURSE_TL(TL_MMA_WAIT, stage);
                    wgmmaCommit();
                    wgmmaWait<1>();
                    if (j > 0 && wt < kClusterSize) {
                        mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                        COURSE_TL(TL_RELEASE, prevStage);
                    }
                    prevStage = stage;
                }
                if (handOver) turnHandOver(cons ^ 1);  // the chain is issued: next turn
                COURSE_TL(TL_MMA_WAIT, prevStage);
                wgmmaWait<0>();
                if (wt < kClusterSize) {
                    mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                    COURSE_TL(TL_RELEASE, prevStage);
                }
                promote(total, acc);      // beside the other consumer's chain
                if (cons == 0 && partner) it += static_cast<uint32_t>(len);  // consumer 1's K-tiles
            }
            COURSE_TL(TL_EPI, 0);
            storeTile(total, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM, scale);
        }
        // end of region pingpong
#elif GEMM_PROMOTE_OVERLAP
        // region overlap (the overlapped-promotion build, issue 40: measured slower on an H100, no page shows it)
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
#endif
        // The chains in pairs (region "overlap-order"): chain c into acc0, chain c + 1 into acc1, each
        // promoted beside the next chain's first K-tile; a pair ends with wait_group 0. The ring, the
        // stages' order and the releases are the 128 x 128 promoting build's.
        const int cons = wg - 1;          // which 64-row half of the tile
        float acc0[kAccRegs];             // a pair's first chain; never zeroed: a chain starts with scale-d = 0
        float acc1[kAccRegs];             // a pair's second chain (and consumer 1's chain 0)
        float total[kAccRegs];            // FP32 registers every chain is promoted into, in order
        const int chainLen = promoteEvery > 0 ? promoteEvery : p.kTiles;  // K-tiles a chain
        int stage = 0;
        uint32_t phase = 0;
        int prevStage = 0;                // the stage of the K-tile issued last
        bool held = false;                // prevStage is not yet released
        // One K-tile into acc: wait for its stage, issue its four k32 wgmmas (the first one restarts
        // the chain when `restart`), commit, and wait_group 1, which retires every earlier group of
        // this consumer; then the previous K-tile's stage goes back to the producer.
        auto kTile = [&](float (&acc)[kAccRegs], bool restart) {
            COURSE_TL(TL_WAIT_FULL, stage);
            mbarWait(&s.full[stage], phase);
            COURSE_TL(TL_MMA, stage);
            fenceOperand(acc);            // the promotion's reads of acc stay before the fence
            wgmmaFence();
#pragma unroll
            for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {
                wgmmaStep(acc, swizzledDesc(&s.a[stage][cons * kWgmmaM * kBK + ks * kWgmmaK]),
                          swizzledDesc(&s.b[stage][ks * kWgmmaK]), (!restart || ks > 0) ? 1 : 0);
            }
            COURSE_TL(TL_MMA_WAIT, stage);
            wgmmaCommit();
            wgmmaWait<1>();
            if (held && wt < kClusterSize) {
                mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                COURSE_TL(TL_RELEASE, prevStage);
            }
            held = true;
            prevStage = stage;
            if (++stage == kStages) {
                stage = 0;
                phase ^= 1;
            }
        };
        // wait_group 0: every group of this consumer retired; the last stage goes back.
        auto drain = [&]() {
            COURSE_TL(TL_MMA_WAIT, prevStage);
            wgmmaWait<0>();
            if (wt < kClusterSize) {
                mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                COURSE_TL(TL_RELEASE, prevStage);
            }
            held = false;
        };
        for (int unit = firstUnit; unit < p.units; unit += unitStep) {
            int mBlock, nBlock;
            unitCoords(p, unit, mBlock, nBlock);
            mBlock = mBlock * kClusterM + static_cast<int>(rank);
#pragma unroll
            for (int r = 0; r < kAccRegs; ++r) total[r] = 0.0f;
            bool owed = false;            // acc1 holds a chain retired by a wait_group 0, not yet promoted
            int k0 = 0;
            if (cons == 1 && chainLen < p.kTiles) {
                // Consumer 1's chain 0 alone, in acc1 (promoted beside chain 1): the two consumers'
                // drains fall on different chains.
                for (int j = 0; j < chainLen; ++j) kTile(acc1, j == 0);
                drain();
                owed = true;
                k0 = chainLen;
            }
            while (k0 < p.kTiles) {       // a pair of chains: c into acc0, c + 1 into acc1
                const int len0 = chainLen < p.kTiles - k0 ? chainLen : p.kTiles - k0;
                const int k1 = k0 + len0;
                kTile(acc0, true);
                if (owed) {               // chain c - 1, beside chain c's first K-tile
                    fenceOperand(acc1);
                    promote(total, acc1);
                    fenceOperand(total);  // here, not sunk past the chain (see overlap-order)
                    owed = false;
                }
                for (int j = 1; j < len0; ++j) kTile(acc0, false);
                if (k1 < p.kTiles) {
                    const int len1 = chainLen < p.kTiles - k1 ? chainLen : p.kTiles - k1;
                    kTile(acc1, true);    // its wait_group 1 retires acc0's chain
                    fenceOperand(acc0);
                    promote(total, acc0); // chain c, beside chain c + 1's first K-tile
                    fenceOperand(total);
                    for (int j = 1; j < len1; ++j) kTile(acc1, false);
                    drain();              // nothing pending at the loop's back-edge (overlap-order)
                    owed = true;
                    k0 = k1 + len1;
                } else {                  // the tile's last chain, alone
                    drain();
                    fenceOperand(acc0);
                    promote(total, acc0);
                    k0 = k1;
                }
            }
            if (owed) {                   // the tile's last chain, in acc1
                fenceOperand(acc1);
                promote(total, acc1);
            }
            COURSE_TL(TL_EPI, 0);
            storeTile(total, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
        }
        // end of region overlap
#elif GEMM_PROMOTE_SPLITN
        // region splitn-consumer (issue 40, session 19; no page shows it): the split-N promoting build
        // (region splitn-constants says what it is)
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
#endif
        const int cons = wg - 1;              // which 64-row half of the tile
        constexpr int kHalfRegs = kAccRegs / 2;  // 32 (48): the m64n64 (m64n96) half of the accumulator
        float accL[kHalfRegs], accR[kHalfRegs];  // the first and second half of the accumulator's registers
        float total[kAccRegs];
        int stage = 0;
        uint32_t phase = 0;
        for (int unit = firstUnit; unit < p.units; unit += unitStep) {
            int mBlock, nBlock;
            unitCoords(p, unit, mBlock, nBlock);
            mBlock = mBlock * kClusterM + static_cast<int>(rank);
#pragma unroll
            for (int r = 0; r < kAccRegs; ++r) total[r] = 0.0f;
            for (int kt = 0; kt < p.kTiles; ++kt) {
                COURSE_TL(TL_WAIT_FULL, stage);
                mbarWait(&s.full[stage], phase);
                COURSE_TL(TL_MMA, stage);
                wgmmaFence();
#pragma unroll
                for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {  // the left half: B's rows 0 to kBN / 2 - 1
                    wgmmaStep(accL, swizzledDesc(&s.a[stage][cons * kWgmmaM * kBK + ks * kWgmmaK]),
                              swizzledDesc(&s.b[stage][ks * kWgmmaK]), ks > 0 ? 1 : 0);
                }
                wgmmaCommit();
#pragma unroll
                for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {  // the right half: B's rows kBN / 2 on
                    wgmmaStep(accR, swizzledDesc(&s.a[stage][cons * kWgmmaM * kBK + ks * kWgmmaK]),
                              swizzledDesc(&s.b[stage][(kBN / 2) * kBK + ks * kWgmmaK]), ks > 0 ? 1 : 0);
                }
                wgmmaCommit();
                COURSE_TL(TL_MMA_WAIT, stage);
                wgmmaWait<1>();  // the left chain is done; the right one may still run
#pragma unroll
                for (int r = 0; r < kHalfRegs; ++r) asm volatile("" : "+f"(accL[r])::"memory");
#pragma unroll
                for (int r = 0; r < kHalfRegs; ++r) total[r] += accL[r];  // under the right chain
                wgmmaWait<0>();
#pragma unroll
                for (int r = 0; r < kHalfRegs; ++r) asm volatile("" : "+f"(accR[r])::"memory");
                if (wt < kClusterSize) {  // both chains have read this stage
                    mbarArriveCluster(&s.empty[stage], static_cast<uint32_t>(wt));
                    COURSE_TL(TL_RELEASE, stage);
                }
#pragma unroll
                for (int r = 0; r < kHalfRegs; ++r) total[kHalfRegs + r] += accR[r];
                if (++stage == kStages) {
                    stage = 0;
                    phase ^= 1;
                }
            }
            COURSE_TL(TL_EPI, 0);
            storeTile(total, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
        }
        // end of region splitn-consumer
#elif GEMM_PROMOTE_STAGGER || GEMM_DESC_ITER || GEMM_EARLY_RELEASE || GEMM_PROMOTE_TURNS || GEMM_SCALES_LATE
        // region stagger-consumer: a copy of snippet "consumer" for the development builds
        // -DGEMM_PROMOTE_STAGGER=1 and -DGEMM_DESC_ITER=1 (issue 40, session 17) and -DGEMM_EARLY_RELEASE=1
        // (session 18), -DGEMM_PROMOTE_TURNS=1 and -DGEMM_SCALES_LATE=1/2 (session 20); no page shows it
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
#endif
        const int cons = wg - 1;          // which 64-row half of the tile
        float acc[kAccRegs];              // the wgmma chain's; never zeroed: a chain starts with scale-d = 0
#if GEMM_DESC_ITER
        // desc-iter: stage 0's descriptors; a stage's and a k32 step's are these plus offsets
        const uint64_t descA0 = swizzledDesc(&s.a[0][cons * kWgmmaM * kBK]);
        const uint64_t descB0 = swizzledDesc(&s.b[0][0]);
#define DESC_A(st, ks) (descA0 + static_cast<uint64_t>(((st) * (kBM * kBK) + (ks) * kWgmmaK) >> 4))
#define DESC_B(st, ks) (descB0 + static_cast<uint64_t>(((st) * (kBN * kBK) + (ks) * kWgmmaK) >> 4))
#else
#define DESC_A(st, ks) swizzledDesc(&s.a[st][cons * kWgmmaM * kBK + (ks) * kWgmmaK])
#define DESC_B(st, ks) swizzledDesc(&s.b[st][(ks) * kWgmmaK])
#endif
#if GEMM_PROMOTE
        float total[kAccRegs];            // FP32 registers the chain's sums are promoted into
#endif
#if GEMM_PROMOTE_STAGGER
        promoteEvery = 1;                 // stagger: every K-tile, half a K-tile apart
#endif
#if GEMM_BLOCK_SCALES
        promoteEvery = 1;                 // the scales change every K-tile, so the chain must too
        const int scaleRow = cons * kWgmmaM + 16 * (wt / 32) + (wt % 32) / 4;  // first row this thread holds
#if GEMM_SCALES_LATE
        BlockScales scales;               // scales-late: the current K-tile's, loaded after the last promotion
#else
        BlockScales scales, next;         // the current K-tile's, and the next one's (in flight)
#endif
#endif
        int stage = 0;
        uint32_t phase = 0;
        int prevStage = 0;
#if GEMM_PROMOTE_TURNS
        if (cons == kConsumers - 1 && firstUnit < p.units) turnPass(cons);  // turns: consumer 0 goes first
#endif
        for (int unit = firstUnit; unit < p.units; unit += unitStep) {
            int mBlock, nBlock;
            unitCoords(p, unit, mBlock, nBlock);
            mBlock = mBlock * kClusterM + static_cast<int>(rank);
#if GEMM_PROMOTE
#pragma unroll
            for (int r = 0; r < kAccRegs; ++r) total[r] = 0.0f;
#endif
            int chain = 0;  // K-tiles in the wgmma chain since it last started
#if GEMM_BLOCK_SCALES && GEMM_SCALES_LATE == 2
            // scales-late 2: this unit's scale pointers and row checks, once; advanced each K-tile
            const int rowA = mBlock * kBM + scaleRow;
            const bool inA0 = rowA < M, inA8 = rowA + 8 < M;
            const float* __restrict__ pA = scalesA + (inA0 ? rowA : 0);
            const float* __restrict__ pB = scalesB + static_cast<size_t>(nBlock) * p.kTiles;
            scales.a0 = inA0 ? __ldg(pA) : 0.0f;
            scales.a8 = inA8 ? __ldg(pA + 8) : 0.0f;
            scales.b = __ldg(pB);
#elif GEMM_BLOCK_SCALES && GEMM_SCALES_LATE
            scales = loadBlockScales(scalesA, scalesB, M, p.kTiles, mBlock * kBM + scaleRow, nBlock, 0);
#elif GEMM_BLOCK_SCALES
            next = loadBlockScales(scalesA, scalesB, M, p.kTiles, mBlock * kBM + scaleRow, nBlock, 0);
#endif
#if GEMM_PROMOTE_STAGGER
            // The stagger: consumer 1's chain of K-tile kt's second half and kt + 1's first half: wait
            // for it and promote it mid-K-tile, while consumer 0 (the loop below, unchanged) promotes
            // at the K-tile's end. The stage before is released once the wait shows its last wgmmas done.
            if (cons == 1) {
                constexpr int kHalf = kBK / kWgmmaK / 2;
                for (int kt = 0; kt < p.kTiles; ++kt) {
                    COURSE_TL(TL_WAIT_FULL, stage);
                    mbarWait(&s.full[stage], phase);
                    COURSE_TL(TL_MMA, stage);
                    wgmmaFence();
#pragma unroll
                    for (int ks = 0; ks < kHalf; ++ks) {  // the chain begun half a K-tile ago (at kt 0: new)
                        wgmmaStep(acc, DESC_A(stage, ks), DESC_B(stage, ks), (kt > 0 || ks > 0) ? 1 : 0);
                    }
                    COURSE_TL(TL_MMA_WAIT, stage);
                    wgmmaCommit();
                    wgmmaWait<0>();
                    if (kt > 0 && wt < kClusterSize) {
                        mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                        COURSE_TL(TL_RELEASE, prevStage);
                    }
                    promote(total, acc);
                    wgmmaFence();  // the FADDs read acc; the next wgmma overwrites it (scale-d = 0)
#pragma unroll
                    for (int ks = kHalf; ks < kBK / kWgmmaK; ++ks) {  // a new chain
                        wgmmaStep(acc, DESC_A(stage, ks), DESC_B(stage, ks), ks > kHalf ? 1 : 0);
                    }
                    wgmmaCommit();
                    prevStage = stage;
                    if (++stage == kStages) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            } else  // consumer 0: the loop below; after either, the last chain's wait, release and promotion
            // (the stagger ends)
#endif
            for (int kt = 0; kt < p.kTiles; ++kt) {
#if GEMM_BLOCK_SCALES && !GEMM_SCALES_LATE
                // One K-tile ahead: the loads issued here are first used at the end of the next
                // K-tile, two K-tiles of wgmmas later (the last K-tile reloads its own: no branch).
                scales = next;
                next = loadBlockScales(scalesA, scalesB, M, p.kTiles, mBlock * kBM + scaleRow, nBlock,
                                       kt + 1 < p.kTiles ? kt + 1 : kt);
#endif
                COURSE_TL(TL_WAIT_FULL, stage);
                mbarWait(&s.full[stage], phase);
#if GEMM_PROMOTE_TURNS
                turnSync(cons);  // turns: the consumer before has issued this K-tile's group
#endif
                COURSE_TL(TL_MMA, stage);
                wgmmaFence();
#pragma unroll
                for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {
                    wgmmaStep(acc, DESC_A(stage, ks), DESC_B(stage, ks),
                              (chain > 0 || ks > 0) ? 1 : 0);
                }
                COURSE_TL(TL_MMA_WAIT, stage);
                wgmmaCommit();
#if GEMM_PROMOTE_TURNS
                // turns: the next consumer may issue; the last consumer's last turn passes to no one
                if (cons != kConsumers - 1 || kt + 1 < p.kTiles || unit + unitStep < p.units) turnPass(cons);
#endif
                wgmmaWait<1>();
#if GEMM_EARLY_RELEASE
                if (kt > 0 && chain > 0 && wt < kClusterSize) {  // chain 0: given back before its promotion
#else
                if (kt > 0 && wt < kClusterSize) {
#endif
                    mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                    COURSE_TL(TL_RELEASE, prevStage);
                }
                prevStage = stage;
                if (++stage == kStages) {
                    stage = 0;
                    phase ^= 1;
                }
                ++chain;
#if GEMM_PROMOTE
                // Every promoteEvery K-tiles (never when it is 0, and not
                // after the last: the end of the tile promotes that one),
                // wait for the chain and move its sum into total; the next
                // K-tile's first wgmma restarts the chain. Meanwhile the
                // other consumer warpgroup keeps the tensor cores busy.
                if (chain == promoteEvery && kt + 1 < p.kTiles) {
                    wgmmaWait<0>();
#if GEMM_EARLY_RELEASE
                    // early-release: this K-tile's wgmmas are done; its stage goes back now, before the FADDs
                    if (wt < kClusterSize) {
                        mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                        COURSE_TL(TL_RELEASE, prevStage);
                    }
#endif
#if GEMM_BLOCK_SCALES
                    promoteScaled(total, acc, scales);  // this K-tile's block scales
#if GEMM_SCALES_LATE == 2
                    // scales-late 2: the next K-tile's scales, one block of M rows (A) and one along (B) on
                    pA += M;
                    pB += 1;
                    scales.a0 = inA0 ? __ldg(pA) : 0.0f;
                    scales.a8 = inA8 ? __ldg(pA + 8) : 0.0f;
                    scales.b = __ldg(pB);
#elif GEMM_SCALES_LATE
                    // scales-late: the next K-tile's, used after its wgmmas (kt + 1 < kTiles here)
                    scales = loadBlockScales(scalesA, scalesB, M, p.kTiles, mBlock * kBM + scaleRow, nBlock, kt + 1);
#endif
#else
                    promote(total, acc);
#endif
                    chain = 0;
                }
#endif
            }
            COURSE_TL(TL_MMA_WAIT, prevStage);
            wgmmaWait<0>();
            if (wt < kClusterSize) {
                mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                COURSE_TL(TL_RELEASE, prevStage);
            }
            // (where snippet "consumer" ends)
            COURSE_TL(TL_EPI, 0);
#if GEMM_BLOCK_SCALES
            promoteScaled(total, acc, scales);  // the last K-tile, with its scales
            storeTile(total, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
#elif GEMM_PROMOTE
            promote(total, acc);  // the last chain
            storeTile(total, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
#else
            storeTile(acc, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
#endif
        }
#undef DESC_A
#undef DESC_B
        // end of region stagger-consumer
#else
        // snippet: consumer
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
#endif
        const int cons = wg - 1;          // which 64-row half of the tile
        float acc[kAccRegs];              // the wgmma chain's; never zeroed: a chain starts with scale-d = 0
#if GEMM_PROMOTE
        float total[kAccRegs];            // FP32 registers the chain's sums are promoted into
#endif
#if GEMM_BLOCK_SCALES
        promoteEvery = 1;                 // the scales change every K-tile, so the chain must too
        const int scaleRow = cons * kWgmmaM + 16 * (wt / 32) + (wt % 32) / 4;  // first row this thread holds
        BlockScales scales;               // this K-tile's, loaded after the promotion before it
#endif
        int stage = 0;
        uint32_t phase = 0;
        int prevStage = 0;
        for (int unit = firstUnit; unit < p.units; unit += unitStep) {
            int mBlock, nBlock;
            unitCoords(p, unit, mBlock, nBlock);
            mBlock = mBlock * kClusterM + static_cast<int>(rank);
#if GEMM_PROMOTE
#pragma unroll
            for (int r = 0; r < kAccRegs; ++r) total[r] = 0.0f;
#endif
            int chain = 0;  // K-tiles in the wgmma chain since it last started
#if GEMM_BLOCK_SCALES
            ScaleWalk walk = scaleWalk(scalesA, scalesB, M, p.kTiles, mBlock * kBM + scaleRow, nBlock);
            scales = loadScales(walk);    // K-block 0's
#endif
            for (int kt = 0; kt < p.kTiles; ++kt) {
                COURSE_TL(TL_WAIT_FULL, stage);
                mbarWait(&s.full[stage], phase);
                COURSE_TL(TL_MMA, stage);
                wgmmaFence();
#pragma unroll
                for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {
                    wgmmaStep(acc, swizzledDesc(&s.a[stage][cons * kWgmmaM * kBK + ks * kWgmmaK]),
                              swizzledDesc(&s.b[stage][ks * kWgmmaK]),
                              (chain > 0 || ks > 0) ? 1 : 0);
                }
                COURSE_TL(TL_MMA_WAIT, stage);
                wgmmaCommit();
                wgmmaWait<1>();
                if (kt > 0 && wt < kClusterSize) {
                    mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                    COURSE_TL(TL_RELEASE, prevStage);
                }
                prevStage = stage;
                if (++stage == kStages) {
                    stage = 0;
                    phase ^= 1;
                }
                ++chain;
#if GEMM_PROMOTE
                // Every promoteEvery K-tiles (never when it is 0, and not
                // after the last: the end of the tile promotes that one),
                // wait for the chain and move its sum into total; the next
                // K-tile's first wgmma restarts the chain. Meanwhile the
                // other consumer warpgroup keeps the tensor cores busy.
                if (chain == promoteEvery && kt + 1 < p.kTiles) {
                    wgmmaWait<0>();
#if GEMM_BLOCK_SCALES
                    promoteScaled(total, acc, scales);  // this K-tile's block scales
                    walk.a += M;                        // then the next K-tile's, read after its wgmmas
                    walk.b += 1;
                    scales = loadScales(walk);
#else
                    promote(total, acc);
#endif
                    chain = 0;
                }
#endif
            }
            COURSE_TL(TL_MMA_WAIT, prevStage);
            wgmmaWait<0>();
            if (wt < kClusterSize) {
                mbarArriveCluster(&s.empty[prevStage], static_cast<uint32_t>(wt));
                COURSE_TL(TL_RELEASE, prevStage);
            }
            // end snippet
            COURSE_TL(TL_EPI, 0);
#if GEMM_BLOCK_SCALES
            promoteScaled(total, acc, scales);  // the last K-tile, with its scales
            storeTile(total, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
#elif GEMM_PROMOTE
            promote(total, acc);  // the last chain
            storeTile(total, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
#else
            storeTile(acc, s, cons, wt, &tmD, nBlock * kBN, mBlock * kBM + cons * kBoxDRows, scale);
#endif
        }
#endif  // GEMM_PROMOTE_PINGPONG
        if (wt == 0) {
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
    }
    COURSE_TL(TL_SYNC, 0);
    clusterSync();
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

// A row-major matrix of rows x cols (cols contiguous) of elemBytes-byte
// elements, read or written in boxes of boxCols x boxRows with 128B
// swizzle: A and B as UINT8 (the TMA moves e4m3 as bytes), D as FLOAT16.
// Out-of-bounds loads fill zeros (FLOAT_OOB_FILL_NONE; 0x00 is e4m3 +0);
// stores clip at rows x cols.
static CUtensorMap encode2d(PFN_cuTensorMapEncodeTiled_v12000 encode, const void* base,
                            CUtensorMapDataType type, int elemBytes, int rows, int cols,
                            int boxCols, int boxRows) {
    CUtensorMap map{};
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * elemBytes};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(boxCols), static_cast<cuuint32_t>(boxRows)};
    const cuuint32_t elemStrides[2] = {1, 1};
    const CUresult r = encode(&map, type, 2, const_cast<void*>(base), dims, strides, box,
                              elemStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
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
// Inputs are k/8 for k in -8..8: exact in e4m3 (3 mantissa bits), and
// every product is a multiple of 1/64 of magnitude at most 1. A bound on
// bits does not make the sums exact: 6 + log2(K) + 1 significant bits is
// up to 18 at main()'s K (16 to 1104; 16 at the page's K = 528), more
// than the about 14 an FP8 wgmma chain keeps (measured on the page).
// Their size does: no partial sum of main()'s shapes reaches 64 in
// magnitude (57 at most, computed from the same LCG on the CPU;
// tests/lessons/day87/test_models.py recomputes all but the largest
// shape), and a sum below 2^6 kept to 14 bits below its exponent keeps
// every multiple of 2^-8, finer than 1/64. So this check cannot see an
// accumulator's loss: its inputs are chosen so that none occurs (the
// page's accuracy curve measures it). The scales are powers of two, so the one rounding is D's
// conversion to FP16, at most 2^-11 relative (2^-12 absolute below 1);
// 2e-3 is four times that, and a wrong scale is off by a power of two.
constexpr double kRelTolerance = 2e-3;
constexpr float kScaleA = 0.5f;   // the self-check's per-tensor scales: powers of two, exact
constexpr float kScaleB = 0.25f;

// The block-scaled build's self-check scales, powers of two (exact):
// sA[kb][m] = 2^((m + 3 kb) % 5 - 2), sB[nb][kb] = 2^((nb + kb) % 3 - 1).
static float blockScaleA(int m, int kb) { return std::ldexp(1.0f, (m + 3 * kb) % 5 - 2); }
static float blockScaleB(int nb, int kb) { return std::ldexp(1.0f, (nb + kb) % 3 - 1); }

// The float64 reference of the dequantised inputs, every element of D:
// scale * sum_k a b, each 128-element K-block's sum times its block
// scales when the build has them.
static std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b,
                                     int M, int N, int K, double scale) {
    std::vector<double> ref(static_cast<size_t>(M) * N);
    for (int m = 0; m < M; ++m) {
        const float* ar = &a[static_cast<size_t>(m) * K];
        for (int n = 0; n < N; ++n) {
            const float* br = &b[static_cast<size_t>(n) * K];
            double sum = 0.0;
            for (int k0 = 0; k0 < K; k0 += kScaleBlock) {
                double part = 0.0;
                for (int k = k0; k < std::min(K, k0 + kScaleBlock); ++k) part += double(ar[k]) * double(br[k]);
                const int kb = k0 / kScaleBlock;
                sum += kBlockScales ? part * blockScaleA(m, kb) * blockScaleB(n / kScaleBlock, kb) : part;
            }
            ref[static_cast<size_t>(m) * N + n] = scale * sum;
        }
    }
    return ref;
}

// Every element of D against the reference, the ragged edges included;
// the first wrong one is named, with whether it lies in the last
// (partial) tile row or column. Also checks the guard past D's end: the
// TMA store must not write outside the tensor.
static bool checkD(const std::vector<double>& ref, const std::vector<__half>& dOut, int M, int N,
                   int K, int every, size_t guard, const char* label) {
    double worst = 0.0;
    for (int m = 0; m < M; ++m) {
        for (int n = 0; n < N; ++n) {
            const double want = ref[static_cast<size_t>(m) * N + n];
            const double got = __half2float(dOut[static_cast<size_t>(m) * N + n]);
            const double rel = std::fabs(got - want) / std::max(std::fabs(want), 1.0);
            if (!(rel <= kRelTolerance)) {  // NaN (never written) fails too
                const bool edgeM = m >= M / kBM * kBM, edgeN = n >= N / kBN * kBN;
                std::fprintf(stderr,
                             "FAIL %s %dx%dx%d promote every %d at D[%d][%d]%s%s: got %g, ref %g, "
                             "rel error %g > %g\n",
                             label, M, N, K, every, m, n, edgeM ? " (ragged M edge)" : "",
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
            std::fprintf(stderr, "FAIL %s %dx%dx%d promote every %d: the guard after D was written "
                         "at element %zu past the end\n", label, M, N, K, every, i - elems);
            return false;
        }
    }
    std::printf("%s %dx%dx%d promote every %d: PASS, every element, max rel error %g "
                "(tolerance %g)\n", label, M, N, K, every, worst, kRelTolerance);
    return true;
}
// end snippet

// One shape: LCG inputs (as e4m3 bits, converted by cuda_fp8.h's
// saturating conversion), the reference once; for each promotion
// interval, a NaN-poisoned D with a guard, two launches (the second must
// match the first bit for bit), check.
static bool runShape(PFN_cuTensorMapEncodeTiled_v12000 encode, const cudaDeviceProp& prop, int M,
                     int N, int K, const std::vector<int>& intervals) {
    // snippet: refuse
    if (M < 1 || N < kMinMultipleN || K < kMinMultipleK || N % kMinMultipleN ||
        K % kMinMultipleK) {
        std::fprintf(stderr,
                     "refused %dx%dx%d: N must be a positive multiple of %d (a row of FP16 D) and "
                     "K of %d (a row of e4m3 A and B): a TMA tensor's row stride must be a "
                     "multiple of 16 bytes; M at least 1\n",
                     M, N, K, kMinMultipleN, kMinMultipleK);
        return false;
    }
    // end snippet
    const int tilesN = (N + kBN - 1) / kBN;
    const int clusterTilesM = ((M + kBM - 1) / kBM + kClusterM - 1) / kClusterM;
    const size_t elemsA = static_cast<size_t>(M) * K, elemsB = static_cast<size_t>(N) * K;
    const size_t elemsD = static_cast<size_t>(M) * N, guard = 4096;
    std::vector<float> fA(elemsA), fB(elemsB);
    std::vector<fp8_t> hA(elemsA), hB(elemsB);
    std::vector<__half> hD(elemsD + guard), hFirst(elemsD + guard);
    uint32_t state = 20261201u + static_cast<uint32_t>(M * 7 + N * 13 + K * 31);
    for (size_t i = 0; i < elemsA + elemsB; ++i) {
        state = state * 1664525u + 1013904223u;
        const float v = static_cast<float>(static_cast<int>(state >> 24) % 17 - 8) / 8.0f;
        const fp8_t bits = static_cast<fp8_t>(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
        if (i < elemsA) {
            fA[i] = v;
            hA[i] = bits;
        } else {
            fB[i - elemsA] = v;
            hB[i - elemsA] = bits;
        }
    }
    // Per-tensor scales go to the epilogue; block scales to the promotion (and 1 to the epilogue).
    const float scale = kBlockScales ? 1.0f : kScaleA * kScaleB;
    const std::vector<double> ref = reference(fA, fB, M, N, K, double(scale));
    const int kBlocks = (K + kScaleBlock - 1) / kScaleBlock, nBlocks = (N + kScaleBlock - 1) / kScaleBlock;
    std::vector<float> hSA(static_cast<size_t>(kBlocks) * M), hSB(static_cast<size_t>(nBlocks) * kBlocks);
    for (int kb = 0; kb < kBlocks; ++kb) {
        for (int m = 0; m < M; ++m) hSA[static_cast<size_t>(kb) * M + m] = blockScaleA(m, kb);
        for (int nb = 0; nb < nBlocks; ++nb) hSB[static_cast<size_t>(nb) * kBlocks + kb] = blockScaleB(nb, kb);
    }
    float *dSA = nullptr, *dSB = nullptr;
    CUDA_CHECK(cudaMalloc(&dSA, hSA.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dSB, hSB.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dSA, hSA.data(), hSA.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dSB, hSB.data(), hSB.size() * sizeof(float), cudaMemcpyHostToDevice));
    fp8_t *dA = nullptr, *dB = nullptr;
    __half* dD = nullptr;
    CUDA_CHECK(cudaMalloc(&dA, elemsA));
    CUDA_CHECK(cudaMalloc(&dB, elemsB));
    CUDA_CHECK(cudaMalloc(&dD, (elemsD + guard) * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(dA, hA.data(), elemsA, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB.data(), elemsB, cudaMemcpyHostToDevice));
    const CUtensorMap tmA = encode2d(encode, dA, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, M, K, kBK,
                                     kBoxARows);
    const CUtensorMap tmB = encode2d(encode, dB, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, N, K, kBK,
                                     kBoxBRows);
    const CUtensorMap tmD = encode2d(encode, dD, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, M, N,
                                     kBoxDCols, kBoxDRows);
    const int units = clusterTilesM * tilesN;
    const int slots = prop.multiProcessorCount / kClusterSize;
    const dim3 grid((units < slots ? units : slots) * kClusterSize);
    bool ok = true;
    for (int every : intervals) {
        if (kBlockScales && every != 1) {
            std::fprintf(stderr, "refused promote every %d: the block-scaled build promotes every "
                         "K-tile; pass 1\n", every);
            ok = false;
            continue;
        }
        if (every < 0 || (every > 0 && !kPromote)) {
            std::fprintf(stderr, "refused promote every %d: this build takes 0 (never)%s\n", every,
                         kPromote ? " or a positive number of K-tiles"
                                  : "; build with -DGEMM_PROMOTE=1 -DGEMM_BN=128 to promote");
            ok = false;
            continue;
        }
        for (int launch = 0; launch < 2; ++launch) {
            // Poison: 0xFFFF is an FP16 NaN; the guard holds 0x7BFF (65504).
            CUDA_CHECK(cudaMemset(dD, 0xFF, elemsD * sizeof(__half)));
            std::vector<uint16_t> g(guard, 0x7BFFu);
            CUDA_CHECK(cudaMemcpy(dD + elemsD, g.data(), guard * sizeof(uint16_t),
                                  cudaMemcpyHostToDevice));
            gemm8Fp8<<<grid, kThreadsPerBlock, kSmemBytes>>>(tmA, tmB, tmD, M, N, K, scale, every
#if GEMM_BLOCK_SCALES
                                                             , dSA, dSB
#endif
            );
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemcpy((launch == 0 ? hFirst : hD).data(), dD,
                                  (elemsD + guard) * sizeof(__half), cudaMemcpyDeviceToHost));
        }
        bool same = true;
        for (size_t i = 0; i < elemsD + guard && same; ++i) {
            if (*reinterpret_cast<const uint16_t*>(&hD[i]) !=
                *reinterpret_cast<const uint16_t*>(&hFirst[i])) {
                std::fprintf(stderr, "FAIL gemm8 %dx%dx%d promote every %d: launch 2 differs from "
                             "launch 1 at element %zu\n", M, N, K, every, i);
                same = false;
            }
        }
        ok = same && checkD(ref, hFirst, M, N, K, every, guard,
                            kBlockScales ? "gemm8 block scales" : "gemm8") && ok;
    }
    CUDA_CHECK(cudaFree(dSA));
    CUDA_CHECK(cudaFree(dSB));
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
    CUDA_CHECK(cudaFuncSetAttribute(gemm8Fp8, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSmemBytes));
    const PFN_cuTensorMapEncodeTiled_v12000 encode = getEncodeTiled();
    std::printf("configuration: tile %dx%d, cluster %d, promote build %d, block scales %d, %d stages, "
                "%d SMs\n", kBM, kBN, kClusterM, kPromote, kBlockScales, kStages, prop.multiProcessorCount);
    if (argc == 5) {
        return runShape(encode, prop, std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]),
                        {std::atoi(argv[4])})
                   ? EXIT_SUCCESS
                   : EXIT_FAILURE;
    }
    if (argc != 1) {
        std::fprintf(stderr, "usage: %s [M N K PROMOTE_EVERY]\n", argv[0]);
        return EXIT_FAILURE;
    }
    // Not tile multiples in M, N or K (the last one has more tiles than
    // SMs), each with the intervals this build takes.
    const int shapes[][3] = {{200, 136, 144},  {1000, 1032, 528}, {130, 392, 1104},
                             {2056, 264, 208}, {72, 8, 16},       {1, 8, 1008},
                             {2304, 2504, 768}};
    const std::vector<int> intervals = kBlockScales ? std::vector<int>{1}
                                       : kPromote   ? std::vector<int>{0, 1, 3}
                                                    : std::vector<int>{0};
    bool ok = true;
    for (const auto& sh : shapes) {
        ok = runShape(encode, prop, sh[0], sh[1], sh[2], intervals) && ok;
    }
    std::printf(ok ? "ALL PASS\n" : "SOME FAILED\n");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif  // __CUDACC_RTC__
