"""CPU CI compile-checks Day 90's kernel (NVRTC, no GPU): every head dimension without spills or
serialized wgmma, both wait_group depths and the turns in the PTX, Day 89's launch contract and
register split, and the claim that everything but the overlap and K and V's own release barriers
is Day 89's, line for line."""

from __future__ import annotations

import difflib
import re

import pytest

from course.kernel.compile import compile_offline
from course.kernel.ptxas import parse, report
from course.lessons import get_lesson
from course.tryout.suggestions import get_suggestion

LESSON = get_lesson("day90")
DAY89 = get_lesson("day89")
HEAD_DIMS = (64, 128, 256)


def wgmma_shapes(ptx: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in ptx.splitlines():
        if "wgmma.mma_async.sync.aligned.m64n" in line:
            shape = line.split("wgmma.mma_async.sync.aligned.")[1].split(".")[0]
            counts[shape] = counts.get(shape, 0) + 1
    return counts


@pytest.mark.parametrize("d", HEAD_DIMS, ids=[f"D{d}" for d in HEAD_DIMS])
def test_every_head_dim_compiles_without_spills_serialization_or_any_ptxas_warning(d):
    result = compile_offline(LESSON, defines={"ATTN_HEAD_DIM": d}, ptxas_verbose=True)
    rep = parse(result.log, LESSON.kernel_name)
    assert rep.spill_stores == 0 and rep.spill_loads == 0, result.log
    # no ptxas warning or numbered message at all: no wgmma serialization (C7514/C7515), no
    # warpgroup.arrive injected (C7519) between a wgmma and its wait_group
    assert rep.warnings == (), rep.warnings
    assert rep.registers == LESSON.constants({"ATTN_HEAD_DIM": d})["kLaunchRegs"] == 168
    bn = int(LESSON.constants({"ATTN_HEAD_DIM": d})["kBN"])
    # S is issued at two sites (the first tile; each step), P V at two (each step; the last tile)
    want: dict[str, int] = {f"m64n{bn}k16": 2 * (d // 16)}
    want[f"m64n{d}k16"] = want.get(f"m64n{d}k16", 0) + 2 * (bn // 16)
    assert wgmma_shapes(result.ptx) == want
    ptx = result.ptx
    # the overlap: one wait_group 1 (S of the step, P V still pending) and three wait_group 0
    # (the first S; P V after the softmax; the last P V)
    assert ptx.count("wgmma.wait_group.sync.aligned 1;") == 1
    assert ptx.count("wgmma.wait_group.sync.aligned 0;") == 3
    assert "setmaxnreg.inc.sync.aligned.u32 240" in ptx and "setmaxnreg.dec.sync.aligned.u32 24" in ptx
    # the turns: three bar.sync sites (first S, each step, the last P V) and four bar.arrive
    # sites (consumer 0's first turn to itself, after the first S, after each step, the last)
    assert len(re.findall(r"\bbar\.sync\s+%r\d+, 256;", ptx)) == 3
    assert len(re.findall(r"\bbar\.arrive\s+%r\d+, 256;", ptx)) == 4
    # K and V are released on barriers of their own: K after the first S and after each step's
    # wait_group 1, V after each step's wait_group 0 and after the last P V (Day 89: one site)
    assert ptx.count("mbarrier.arrive.shared::cta.b64") == 4


def test_ptxas_reserves_all_sixteen_barriers_as_on_day_89():
    assert report(LESSON).barriers == report(DAY89).barriers == 16


@pytest.mark.parametrize("d", HEAD_DIMS, ids=[f"D{d}" for d in HEAD_DIMS])
def test_the_launch_contract_and_register_split_are_day_89s(d):
    mine, before = LESSON.constants({"ATTN_HEAD_DIM": d}), DAY89.constants({"ATTN_HEAD_DIM": d})
    for name in (
        "kHeadDim",
        "kBM",
        "kBN",
        "kChunk",
        "kThreadsPerBlock",
        "kSmemBytes",
        "kStages",
        "kLaunchRegs",
        "kProducerRegs",
        "kConsumerRegs",
        "kTurnBarrier",
        "kTurnThreads",
    ):
        assert mine[name] == before[name], name
    assert (mine["kRelTolerance"], mine["kLseTolerance"]) == (
        before["kRelTolerance"],
        before["kLseTolerance"],
    )


def test_the_live_arrays_fit_the_consumers_ceiling_with_room_for_the_rest():
    from course.lessons.day90 import overlap

    ceiling = LESSON.constants()["kConsumerRegs"]
    for d in HEAD_DIMS:
        c = LESSON.constants({"ATTN_HEAD_DIM": d})
        regs = overlap.Registers.of(d)
        assert (regs.s, regs.o) == (c["kSAccRegs"], c["kOAccRegs"])
        most = overlap.play(overlap.program(4), regs).most_registers
        assert most == regs.s + regs.p + regs.o < ceiling


# The lines of Day 89 this page may change; every other line of Day 89 is in Day 90, in order.
CHANGED_IN_DAY89 = (
    re.compile(r"^// "),  # comments: the header, the turn count, qkTile's and pvTile's
    re.compile(r"^uint64_t empty\[kStages\];"),
    re.compile(r"^mbarInit\(&s\.empty\[i\]"),
    re.compile(r"^mbarWait\(&s\.empty\[stage\]"),
    re.compile(r"^mbarArrive\(&s\.empty\[stage\]\);"),
    re.compile(r"^__device__ __forceinline__ void (qkTile|pvTile)\("),
    re.compile(r"^turnPass\(1 - cons\);$|^wgmmaWait<0>\(\);$|^pinRegs\((s|o)\);$"),
    re.compile(r"^for \(int (k|i) = 0; (k|i) < kPSlices|^for \(int i = 0; i < 4; \+\+i\) asm volatile"),
    re.compile(
        r"^const int col0 = kt \* kBN|^qkTile\(|^pvTile\(|^float (sAcc|alpha)|^uint32_t p\[kPSlices\]"
    ),
    re.compile(r"^int stage = 0;$|^uint32_t phase = 0;$|^for \(int kt = 0; kt < kvTiles; \+\+kt\) \{$"),
    re.compile(
        r"^COURSE_TL\(|^if \(wt == 0\) \{$|^\}$|^if \(\+\+stage == kStages\) \{$|^stage = 0;$|^phase \^= 1;$"
    ),
    re.compile(
        r"^mbarWait\(&s\.(kFull|vFull)\[stage\], phase\);|^turnWait\(cons\);|^const bool (ragged|diagonal)"
    ),
    re.compile(r"^if \(ragged \|\| diagonal\)|^softmaxTile\(|^rescaleO\(|^pFragment\("),
    re.compile(r"^attn89Pingpong"),
    re.compile(r'^std::printf\("attn89 '),
    re.compile(r"^CUDA_CHECK\(cudaFuncSetAttribute\(attn89Pingpong"),
    re.compile(r"^(const SharedStorage& sm, int stage|int cons)\) \{$"),
)


def _opcodes(before: list[str], mine: list[str]):  # type: ignore[no-untyped-def]
    return difflib.SequenceMatcher(None, before, mine, autojunk=False).get_opcodes()


def test_everything_but_the_overlap_and_the_release_barriers_is_day_89s_line_for_line():
    mine = [line.strip() for line in LESSON.kernel_path.read_text("utf-8").splitlines()]
    before = [line.strip() for line in DAY89.kernel_path.read_text("utf-8").splitlines()]
    removed = [
        line
        for tag, i1, i2, _, _ in _opcodes(before, mine)
        if tag in ("replace", "delete")
        for line in before[i1:i2]
        if line
    ]
    unexpected = [line for line in removed if not any(p.search(line) for p in CHANGED_IN_DAY89)]
    assert unexpected == [], unexpected
    # the functions Day 89 had are all here but the two this page splits from their waits
    for name in ("softmaxTile", "rescaleO", "pFragment", "maskTile", "turnWait", "turnPass", "kvTileCount"):
        assert f"void {name}(" in LESSON.kernel_path.read_text("utf-8") or f"int {name}(" in (
            LESSON.kernel_path.read_text("utf-8")
        ), name


@pytest.mark.parametrize(
    ("name", "serialized"),
    [("wait-zero", False), ("pv-first", True), ("rescale-early", True), ("three-stages", False)],
)
def test_the_experiments_build_and_ptxas_serializes_the_two_the_page_says_it_does(name, serialized):
    # pv-first and rescale-early touch a pending wgmma's accumulator; ptxas reports C7514 and
    # serializes the wgmmas rather than build what the PTX ISA calls undefined
    s = get_suggestion(LESSON, name)
    assert s.expect == ("passed",)
    result = compile_offline(
        LESSON, source=s.source(LESSON.kernel_path.read_text("utf-8")), ptxas_verbose=True
    )
    rep = parse(result.log, LESSON.kernel_name)
    assert rep.spill_stores == 0
    assert ("C7514" in result.log) is serialized, result.log
    assert bool(rep.warnings) is serialized, rep.warnings
