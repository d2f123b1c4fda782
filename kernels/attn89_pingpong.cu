// SPDX-License-Identifier: MIT
//
// Day 89: attention forward, O = softmax(Q K^T / sqrt(d)) V, Day 88's kernel
// (kernels/attn88_forward.cu) with one idea added: ping-pong between the two
// consumer warpgroups. Two named barriers hand a "turn" from one consumer to
// the other: a consumer waits for its turn (bar.sync) before it issues its
// wgmmas of a tile and passes the turn on (bar.arrive) once they are issued,
// so the tensor cores run one warpgroup's GEMMs while the other warpgroup
// computes its softmax (FlashAttention-3, arXiv:2407.08608, section 3.1,
// "pingpong scheduling"; hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp,
// warp_scheduler_barrier_sync / warp_scheduler_barrier_arrive). The register
// split moves to FlashAttention-3's for two consumers fed by TMA: the producer
// gives back to 24 registers a thread, each consumer grows to 240 (Day 88:
// 40 and 232). Everything else is Day 88's, line for line.
//
// The problem:
//   Q, K, V  B x H x S x D, row-major, FP16 (D contiguous), D = ATTN_HEAD_DIM
//            (128 by default; 64 and 256 build with -DATTN_HEAD_DIM=64|256);
//            BF16 with -DATTN_BF16=1 (the same kernel, another element type)
//   O        B x H x S x D, FP16 (BF16 in that build):
//            O[b,h,i,:] = sum_j softmax_j(Q[b,h,i,:] . K[b,h,j,:] / sqrt(D)) V[b,h,j,:]
//            with, when causal, only the keys j <= i
//   LSE      B x H x S, float32: the natural log of each row's softmax
//            denominator, max_j(s_ij) + ln(sum_j exp(s_ij - max)), s = Q K^T / sqrt(D).
// Any S >= 1: rows and keys past S are the TMA's zero fill on load, masked
// to -inf in the scores, and never stored.
//
// One CTA owns kBM = 128 query rows of one (batch, head): warpgroup 0 loads
// Q once and then K and V tiles of kBN rows into a two-stage ring; warpgroups
// 1 and 2 (consumers 0 and 1) each own 64 of the query rows and, per tile,
//   1. S = Q K^T            wgmma (SS), then pass the turn to the other consumer
//   2. mask, online softmax in registers (while the other consumer's wgmmas run)
//   3. wait for the turn, O += P V (wgmma, P from registers); S of the next
//      tile is issued in the same turn
// The turns alternate: consumer 0's P V and next Q K^T, consumer 1's, and so
// on (the pingpong snippet says why the two barriers balance).
//
// Launch contract (the header and the course's Python side agree on it):
//   kernel  attn89Pingpong(tmQ, tmK, tmV, o, lse, seqLen, heads, causal)
//   grid    (ceil(S / kBM), H, B)   blockIdx.x: query tile (reversed when causal:
//           the longest rows start first), .y head, .z batch
//   block   kThreadsPerBlock = 384
//   dynamic shared memory  kSmemBytes: 165888 at D = 128, 83968 at 64, 198656
//           at 256 (opt in with cudaFuncSetAttribute(...MaxDynamicSharedMemorySize))
//   tmQ     4-D FP16 (BF16) map over Q: dims {D, S, H, B} (innermost first), strides
//           {D*2, S*D*2, H*S*D*2} bytes, box {64, kBM, 1, 1}, element strides 1,
//           CU_TENSOR_MAP_SWIZZLE_128B, no interleave, no L2 promotion, OOB fill NONE
//           (zeros)
//   tmK,tmV the same over K and V with box {64, kBN, 1, 1}
//   o       plain pointer to O (B*H*S*D 2-byte elements); lse: B*H*S floats
//   seqLen  S; heads  H; causal  0 or 1
//   named barriers 1 and 2 are the consumers' turns (0 is __syncthreads's)
//
// Technique credit: FlashAttention-3 (Shah, Bikshandi, Zhang, Thakkar,
// Ramani, Dao, 2024, arXiv:2407.08608; github.com/Dao-AILab/flash-attention,
// hopper/), and CUTLASS's ping-pong GEMM (KernelTmaWarpSpecializedPingpong,
// whose OrderedSequenceBarrier, on mbarriers in shared memory, makes its two
// consumer warpgroups take turns through their main loops and epilogues).
// This file is the course's own code; the overlap inside one warpgroup
// (softmax under the next tile's Q K^T) is the next page's.
//
// Needs compute capability 9.0 exactly (wgmma is sm_90a-only).
//
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o attn89_pingpong attn89_pingpong.cu
//        (BF16: add -DATTN_BF16=1)
// Run:   ./attn89_pingpong              (the check's shapes, causal and not)
//        ./attn89_pingpong B H S causal (one shape)

#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#else
// Under NVRTC (the course compiles this same file at run time) there is
// no cuda.h: declare the 128-byte, 64-byte aligned opaque tensor map the
// way cuda.h does, as Day 76 (tma_tile.cu) explains. Fixed-width integers
// come from libcu++.
#include <cuda/std/cstdint>
#include <cuda_bf16.h>
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
#ifndef ATTN_HEAD_DIM
#define ATTN_HEAD_DIM 128
#endif
// The element type of Q, K, V, P and O: FP16, or BF16 with -DATTN_BF16=1.
// Both are 2 bytes with FP32 accumulation in wgmma (k16, the same
// fragments and transposes: PTX ISA "wgmma.mma_async"), so only the
// type, wgmma's A/B qualifiers, the pair rounding and the maps change.
#ifndef ATTN_BF16
#define ATTN_BF16 0
#endif
#if ATTN_BF16
using Elem = __nv_bfloat16;               // one element (cuda_bf16.h)
using Elem2 = __nv_bfloat162;             // two, in one 32-bit register
#define ATTN_AB ".bf16.bf16"             // wgmma's A and B type qualifiers
#else
using Elem = __half;
using Elem2 = __half2;
#define ATTN_AB ".f16.f16"
#endif
constexpr int kHeadDim = ATTN_HEAD_DIM;   // D: 64, 128 or 256
constexpr int kBM = 128;                  // query rows one CTA owns: two consumers x 64
// Key/value rows per tile: 128, and 64 at D = 256, where a 128-row K and V
// stage (128 KiB for the pair) would not fit twice beside Q (see smem-layout).
// FlashAttention-3 picks 128 (causal) or 176 at D = 128 and 80 at D = 256
// (hopper/tile_size.h, tile_size_fwd_sm90); 128 and 64 keep every wgmma N a
// multiple of the 64-column swizzle block.
constexpr int kBN = 128 - 64 * (kHeadDim / 256);
constexpr int kChunk = 64;                // 2-byte elements per 128-byte swizzle row: one TMA box is 64 wide
constexpr int kChunks = kHeadDim / kChunk;  // 128-byte column blocks of a D-wide row: 1, 2 or 4
constexpr int kWgmmaM = 64;               // rows of one wgmma.mma_async
constexpr int kWgmmaK = 16;               // K depth of one wgmma.mma_async (FP16 or BF16)
constexpr int kConsumers = 2;             // consumer warpgroups, 64 query rows each
constexpr int kThreadsPerBlock = 128 * (1 + kConsumers);  // warpgroup 0 produces
// K/V ring depth: 2 (the default, every D); -DATTN_STAGES=3 fits at D = 64
// and 128 (231424 bytes at 128), a first speed experiment.
#ifndef ATTN_STAGES
#define ATTN_STAGES 2
#endif
constexpr int kStages = ATTN_STAGES;      // K/V ring depth
constexpr int kSAccRegs = kWgmmaM * kBN / 128;        // floats per thread of S (64 x kBN): 64
constexpr int kOAccRegs = kWgmmaM * kHeadDim / 128;   // floats per thread of O (64 x D): 64
constexpr int kPSlices = kBN / kWgmmaK;   // k16 slices of P in the second wgmma: 8
// The register split (PTX ISA "setmaxnreg"): __launch_bounds__(384, 1) lets
// ptxas give each thread at most 65536 / 384 = 170, 168 in whole units of 8,
// and the CTA starts with 168 a thread. The producer gives back all but 24
// (setmaxnreg's floor) and each consumer takes 240, FlashAttention-3's
// numbers for two consumer warpgroups fed by TMA (hopper/flash_fwd_kernel_sm90.h,
// LoadRegisterRequirement and MmaRegisterRequirement; Day 88 used their 40
// and 232, the split without TMA for K and V): 24 + 2 x 240 = 3 x 168, so
// the warpgroups trade registers and the CTA's total stays what it launched with.
constexpr int kLaunchRegs = (65536 / kThreadsPerBlock) / 8 * 8;  // 168
constexpr int kProducerRegs = 24;         // producer warpgroup's ceiling after setmaxnreg.dec
constexpr int kConsumerRegs = 240;        // each consumer warpgroup's ceiling after setmaxnreg.inc
// Named barriers 1 and 2: consumer c waits for its turn on kTurnBarrier + c
// (barrier 0 is __syncthreads's); 256 threads meet on each, the waiting
// consumer's 128 (bar.sync) and the other consumer's 128 (bar.arrive).
constexpr int kTurnBarrier = 1;
constexpr int kTurnThreads = 2 * 128;
// -DATTN_PV_SPLIT=1: O += P V as one m64n64k16 wgmma per 64-column chunk of
// D instead of one m64n{D}k16, so V's descriptor never steps from one chunk
// to the next through its leading byte offset (a check of that field on the
// GPU: both builds must agree). Default 0.
#ifndef ATTN_PV_SPLIT
#define ATTN_PV_SPLIT 0
#endif
constexpr int kPvSplit = ATTN_PV_SPLIT;
constexpr int kSmemAlign = 1024;          // 128B-swizzle atoms are 8 rows x 128 B = 1024 B
constexpr int kMinSeqLen = 1;             // any S: the TMA's bounds make the edges
constexpr int kQBytes = kBM * kHeadDim * 2;       // bytes of the Q tile: 32 KiB
constexpr int kKVBytes = kBN * kHeadDim * 2;      // bytes of one K (or V) tile: 32 KiB
// Shared memory: Q, kStages x (K, V), one 1024-byte block for the barriers
// and the alignment slack: 165888 bytes at D = 128.
constexpr int kSmemBytes = kQBytes + kStages * 2 * kKVBytes + 1024 + kSmemAlign;
// log2(e) / sqrt(D): the softmax scale folded into exp2's argument.
constexpr float kScaleLog2 = 1.4426950408889634f *
                             (kHeadDim == 64 ? 0.125f : kHeadDim == 128 ? 0.08838834764831845f
                                                                         : 0.0625f);

static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256,
              "ATTN_HEAD_DIM is 64, 128 or 256");
static_assert(ATTN_BF16 == 0 || ATTN_BF16 == 1, "ATTN_BF16 is 0 or 1");
static_assert(sizeof(Elem) == 2, "FP16 and BF16 are both 2 bytes: every size here counts 2");
static_assert(kChunk * 2 == 128, "one box row is one 128-byte swizzle span");
static_assert(kBM == kWgmmaM * kConsumers, "each consumer owns one m64 slice of the Q tile");
static_assert(kBN % kWgmmaK == 0 && kBN <= 256 && kBM <= 256, "TMA boxes are at most 256 rows");
static_assert(kThreadsPerBlock == 384, "one producer and two consumer warpgroups");
static_assert(kProducerRegs + kConsumers * kConsumerRegs == (1 + kConsumers) * kLaunchRegs,
              "the warpgroups trade registers: the CTA keeps the 168 a thread it launched with");
static_assert(kProducerRegs >= 24 && kConsumerRegs <= 256 && kProducerRegs % 8 == 0 &&
                  kConsumerRegs % 8 == 0,
              "setmaxnreg takes a multiple of 8 in 24..256");
static_assert(kTurnBarrier >= 1 && kTurnBarrier + kConsumers <= 16, "named barriers are 0..15");
static_assert(kStages >= 2, "a ring needs two stages to overlap a load with the math");
static_assert(kSmemBytes <= 227 * 1024, "Hopper's per-block shared memory ceiling");
static_assert(kMinSeqLen == 1, "no multiple of S is needed: the TMA zero-fills past it");
static_assert(kPvSplit == 0 || kPvSplit == 1, "ATTN_PV_SPLIT is 0 or 1");
// end snippet

// snippet: smem-layout
// Q, K and V tiles as 128-byte column blocks ("chunks"): a D = 128 row is
// 256 bytes, twice the 128B swizzle span, so each tile is kChunks boxes of
// 64 columns, each box rows x 128 B, swizzled, starting on a 1024-byte
// boundary (the swizzle pattern repeats every 8 rows of 128 B, and the TMA
// engine and wgmma both compute it from address bits). At D = 128: Q 32 KiB,
// each K and V stage 32 KiB, 160 KiB of tiles in all; at D = 256 (kBN = 64)
// 64 + 2 x (32 + 32) = 192 KiB; at D = 64, 80 KiB.
struct alignas(1024) SharedStorage {
    Elem q[kChunks][kBM * kChunk];             // Q: chunk c holds columns 64c..64c+63
    Elem k[kStages][kChunks][kBN * kChunk];    // K tiles, the same chunking
    Elem v[kStages][kChunks][kBN * kChunk];    // V tiles, the same chunking
    uint64_t qFull;                            // mbarrier: Q has landed
    uint64_t kFull[kStages];                   // mbarrier: this stage's K has landed
    uint64_t vFull[kStages];                   // mbarrier: this stage's V has landed
    uint64_t empty[kStages];                   // mbarrier: both consumers are done with the stage
};
static_assert(sizeof(SharedStorage) == kQBytes + kStages * 2 * kKVBytes + 1024,
              "the tiles, then one 1024-byte block of barriers");
static_assert(kSmemBytes == sizeof(SharedStorage) + kSmemAlign,
              "kSmemBytes must be the storage plus the alignment slack");
// end snippet

// snippet: mbarrier
// The mbarrier, in raw PTX, as in the ladder (PTX ISA "Parallel
// Synchronization and Communication Instructions: mbarrier",
// https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #parallel-synchronization-and-communication-instructions-mbarrier).
// A phase completes when the expected arrivals have arrived and the
// transaction count, raised by expect-tx and lowered by the bytes the TMA
// writes, is back at zero; waiters on that phase's parity are released.
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

// A plain arrival (release semantics at CTA scope by default).
__device__ __forceinline__ void mbarArrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(bar)) : "memory");
}

// Spin until the phase with this parity has completed (try_wait.parity).
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
// One 4-D box copy, global -> shared, completing on an mbarrier by bytes
// (PTX ISA "cp.async.bulk.tensor"). Coordinates are elements, innermost
// first: (column of D, row of S, head, batch). A box that runs past S is
// zero-filled by the hardware and still counts its full size in bytes, so
// expect-tx is the same for every tile, ragged or not.
__device__ __forceinline__ void tmaLoad4d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                          int col, int row, int head, int batch) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile"
        ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(
            smemAddr(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(head), "r"(batch),
        "r"(smemAddr(bar))
        : "memory");
}

// A whole tile: kChunks boxes of 64 columns, all on one barrier.
template <int kRows>
__device__ __forceinline__ void tmaLoadTile(Elem (*chunks)[kRows * kChunk],
                                            const CUtensorMap* map, uint64_t* bar, int row,
                                            int head, int batch) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
        tmaLoad4d(chunks[c], map, bar, c * kChunk, row, head, batch);
    }
}
// end snippet

// snippet: pingpong
// The turn, on two named barriers (PTX ISA "bar, barrier",
// https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #parallel-synchronization-and-communication-instructions-bar-barrier):
// "bar.sync a, b" marks the calling warp's arrival at barrier a and waits
// until b threads have arrived; "bar.arrive a, b" marks the arrival and
// does not wait. Barrier a completes when b threads (a multiple of 32) have
// arrived, sync or arrive alike, and starts counting again.
// Consumer c waits on barrier kTurnBarrier + c; the other consumer arrives
// there. FlashAttention-3 calls the pair warp_scheduler_barrier_sync and
// warp_scheduler_barrier_arrive.
__device__ __forceinline__ void turnWait(int cons) {
    asm volatile("bar.sync %0, %1;" ::"r"(kTurnBarrier + cons), "n"(kTurnThreads) : "memory");
}
// Hand the turn to consumer `to` (the other one; or, once, to this one itself).
__device__ __forceinline__ void turnPass(int to) {
    asm volatile("bar.arrive %0, %1;" ::"r"(kTurnBarrier + to), "n"(kTurnThreads) : "memory");
}
// Each consumer waits n + 1 times for a CTA of n key tiles (once before its
// first S, then before each P V) and passes n + 1 turns: consumer 0 one to
// itself at the start and n to consumer 1 (one per S), consumer 1 n to
// consumer 0 and, after its loop, none: nobody waits for it. Consumer 0
// passes its last turn after its loop, for consumer 1's last P V. Every
// bar.sync meets one bar.arrive, and no barrier is left half-counted when
// the CTA exits. A second arrival on a barrier before its waiter's sync
// cannot happen: between two arrivals a consumer waits for its own turn,
// which the other gives only after its sync.
// end snippet

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
// -inf as a float, the same under nvcc and NVRTC (which has no INFINITY macro).
__device__ __forceinline__ float negInf() { return __int_as_float(0xff800000); }

// Registers an asynchronous wgmma reads or writes must not be moved by the
// compiler across the fence, commit and wait around it: an empty asm that
// "reads and writes" each one pins it in place (CUTLASS's
// warpgroup_fence_operand does the same).
template <int kN>
__device__ __forceinline__ void pinRegs(float (&r)[kN]) {
#pragma unroll
    for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// snippet: qk-wgmma
// A wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format",
// https://docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor):
// bits 13..0 start address >> 4, 29..16 leading byte offset >> 4, 45..32
// stride byte offset >> 4, 63..62 swizzle mode (1 = 128B).
// K-major (Q and K, as A and B of S = Q K^T; the ladder's layout): the stride
// byte offset steps from one 8-row group to the next, 1024 B; a k16 slice
// (32 B) never leaves a 128-byte row, so the leading byte offset is unused
// (1 is the customary filler). The next k16 slice starts 32 B further along
// the row, the k16 slice after four of them in the next chunk.
__device__ __forceinline__ uint64_t kMajorDesc(const void* smemPtr) {
    return uint64_t((smemAddr(smemPtr) & 0x3FFFFu) >> 4)  // start address
           | (uint64_t(1) << 16)                          // leading byte offset: unused
           | (uint64_t(1024 >> 4) << 32)                  // stride byte offset: 8 rows x 128 B
           | (uint64_t(1) << 62);                         // swizzle mode: 128B
}

// S (64 x kBN per consumer) = Q (its 64 rows x D) K^T (D x kBN): D / 16
// wgmmas m64nBNk16, accumulating from the first one's scale-d = 0.
// The immediates: scale-a = scale-b = 1, trans-a = trans-b = 0 (K-major).

// S += A * B^T, m64n64k16, A and B from shared memory (K-major both).
__device__ __forceinline__ void wgmmaSS64(float (&acc)[32], uint64_t descA, uint64_t descB,
                                          int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32" ATTN_AB "\n\t"
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

// S += A * B^T, m64n128k16, A and B from shared memory (K-major both).
__device__ __forceinline__ void wgmmaSS128(float (&acc)[64], uint64_t descA, uint64_t descB,
                                          int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %66, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32" ATTN_AB "\n\t"
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

template <int kN>
__device__ __forceinline__ void wgmmaSS(float (&acc)[kN / 2], uint64_t descA, uint64_t descB,
                                        int scaleD) {
    if constexpr (kN == 64) {
        wgmmaSS64(acc, descA, descB, scaleD);
    } else {
        wgmmaSS128(acc, descA, descB, scaleD);
    }
}

// One consumer's S for one K tile: issue, commit, pass the turn to the
// other consumer (its wgmmas queue behind these), wait for all of S.
__device__ __forceinline__ void qkTile(float (&s)[kSAccRegs], const SharedStorage& sm, int stage,
                                       int cons) {
    pinRegs(s);
    wgmmaFence();
#pragma unroll
    for (int ks = 0; ks < kHeadDim / kWgmmaK; ++ks) {
        const int c = ks / (kChunk / kWgmmaK);               // which 64-column chunk of D
        const int off = (ks % (kChunk / kWgmmaK)) * kWgmmaK;  // elements into its 128-byte row
        wgmmaSS<kBN>(s, kMajorDesc(&sm.q[c][cons * kWgmmaM * kChunk + off]),
                     kMajorDesc(&sm.k[stage][c][off]), ks > 0);
    }
    wgmmaCommit();
    turnPass(1 - cons);
    wgmmaWait<0>();
    pinRegs(s);
}
// end snippet

// snippet: causal-mask
// Accumulator fragment of wgmma .m64nNk16, FP32 D (PTX ISA "Register
// Fragments and Shared Memory Matrix Layouts", "Matrix Fragments for
// wgmma.mma_async .m64nNk16", https://docs.nvidia.com/cuda/
// parallel-thread-execution/index.html
// #asynchronous-warpgroup-level-matrix-register-fragment-wgmma-64n16):
// warp w of the warpgroup owns rows 16w..16w+15; thread lane of it holds,
// for each 8-column block j, s[4j], s[4j+1] at row lane/4, columns
// 8j + 2(lane%4) + {0, 1}, and s[4j+2], s[4j+3] at row lane/4 + 8, the
// same columns. So each thread holds two rows, and the four threads of a
// quad (lanes 4q..4q+3) share them.
// The key tiles a query tile needs: all of S, or, when causal, those up to
// its last row. The tiles above the diagonal are never loaded or computed:
// the producer and the consumers both stop here.
__device__ __forceinline__ int kvTileCount(int qTile, int seqLen, int causal) {
    const int kvEnd = causal ? min(seqLen, (qTile + 1) * kBM) : seqLen;
    return (kvEnd + kBN - 1) / kBN;
}

// A tile needs a mask only where it crosses the end of S (the keys the TMA
// zero-filled would score 0, not -inf) or, when causal, the diagonal; every
// other tile skips this.
__device__ __forceinline__ void maskTile(float (&s)[kSAccRegs], int col0, int row0, int seqLen,
                                         int causal) {
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int col = col0 + 8 * j + (e & 1);
            const int row = row0 + 8 * (e >> 1);
            if (col >= seqLen || (causal && col > row)) s[4 * j + e] = negInf();
        }
    }
}
// end snippet

// snippet: online-softmax
// 2^x in one instruction (PTX ISA "ex2": ex2.approx.ftz.f32, maximum
// relative error 2^-22 over the range; ex2(-inf) = +0).
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// The online softmax for one tile, in place: s becomes P (unnormalised, FP32).
// rowMax is each of the thread's two rows' running maximum of the raw
// scores; rowSum this thread's share of the running sum (its quad's four
// shares add up to the row's; they are added once, in the epilogue).
// Returns nothing: the factor that rescales O goes out through alpha.
__device__ __forceinline__ void softmaxTile(float (&s)[kSAccRegs], float (&rowMax)[2],
                                            float (&rowSum)[2], float (&alpha)[2]) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        // The tile's row maximum: this thread's columns, then its quad's.
        float mx = rowMax[r];
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j) {
            mx = fmaxf(mx, fmaxf(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]));
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        // A row with every key masked so far has max -inf; subtracting 0
        // keeps exp2's argument -inf (P = 0) instead of NaN.
        const float shift = mx == negInf() ? 0.0f : mx * kScaleLog2;
        // exp2(scaled old max - scaled new max): 0 on the first tile (old max -inf).
        alpha[r] = ex2(rowMax[r] * kScaleLog2 - shift);
        rowMax[r] = mx;
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j) {
            // P = 2^(S log2(e)/sqrt(D) - max log2(e)/sqrt(D)) = e^((S - max)/sqrt(D)):
            // one FMA and one ex2 per element.
            s[4 * j + 2 * r] = ex2(fmaf(s[4 * j + 2 * r], kScaleLog2, -shift));
            s[4 * j + 2 * r + 1] = ex2(fmaf(s[4 * j + 2 * r + 1], kScaleLog2, -shift));
            sum += s[4 * j + 2 * r] + s[4 * j + 2 * r + 1];
        }
        rowSum[r] = rowSum[r] * alpha[r] + sum;
    }
}

// O's rows rescaled by the same factors: O's fragment is the same layout
// (its "columns" are D's), so o[4j], o[4j+1] belong to row r = 0 and
// o[4j+2], o[4j+3] to row r = 1.
__device__ __forceinline__ void rescaleO(float (&o)[kOAccRegs], const float (&alpha)[2]) {
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j) {
        o[4 * j] *= alpha[0];
        o[4 * j + 1] *= alpha[0];
        o[4 * j + 2] *= alpha[1];
        o[4 * j + 3] *= alpha[1];
    }
}
// end snippet

// snippet: p-fragment
// The register A operand of wgmma .m64nNk16 with .f16 (or .bf16) inputs (PTX ISA,
// "Matrix Fragments for wgmma.mma_async .m64nNk16", the figure "WGMMA
// .m64nNk16 register fragment layout for matrix A"): four .b32 registers
// per thread, two halves each; warp w owns rows 16w..16w+15; a0,a1 are
// row lane/4, columns 2(lane%4) + {0,1}; a2,a3 row lane/4 + 8, the same
// columns; a4,a5 row lane/4, columns 8 + 2(lane%4) + {0,1}; a6,a7 row
// lane/4 + 8, those columns. That is exactly where the accumulator puts
// columns 16k..16k+15 of S (the causal-mask snippet's layout, 8-column
// blocks j = 2k and 2k+1): a_i = s[8k + i]. So P's k-th slice is the
// accumulator's eight floats 8k..8k+7, rounded to FP16 (BF16) in pairs, in
// order: no shuffle, no shared memory. __floats2half2_rn(x, y) (and
// __floats2bfloat162_rn in the BF16 build: toElem2) puts x in the low
// half, the lower column, as a .b32 A register holds it (lower index in
// the lower 16 bits). CUTLASS states the same identity in one line
// (cute/atom/mma_traits_sm90_gmma.hpp: "Register source layout for 16-bit
// value types: using ALayout_64x16 = CLayout_64x16;"): the A fragment of a
// 64 x 16 slice is the accumulator layout of a 64 x 16 tile.
__device__ __forceinline__ Elem2 toElem2(float lo, float hi) {
#if ATTN_BF16
    return __floats2bfloat162_rn(lo, hi);
#else
    return __floats2half2_rn(lo, hi);
#endif
}

// Two 16-bit halves of one .b32 register: lo in bits 15..0.
__device__ __forceinline__ uint32_t packHalf2(float lo, float hi) {
    Elem2 h = toElem2(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
}

__device__ __forceinline__ void pFragment(uint32_t (&p)[kPSlices][4], const float (&s)[kSAccRegs]) {
#pragma unroll
    for (int k = 0; k < kPSlices; ++k) {
#pragma unroll
        for (int i = 0; i < 4; ++i) p[k][i] = packHalf2(s[8 * k + 2 * i], s[8 * k + 2 * i + 1]);
    }
}
// end snippet

// O += P V with A from registers: "wgmma.mma_async.sync.aligned.shape.dtype
// .f16.f16 d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b"
// (.bf16.bf16 in the BF16 build: ATTN_AB)
// (the register-A form has no imm-trans-a).
// O += P * V, m64n64k16, A (P) from four registers, B (V) from shared memory, MN-major
// (imm-trans-b = 1).
__device__ __forceinline__ void wgmmaRS64(float (&acc)[32], const uint32_t (&a)[4],
                                          uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %37, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32" ATTN_AB "\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},\n\t"
        "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n\t}"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
          "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
          "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
          "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
          "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
          "+f"(acc[30]), "+f"(acc[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(scaleD));
}

// O += P * V, m64n128k16, A (P) from four registers, B (V) from shared memory, MN-major
// (imm-trans-b = 1).
__device__ __forceinline__ void wgmmaRS128(float (&acc)[64], const uint32_t (&a)[4],
                                          uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %69, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32" ATTN_AB "\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63},\n\t"
        "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n\t}"
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
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(scaleD));
}

// O += P * V, m64n256k16, A (P) from four registers, B (V) from shared memory, MN-major
// (imm-trans-b = 1).
__device__ __forceinline__ void wgmmaRS256(float (&acc)[128], const uint32_t (&a)[4],
                                          uint64_t descB, int scaleD) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %133, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32" ATTN_AB "\n\t"
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127},\n\t"
        "{%128, %129, %130, %131}, %132, p, 1, 1, 1;\n\t}"
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
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(scaleD));
}

template <int kN>
__device__ __forceinline__ void wgmmaRS(float (&acc)[kN / 2], const uint32_t (&a)[4],
                                        uint64_t descB, int scaleD) {
    if constexpr (kN == 64) {
        wgmmaRS64(acc, a, descB, scaleD);
    } else if constexpr (kN == 128) {
        wgmmaRS128(acc, a, descB, scaleD);
    } else {
        wgmmaRS256(acc, a, descB, scaleD);
    }
}

// snippet: pv-wgmma
// V as the B operand of O += P V: V's tile is kBN keys x D, row-major, so
// along the product's K (the keys) a row is 128 B of N (D) values: the
// operand is "MN-major", which FP16 (and BF16) wgmma reads with imm-trans-b = 1 (PTX
// ISA "wgmma.mma_async": the transpose immediates are valid for .f16 and
// .bf16 only). Its descriptor, for the 128B swizzle MN-major canonical
// layout ((8 x 8 halves, n), (8 rows, k)) (CUTLASS cute/atom/
// mma_traits_sm90_gmma.hpp, make_gmma_desc<Major::MN>, "LayoutType::B128:
// Swizzle<3,4,3> o smem_ptr o ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))"):
// leading byte offset = the step from one 64-wide block of N to the next
// (our next chunk, kBN rows x 128 B further), stride byte offset = the
// step from one 8-key group to the next (8 x 128 B = 1024 B). The k-th
// slice of 16 keys starts 16 rows (2048 B, two whole swizzle atoms) down.
__device__ __forceinline__ uint64_t mnMajorDesc(const void* smemPtr) {
    return uint64_t((smemAddr(smemPtr) & 0x3FFFFu) >> 4)  // start address
           | (uint64_t((kBN * kChunk * 2) >> 4) << 16)     // leading byte offset: next D chunk
           | (uint64_t(1024 >> 4) << 32)                   // stride byte offset: 8 keys x 128 B
           | (uint64_t(1) << 62);                          // swizzle mode: 128B
}
static_assert(((kBN * kChunk * 2) >> 4) < (1 << 14), "the leading byte offset field has 14 bits");

// wgmmaRS<N> (above this listing, one inline-asm wrapper per N) is the
// register-A form, "wgmma.mma_async.sync.aligned.shape.dtype.f16.f16 d, a,
// b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b": A (P) in four
// 32-bit registers, B (V) by descriptor, imm-trans-b = 1; there is no
// imm-trans-a, since A in registers has one layout.

// One consumer's O += P V for one V tile: kBN / 16 wgmmas m64nDk16. The
// fence orders this thread's register writes (the rescaled O, the packed
// P) before the asynchronous wgmmas read them (PTX ISA "wgmma.fence":
// required before a wgmma whose accumulator or A registers were written
// by other instructions).
__device__ __forceinline__ void pvTile(float (&o)[kOAccRegs], uint32_t (&p)[kPSlices][4],
                                       const SharedStorage& sm, int stage) {
    pinRegs(o);
#pragma unroll
    for (int k = 0; k < kPSlices; ++k) {
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(p[k][i])::"memory");
    }
    wgmmaFence();
#pragma unroll
    for (int k = 0; k < kPSlices; ++k) {
        if constexpr (kPvSplit) {
            // Chunk c of D is the accumulator's 8-column blocks 8c..8c+7:
            // registers 32c..32c+31, contiguous, an m64n64 accumulator.
#pragma unroll
            for (int c = 0; c < kChunks; ++c) {
                wgmmaRS<kChunk>(*reinterpret_cast<float(*)[kChunk / 2]>(&o[c * kChunk / 2]), p[k],
                                mnMajorDesc(&sm.v[stage][c][k * kWgmmaK * kChunk]), 1);
            }
        } else {
            wgmmaRS<kHeadDim>(o, p[k], mnMajorDesc(&sm.v[stage][0][k * kWgmmaK * kChunk]), 1);
        }
    }
    wgmmaCommit();
    wgmmaWait<0>();
    pinRegs(o);
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

// O = softmax(Q K^T / sqrt(D)) V for one 128-row query tile of one (batch,
// head). Launch contract: see the header. extern "C" keeps the name
// unmangled for CuPy.
extern "C" __global__ void __launch_bounds__(kThreadsPerBlock, 1)
    attn89Pingpong(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                  const __grid_constant__ CUtensorMap tmV, Elem* __restrict__ o,
                  float* __restrict__ lse, int seqLen, int heads, int causal) {
    extern __shared__ uint8_t smemRaw[];
    SharedStorage& s = *reinterpret_cast<SharedStorage*>(
        (reinterpret_cast<uintptr_t>(smemRaw) + kSmemAlign - 1) & ~uintptr_t(kSmemAlign - 1));

    const int t = static_cast<int>(threadIdx.x);
    const int wg = t / 128;  // 0 produces, 1 and 2 consume
    const int wt = t % 128;  // thread within its warpgroup
    COURSE_TL_INIT(wg, wt == 0);
    // Causal tiles differ in length (tile i needs i + 1 K tiles): start the
    // longest first, so the short ones fill the last wave.
    const int qTile = causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x)
                             : static_cast<int>(blockIdx.x);
    const int head = static_cast<int>(blockIdx.y);
    const int batch = static_cast<int>(blockIdx.z);
    const int kvTiles = kvTileCount(qTile, seqLen, causal);

    if (t == 0) {
        mbarInit(&s.qFull, 1);
        for (int i = 0; i < kStages; ++i) {
            mbarInit(&s.kFull[i], 1);            // the producer's arrive.expect_tx
            mbarInit(&s.vFull[i], 1);
            mbarInit(&s.empty[i], kConsumers);  // one release per consumer warpgroup
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        // snippet: producer
        // Q once, then K and V of each tile into the ring, K and V on
        // barriers of their own so that S = Q K^T can start before V lands.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
        if (wt == 0) {
            mbarArriveExpectTx(&s.qFull, kQBytes);
            tmaLoadTile<kBM>(s.q, &tmQ, &s.qFull, qTile * kBM, head, batch);
            int stage = 0;
            uint32_t phase = 0;  // flips each time the ring wraps
            for (int kt = 0; kt < kvTiles; ++kt) {
                // The consumers' release of this stage's previous tile
                // (round 0: the phase before phase 0 counts as complete).
                COURSE_TL(TL_WAIT_EMPTY, stage);
                mbarWait(&s.empty[stage], phase ^ 1);
                COURSE_TL(TL_LOAD, stage);
                mbarArriveExpectTx(&s.kFull[stage], kKVBytes);
                tmaLoadTile<kBN>(s.k[stage], &tmK, &s.kFull[stage], kt * kBN, head, batch);
                mbarArriveExpectTx(&s.vFull[stage], kKVBytes);
                tmaLoadTile<kBN>(s.v[stage], &tmV, &s.vFull[stage], kt * kBN, head, batch);
                if (++stage == kStages) {
                    stage = 0;
                    phase ^= 1;
                }
            }
        }
        // end snippet
    } else {
        // snippet: consumer
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
        const int cons = wg - 1;  // which 64 rows of the query tile
        const int warp = wt / 32;
        const int lane = wt % 32;
        // The thread's two rows (the fragment layout: causal-mask snippet).
        const int row0 = qTile * kBM + cons * kWgmmaM + 16 * warp + lane / 4;
        float oAcc[kOAccRegs];
#pragma unroll
        for (int i = 0; i < kOAccRegs; ++i) oAcc[i] = 0.0f;
        float rowMax[2] = {negInf(), negInf()};
        float rowSum[2] = {0.0f, 0.0f};
        mbarWait(&s.qFull, 0);
        // Consumer 0 takes the first turn: its own arrival, which its own
        // bar.sync then completes. Consumer 1 waits until consumer 0 has
        // issued its first S.
        if (cons == 0) turnPass(0);
        COURSE_TL(TL_SYNC, 0);
        turnWait(cons);
        int stage = 0;
        uint32_t phase = 0;
        for (int kt = 0; kt < kvTiles; ++kt) {
            float sAcc[kSAccRegs];
            uint32_t p[kPSlices][4];
            float alpha[2];
            COURSE_TL(TL_WAIT_FULL, stage);
            mbarWait(&s.kFull[stage], phase);
            COURSE_TL(TL_MMA, stage);
            qkTile(sAcc, s, stage, cons);
            const int col0 = kt * kBN + 2 * (lane % 4);
            const bool ragged = (kt + 1) * kBN > seqLen;
            const bool diagonal = causal && (kt + 1) * kBN - 1 > qTile * kBM + cons * kWgmmaM;
            if (ragged || diagonal) maskTile(sAcc, col0, row0, seqLen, causal);
            softmaxTile(sAcc, rowMax, rowSum, alpha);
            rescaleO(oAcc, alpha);
            pFragment(p, sAcc);
            // The timeline's kinds are the ladder's: MMA spans S = Q K^T and
            // the softmax, MMA_WAIT the wait for V and O += P V, SYNC the
            // wait for the turn between them.
            COURSE_TL(TL_MMA_WAIT, stage);
            mbarWait(&s.vFull[stage], phase);
            // The turn: the other consumer has issued its S (and, from the
            // second tile on, its P V) since this one passed it.
            COURSE_TL(TL_SYNC, stage);
            turnWait(cons);
            COURSE_TL(TL_MMA_WAIT, stage);
            pvTile(oAcc, p, s, stage);
            // Both wgmmas of this tile have completed: the stage goes back.
            if (wt == 0) {
                mbarArrive(&s.empty[stage]);
                COURSE_TL(TL_RELEASE, stage);
            }
            if (++stage == kStages) {
                stage = 0;
                phase ^= 1;
            }
        }
        // Consumer 0's last turn goes to consumer 1's last P V; consumer 1's
        // would have no one to wait for it.
        if (cons == 0) turnPass(1);
        // end snippet

        // snippet: epilogue
        // The row sums: each thread holds a quarter of its rows' columns,
        // so the quad adds its four shares. Then O / sum, rounded to FP16 (BF16),
        // two adjacent columns per 4-byte store, and the log-sum-exp in
        // natural-log units: ln(sum) + max / sqrt(D) = (log2(sum) + max
        // log2(e) / sqrt(D)) ln 2. Rows past S (the last tile's zero-filled
        // queries) are computed and dropped.
        COURSE_TL(TL_EPI, 0);
        const size_t headBase = (static_cast<size_t>(batch) * heads + head) * seqLen;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float sum = rowSum[r];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const int row = row0 + 8 * r;
            if (row >= seqLen) continue;
            const float inv = 1.0f / sum;
            Elem* out = o + (headBase + row) * kHeadDim + 2 * (lane % 4);
#pragma unroll
            for (int j = 0; j < kHeadDim / 8; ++j) {
                *reinterpret_cast<Elem2*>(out + 8 * j) =
                    toElem2(oAcc[4 * j + 2 * r] * inv, oAcc[4 * j + 2 * r + 1] * inv);
            }
            if (lane % 4 == 0) {
                lse[headBase + row] = (__log2f(sum) + rowMax[r] * kScaleLog2) * 0.6931471805599453f;
            }
        }
        // end snippet
    }
    COURSE_TL(TL_END, 0);
}

#ifndef __CUDACC_RTC__
// snippet: tensor-maps
// 1 in the BF16 build: the host's maps, check and PASS line follow it (a
// host constant: under NVRTC a namespace-scope constant becomes a device
// global, and the FP16 build's cubin stays what it was).
constexpr int kBf16 = ATTN_BF16;
// The maps' element type: the TMA copies bytes, but the type must match
// the element size (and names what the tensor holds).
constexpr CUtensorMapDataType kMapType =
    kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;

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

// A B x H x S x D FP16 (BF16) tensor as a 4-D map, innermost first: {D, S, H, B}.
// The box is 64 columns (one 128-byte swizzle row) by boxRows rows of one
// head; a box that runs past S reads zeros there (OOB fill NONE), never the
// next head's rows, because S is a dimension of the map, not folded into
// the rows.
static CUtensorMap encodeBhsd(PFN_cuTensorMapEncodeTiled_v12000 encode, const Elem* base,
                              int batch, int heads, int seqLen, int boxRows) {
    CUtensorMap map{};
    const cuuint64_t dims[4] = {static_cast<cuuint64_t>(kHeadDim),
                                static_cast<cuuint64_t>(seqLen),
                                static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
    const cuuint64_t row = static_cast<cuuint64_t>(kHeadDim) * sizeof(Elem);
    const cuuint64_t strides[3] = {row, row * seqLen, row * seqLen * heads};
    const cuuint32_t box[4] = {static_cast<cuuint32_t>(kChunk), static_cast<cuuint32_t>(boxRows),
                               1, 1};
    const cuuint32_t elemStrides[4] = {1, 1, 1, 1};
    const CUresult r = encode(&map, kMapType, 4,
                              const_cast<Elem*>(base), dims, strides, box, elemStrides,
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
// Inputs are multiples of 1/8 in [-1, 1]: exact in FP16, and every product
// of two is exact in FP32, so S is exact up to FP32 sums. Then two
// roundings to FP16 bound O's error: P (at most 2^-11 relative per
// element, so at most 2^-11 max|V| = 4.9e-4 on a weighted mean of V) and
// O itself (2^-11 relative, 2^-12 absolute below 1). 4e-3 with a floor of 1
// is four times their sum: an indexing, fragment, swizzle or race error
// lands far above it. BF16 (-DATTN_BF16=1): the inputs are exact too (4
// significant bits; BF16 has 8), and the same two roundings are 8 times
// coarser (2^-8 relative, not 2^-11): 2^-8 + 2^-9 = 5.9e-3, and four times
// it, rounded up as for FP16, is 8 x 4e-3 = 3.2e-2. LSE is FP32 throughout
// in both (ex2 and lg2 approximations at 2^-22): 1e-4 absolute below 1,
// relative above.
constexpr double kRelTolerance = kBf16 ? 3.2e-2 : 4e-3;
constexpr double kLseTolerance = 1e-4;
// end snippet

// The float64 reference for one row: scores over every allowed key, the
// softmax, O's row and the log-sum-exp.
static void referenceRow(const std::vector<float>& q, const std::vector<float>& k,
                         const std::vector<float>& v, size_t headBase, int seqLen, int row,
                         bool causal, std::vector<double>& outRow, double& outLse) {
    const int keys = causal ? row + 1 : seqLen;
    std::vector<double> score(keys);
    double mx = -INFINITY;
    const float* qr = &q[(headBase + row) * kHeadDim];
    for (int j = 0; j < keys; ++j) {
        const float* kr = &k[(headBase + j) * kHeadDim];
        double acc = 0.0;
        for (int d = 0; d < kHeadDim; ++d) acc += static_cast<double>(qr[d]) * kr[d];
        score[j] = acc / std::sqrt(static_cast<double>(kHeadDim));
        mx = std::max(mx, score[j]);
    }
    double sum = 0.0;
    std::fill(outRow.begin(), outRow.end(), 0.0);
    for (int j = 0; j < keys; ++j) {
        const double p = std::exp(score[j] - mx);
        sum += p;
        const float* vr = &v[(headBase + j) * kHeadDim];
        for (int d = 0; d < kHeadDim; ++d) outRow[d] += p * vr[d];
    }
    for (int d = 0; d < kHeadDim; ++d) outRow[d] /= sum;
    outLse = mx + std::log(sum);
}

// Elements to and from float on the host (both types convert exactly to float).
static Elem toElem(float x) {
#if ATTN_BF16
    return __float2bfloat16(x);
#else
    return __float2half(x);
#endif
}
static float toFloat(Elem x) {
#if ATTN_BF16
    return __bfloat162float(x);
#else
    return toFloat(x);
#endif
}

// Every element of O and LSE is checked for the NaN poison the launch
// started from; the reference is compared on every row up to 256 rows per
// head, and above that on 64 rows per head spread over every tile and warp
// position, plus the last row (the ragged edge).
static bool checkAttention(const std::vector<Elem>& qh, const std::vector<Elem>& kh,
                           const std::vector<Elem>& vh, const std::vector<Elem>& oOut,
                           const std::vector<float>& lseOut, int batch, int heads, int seqLen,
                           bool causal) {
    const size_t rows = static_cast<size_t>(batch) * heads * seqLen;
    for (size_t i = 0; i < rows * kHeadDim; ++i) {
        if (std::isnan(toFloat(oOut[i]))) {
            std::fprintf(stderr, "FAIL: O row %zu column %zu was never written (still NaN)\n",
                         i / kHeadDim, i % kHeadDim);
            return false;
        }
    }
    for (size_t i = 0; i < rows; ++i) {
        if (std::isnan(lseOut[i])) {
            std::fprintf(stderr, "FAIL: LSE row %zu was never written (still NaN)\n", i);
            return false;
        }
    }
    std::vector<float> q(rows * kHeadDim), k(rows * kHeadDim), v(rows * kHeadDim);
    for (size_t i = 0; i < rows * kHeadDim; ++i) {
        q[i] = toFloat(qh[i]);
        k[i] = toFloat(kh[i]);
        v[i] = toFloat(vh[i]);
    }
    std::vector<int> checkRows;
    if (seqLen <= 256) {
        for (int i = 0; i < seqLen; ++i) checkRows.push_back(i);
    } else {
        const int step = seqLen / 64;
        for (int i = 0; i < 64; ++i) checkRows.push_back(i * step + (i * 37) % step);
        checkRows.push_back(seqLen - 1);
    }
    std::vector<double> ref(kHeadDim);
    double worst = 0.0, worstLse = 0.0;
    for (int b = 0; b < batch; ++b) {
        for (int h = 0; h < heads; ++h) {
            const size_t headBase = (static_cast<size_t>(b) * heads + h) * seqLen;
            for (int row : checkRows) {
                double refLse = 0.0;
                referenceRow(q, k, v, headBase, seqLen, row, causal, ref, refLse);
                for (int d = 0; d < kHeadDim; ++d) {
                    const double got = toFloat(oOut[(headBase + row) * kHeadDim + d]);
                    const double rel = std::fabs(got - ref[d]) / std::max(std::fabs(ref[d]), 1.0);
                    worst = std::max(worst, rel);
                    if (!(rel <= kRelTolerance)) {
                        std::fprintf(stderr,
                                     "FAIL at O[%d][%d][%d][%d]: got %g, ref %g, rel error %g > %g\n",
                                     b, h, row, d, got, ref[d], rel, kRelTolerance);
                        return false;
                    }
                }
                const double got = lseOut[headBase + row];
                const double rel = std::fabs(got - refLse) / std::max(std::fabs(refLse), 1.0);
                worstLse = std::max(worstLse, rel);
                if (!(rel <= kLseTolerance)) {
                    std::fprintf(stderr, "FAIL at LSE[%d][%d][%d]: got %.9g, ref %.9g, error %g > %g\n",
                                 b, h, row, got, refLse, rel, kLseTolerance);
                    return false;
                }
            }
        }
    }
    std::printf("attn89 B=%d H=%d S=%d D=%d%s %s: PASS, max rel error O %g (tolerance %g), "
                "LSE %g (tolerance %g)\n",
                batch, heads, seqLen, kHeadDim, kBf16 ? " BF16" : "",
                causal ? "causal" : "non-causal", worst,
                kRelTolerance, worstLse, kLseTolerance);
    return true;
}

// One shape: inputs from the shape's own seed, poisoned outputs, one launch, the check.
static bool runShape(PFN_cuTensorMapEncodeTiled_v12000 encode, int batch, int heads, int seqLen,
                     bool causal) {
    const size_t rows = static_cast<size_t>(batch) * heads * seqLen;
    const size_t elems = rows * kHeadDim;
    std::vector<Elem> hQ(elems), hK(elems), hV(elems), hO(elems);
    std::vector<float> hLse(rows);
    uint32_t state = 20261205u + 7u * batch + 13u * heads + 31u * seqLen;
    for (size_t i = 0; i < 3 * elems; ++i) {
        state = state * 1664525u + 1013904223u;
        const float x = static_cast<float>(static_cast<int>(state >> 24) % 17 - 8) / 8.0f;
        (i < elems ? hQ[i] : i < 2 * elems ? hK[i - elems] : hV[i - 2 * elems]) = toElem(x);
    }
    Elem *dQ = nullptr, *dK = nullptr, *dV = nullptr, *dO = nullptr;
    float* dLse = nullptr;
    CUDA_CHECK(cudaMalloc(&dQ, elems * sizeof(Elem)));
    CUDA_CHECK(cudaMalloc(&dK, elems * sizeof(Elem)));
    CUDA_CHECK(cudaMalloc(&dV, elems * sizeof(Elem)));
    CUDA_CHECK(cudaMalloc(&dO, elems * sizeof(Elem)));
    CUDA_CHECK(cudaMalloc(&dLse, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dQ, hQ.data(), elems * sizeof(Elem), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dK, hK.data(), elems * sizeof(Elem), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dV, hV.data(), elems * sizeof(Elem), cudaMemcpyHostToDevice));
    // Poison: 0xFFFF is a NaN in FP16 and in BF16, 0xFFFFFFFF one in FP32.
    CUDA_CHECK(cudaMemset(dO, 0xFF, elems * sizeof(Elem)));
    CUDA_CHECK(cudaMemset(dLse, 0xFF, rows * sizeof(float)));

    const CUtensorMap tmQ = encodeBhsd(encode, dQ, batch, heads, seqLen, kBM);
    const CUtensorMap tmK = encodeBhsd(encode, dK, batch, heads, seqLen, kBN);
    const CUtensorMap tmV = encodeBhsd(encode, dV, batch, heads, seqLen, kBN);
    const dim3 grid((seqLen + kBM - 1) / kBM, heads, batch);
    attn89Pingpong<<<grid, kThreadsPerBlock, kSmemBytes>>>(tmQ, tmK, tmV, dO, dLse, seqLen, heads,
                                                          causal ? 1 : 0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hO.data(), dO, elems * sizeof(Elem), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hLse.data(), dLse, rows * sizeof(float), cudaMemcpyDeviceToHost));
    const bool ok = checkAttention(hQ, hK, hV, hO, hLse, batch, heads, seqLen, causal);
    CUDA_CHECK(cudaFree(dQ));
    CUDA_CHECK(cudaFree(dK));
    CUDA_CHECK(cudaFree(dV));
    CUDA_CHECK(cudaFree(dO));
    CUDA_CHECK(cudaFree(dLse));
    return ok;
}

int main(int argc, char** argv) {
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9 || prop.minor != 0) {
        std::fprintf(stderr,
                     "%s is CC %d.%d. This program needs CC 9.0 (Hopper): "
                     "wgmma is sm_90a-only and no Blackwell card has it.\n",
                     prop.name, prop.major, prop.minor);
        return EXIT_FAILURE;
    }
    const PFN_cuTensorMapEncodeTiled_v12000 encode = getEncodeTiled();
    CUDA_CHECK(cudaFuncSetAttribute(attn89Pingpong, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kSmemBytes));
    if (argc == 5) {
        const int b = std::atoi(argv[1]), h = std::atoi(argv[2]), sl = std::atoi(argv[3]);
        if (b < 1 || h < 1 || sl < kMinSeqLen || b > 65535 || h > 65535) {
            std::fprintf(stderr, "B, H and S must be positive (B, H at most 65535); got %s %s %s\n",
                         argv[1], argv[2], argv[3]);
            return EXIT_FAILURE;
        }
        return runShape(encode, b, h, sl, std::atoi(argv[4]) != 0) ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    if (argc != 1) {
        std::fprintf(stderr, "usage: %s [B H S causal]\n", argv[0]);
        return EXIT_FAILURE;
    }
    // Whole tiles, one ragged key tile, a single row, one row past a tile.
    const int shapes[][3] = {{1, 2, 128}, {1, 2, 1000}, {2, 3, 1}, {1, 2, 129}, {2, 4, 4097}};
    bool ok = true;
    for (const auto& sh : shapes) {
        for (int causal = 0; causal < 2; ++causal) {
            ok = runShape(encode, sh[0], sh[1], sh[2], causal != 0) && ok;
        }
    }
    std::printf(ok ? "ALL PASS\n" : "SOME FAILED\n");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif  // __CUDACC_RTC__
