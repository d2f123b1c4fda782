// SPDX-License-Identifier: MIT
// cross_iteration.cu's reads, three iterations unrolled (no loop): compiles clean (no C75xx).
// So ptxas's rule is not the reads themselves but a group pending across a loop's back-edge.
#include <cuda/std/cstdint>
using cuda::std::uint64_t; using cuda::std::uint32_t;
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
__device__ __forceinline__ void fop(float (&a)[64]) {  // CUTLASS's warpgroup_fence_operand
    for (int r = 0; r < 64; ++r) asm volatile("" : "+f"(a[r])::"memory");
}
__device__ __forceinline__ void add(float (&t)[64], const float (&a)[64]) { for (int r = 0; r < 64; ++r) t[r] += a[r]; }
#define ISSUE(X) do { fop(X); wgmmaFence(); wgmmaM64N128K32E4M3(X, da, db, 0); wgmmaCommit(); fop(X); } while (0)
extern "C" __global__ void __launch_bounds__(128, 1) k(float* out, int n, uint64_t da, uint64_t db) {
    float A[64], B[64], T[64];
    for (int r = 0; r < 64; ++r) T[r] = 0.f;
    ISSUE(A);
#pragma unroll
    for (int i = 0; i < 3; ++i) {
        ISSUE(B); wgmmaWait<1>(); fop(A); add(T, A);
        ISSUE(A); wgmmaWait<1>(); fop(B); add(T, B);
    }
    wgmmaWait<0>(); fop(A); add(T, A);
    for (int r = 0; r < 64; ++r) out[r * 128 + threadIdx.x] = T[r];
}
