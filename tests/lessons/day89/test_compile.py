"""CPU CI compile-checks Day 89's kernel (NVRTC, no GPU): every head dimension without spills or
serialized wgmma, the register split and the named barriers in the PTX and in ptxas's report,
Day 88's launch contract, the experiments' refused builds, and the claim that everything but the
turns and the register split is Day 88's, line for line."""

from __future__ import annotations

import difflib
import re

import pytest

from course.kernel.compile import CompileError, compile_offline
from course.kernel.ptxas import parse, report
from course.lessons import get_lesson
from course.tryout.suggestions import get_suggestion

LESSON = get_lesson("day89")
DAY88 = get_lesson("day88")
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
    # no ptxas warning or numbered message at all; and 0 spills means the producer's code fits
    # setmaxnreg's 24 (ptxas allocates under it: test_ptxas_allocates_the_code_after_a_dec_within_it)
    assert rep.warnings == (), rep.warnings
    assert rep.registers == LESSON.constants({"ATTN_HEAD_DIM": d})["kLaunchRegs"] == 168
    bn = int(LESSON.constants({"ATTN_HEAD_DIM": d})["kBN"])
    want: dict[str, int] = {f"m64n{bn}k16": d // 16}
    want[f"m64n{d}k16"] = want.get(f"m64n{d}k16", 0) + bn // 16
    assert wgmma_shapes(result.ptx) == want  # Day 88's products, unchanged
    ptx = result.ptx
    assert "setmaxnreg.inc.sync.aligned.u32 240" in ptx and "setmaxnreg.dec.sync.aligned.u32 24" in ptx
    # the turns: two bar.sync sites (first turn, before P V) and three bar.arrive sites, 256 threads
    assert len(re.findall(r"\bbar\.sync\s+%r\d+, 256;", ptx)) == 2
    assert len(re.findall(r"\bbar\.arrive\s+%r\d+, 256;", ptx)) == 3


# A producer that keeps 64 floats live after setmaxnreg.dec 24, named as the lesson's kernel so the
# lesson's build options apply. With the dec, ptxas must fit that code into 24 registers and spills;
# without it the launch's 168 hold it all.
HEAVY_PRODUCER = """
extern "C" __global__ void __launch_bounds__(384, 1) attn89Pingpong(float* out, const float* in, int n) {
    if (threadIdx.x / 128 == 0) {
        DEC
        float acc[64];
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[i] = in[i * n + threadIdx.x];
        for (int r = 0; r < n; ++r) {
#pragma unroll
            for (int i = 0; i < 64; ++i) acc[i] = acc[i] * acc[(i + 1) % 64] + in[r];
        }
#pragma unroll
        for (int i = 0; i < 64; ++i) out[i * n + threadIdx.x] = acc[i];
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
        out[threadIdx.x] = in[threadIdx.x];
    }
}
"""


def test_ptxas_allocates_the_code_after_a_dec_within_it():
    dec = 'asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");'
    squeezed = compile_offline(LESSON, source=HEAVY_PRODUCER.replace("DEC", dec), ptxas_verbose=True)
    roomy = compile_offline(LESSON, source=HEAVY_PRODUCER.replace("DEC", ""), ptxas_verbose=True)
    assert parse(squeezed.log, LESSON.kernel_name).spill_stores > 0
    assert parse(roomy.log, LESSON.kernel_name).spill_stores == 0


def test_ptxas_reserves_all_sixteen_barriers_where_day_88_reserves_one():
    assert report(LESSON).barriers == 16  # the id is a register: 1 + cons
    assert report(DAY88).barriers == 1  # __syncthreads() alone


@pytest.mark.parametrize("d", HEAD_DIMS, ids=[f"D{d}" for d in HEAD_DIMS])
def test_the_launch_contract_is_day_88s(d):
    mine, before = LESSON.constants({"ATTN_HEAD_DIM": d}), DAY88.constants({"ATTN_HEAD_DIM": d})
    for name in ("kHeadDim", "kBM", "kBN", "kChunk", "kThreadsPerBlock", "kSmemBytes", "kStages"):
        assert mine[name] == before[name], name
    assert (mine["kRelTolerance"], mine["kLseTolerance"]) == (
        before["kRelTolerance"],
        before["kLseTolerance"],
    )


def test_the_register_split_trades_what_the_launch_gave():
    c = LESSON.constants()
    assert c["kLaunchRegs"] == 65536 // 384 // 8 * 8 == 168
    assert (c["kProducerRegs"], c["kConsumerRegs"]) == (24, 240)
    assert 128 * (c["kProducerRegs"] + 2 * c["kConsumerRegs"]) == 384 * c["kLaunchRegs"] == 64512
    d88 = DAY88.constants()
    assert d88["kProducerRegs"] + 2 * d88["kConsumerRegs"] == c["kProducerRegs"] + 2 * c["kConsumerRegs"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "constexpr int kConsumerRegs = 240;",
            "constexpr int kConsumerRegs = 248;",
            "the warpgroups trade registers",
        ),
        (
            "constexpr int kProducerRegs = 24;",
            "constexpr int kProducerRegs = 16;",
            "multiple of 8 in 24..256",
        ),
        ("constexpr int kTurnBarrier = 1;", "constexpr int kTurnBarrier = 0;", "named barriers are 0..15"),
    ],
    ids=["consumers-248", "producer-16", "barrier-0"],
)
def test_a_register_split_or_barrier_the_hardware_cannot_have_is_refused_at_compile_time(old, new, message):
    source = LESSON.kernel_path.read_text("utf-8")
    assert source.count(old) == 1
    with pytest.raises(CompileError, match=message):
        compile_offline(LESSON, source=source.replace(old, new))


def test_day_88s_register_split_builds_in_day_89s_kernel_as_the_experiment_says():
    s = get_suggestion(LESSON, "day88-registers")
    assert s.expect == ("passed",)
    result = compile_offline(
        LESSON, source=s.source(LESSON.kernel_path.read_text("utf-8")), ptxas_verbose=True
    )
    assert (
        "setmaxnreg.inc.sync.aligned.u32 232" in result.ptx
        and "setmaxnreg.dec.sync.aligned.u32 40" in result.ptx
    )
    assert parse(result.log, LESSON.kernel_name).spill_stores == 0


# The lines of Day 88 this page may change; every other line of Day 88 is in Day 89, in order.
CHANGED_IN_DAY88 = (
    re.compile(r"^// "),  # comments: the header, and the ones around the register split and qkTile
    re.compile(r"^constexpr int k(Producer|Consumer)Regs = "),
    re.compile(r"^static_assert\(128 \* \(kProducerRegs"),
    re.compile(r'^"the three warpgroups\' ceilings must fit'),
    re.compile(r"^attn88Forward"),
    re.compile(r'^std::printf\("attn88 '),
    re.compile(r"^CUDA_CHECK\(cudaFuncSetAttribute\(attn88Forward"),
)


def test_everything_but_the_turns_and_the_register_split_is_day_88s_line_for_line():
    mine = [line.strip() for line in LESSON.kernel_path.read_text("utf-8").splitlines()]
    before = [line.strip() for line in DAY88.kernel_path.read_text("utf-8").splitlines()]
    removed = [
        line
        for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, mine, autojunk=False).get_opcodes()
        if tag in ("replace", "delete")
        for line in before[i1:i2]
        if line
    ]
    unexpected = [line for line in removed if not any(p.search(line) for p in CHANGED_IN_DAY88)]
    assert unexpected == [], unexpected
    # and the code lines Day 89 adds are the turns, the split and the names
    added = [
        line
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, before, mine, autojunk=False).get_opcodes()
        if tag in ("replace", "insert")
        for line in mine[j1:j2]
        if line and not line.startswith("//")
    ]
    allowed = re.compile(
        r"turn|Turn|kLaunchRegs|kProducerRegs|kConsumerRegs|setmaxnreg|static_assert|attn89|COURSE_TL\(TL_SYNC|"
        r"COURSE_TL\(TL_MMA_WAIT|^\}$|^\"|kConsumerRegs % 8"
    )
    assert [line for line in added if not allowed.search(line)] == []
