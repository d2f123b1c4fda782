"""ptxas's report for every lesson kernel: what the pages show, held to what they say.

Built without a GPU (NVRTC), so CI checks it: every wgmma kernel fits its
registers without spilling, and ptxas did not serialize its wgmma
instructions (its "ptxas info : (C7511) ... are serialized" line), which
would cost the pipeline its overlap with no error.
"""

import pytest

from course.kernel.ptxas import PtxasReport, parse, report
from course.lessons import LESSONS

WGMMA = [lesson for lesson in LESSONS.values() if lesson.arch == "sm_90a"]


@pytest.mark.parametrize("lesson", WGMMA, ids=lambda lesson: lesson.id)
def test_every_wgmma_kernel_fits_without_spills_or_serialization(lesson):
    r = report(lesson)
    assert r.kernel == lesson.kernel_name
    assert 0 < r.registers <= 255
    assert not r.spills, r.summary()
    assert not r.serialized_wgmma, r.warnings


def test_the_switch_a_page_shows_builds_too():
    # Day 81's page shows the build without setmaxnreg beside the one with it.
    lesson = next(lesson for lesson in WGMMA if "GEMM_SETMAXNREG" in lesson.kernel_path.read_text())
    with_it, without = report(lesson), report(lesson, {"GEMM_SETMAXNREG": 0})
    assert without.defines == (("GEMM_SETMAXNREG", "0"),)
    assert not without.spills and not without.serialized_wgmma
    assert without.registers <= with_it.registers


def test_parse_reads_spills_and_serialization_warnings():
    log = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas warning : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     8 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads\n"
        "ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem\n"
    )
    r = parse(log, "k")
    assert isinstance(r, PtxasReport)
    assert (r.registers, r.spill_stores, r.spill_loads, r.smem_bytes) == (255, 24, 16, 1024)
    assert r.spills and r.serialized_wgmma
    assert "C7511" in r._repr_html_() and "24 bytes spill stores" in r.summary()
    assert r.barriers == 1 and "named barriers reserved" in r._repr_html_()


def test_a_report_that_names_no_barriers_reads_as_none_and_shows_no_row():
    log = (
        "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 32 registers\n"
    )
    r = parse(log, "k")
    assert r.barriers == 0 and "named barriers" not in r._repr_html_()
    sixteen = parse(log.replace("Used 32 registers", "Used 168 registers, used 16 barriers"), "k")
    assert (sixteen.registers, sixteen.barriers) == (168, 16)


# The lines NVRTC 12.9's ptxas printed for two changed copies of gemm1_tma.cu (the K loop unrolled;
# an accumulator touched between the wgmmas and their commit): numbered "ptxas info" lines, not
# warnings. A parser that kept only warning lines saw none of them.
REAL_INFO_LINES = (
    "ptxas info    : (C7519) warpgroup.arrive is injected in around line 354 by compiler to allow use of "
    "registers in GMMA in function 'k'\n"
    "ptxas info    : (C7517) warpgroup.wait is injected in around line 354 by compiler to allow use of "
    "registers defined by GMMA in function 'k'\n"
    "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
    "insufficient register resources for the wgmma pipeline in the function 'k'\n"
)


def test_parse_reads_the_numbered_info_lines_ptxas_really_prints():
    head = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
    tail = (
        "ptxas info    : Function properties for k\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 168 registers, used 1 barriers\n"
    )
    r = parse(head + REAL_INFO_LINES + tail, "k")
    assert r.serialized_wgmma and r.injected_waits
    assert len(r.warnings) == 3 and "wgmma serialized by ptxas" in r.summary()
    only_injected = parse(head + "".join(REAL_INFO_LINES.splitlines(True)[:2]) + tail, "k")
    assert not only_injected.serialized_wgmma and only_injected.injected_waits
    assert "injected warpgroup waits" in only_injected.summary()
    clean = parse(head + tail, "k")
    assert not clean.warnings and "no wgmma serialization" in clean.summary()
