"""Every existing build of Day 86's (or Day 87's) kernel against another version of the kernel file, byte for byte.

Usage (no GPU needed; nvcc on PATH for the first half, NVRTC through the course for the second):
    PYTHONPATH=. python evidence/gemm_dev/cubin_identity.py OLD_KERNEL_FILE [LESSON]
e.g. OLD_KERNEL_FILE from ``git show main:kernels/gemm7_shapes.cu > /tmp/old.cu``. LESSON is day86 (the
default: the 48 builds BM 128/64 x BN 256/128/64 x cluster 1/2 x deterministic 0/1 x Stream-K 0/1) or
day87 (``gemm8_fp8.cu``: its 12 builds before issue 40's larger tiles, timeline builds included).
Compiles each build from both files with nvcc (-cubin; both from a folder holding the file as
``kernels/NAME``, since nvcc records the path it was given) and with NVRTC (``compile_offline``), and
prints how many cubins are identical. Exit status 1 if any differs.
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
_P = {"GEMM_BN": 128, "GEMM_PROMOTE": 1}
BUILDS: dict[str, list[dict[str, int]]] = {
    "day86": [
        {"GEMM_BM": bm, "GEMM_BN": bn, "GEMM_CLUSTER": c, "GEMM_DETERMINISTIC": d, "GEMM_STREAMK": sk}
        for bm, bn, c, d, sk in itertools.product((128, 64), (256, 128, 64), (1, 2), (0, 1), (0, 1))
    ],
    "day87": [
        {},
        {"GEMM_BN": 256, "GEMM_CLUSTER": 1},
        {"GEMM_BN": 128},
        {"GEMM_BN": 128, "GEMM_CLUSTER": 1},
        _P,
        {**_P, "GEMM_CLUSTER": 1},
        {**_P, "GEMM_BLOCK_SCALES": 1},
        {"GEMM_SETMAXNREG": 0},
        {"COURSE_TIMELINE": 1},
        {**_P, "COURSE_TIMELINE": 1},
        {**_P, "GEMM_PROMOTE_PINGPONG": 1},
        {**_P, "GEMM_PROMOTE_PINGPONG": 1, "GEMM_CLUSTER": 1},
    ],
}


def nvcc_cubin(src: Path, flags: dict[str, int], out: Path) -> bytes:
    # from a folder holding the file as kernels/NAME: the same relative path for both versions
    with tempfile.TemporaryDirectory() as where:
        (Path(where) / "kernels").mkdir()
        shutil.copyfile(src, Path(where) / "kernels" / src.name)
        subprocess.run(
            [*NVCC, *(f"-D{k}={v}" for k, v in flags.items()), "-o", str(out), f"kernels/{src.name}"],
            check=True,
            cwd=where,
        )
    return out.read_bytes()


def main() -> int:
    lesson = get_lesson(sys.argv[2] if len(sys.argv) > 2 else "day86")
    builds = BUILDS[lesson.id]
    old = Path(sys.argv[1]).resolve()
    # NVRTC reads kernels/ only
    twin = lesson.kernel_path.with_name(lesson.kernel_path.stem + "_identity_old.cu")
    shutil.copyfile(old, twin)
    try:
        before = dataclasses.replace(lesson, kernel_file=twin.name)
        same = {"nvcc": 0, "NVRTC": 0}
        with tempfile.TemporaryDirectory() as tmp:
            for f in builds:
                equal = {
                    "nvcc": nvcc_cubin(lesson.kernel_path, f, Path(tmp) / "a.cubin")
                    == nvcc_cubin(twin_named(old, lesson.kernel_path.name, tmp), f, Path(tmp) / "b.cubin"),
                    "NVRTC": compile_offline(lesson, defines=f).cubin
                    == compile_offline(before, defines=f).cubin,
                }
                for tool, same_bytes in equal.items():
                    same[tool] += same_bytes
                    if not same_bytes:
                        print(f"differs ({tool}):", f)
    finally:
        twin.unlink()
    print(f"nvcc: {same['nvcc']} of {len(builds)} cubins identical; NVRTC: {same['NVRTC']} of {len(builds)}")
    return 0 if same["nvcc"] == same["NVRTC"] == len(builds) else 1


def twin_named(old: Path, name: str, tmp: str) -> Path:
    """The old file under the kernel's own name (nvcc records it), in a folder of its own."""
    folder = Path(tmp) / "old"
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(old.read_bytes())
    return folder / name


if __name__ == "__main__":
    sys.exit(main())
