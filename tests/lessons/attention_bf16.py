"""The CPU checks of every attention kernel's BF16 build (-DATTN_BF16=1; Days 88, 89, 90), written
once as ``attention_gpu.py`` writes the GPU ones: each head dimension compiles through NVRTC with
no spill and no ptxas message, issues the FP16 build's wgmmas as ``.bf16.bf16`` (and nothing as
``.f16``), with the FP16 build's registers; the build's constants are the FP16 build's but the
flag and O's tolerance. A lesson's ``test_bf16.py`` subclasses ``AttentionBf16Checks``."""

from __future__ import annotations

import pytest

from course.kernel.compile import CompileError, compile_offline
from course.kernel.ptxas import parse
from course.lessons import get_lesson

HEAD_DIMS = (64, 128, 256)


def wgmma_lines(ptx: str) -> list[str]:
    """Each wgmma.mma_async of the PTX as "shape.dtype.atype.btype" (m64n128k16.f32.bf16.bf16)."""
    return [
        line.split("wgmma.mma_async.sync.aligned.")[1].split()[0]
        for line in ptx.splitlines()
        if "wgmma.mma_async.sync.aligned.m64n" in line
    ]


class AttentionBf16Checks:
    lesson_id = ""

    @pytest.mark.parametrize("d", HEAD_DIMS, ids=[f"D{d}" for d in HEAD_DIMS])
    def test_the_bf16_build_compiles_without_spills_or_any_ptxas_message_as_the_fp16_one(self, d):
        lesson = get_lesson(self.lesson_id)
        fp16 = compile_offline(lesson, defines={"ATTN_HEAD_DIM": d}, ptxas_verbose=True)
        bf16 = compile_offline(lesson, defines={"ATTN_HEAD_DIM": d, "ATTN_BF16": 1}, ptxas_verbose=True)
        rep, rep16 = parse(bf16.log, lesson.kernel_name), parse(fp16.log, lesson.kernel_name)
        assert rep.spill_stores == 0 and rep.spill_loads == 0, bf16.log
        # no ptxas warning or numbered message: no wgmma serialization (C7514/C7515), no C7519
        assert rep.warnings == (), rep.warnings
        assert rep.registers == rep16.registers
        mine, before = wgmma_lines(bf16.ptx), wgmma_lines(fp16.ptx)
        # the same products, in the same order, with only the A and B types changed
        assert mine == [w.replace(".f32.f16.f16", ".f32.bf16.bf16") for w in before] and mine
        assert all(w.endswith(".f32.bf16.bf16") for w in mine)
        assert all(w.endswith(".f32.f16.f16") for w in before)
        assert bf16.cubin != fp16.cubin

    def test_the_bf16_builds_constants_are_the_fp16_builds_but_the_flag_and_os_tolerance(self):
        lesson = get_lesson(self.lesson_id)
        fp16, bf16 = lesson.constants(), lesson.constants({"ATTN_BF16": 1})
        assert (fp16["kBf16"], bf16["kBf16"]) == (0, 1)
        # 8 x: BF16 rounds P and O to 8 significant bits, FP16 to 11 (2^-8 / 2^-11)
        assert (fp16["kRelTolerance"], bf16["kRelTolerance"]) == (4e-3, 3.2e-2)
        assert bf16["kRelTolerance"] == fp16["kRelTolerance"] * 2 ** (11 - 8)
        same = {k: v for k, v in fp16.items() if k not in ("kBf16", "kRelTolerance")}
        assert same == {k: bf16[k] for k in same} and bf16["kLseTolerance"] == fp16["kLseTolerance"]

    def test_a_flag_that_is_not_0_or_1_is_refused_at_compile_time(self):
        with pytest.raises(CompileError, match="ATTN_BF16 is 0 or 1"):
            compile_offline(get_lesson(self.lesson_id), defines={"ATTN_BF16": 2})
