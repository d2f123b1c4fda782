"""Compile the GEMM ladder kernels with NVRTC (cuda-python), no GPU needed.

Usage: python tools/gemm_dev/nvrtc_check.py [-DGEMM_DIM=N] kernels/gemm1_tma.cu ...

Builds each file for sm_90a with -std=c++17 and the include dirs the course
uses (CuPy's libcu++ and the CUDA runtime wheel's headers), with ptxas
verbose output, and prints the NVRTC log (ptxas registers, spills and any
wgmma serialization warnings). Exit status 1 if any file fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import cupy
from cuda.bindings import nvrtc


def include_dirs() -> list[str]:
    cccl = Path(cupy.__file__).parent / "_core" / "include" / "cupy" / "_cccl" / "libcudacxx"
    import nvidia.cuda_runtime as rt

    runtime = Path(list(rt.__path__)[0]) / "include"
    return [f"-I{cccl}", f"-I{runtime}"]


def compile_one(path: Path, extra: list[str]) -> bool:
    src = path.read_bytes()
    err, prog = nvrtc.nvrtcCreateProgram(src, path.name.encode(), 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    opts = ["-std=c++17", "--gpu-architecture=sm_90a", "--ptxas-options=-v", *include_dirs(), *extra]
    (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    buf = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, buf)
    log = buf.rstrip(b"\x00 ").decode(errors="replace")
    ok = res == nvrtc.nvrtcResult.NVRTC_SUCCESS
    if ok:
        _, csize = nvrtc.nvrtcGetCUBINSize(prog)
        ok = csize > 0
    nvrtc.nvrtcDestroyProgram(prog)
    _, major, minor = nvrtc.nvrtcVersion()
    print(f"== {path} NVRTC {major}.{minor} {' '.join(extra)}: {'OK' if ok else 'FAILED'}")
    print(log)
    return ok


def main() -> int:
    extra = [a for a in sys.argv[1:] if a.startswith("-")]
    files = [Path(a) for a in sys.argv[1:] if not a.startswith("-")]
    ok = all([compile_one(f, extra) for f in files])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
