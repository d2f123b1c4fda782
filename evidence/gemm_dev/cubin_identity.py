"""Every existing build of Day 86's kernel against another version of the kernel file, byte for byte.

Usage (no GPU needed; nvcc on PATH for the first half, NVRTC through the course for the second):
    PYTHONPATH=. python evidence/gemm_dev/cubin_identity.py OLD_KERNEL_FILE
e.g. OLD_KERNEL_FILE from ``git show main:kernels/gemm7_shapes.cu > /tmp/old.cu``. Compiles the 48
builds (BM 128/64 x BN 256/128/64 x cluster 1/2 x deterministic 0/1 x Stream-K 0/1) from both files
with nvcc (-cubin) and with NVRTC (``compile_offline``), and prints how many cubins are identical.
Exit status 1 if any differs.
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from course.kernel.compile import compile_offline
from course.lessons import get_lesson

NVCC = ["nvcc", "-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-cubin"]
BUILDS = [
    {"GEMM_BM": bm, "GEMM_BN": bn, "GEMM_CLUSTER": c, "GEMM_DETERMINISTIC": d, "GEMM_STREAMK": sk}
    for bm, bn, c, d, sk in itertools.product((128, 64), (256, 128, 64), (1, 2), (0, 1), (0, 1))
]


def nvcc_cubin(src: Path, flags: dict[str, int], out: Path) -> bytes:
    subprocess.run([*NVCC, *(f"-D{k}={v}" for k, v in flags.items()), "-o", str(out), str(src)], check=True)
    return out.read_bytes()


def main() -> int:
    lesson = get_lesson("day86")
    old = Path(sys.argv[1]).resolve()
    twin = lesson.kernel_path.with_name("gemm7_identity_old.cu")  # NVRTC reads kernels/ only
    shutil.copyfile(old, twin)
    try:
        before = dataclasses.replace(lesson, kernel_file=twin.name)
        same = {"nvcc": 0, "NVRTC": 0}
        with tempfile.TemporaryDirectory() as tmp:
            for f in BUILDS:
                equal = {
                    "nvcc": nvcc_cubin(lesson.kernel_path, f, Path(tmp) / "a.cubin")
                    == nvcc_cubin(old, f, Path(tmp) / "b.cubin"),
                    "NVRTC": compile_offline(lesson, defines=f).cubin
                    == compile_offline(before, defines=f).cubin,
                }
                for tool, same_bytes in equal.items():
                    same[tool] += same_bytes
                    if not same_bytes:
                        print(f"differs ({tool}):", f)
    finally:
        twin.unlink()
    print(f"nvcc: {same['nvcc']} of {len(BUILDS)} cubins identical; NVRTC: {same['NVRTC']} of {len(BUILDS)}")
    return 0 if same["nvcc"] == same["NVRTC"] == len(BUILDS) else 1


if __name__ == "__main__":
    sys.exit(main())
