"""Day 78's benchmark specification (course/lessons/day78/bench.py): the producer's
bytes, the kernel variants (built offline with NVRTC, no GPU), the reasons and
the findings, each from numbers."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from course.bench.arith import gemm_bytes, gemm_flops, tflop_per_s
from course.bench.result import BenchResult, Measurement, Reason, SizeRow, Timing
from course.bench.spec import bench_spec
from course.errors import CourseError
from course.kernel.compile import compile_offline
from course.kernel.provenance import Provenance
from course.kernel.variants import variant_source
from course.lessons import get_lesson
from course.lessons.day78 import bench
from course.lessons.day78 import models as m

LESSON = get_lesson("day78")


# --- arithmetic -----------------------------------------------------------------------------
def test_the_benchmarks_tile_is_the_kernels():
    assert bench.TILE == m.TILE_M == m.TILE_N == m.TILE_K


def test_producer_bytes_count_the_64x64_tiles_re_reads():
    n = 4096
    assert bench.producer_bytes(n) == n**3 // 16
    # N/64 times the bytes of A and B themselves.
    assert bench.producer_bytes(n) == (n // 64) * (2 * n * n * 2)
    assert bench.producer_bytes(64) == 2 * 64 * 64 * 2  # one CTA, one K-tile: one A and one B tile
    assert bench.ctas(256) == 16
    assert bench.ctas(4096) == 4096
    assert bench.ctas(1024, tile=128) == 64


def test_the_spec_counts_flops_and_the_bytes_of_one_set():
    spec = bench_spec(LESSON)
    assert spec is bench.SPEC
    assert spec.unit == "TFLOP/s"
    assert spec.work(4096) == gemm_flops(4096) == 2 * 4096**3
    assert spec.set_bytes(1024) == gemm_bytes(1024, 2, 4) == 1024 * 1024 * (2 + 2 + 4)
    assert spec.validate_sizes("day78", spec.page_sizes) == spec.page_sizes
    assert set(spec.page_sizes) <= set(spec.sizes)


# --- the variants ---------------------------------------------------------------------------
def _ptx_count(ptx: str, instruction: str) -> int:
    return len(re.findall(re.escape(instruction), ptx))


def test_variants_build_and_remove_what_they_say():
    source = LESSON.kernel_path.read_text(encoding="utf-8")
    defines = {"GEMM_DIM": 1024}
    original = compile_offline(LESSON, defines=defines).ptx
    builds = {}
    for name in bench.VARIANTS:
        text = variant_source(source, bench.VARIANTS, name, LESSON.kernel_path)
        assert text != source
        built = compile_offline(LESSON, defines=defines, source=text)
        assert built.cubin[:4] == b"\x7fELF"
        builds[name] = built.ptx
    assert _ptx_count(original, "wgmma.mma_async") > 0
    # Loads only: no wgmma, and the producer's loads and shared stores all kept.
    assert _ptx_count(builds["loads only"], "wgmma.mma_async") == 0
    for op in ("ld.global", "st.shared"):
        assert _ptx_count(builds["loads only"], op) == _ptx_count(original, op)
    # wgmma only: the tensor-core issues kept; neither: none.
    assert _ptx_count(builds["wgmma only"], "wgmma.mma_async") > 0
    assert _ptx_count(builds["neither"], "wgmma.mma_async") == 0
    wgmma_only = variant_source(source, bench.VARIANTS, "wgmma only")
    assert "loadStage(s ^ 1, kt + 1)" not in wgmma_only
    assert "loadStage(0, 0); loadStage(1, 0);" in wgmma_only


def test_a_substitution_must_match_exactly_once():
    path = LESSON.kernel_path
    source = path.read_text(encoding="utf-8")
    missing = source.replace("loadStage(s ^ 1, kt + 1);", "loadStage(s ^ 1, kt + 2);")
    with pytest.raises(
        CourseError, match=r"variant 'wgmma only'.*found 0\).*update the variant to match it"
    ) as e:
        variant_source(missing, bench.VARIANTS, "wgmma only", path)
    assert str(e.value).startswith(str(path))
    twice = source + "\n// loadStage(0, 0);\n"
    with pytest.raises(CourseError, match=r"found 2"):
        variant_source(twice, bench.VARIANTS, "wgmma only")
    # Whitespace may change (a reformatted kernel); the tokens may not.
    reflowed = source.replace("tileDesc(smA[s]) + off,\n", "tileDesc(smA[s]) + off,   ")
    assert "asm volatile" in variant_source(reflowed, bench.VARIANTS, "loads only")
    with pytest.raises(
        CourseError, match="no variant named 'nothing'; the variants are: loads only, wgmma only"
    ):
        variant_source(source, bench.VARIANTS, "nothing")


# --- reasons --------------------------------------------------------------------------------
BREAKDOWN = bench.GemmBreakdown(
    size=4096, kernel_ms=4.0, loads_ms=3.8, wgmma_ms=0.9, neither_ms=0.2, cublas_ms=0.22,
    peak_tflops=700.0, peak_size=8192, sms=132, ctas_per_sm=2, ctas_per_sm_kind="queried", regs=90,
    local_bytes=0,
)  # fmt: skip


def test_gemm_reasons_carry_numbers_and_their_source():
    reasons = bench.gemm_reasons(BREAKDOWN)
    kinds = {r.title: r.kind for r in reasons}
    assert kinds["Fraction of the measured cuBLAS peak"] == "measured"
    assert kinds["wait_group 0 every tile, against a deeper pipeline"] == "not measured"
    fraction = reasons[0].value
    assert fraction == pytest.approx(100 * tflop_per_s(gemm_flops(4096), 4.0) / 700.0)
    not_measured = [r for r in reasons if r.kind == "not measured"]
    assert all(r.value is None and r.value_text() == "n/a" for r in not_measured)
    ctas_reason = next(r for r in reasons if r.title.startswith("64x64"))
    assert (
        ctas_reason.value == 4096
        and "15.52 waves" in ctas_reason.detail
        and "90 registers" in ctas_reason.detail
    )
    assert "12% of the SMs" in ctas_reason.detail
    loads = next(r for r in reasons if r.title == "The producer's global->shared copy alone")
    assert loads.value == 3.8 and "95% of the kernel's 4 ms" in loads.detail
    assert f"{bench.producer_bytes(4096) / 1e9:.2f} GB requested" in loads.detail
    # Without a peak in the run, no fraction is claimed.
    assert all("peak" not in r.title for r in bench.gemm_reasons(replace(BREAKDOWN, peak_tflops=None)))
    with pytest.raises(CourseError, match="kind must be one of"):
        Reason("x", 1.0, "ms", "guessed", "")


def test_spills_are_reported_when_there_are_any():
    spilling = next(
        r for r in bench.gemm_reasons(replace(BREAKDOWN, local_bytes=48)) if r.title.startswith("64x64")
    )
    assert "48 bytes of local memory per thread (spills)" in spilling.detail
    clean = next(r for r in bench.gemm_reasons(BREAKDOWN) if r.title.startswith("64x64"))
    assert "spills" not in clean.detail


# --- findings: the page's sentences, from a recorded result --------------------------------------
def _timing(ms: float) -> Timing:
    return Timing(ms, ms * 0.95, ms * 1.1, 20, 4, 8, 0)


def _result(kernel_tflops: float, cublas_tflops: float, peak: float | None) -> BenchResult:
    rows = []
    for n in (256, 4096):
        flops = float(gemm_flops(n))
        k_ms, b_ms = flops / (kernel_tflops * 1e9), flops / (cublas_tflops * 1e9)
        kernel = Measurement("kernel", _timing(k_ms), kernel_tflops)
        blas = Measurement("cuBLAS gemmEx", _timing(b_ms), cublas_tflops, kernel_tflops / cublas_tflops)
        rows.append(SizeRow(n, flops, 0.5, False, "max rel error 0", kernel, (blas,)))
    return BenchResult(
        lesson="day78",
        provenance=Provenance(
            "2026-11-30T10:00:00+00:00", "python -m course bench day78", "NVIDIA H200", "9.0", 132, {}
        ),
        l2_bytes=50 * 2**20,
        unit="TFLOP/s",
        kernel_name="wgmmaGemm",
        rows=tuple(rows),
        ceilings={} if peak is None else {bench.CUBLAS_PEAK: peak},
    )


def test_findings_quote_the_recorded_numbers():
    found = bench.findings(_result(37.4, 612.0, 655.0))
    assert found == [
        "At N = 4096 the kernel runs at 37.4 TFLOP/s and cuBLAS at 612 TFLOP/s on the same inputs: 0.061x.",
        f"cuBLAS peak of the run (N={bench.PEAK_SIZE}): 655 TFLOP/s.",
    ]
    other = bench.findings(_result(51.5, 640.0, None))
    assert other == [
        "At N = 4096 the kernel runs at 51.5 TFLOP/s and cuBLAS at 640 TFLOP/s on the same inputs: 0.080x."
    ]
