// A reduced kernel (evidence/gemm_dev/fp8wide/ptxas.sh compiles it): 48 floats kept live after
// setmaxnreg.dec to 24. ptxas fits the code after the instruction into 24 registers and spills the
// rest, so a build that reports 0 spills keeps its producer under its setmaxnreg ceiling.
extern "C" __global__ void __launch_bounds__(384, 1) k(float* out, const float* in, int n) {
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");
        float v[48];
#pragma unroll
        for (int i = 0; i < 48; ++i) v[i] = in[threadIdx.x + i * n];
        float s = 0.f;
        for (int r = 0; r < n; ++r) {
#pragma unroll
            for (int i = 0; i < 48; ++i) { v[i] = v[i] * v[(i + 1) % 48] + 1.0f; }
        }
#pragma unroll
        for (int i = 0; i < 48; ++i) s += v[i];
        out[threadIdx.x] = s;
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
        out[threadIdx.x] = 1.0f;
    }
}
