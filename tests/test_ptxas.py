"""ptxas's report for every lesson kernel: what the pages show, held to what they say.

Built without a GPU (NVRTC), so CI checks it: every wgmma kernel fits its
registers without spilling, and ptxas did not serialize its wgmma
instructions (warnings C7510-C7520), which would cost the pipeline its
overlap with no error.
"""

import pytest

from course.lessons import LESSONS
from course.ptxas import PtxasReport, parse, report

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
