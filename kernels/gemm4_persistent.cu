// SPDX-License-Identifier: MIT
//
// GEMM ladder, step 4: a persistent kernel walking tiles in a grouped order.
//
// Step 3 (gemm3_two_consumers.cu) launches one CTA per 128x256 tile of D:
// 512 CTAs at N = 4096 for the 132 SMs of an H100 SXM or an H200. Each CTA
// starts cold (barrier init, the pipeline filling from empty) and ends with
// an epilogue during which its tensor cores idle and no copy is in flight.
// This step launches one CTA per SM and lets each walk tiles: tile =
// blockIdx.x, then += gridDim.x.
// The producer does not stop at a tile boundary: while the consumers store
// tile i, it is already filling the ring with tile i+1's first K-tiles, so
// the epilogue overlaps the next tile's loads. The ring's stage and phase
// simply keep counting across tiles, and the consumers now release the
// last stage of every tile (step 3 skipped that: nobody refilled it).
//
// Which tile a CTA takes next decides how much of A and B the 132 tiles in
// flight share through the L2 (50 MiB on an H100 SXM, 60 MiB on an H200;
// the course records on both). Row by row (GEMM_TILE_ORDER=0), 132 consecutive
// tiles at N = 8192 span 5 tile rows (4 whole, 4 tiles of a fifth) and
// all 32 tile columns: every K-step touches all of B. Grouped
// (GEMM_TILE_ORDER=1, the default) walks kGroupM tile rows down one tile
// column before moving right, so 132 tiles span 16 tile rows and 9 tile
// columns (8 whole, 4 tiles of a ninth): 2048 rows of A and 2304 rows of
// B per K-step instead of 640 and 8192. The page counts both (the same
// walk in Python) and measures both.
//
// What does not change: the ring, the barriers, the producer's and the
// consumers' per-K-tile work, setmaxnreg, the epilogue's stores.
//
// The problem, the same for every step of the ladder (the Python side
// depends on it):
//   A  M x K, row-major, FP16                  (K contiguous)
//   B  N x K, row-major, FP16                  (K contiguous: the K-major
//      layout wgmma reads without a transpose; cuBLAS's TN case)
//   D  M x N, row-major, FP16, D[m][n] = sum_k A[m][k] * B[n][k],
//      accumulated in FP32 and rounded to FP16 once at the end.
// M = N = K = GEMM_DIM (default 1024; 1024, 2048, 4096 and 8192 work).
//
// Launch contract (the host code below and the course's Python side):
//   kernel  gemm4Persistent(tmA, tmB, d)
//   grid    kPersistent = 1: (number of SMs, 1, 1), one CTA per SM (132 on
//           an H100 SXM or an H200); any grid size is correct, the SM count is fastest
//   block   kThreadsPerBlock = 384 (producer + two consumer warpgroups)
//   dynamic shared memory  kSmemBytes = 198656 (raise the limit with
//           cudaFuncSetAttribute(...MaxDynamicSharedMemorySize) first)
//   tmA     2D FP16 map over A: dims {K, M} (innermost first), row stride
//           K*2 bytes, box {kBK, kBoxARows} = {64, 128}, element strides
//           {1, 1}, CU_TENSOR_MAP_INTERLEAVE_NONE,
//           CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
//           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
//   tmB     the same over B: dims {K, N}, stride K*2, box {64, kBoxBRows}
//           = {64, 256}, 128B swizzle
//   d       plain pointer to D, M*N halves
//   -DGEMM_TILE_ORDER=0 builds the row-by-row order, 1 (default) grouped.
//
// Technique credit: github.com/pranjalssh/fast.cu (examples/matmul/
// matmul_6.cuh and matmul_7.cuh, persistent kernel and grouped schedule);
// the grouped order is the one Triton's matmul tutorial calls
// GROUP_SIZE_M. This file is the course's own code.
//
// Needs compute capability 9.0 exactly (wgmma is sm_90a-only).
//
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o gemm4_persistent gemm4_persistent.cu
// Run:   ./gemm4_persistent

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
#ifndef GEMM_DIM
#define GEMM_DIM 1024
#endif
constexpr int kDim = GEMM_DIM;            // M = N = K
constexpr int kBM = 128;                  // rows of D one CTA owns
constexpr int kBN = 256;                  // columns of D one CTA owns
constexpr int kBK = 64;                   // K depth of one tile: 64 halves = 128 bytes, one swizzle row
constexpr int kWgmmaM = 64;               // rows of one wgmma.mma_async
constexpr int kWgmmaN = 256;              // columns of one wgmma.mma_async (m64n256k16)
constexpr int kWgmmaK = 16;               // K depth of one wgmma.mma_async
constexpr int kThreadsPerBlock = 384;     // warpgroup 0 produces, warpgroups 1 and 2 consume
constexpr int kStages = 4;                // ring of shared-memory stages (4 x 48 KiB)
constexpr int kConsumers = 2;             // consumer warpgroups: arrivals per empty-barrier phase
constexpr int kBoxARows = 128;            // TMA box for A: kBK x kBoxARows elements
constexpr int kBoxBRows = 256;            // TMA box for B: kBK x kBoxBRows elements
constexpr int kAccRegs = 128;             // floats per thread per m64n256 accumulator
// setmaxnreg takes effect only when the kernel starts with a register cap
// (__launch_bounds__(kThreadsPerBlock, 1): 65536 / 384 = 170, rounded
// down to 168). The PTX ISA's rules: a multiple of 8 in 24..256, the
// same instruction executed by every warp of the warpgroup. Putting each
// role in one branch of an if/else is practitioners' advice (fast.cu,
// CUTLASS's warp-specialized kernels), not an ISA rule.
#ifndef GEMM_SETMAXNREG
#define GEMM_SETMAXNREG 1
#endif
constexpr int kProducerRegs = 40;         // producer warpgroup's ceiling after setmaxnreg.dec
constexpr int kConsumerRegs = 232;        // each consumer warpgroup's ceiling after setmaxnreg.inc
constexpr int kSmemAlign = 1024;          // 128B-swizzle atoms are 8 rows x 128 B = 1024 B
constexpr int kSmemBytes = 198656;        // dynamic shared memory the launch requests
constexpr int kPersistent = 1;            // grid = number of SMs; each CTA walks tiles
#ifndef GEMM_TILE_ORDER
#define GEMM_TILE_ORDER 1
#endif
constexpr int kTileOrder = GEMM_TILE_ORDER;  // 0: row by row, 1: grouped (L2-friendly)
constexpr int kGroupM = 16;               // tile rows one group walks down before moving right

constexpr int kMmaM = kBM / (kWgmmaM * kConsumers);             // m64 slices per consumer: 1
constexpr int kTileBytesA = kBM * kBK * 2;                      // 16 KiB
constexpr int kTileBytesB = kBN * kBK * 2;                      // 32 KiB
constexpr int kStageBytes = kTileBytesA + kTileBytesB;          // bytes the TMA delivers per K-tile
constexpr int kTilesM = kDim / kBM;                             // tile rows of D
constexpr int kTilesN = kDim / kBN;                             // tile columns of D
constexpr int kNumTiles = kTilesM * kTilesN;                    // 512 at N = 4096

static_assert(kDim % kBM == 0 && kDim % kBN == 0 && kDim % kBK == 0,
              "GEMM_DIM must be a multiple of the CTA tile: no ragged edges");
static_assert(kBK * 2 == 128,
              "one tile row must be exactly one 128-byte swizzle span");
static_assert(kBN == kWgmmaN && kBM % kWgmmaM == 0,
              "each consumer covers its rows with kMmaM m64n256 slices");
static_assert(kAccRegs == kWgmmaM * kWgmmaN / 128,
              "m64nN accumulators spread over 128 threads");
static_assert(kBoxARows == kBM && kBoxBRows == kBN && kBoxARows <= 256,
              "one TMA box per operand per K-tile; boxes are at most 256 rows");
static_assert(kThreadsPerBlock == 128 * (1 + kConsumers),
              "one producer warpgroup plus the consumer warpgroups");
static_assert(kStages >= 2, "a pipeline needs at least two stages");
static_assert(kTileOrder == 0 || kTileOrder == 1, "GEMM_TILE_ORDER is 0 or 1");
static_assert(kPersistent == 1, "the host launches one CTA per SM and the kernel walks tiles");
static_assert(128 * (kProducerRegs + kConsumers * kConsumerRegs) <= 65536,
              "the three warpgroups' ceilings must fit the 64K-register file");
static_assert(kProducerRegs % 8 == 0 && kConsumerRegs % 8 == 0 && kProducerRegs >= 24 &&
                  kConsumerRegs <= 256,
              "setmaxnreg counts are multiples of 8 in 24..256");
// end snippet

// snippet: smem-layout
// Shared memory: the tiles first, each at a 1024-byte boundary (the 128B
// swizzle pattern repeats every 8 rows of 128 B and both the TMA engine and
// wgmma compute it from address bits, so a tile must start on an atom
// boundary for the two to agree), then the barriers. Each stage is 32 KiB,
// 48 KiB, a multiple of 1024, so every stage stays aligned.
struct alignas(1024) SharedStorage {
    __half a[kStages][kBM * kBK];  // A tiles: kBM rows of 128 B each, swizzled
    __half b[kStages][kBN * kBK];  // B tiles: kBN rows of 128 B each, swizzled
    uint64_t full[kStages];        // mbarrier: "the TMA bytes of this stage have landed"
    uint64_t empty[kStages];       // mbarrier: "the wgmmas reading this stage are done"
};
// The dynamic shared memory window is only guaranteed 16-byte aligned, so
// the kernel rounds its base up to 1024: request one alignment's slack.
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

// One m64n256k16 wgmma, A and B both from shared memory through
// descriptors. scaleD = 0 computes D = A*B, 1 computes D += A*B; it is a
// predicate, so it may be a run-time value. The immediates after it:
// scale-a = scale-b = 1 (no negation), trans-a = trans-b = 0 (both
// operands K-major, which is how A and B sit in memory here).
__device__ __forceinline__ void wgmmaM64N256K16(float (&acc)[kAccRegs], uint64_t descA,
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
// end snippet

// snippet: schedule
// The tile a CTA computes on its i-th turn is tile blockIdx.x + i *
// gridDim.x of this order.
__device__ __forceinline__ void tileCoords(int tile, int& mBlock, int& nBlock) {
    if (kTileOrder == 0) {
        // Row by row: consecutive tiles share a tile row of A and walk
        // across every column of B.
        mBlock = tile / kTilesN;
        nBlock = tile % kTilesN;
    } else {
        // Grouped: kGroupM tile rows form a group; inside it consecutive
        // tiles walk down a tile column, then move one column right. The
        // last group may be shorter when kTilesM is not a multiple.
        const int group = tile / (kGroupM * kTilesN);
        const int firstM = group * kGroupM;
        const int rows = kTilesM - firstM < kGroupM ? kTilesM - firstM : kGroupM;
        const int inGroup = tile % (kGroupM * kTilesN);
        mBlock = firstM + inGroup % rows;
        nBlock = inGroup / rows;
    }
}
// end snippet

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

// D = A * B^T in FP16 with FP32 accumulate; each CTA computes 128x256
// tiles of D one after another, walking K in 64-deep tiles through one
// kStages-deep ring that runs on across tiles. Launch
// contract: see the header. extern "C" keeps the name unmangled for CuPy.
extern "C" __global__ void __launch_bounds__(kThreadsPerBlock, 1)
    gemm4Persistent(const __grid_constant__ CUtensorMap tmA,
                    const __grid_constant__ CUtensorMap tmB, __half* __restrict__ d) {
    // snippet: setup
    extern __shared__ uint8_t smemRaw[];
    SharedStorage& s = *reinterpret_cast<SharedStorage*>(
        (reinterpret_cast<uintptr_t>(smemRaw) + kSmemAlign - 1) &
        ~uintptr_t(kSmemAlign - 1));

    const int t = static_cast<int>(threadIdx.x);
    const int wg = t / 128;                           // 0 produces, 1 and 2 consume
    const int wt = t % 128;                           // thread within its warpgroup
    COURSE_TL_INIT(wg, wt == 0);
    const int firstTile = static_cast<int>(blockIdx.x);  // this CTA's first tile
    const int tileStep = static_cast<int>(gridDim.x);    // then every tileStep-th
    constexpr int kTiles = kDim / kBK;

    if (t == 0) {
        for (int i = 0; i < kStages; ++i) {
            mbarInit(&s.full[i], 1);            // the producer's arrive.expect_tx
            mbarInit(&s.empty[i], kConsumers);  // one release per consumer warpgroup
        }
        // The fence after the inits is the CUDA Programming Guide's ("Using
        // TMA to transfer multi-dimensional arrays"), kept as Day 76 has
        // it; it is conservative: the TMA engine accesses its mbarrier
        // operand through the generic proxy, as the init does (PTX ISA,
        // cp.async.bulk.tensor), and the block-wide barrier below is what
        // publishes the barriers to the other warpgroups.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    // The last block-wide barrier: after it the warpgroups go their own
    // ways and meet only through the mbarriers.
    __syncthreads();
    // end snippet

    if (wg == 0) {
        // snippet: producer
        // The whole warpgroup gives registers back (setmaxnreg is
        // .sync.aligned: all four warps execute it), then one elected
        // thread issues every copy; the other 127 threads have nothing
        // to do.
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
#endif
        // The elected thread runs ahead of the consumers by up to
        // kStages K-tiles, stopped only by the empty barriers, and across
        // tile boundaries: stage and phase keep counting.
        if (wt == 0) {
            int stage = 0;
            uint32_t phase = 0;  // flips each time the ring wraps
            for (int tile = firstTile; tile < kNumTiles; tile += tileStep) {
                int mBlock, nBlock;
                tileCoords(tile, mBlock, nBlock);
                for (int kt = 0; kt < kTiles; ++kt) {
                    // Wait until the consumer released this stage's previous
                    // contents: phase (round - 1) of empty[stage], parity
                    // phase ^ 1. In round 0 that is the phase "before" phase 0,
                    // which a freshly initialized mbarrier counts as complete
                    // (try_wait.parity on the preceding phase's parity returns
                    // true), so the first kStages copies go out at once.
                    COURSE_TL(TL_WAIT_EMPTY, stage);
                    mbarWait(&s.empty[stage], phase ^ 1);
                    COURSE_TL(TL_LOAD, stage);
                    mbarArriveExpectTx(&s.full[stage], kStageBytes);
                    tmaLoad2d(s.a[stage], &tmA, &s.full[stage], kt * kBK, mBlock * kBM);
                    tmaLoad2d(s.b[stage], &tmB, &s.full[stage], kt * kBK, nBlock * kBN);
                    if (++stage == kStages) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
        }
        // end snippet
    } else {
        // snippet: consumer
        // The consumers raise their ceiling before touching the
        // accumulators; .inc blocks until the producer's .dec has put
        // enough registers back in the CTA's pool.
#if GEMM_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
#endif
        const int cons = wg - 1;          // which 64-row half of the tile
        float acc[kMmaM][kAccRegs];       // one m64 slice of 64 rows x 256 columns
        int stage = 0;
        uint32_t phase = 0;
        int prevStage = 0;
        for (int tile = firstTile; tile < kNumTiles; tile += tileStep) {
            int mBlock, nBlock;
            tileCoords(tile, mBlock, nBlock);
#pragma unroll
            for (int mi = 0; mi < kMmaM; ++mi) {
#pragma unroll
                for (int r = 0; r < kAccRegs; ++r) {
                    acc[mi][r] = 0.0f;  // a fresh tile starts from zero
                }
            }
            for (int kt = 0; kt < kTiles; ++kt) {
                // Phase `round` of full[stage] completes when this round's
                // bytes have landed.
                COURSE_TL(TL_WAIT_FULL, stage);
                mbarWait(&s.full[stage], phase);

                // No fence.proxy.async: the TMA engine, not a thread, wrote
                // the stage (see gemm1_tma.cu). wgmma.fence orders the
                // accumulator registers.
                COURSE_TL(TL_MMA, stage);
                wgmmaFence();
#pragma unroll
                for (int ks = 0; ks < kBK / kWgmmaK; ++ks) {
#pragma unroll
                    for (int mi = 0; mi < kMmaM; ++mi) {
                        wgmmaM64N256K16(acc[mi],
                                        swizzledDesc(&s.a[stage][(cons * kMmaM + mi) * kWgmmaM * kBK +
                                                                 ks * kWgmmaK]),
                                        swizzledDesc(&s.b[stage][ks * kWgmmaK]), 1);
                    }
                }
                COURSE_TL(TL_MMA_WAIT, stage);
                wgmmaCommit();
                // Keep this tile's group in flight; wait only for the previous
                // one (PTX ISA "wgmma.wait_group", https://docs.nvidia.com/cuda/
                // parallel-thread-execution/index.html
                // #asynchronous-warpgroup-level-matrix-instructions-wgmma-wait-group).
                // Its wgmmas have now finished reading prevStage, so that
                // stage goes back to the producer. Released before its
                // wgmmas complete, a stage could be overwritten by the TMA
                // while the tensor cores still read it: a race, undefined
                // results (PTX ISA, "Completion Mechanisms for Asynchronous
                // Copy Operations"), which no single run proves absent.
                wgmmaWait<1>();
                if (kt > 0 && wt == 0) {
                    mbarArrive(&s.empty[prevStage]);
                    COURSE_TL(TL_RELEASE, prevStage);
                }
                prevStage = stage;
                if (++stage == kStages) {
                    stage = 0;
                    phase ^= 1;
                }
            }
            // The last group of this tile. Its stage must go back too now:
            // the producer is already filling the ring for the next tile.
            COURSE_TL(TL_MMA_WAIT, prevStage);
            wgmmaWait<0>();
            if (wt == 0) {
                mbarArrive(&s.empty[prevStage]);
                COURSE_TL(TL_RELEASE, prevStage);
            }
            // end snippet

            // snippet: epilogue
            // Accumulator fragment layout of wgmma .m64nNk16 with FP32 D (PTX
            // ISA "Matrix fragments for wgmma.mma_async", https://docs.nvidia.com/
            // cuda/parallel-thread-execution/index.html
            // #asynchronous-warpgroup-level-matrix-register-fragment-wgmma-64n16):
            // warp w owns rows 16w..16w+15 of the m64 slice; registers come in
            // fours per 8-column block: {r, r+1} are two adjacent columns of
            // row lane/4, {r+2, r+3} the same columns of row lane/4 + 8. Each
            // adjacent pair becomes one __half2, a 4-byte store.
            COURSE_TL(TL_EPI, 0);
            const int warp = wt / 32;
            const int lane = wt % 32;
#pragma unroll
            for (int mi = 0; mi < kMmaM; ++mi) {
                const int row0 = mBlock * kBM + (cons * kMmaM + mi) * kWgmmaM + 16 * warp + lane / 4;
#pragma unroll
                for (int r = 0; r < kAccRegs; r += 2) {
                    const int row = row0 + 8 * ((r % 4) / 2);
                    const int col = nBlock * kBN + 8 * (r / 4) + 2 * (lane % 4);
                    *reinterpret_cast<__half2*>(&d[static_cast<size_t>(row) * kDim + col]) =
                        __floats2half2_rn(acc[mi][r], acc[mi][r + 1]);
                }
            }
            // end snippet
        }
    }
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

// A row-major FP16 matrix of `rows` x kDim (K contiguous), read in boxes
// of kBK x boxRows with 128B swizzle: the TMA engine XORs each 16-byte
// chunk's index with the row index mod 8 as it writes shared memory
// (https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #tensor-swizzling-modes), the layout swizzledDesc() declares.
static CUtensorMap encodeKMajor(PFN_cuTensorMapEncodeTiled_v12000 encode, const __half* base,
                                int rows, int boxRows) {
    CUtensorMap map{};
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(kDim), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(kDim) * sizeof(__half)};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(kBK), static_cast<cuuint32_t>(boxRows)};
    const cuuint32_t elemStrides[2] = {1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                              const_cast<__half*>(base), dims, strides, box, elemStrides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_NONE,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled failed: CUresult %d\n", static_cast<int>(r));
        std::exit(EXIT_FAILURE);
    }
    return map;
}
// end snippet

// snippet: check
// Inputs from {-8..8}/8 are exact in FP16, and every partial sum is a
// multiple of 1/64 far below 2^24/64, so FP32 accumulation is exact too:
// the only rounding is D's final conversion to FP16, a relative error of
// at most 2^-11 = 4.9e-4 (absolute 2^-12 below 1, hence the max(|ref|, 1)
// floor). 2e-3 is four times that: any indexing, swizzle or race error
// lands orders of magnitude above it.
constexpr double kRelTolerance = 2e-3;

// The reference in double, over all rows at N <= 1024 and over 128 rows
// spread across every tile and warp position above that (each checked row
// is complete: every column, every K). Every element of D is also checked
// for the NaN poison the launch started from, so an unwritten tile fails
// even where no reference row lands.
static bool checkD(const std::vector<__half>& a, const std::vector<__half>& b,
                   const std::vector<__half>& dOut, const char* label) {
    const size_t elems = static_cast<size_t>(kDim) * kDim;
    for (size_t i = 0; i < elems; ++i) {
        if (std::isnan(__half2float(dOut[i]))) {
            std::fprintf(stderr, "FAIL: D[%zu][%zu] was never written (still NaN)\n",
                         i / kDim, i % kDim);
            return false;
        }
    }
    std::vector<float> af(elems), bf(elems);
    for (size_t i = 0; i < elems; ++i) {
        af[i] = __half2float(a[i]);
        bf[i] = __half2float(b[i]);
    }
    const int sampleRows = kDim <= 1024 ? kDim : 128;
    const int rowStep = kDim / sampleRows;
    double worst = 0.0;
    for (int i = 0; i < sampleRows; ++i) {
        const int m = i * rowStep + (rowStep > 1 ? (i * 37) % rowStep : 0);
        for (int n = 0; n < kDim; ++n) {
            const float* ar = &af[static_cast<size_t>(m) * kDim];
            const float* br = &bf[static_cast<size_t>(n) * kDim];
            // Four partial sums break the add-latency chain (K is a
            // multiple of 64); exact products, double sums.
            double part[4] = {0.0, 0.0, 0.0, 0.0};
            for (int k = 0; k < kDim; k += 4) {
                for (int j = 0; j < 4; ++j) {
                    part[j] += static_cast<double>(ar[k + j]) * static_cast<double>(br[k + j]);
                }
            }
            const double ref = (part[0] + part[1]) + (part[2] + part[3]);
            const double got = __half2float(dOut[static_cast<size_t>(m) * kDim + n]);
            const double rel = std::fabs(got - ref) / std::max(std::fabs(ref), 1.0);
            worst = std::max(worst, rel);
            if (!(rel <= kRelTolerance)) {
                std::fprintf(stderr, "FAIL at D[%d][%d]: got %g, ref %g, rel error %g > %g\n", m,
                             n, got, ref, rel, kRelTolerance);
                return false;
            }
        }
    }
    std::printf("%s %dx%dx%d: PASS, max rel error %g (tolerance %g)\n", label, kDim, kDim, kDim,
                worst, kRelTolerance);
    return true;
}
// end snippet

int main() {
    // snippet: gate
    // wgmma exists on sm_90a and nowhere else; see Day 78.
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

    const size_t elems = static_cast<size_t>(kDim) * kDim;
    std::vector<__half> hA(elems), hB(elems), hD(elems);
    uint32_t state = 20261201u;
    for (size_t i = 0; i < 2 * elems; ++i) {
        state = state * 1664525u + 1013904223u;
        const float v = static_cast<float>(static_cast<int>(state >> 24) % 17 - 8) / 8.0f;
        (i < elems ? hA[i] : hB[i - elems]) = __float2half(v);
    }

    __half *dA = nullptr, *dB = nullptr, *dD = nullptr;
    CUDA_CHECK(cudaMalloc(&dA, elems * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dB, elems * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dD, elems * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(dA, hA.data(), elems * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB.data(), elems * sizeof(__half), cudaMemcpyHostToDevice));
    // Poison: 0xFFFF is a NaN in FP16, so any element the kernel never
    // writes fails the check.
    CUDA_CHECK(cudaMemset(dD, 0xFF, elems * sizeof(__half)));

    const PFN_cuTensorMapEncodeTiled_v12000 encode = getEncodeTiled();
    const CUtensorMap tmA = encodeKMajor(encode, dA, kDim, kBoxARows);
    const CUtensorMap tmB = encodeKMajor(encode, dB, kDim, kBoxBRows);

    CUDA_CHECK(cudaFuncSetAttribute(gemm4Persistent, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSmemBytes));
    // kPersistent: one CTA per SM, each walking tiles.
    const dim3 grid(prop.multiProcessorCount);
    gemm4Persistent<<<grid, kThreadsPerBlock, kSmemBytes>>>(tmA, tmB, dD);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hD.data(), dD, elems * sizeof(__half), cudaMemcpyDeviceToHost));

    const bool ok = checkD(hA, hB, hD, "gemm4 persistent");

    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dD));
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif  // __CUDACC_RTC__
