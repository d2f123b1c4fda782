"""Issue 40: the promotion's FADDs with the SASS scheduling hint ("yield") set or cleared, measured.

A one-off development script (session 19), not part of the course. DeepGEMM rewrites the control bits of
the FFMAs of its promotion in the cubin after compiling (deep_gemm/jit/interleave_ffma.py: it flips the
"reuse" and "yield" bits, 0x0800200000000000 of an instruction's high word, on runs of 16 or more FFMAs)
and reports 10%+ on its FP8 GEMMs. The course's promoting build has the same shape of code: after each
K-tile's wgmma chain, wait_group 0, then 64 FADDs a thread (total += chain), in one run, where ptxas
alternates the bit (0x000fc2... and 0x000fe2...: bit 45 of the high word every other FADD). The reading
of the tensor-pipe idle time (notes_ncu_pipe.md, notes_ncu_src.md) is that both consumers promote at
once; whether the warp scheduler's choice during those FADDs is what leaves the pipe dry is what this
measures, without changing one instruction: only the hint bit.

Modes (the marker define GEMM_SASS_YIELD, popped before compiling: the kernel never sees it):
  1 "yset":  bit 45 set on every FADD of the promotion's runs;
  2 "yclr":  bit 45 cleared on every one of them;
  3 "yalt":  the alternation inverted (set where ptxas cleared it, cleared where it set it).

  python3 evidence/gemm_dev/yield40.py check CUBIN      # CPU: count and list what would be patched
  python3 evidence/gemm_dev/yield40.py bench OUTDIR     # GPU: course bench day87 with the three builds
                                                      # beside the promoting build and cuBLASLt (P = 1)

On the GPU the patched cubin is loaded with CuPy (RawModule(path=...)); compile_lesson is replaced for
the marked builds only, so the bench's check against float64 runs on the patched code before any timing.
"""

from __future__ import annotations

import os
import struct
import sys
import tempfile
from pathlib import Path

FADD_RR = 0x221  # FADD R, R, R: the low 12 bits of the low word (the promotion's `total += chain`)
YIELD_BIT = 1 << 45  # in the high word (control bits: stall 41-44, yield 45, barriers, reuse 58-61)
RUN = 16  # a run of at least this many FADDs is a promotion (DeepGEMM's threshold for FFMA runs)
MARK = "GEMM_SASS_YIELD"
MODES = {"yset": 1, "yclr": 2, "yalt": 3, "y1of4": 4, "y3of4": 5, "y1of8": 6, "y1of3": 7}
# Modes 4-7 (session 19, call 4, after call 3 measured 1-3): the bit set on the i-th FADD of a run where
# PATTERN[mode](i), cleared elsewhere.
PATTERN = {
    4: lambda i: i % 4 == 0,
    5: lambda i: i % 4 != 3,
    6: lambda i: i % 8 == 0,
    7: lambda i: i % 3 == 0,
}


def text_sections(cubin: bytes) -> list[tuple[str, int, int]]:
    """(name, file offset, size) of every .text.* section of an ELF64 cubin."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not an ELF64 cubin")
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = []
    for i in range(shnum):
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize)
        sections.append((name, offset, size))
    strtab = sections[shstrndx][1]

    def name_of(at: int) -> str:
        end = cubin.index(b"\x00", strtab + at)
        return cubin[strtab + at : end].decode()

    return [(name_of(n), off, size) for n, off, size in sections if name_of(n).startswith(".text.")]


def promotion_runs(cubin: bytes) -> list[tuple[str, list[int]]]:
    """Per kernel, the file offsets of the instructions in runs of >= RUN consecutive FADD R, R, R."""
    out = []
    for name, off, size in text_sections(cubin):
        runs: list[list[int]] = []
        current: list[int] = []
        for at in range(off, off + size, 16):
            lo = int.from_bytes(cubin[at : at + 8], "little")
            if lo & 0xFFF == FADD_RR:
                current.append(at)
                continue
            if len(current) >= RUN:
                runs.append(current)
            current = []
        if len(current) >= RUN:
            runs.append(current)
        for r in runs:
            out.append((name, r))
    return out


def patch(cubin: bytes, mode: int) -> tuple[bytes, int, int]:
    """The cubin with the yield bit of every promotion FADD set (1), cleared (2) or inverted (3); the
    number of FADDs in the runs and the number whose high word changed."""
    data = bytearray(cubin)
    total = changed = 0
    for _name, run in promotion_runs(cubin):
        for i, at in enumerate(run):
            hi = int.from_bytes(data[at + 8 : at + 16], "little")
            if mode in PATTERN:
                new = hi | YIELD_BIT if PATTERN[mode](i) else hi & ~YIELD_BIT
            else:
                new = {1: hi | YIELD_BIT, 2: hi & ~YIELD_BIT, 3: hi ^ YIELD_BIT}[mode]
            total += 1
            if new != hi:
                changed += 1
                data[at + 8 : at + 16] = new.to_bytes(8, "little")
    return bytes(data), total, changed


def check(path: str) -> None:
    cubin = Path(path).read_bytes()
    for name, run in promotion_runs(cubin):
        his = [int.from_bytes(cubin[a + 8 : a + 16], "little") for a in run]
        set_ = sum(bool(h & YIELD_BIT) for h in his)
        print(f"{name}: a run of {len(run)} FADDs at file offset 0x{run[0]:x}, {set_} with bit 45 set")
    for label, mode in MODES.items():
        _, total, changed = patch(cubin, mode)
        print(f"{label}: {total} FADDs in promotion runs, {changed} changed")


def bench(out: str) -> None:
    import cupy

    from course import cli
    from course.kernel import compile as K
    from course.lessons.day87 import bench as B
    from course.lessons.day87 import chooser, dev

    original = K.compile_lesson
    tmp = Path(tempfile.mkdtemp(prefix="yield40-"))

    def compile_lesson(lesson, defines=None, arch=None, source=None):
        defines = dict(defines or {})
        mode = int(defines.pop(MARK, 0))
        if not mode:
            return original(lesson, defines, arch, source)
        off = K.compile_offline(lesson, arch="sm_90a", defines=defines, source=source)
        cubin, total, changed = patch(off.cubin, mode)
        if not total:
            raise SystemExit(f"yield40: no promotion FADD runs found in the {defines} cubin")
        path = tmp / f"gemm8-{mode}-{abs(hash(tuple(sorted(defines.items()))))}.cubin"
        path.write_bytes(cubin)
        print(
            f"yield40: mode {mode}: {total} FADDs in promotion runs, {changed} changed ({defines})",
            flush=True,
        )
        module = cupy.RawModule(path=str(path))
        return K.Compiled(
            lesson, module.get_function(lesson.kernel_name), module, off.seconds, None, off.options
        )

    K.compile_lesson = compile_lesson
    what = {
        "yset": "the 128x128 promoting build with the yield hint set on every promotion FADD (SASS patched)",
        "yclr": "the 128x128 promoting build with the yield hint cleared on every promotion FADD (SASS patched)",
        "yalt": "the 128x128 promoting build with ptxas's alternation of the yield hint inverted (SASS patched)",
        **{
            name: f"the 128x128 promoting build with the yield hint set on {name[1:].replace('of', ' of ')} promotion FADDs"
            for name in ("y1of4", "y3of4", "y1of8", "y1of3")
        },
    }
    for label, mode in MODES.items():
        chooser.DEV_BUILDS[label] = {**chooser.PROMOTE_BUILD, MARK: mode}
        B.DEV_INTERVALS[label] = (1,)
        dev.DEV_LABELS[label] = label
        dev.DEV_WHAT[label] = what[label]
    os.environ[dev.PINGPONG_ENV] = os.environ.get("YIELD40_MODES", ",".join(MODES))
    sizes = os.environ.get("YIELD40_SIZES", "2048 4096 8192").split()
    sys.exit(cli.main(["bench", "day87", "--sizes", *sizes, "--out", out]))


if __name__ == "__main__":
    {"check": check, "bench": bench}[sys.argv[1]](sys.argv[2])
