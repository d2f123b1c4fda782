"""The timeline stamps in the kernels: present where promised, identical, and free when off.

Built without -DCOURSE_TIMELINE, every instrumented kernel must compile to
the same cubin, byte for byte, as the same file with its timeline block and
its COURSE_TL lines deleted: the instrumentation's presence costs nothing.
Built with it, the kernel must keep its occupancy, spill nothing and keep
ptxas from serializing wgmma, so the recorded timeline shows the kernel the
page times. NVRTC builds the cubins here without a GPU; the standalone nvcc
builds, with and without the macro, are in test_nvcc.py (the one without is
the header's build line).
"""

from __future__ import annotations

import re

import pytest

from course import timeline as tl
from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse
from course.lessons import LESSONS, get_lesson

INSTRUMENTED = [lesson for lesson in LESSONS.values() if tl.instrumented(lesson)]
_STAMP = re.compile(r"^\s*COURSE_TL(?:_INIT)?\(.*\);\s*$")
_ANY_STAMP = re.compile(r"COURSE_TL(?:_INIT)?\(")


def ids(lesson):
    return lesson.id


def _source(lesson) -> str:
    return lesson.kernel_path.read_text(encoding="utf-8")


def _block(lesson) -> str:
    text = _source(lesson)
    start, end = text.index(tl.BLOCK_BEGIN), text.index(tl.BLOCK_END)
    return text[start : end + len(tl.BLOCK_END)]


def _stripped(lesson) -> str:
    """The kernel as it was before the timeline: no block, no stamp lines."""
    text = _source(lesson)
    start, end = text.index(tl.BLOCK_BEGIN), text.index(tl.BLOCK_END) + len(tl.BLOCK_END) + 1
    text = text[:start] + text[end:]
    lines = [line for line in text.splitlines(keepends=True) if not _STAMP.match(line)]
    out = "".join(lines)
    assert "COURSE_TL" not in out
    return out


def test_day78_and_every_ladder_step_are_instrumented():
    assert {"day78", "day80", "day84"} <= {lesson.id for lesson in INSTRUMENTED}  # the minimum
    ladder = {
        f"gemm{i}_{name}.cu"
        for i, name in enumerate(
            ("tma", "pipeline", "two_consumers", "persistent", "cluster", "epilogue", "shapes", "fp8"),
            start=1,
        )
    }
    attention = {"attn88_forward.cu", "attn89_pingpong.cu", "attn90_overlap.cu"}
    assert {lesson.kernel_file for lesson in INSTRUMENTED} == {"wgmma_gemm.cu", *ladder, *attention}


@pytest.mark.parametrize("lesson", LESSONS.values(), ids=ids)
def test_a_kernel_with_stamps_carries_the_block_and_one_without_carries_neither(lesson):
    text = _source(lesson)
    has_block = tl.BLOCK_BEGIN in text and tl.BLOCK_END in text
    assert has_block == tl.instrumented(lesson)
    outside = text.replace(_block(lesson), "") if has_block else text
    assert bool(_ANY_STAMP.search(outside)) == has_block


def test_every_kernel_carries_the_same_block_verbatim():
    blocks = {lesson.id: _block(lesson) for lesson in INSTRUMENTED}
    first = blocks[INSTRUMENTED[0].id]
    assert all(b == first for b in blocks.values()), [k for k, b in blocks.items() if b != first]
    assert max(len(line) for line in first.splitlines()) <= 80


def test_the_block_enum_is_the_hosts_kinds():
    block = _block(INSTRUMENTED[0])
    body = block[block.index("enum : unsigned {") : block.index("};")]
    names = re.findall(r"^\s*TL_([A-Z_]+)", body, re.M)
    assert re.search(r"TL_START = 1,", body)
    assert [(i + 1, n) for i, n in enumerate(names)] == [(k.code, k.name) for k in tl.KINDS]


def test_the_block_layout_is_the_hosts_layout():
    block = _block(INSTRUMENTED[0])
    # the host computes these offsets in Layout.head and Layout.span_offset
    assert "constexpr unsigned kTlHead = 2 * kTlCap * kTlCtas * kTlWarpgroups;" in block
    assert "constexpr unsigned kTlSpan = kTlHead + 8 + kTlCtas * kTlWarpgroups;" in block
    assert "buf[kTlHead] = 0x4C54455352554F43ull;" in block and tl.MAGIC == 0x4C54455352554F43
    assert f"buf[kTlHead + 1] = {tl.LAYOUT_VERSION};" in block
    assert f"__device__ unsigned long long* {tl.SYMBOL};" in block
    for lesson in INSTRUMENTED:
        layout = tl.Layout.of(lesson)  # read from the kernel's constexprs
        assert (layout.ctas, layout.warpgroups, layout.capacity) == (4, 4, 8192)
        assert layout.head == 2 * 8192 * 16 and layout.span_offset == layout.head + 8 + 16


@pytest.mark.parametrize("lesson", INSTRUMENTED, ids=ids)
def test_stamp_lines_are_short_and_name_known_kinds(lesson):
    kinds = {f"TL_{k.name}" for k in tl.KINDS}
    body = _source(lesson).replace(_block(lesson), "")
    stamps = [line.strip() for line in body.splitlines() if _ANY_STAMP.search(line)]
    assert all(_STAMP.match(s) for s in stamps), "a COURSE_TL line holds nothing else"
    assert all(len(s) <= 40 for s in stamps), max(stamps, key=len)
    inits = [s for s in stamps if s.startswith("COURSE_TL_INIT(")]
    assert len(inits) == 1
    used = [re.match(r"COURSE_TL\((TL_[A-Z_]+), ", s).group(1) for s in stamps if s not in inits]
    assert set(used) <= kinds
    assert used.count("TL_END") == 1
    assert {"TL_MMA", "TL_MMA_WAIT", "TL_EPI"} <= set(used)
    assert {"TL_LOAD", "TL_WAIT_FULL"} & set(used)


@pytest.mark.parametrize("size", [None, 4096], ids=["default", "N4096"])
@pytest.mark.parametrize("lesson", INSTRUMENTED, ids=ids)
def test_without_the_macro_the_cubin_is_the_uninstrumented_one_byte_for_byte(lesson, size):
    defines = {lesson.size_macro: size} if size and lesson.size_macro else {}  # Day 86: no size macro
    with_stamps = compile_offline(lesson, defines=defines)
    without = compile_offline(lesson, defines=defines, source=_stripped(lesson))
    assert with_stamps.cubin == without.cubin
    assert tl.SYMBOL.encode() not in with_stamps.cubin


def _blocks_per_sm_by_registers(registers: int, threads: int) -> int:
    # Registers are allocated per warp in units of 256, i.e. per thread in multiples of 8.
    per_thread = -(-registers // 8) * 8
    return 65536 // (per_thread * threads)


@pytest.mark.parametrize("lesson", INSTRUMENTED, ids=ids)
def test_with_the_macro_the_kernel_keeps_occupancy_spills_nothing_and_keeps_wgmma_async(lesson):
    defines = {lesson.size_macro: tl.DEFAULT_N} if lesson.size_macro else {}  # Day 86: no size macro
    # One verbose build each way: its log is what course.kernel.ptxas.report reads, its cubin the kernel.
    plain_build = compile_offline(lesson, defines=defines, ptxas_verbose=True)
    stamped_build = compile_offline(lesson, defines={**defines, tl.DEFINE: 1}, ptxas_verbose=True)
    plain, stamped = (parse(b.log, lesson.kernel_name) for b in (plain_build, stamped_build))
    threads = int(lesson.constants()["kThreadsPerBlock"])
    assert _blocks_per_sm_by_registers(stamped.registers, threads) == _blocks_per_sm_by_registers(
        plain.registers, threads
    ), (plain.summary(), stamped.summary())
    assert not stamped.spills and not stamped.serialized_wgmma, stamped.summary()
    # C7519/C7517: ptxas injected warpgroup.arrive/wait around wgmma (a branch inside a wgmma window)
    codes = [sorted(set(re.findall(r"C75\d\d", b.log))) for b in (stamped_build, plain_build)]
    assert codes[0] == codes[1]
    assert tl.SYMBOL.encode() in stamped_build.cubin  # the host finds the pointer by this name


def test_day78_bench_variants_still_apply_to_the_instrumented_kernel():
    from course.kernel.variants import variant_source

    lesson = get_lesson("day78")
    bench = lesson.module("bench")
    for name in bench.VARIANTS:
        source = variant_source(_source(lesson), bench.VARIANTS, name, lesson.kernel_path)
        assert compile_offline(lesson, defines={tl.DEFINE: 1}, source=source).cubin
